import assert from 'node:assert/strict';
import type request from 'supertest';
import { eventually } from '../support/eventually.js';

/** Options of {@link widgetCrd}. */
export interface WidgetCrdOptions {
  group?: string;
  plural?: string;
  kind?: string;
  scope?: 'Namespaced' | 'Cluster';
  shortNames?: string[];
  schema?: Record<string, unknown>;
  subresources?: Record<string, unknown>;
  columns?: unknown[];
  labels?: Record<string, string>;
  versions?: unknown[];
  selectableFields?: unknown[];
}

/** The default schema of test widgets. */
export function widgetSchema(): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        properties: {
          size: { type: 'integer', minimum: 1, maximum: 10 },
          color: { type: 'string', enum: ['red', 'green', 'blue'] },
          name: { type: 'string', maxLength: 8, pattern: '^[a-z]+$' },
          replicas: { type: 'integer', default: 1 },
          bars: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, weight: { type: 'integer' } } } },
          tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        },
      },
      status: { type: 'object', properties: { replicas: { type: 'integer' }, phase: { type: 'string' }, selector: { type: 'string' } } },
    },
  };
}

/** A CustomResourceDefinition body for `widgets.<group>` with one version v1. */
export function widgetCrd(o: WidgetCrdOptions = {}): Record<string, unknown> {
  const group = o.group ?? 'example.com';
  const plural = o.plural ?? 'widgets';
  const kind = o.kind ?? 'Widget';
  const version: Record<string, unknown> = { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: o.schema ?? widgetSchema() } };
  if (o.subresources) version.subresources = o.subresources;
  if (o.columns) version.additionalPrinterColumns = o.columns;
  if (o.selectableFields) version.selectableFields = o.selectableFields;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: o.labels },
    spec: {
      group,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, shortNames: o.shortNames },
      scope: o.scope ?? 'Namespaced',
      versions: o.versions ?? [version],
    },
  };
}

/** Creates a CRD through `api` and waits until it is Established and served. */
export async function installCrd(api: ReturnType<typeof request>, crd: Record<string, unknown>, prefix = ''): Promise<Record<string, unknown>> {
  const name = (crd.metadata as { name: string }).name;
  const res = await api.post(`${prefix}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`).send(crd);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const spec = crd.spec as { group: string; names: { plural: string }; versions: Array<{ name: string; served: boolean }> };
  const served = spec.versions.find((v) => v.served)!.name;
  await eventually(async () => {
    const got = await api.get(`${prefix}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    const established = (got.body.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True');
    if (!established) return false;
    const list = await api.get(`${prefix}/apis/${spec.group}/${served}/${spec.names.plural}`);
    return list.status === 200;
  }, { timeoutMs: 5000, message: `CRD ${name} established` });
  return res.body;
}
