import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exporterUrl, parseTracingConfiguration } from './tracing-configuration.js';

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n';

describe('parseTracingConfiguration', () => {
  it('fills in upstream’s defaults: endpoint localhost:4317, samplingRatePerMillion 0', () => {
    assert.deepEqual(parseTracingConfiguration(HEAD), { endpoint: 'localhost:4317', samplingRatePerMillion: 0 });
  });

  it('takes v1, v1beta1 and v1alpha1, YAML or JSON', () => {
    assert.deepEqual(parseTracingConfiguration(`${HEAD}endpoint: collector:4317\nsamplingRatePerMillion: 1000000\n`), { endpoint: 'collector:4317', samplingRatePerMillion: 1_000_000 });
    const json = JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1beta1', kind: 'TracingConfiguration', samplingRatePerMillion: 100 });
    assert.equal(parseTracingConfiguration(json).samplingRatePerMillion, 100);
    assert.equal(parseTracingConfiguration('apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\n').endpoint, 'localhost:4317');
  });

  it('names the field of a sampling rate out of 0..1,000,000, with upstream’s texts', () => {
    assert.throws(() => parseTracingConfiguration(`${HEAD}samplingRatePerMillion: 1000001\n`), {
      message: 'samplingRatePerMillion: Invalid value: 1000001: sampling rate per million must be less than or equal to one million',
    });
    assert.throws(() => parseTracingConfiguration(`${HEAD}samplingRatePerMillion: -1\n`), { message: 'samplingRatePerMillion: Invalid value: -1: sampling rate must be positive' });
    assert.throws(() => parseTracingConfiguration(`${HEAD}samplingRatePerMillion: 0.5\n`), { message: 'samplingRatePerMillion: Invalid value: 0.5: must be an integer' });
  });

  it('accepts gRPC targets of scheme dns (host:port) and unix, and refuses others as upstream (and unix-abstract, which the exporter cannot dial)', () => {
    for (const endpoint of ['localhost:4317', 'dns:///collector:4317', 'unix:///run/otel.sock', 'unix:/run/otel.sock']) {
      assert.equal(parseTracingConfiguration(`${HEAD}endpoint: ${JSON.stringify(endpoint)}\n`).endpoint, endpoint);
    }
    assert.throws(() => parseTracingConfiguration(`${HEAD}endpoint: http://collector:4317\n`), {
      message: 'endpoint: Invalid value: "http://collector:4317": unsupported scheme: http.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md',
    });
    assert.throws(() => parseTracingConfiguration(`${HEAD}endpoint: unix-abstract:///otel\n`), /unix-abstract is not supported/);
  });

  it('refuses another kind, unknown fields (strict decoding) and several bad fields at once', () => {
    assert.throws(() => parseTracingConfiguration('apiVersion: v1\nkind: ConfigMap\n'), /expected kind TracingConfiguration/);
    assert.throws(() => parseTracingConfiguration(`${HEAD}samplingRate: 5\n`), { message: 'strict decoding error: unknown field "samplingRate"' });
    assert.throws(() => parseTracingConfiguration(`${HEAD}endpoint: https://x:1\nsamplingRatePerMillion: 2000000\n`), /^Error: endpoint: .*; samplingRatePerMillion: /);
  });

  it('gives the exporter plain gRPC to host:port, unix targets as they are', () => {
    assert.equal(exporterUrl('collector:4317'), 'http://collector:4317');
    assert.equal(exporterUrl('dns:///collector:4317'), 'http://collector:4317');
    assert.equal(exporterUrl('unix:///run/otel.sock'), 'unix:///run/otel.sock');
    assert.equal(exporterUrl('unix:/run/otel.sock'), 'unix:///run/otel.sock');
  });
});
