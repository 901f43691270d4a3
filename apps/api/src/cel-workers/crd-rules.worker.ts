import { LRUCache } from 'lru-cache';
import { compileCel, serveTasks } from '@plinth/cel';
import { compileRules, type RuleNode, validateRules } from '../kinds/customresourcedefinition/schema/cel-rules.js';
import type { CrdRulesAnswer, CrdRulesTask } from './crd-rules.protocol.js';

/**
 * A CEL worker thread (see CelRuleWorkers): evaluates the
 * x-kubernetes-validations of one custom resource per task, with the same
 * code and limits as the main thread would (cel-rules.ts: per-call and
 * per-object cost, 250 ms of wall clock per object). Compiled rule trees
 * are kept by schema key, so a schema is compiled once per worker.
 */

// Builds the CEL environment of CRD rules before the worker says it is ready, so no task waits for it.
compileCel('self == oldSelf', { self: 'dyn', oldSelf: 'dyn' });

const trees = new LRUCache<string, { tree: RuleNode | undefined }>({ max: 128 });

serveTasks<CrdRulesTask, CrdRulesAnswer>((task) => {
  let hit = trees.get(task.key);
  if (!hit) {
    if (!task.schema) return { missing: true };
    hit = { tree: compileRules(task.schema) };
    trees.set(task.key, hit);
  }
  const started = performance.now();
  const errs = validateRules(hit.tree, task.obj, task.old);
  return { errs, ms: performance.now() - started };
});
