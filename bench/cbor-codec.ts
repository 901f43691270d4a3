import { decodeCbor, encodeCbor, makeStorable, parseJsonStrict } from '@plinth/apimachinery';

/** One codec's figures: bytes on the wire and server CPU per operation (µs). */
export interface CodecFigures {
  createBodyBytes: number;
  createDecodeUs: number;
  createAnswerBytes: number;
  createEncodeUs: number;
  listPageBytes: number;
  listPageEncodeUs: number;
}

/** A created ConfigMap as the server answers it (1 KiB of data, managedFields, a uid…). */
function storedConfigMap(i: number, value: string): Record<string, unknown> {
  return {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: {
      name: `cm-${i}`,
      namespace: 'bench',
      uid: `0b7f7c2e-1c1e-4c5e-9b7a-${String(i).padStart(12, '0')}`,
      resourceVersion: String(100000 + i),
      creationTimestamp: '2025-01-01T00:00:00Z',
      managedFields: [{ manager: 'bench', operation: 'Update', apiVersion: 'v1', time: '2025-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:v': {} } } }],
    },
    data: { v: value },
  };
}

/** CPU microseconds per call of `fn`, over about `ms` of repetitions (after a warm-up). */
function cpuPerCall(fn: () => unknown, ms = 1500): number {
  // Warm up for a third of the time: the JIT and the encoders' buffers settle.
  const warm = Date.now() + ms / 3;
  while (Date.now() < warm) fn();
  const start = process.cpuUsage();
  const until = Date.now() + ms;
  let n = 0;
  while (Date.now() < until) for (let i = 0; i < 20; i++, n++) fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

/**
 * The HTTP encoding layer of a create and of a list page in JSON and in
 * CBOR, in process: the request body decoded as the server decodes it
 * (strict JSON, or the upstream-mode CBOR decoder), the created object and a
 * page of `pageSize` objects encoded as the server answers. Everything else
 * a create or list does is the same for both encodings.
 */
export function codecFigures(value: string, pageSize: number): { json: CodecFigures; cbor: CodecFigures } {
  const request = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-1', namespace: 'bench' }, data: { v: value } };
  const created = storedConfigMap(1, value);
  const page = { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '200000', continue: 'x' }, items: Array.from({ length: pageSize }, (_, i) => storedConfigMap(i, value)) };
  const jsonBody = JSON.stringify(request);
  const cborBody = encodeCbor(request);
  return {
    json: {
      createBodyBytes: Buffer.byteLength(jsonBody),
      createDecodeUs: cpuPerCall(() => makeStorable(parseJsonStrict(jsonBody).value)),
      createAnswerBytes: Buffer.byteLength(JSON.stringify(created)) + 1,
      createEncodeUs: cpuPerCall(() => Buffer.from(JSON.stringify(created) + '\n')),
      listPageBytes: Buffer.byteLength(JSON.stringify(page)) + 1,
      listPageEncodeUs: cpuPerCall(() => Buffer.from(JSON.stringify(page) + '\n')),
    },
    cbor: {
      createBodyBytes: cborBody.length,
      createDecodeUs: cpuPerCall(() => makeStorable(decodeCbor(cborBody))),
      createAnswerBytes: encodeCbor(created).length,
      createEncodeUs: cpuPerCall(() => encodeCbor(created)),
      listPageBytes: encodeCbor(page).length,
      listPageEncodeUs: cpuPerCall(() => encodeCbor(page)),
    },
  };
}

/** Prints {@link codecFigures} as a table, CBOR against JSON. */
export function printCodecFigures(value: string, pageSize: number): void {
  // The first round warms the JIT and both encoders; the second is printed.
  codecFigures(value, pageSize);
  const { json, cbor } = codecFigures(value, pageSize);
  const row = (name: string, j: number, c: number, unit: string) =>
    console.log(`${name.padEnd(34)} ${j.toFixed(unit === 'B' ? 0 : 1).padStart(9)} ${c.toFixed(unit === 'B' ? 0 : 1).padStart(9)} ${unit.padEnd(3)} ${(((c - j) / j) * 100).toFixed(1).padStart(7)}%`);
  console.log(`\nCBOR vs JSON, the HTTP encoding layer in process (ConfigMaps of ${value.length + 1} B data; list page of ${pageSize})`);
  console.log(`${'figure'.padEnd(34)} ${'JSON'.padStart(9)} ${'CBOR'.padStart(9)}     ${'CBOR-JSON'.padStart(8)}`);
  row('create: request body', json.createBodyBytes, cbor.createBodyBytes, 'B');
  row('create: decode body, CPU', json.createDecodeUs, cbor.createDecodeUs, 'µs');
  row('create: answer', json.createAnswerBytes, cbor.createAnswerBytes, 'B');
  row('create: encode answer, CPU', json.createEncodeUs, cbor.createEncodeUs, 'µs');
  row('list page: answer', json.listPageBytes, cbor.listPageBytes, 'B');
  row('list page: encode, CPU', json.listPageEncodeUs, cbor.listPageEncodeUs, 'µs');
}
