/**
 * Plinth's shared CEL environment (see cel-environment.ts): compile once,
 * evaluate per request, with Kubernetes' libraries and cost limits.
 */
export {
  CEL_MAX_EVALUATION_MS,
  CEL_PER_CALL_LIMIT,
  CEL_RUNTIME_BUDGET,
  CelBudget,
  CelCompileError,
  CelCostLimitError,
  CelEvaluationError,
  type CelProgram,
  type CelObjectTypes,
  type CelVariables,
  checkCelTyped,
  compileCel,
} from './cel-environment.js';
export { declaredSize, estimateCelCost } from './cel-cost-estimator.js';
export { addSaturating, CEL_MAX_REQUEST_BYTES, type CelType, type DeclType, MAX_UINT64, multiplySaturating } from './cel-cost-size.js';
export { celMap, celToJson, jsonToCel } from './cel-values.js';
export { CelCidr, CelIp, CelUrl } from './cel-network.js';
export { CelSemver, SemverParseError } from './cel-semver.js';
export { compileRe2, re2Test, Re2SyntaxError } from './re2-regex.js';
export { Quantity } from '@plinth/apimachinery';
export { CelAuthorizer, type CelAuthzAnswer, type CelAuthzBackend, type CelAuthzQuestion, CelResourceCheck } from './cel-authorizer.library.js';
export {
  TenantWorkerPool,
  type TenantWorkerPoolOptions,
  type TenantWorkerPoolStats,
  WorkerCrashedError,
  WorkerPoolBusyError,
  WorkerTaskError,
  WorkerTaskTimeoutError,
} from './pool/tenant-worker-pool.js';
export { serveTasks } from './pool/serve-tasks.js';
export { skipStringLiteral } from './cel-source.js';
