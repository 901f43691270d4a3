import { parse as parseYaml } from 'yaml';

/**
 * Upstream's TracingConfiguration (apiserver.config.k8s.io, kube-apiserver's
 * --tracing-config-file), validated, with upstream's defaults filled in.
 */
export interface TracingConfiguration {
  /** The OTLP gRPC collector, `host:port` (upstream's default `localhost:4317`), or `unix:///path` (or `unix:/path`). */
  endpoint: string;
  /** Requests sampled per million (0 to 1,000,000; default 0: only requests whose incoming trace context is sampled). */
  samplingRatePerMillion: number;
}

/** Thrown for an unusable tracing file; the message names the field (`samplingRatePerMillion: Invalid value: …`). */
export class TracingConfigError extends Error {}

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'];
const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'endpoint', 'samplingRatePerMillion']);
const MAX_SAMPLING_RATE = 1_000_000;
/** gRPC's name-resolution schemes upstream accepts (https://github.com/grpc/grpc/blob/master/doc/naming.md). */
const SCHEMES = new Set(['dns', 'unix', 'unix-abstract']);

/** Upstream's check of `endpoint`: a gRPC target, `host:port` read as `dns://host:port`. Returns the errors' texts. */
function endpointErrors(endpoint: string): string[] {
  const target = endpoint.includes('//') ? endpoint : `dns://${endpoint}`;
  let scheme: string;
  try {
    scheme = new URL(target).protocol.replace(/:$/, '');
  } catch {
    return [`endpoint: Invalid value: ${JSON.stringify(target)}: not a URL`];
  }
  // The OpenTelemetry JS exporter (grpc-js through its URL option) cannot dial an abstract socket.
  if (scheme === 'unix-abstract') return [`endpoint: Invalid value: ${JSON.stringify(target)}: unix-abstract is not supported by Plinth's exporter; use host:port or unix:///path`];
  if (SCHEMES.has(scheme)) return [];
  return [`endpoint: Invalid value: ${JSON.stringify(target)}: unsupported scheme: ${scheme}.  Options are none, dns, unix, or unix-abstract.  See https://github.com/grpc/grpc/blob/master/doc/naming.md`];
}

/** Upstream's check of `samplingRatePerMillion` (an int32 from 0 to one million). Returns the errors' texts. */
function samplingErrors(rate: unknown): string[] {
  if (typeof rate !== 'number' || !Number.isInteger(rate)) return [`samplingRatePerMillion: Invalid value: ${JSON.stringify(rate)}: must be an integer`];
  if (rate < 0) return [`samplingRatePerMillion: Invalid value: ${rate}: sampling rate must be positive`];
  if (rate > MAX_SAMPLING_RATE) return [`samplingRatePerMillion: Invalid value: ${rate}: sampling rate per million must be less than or equal to one million`];
  return [];
}

/**
 * Parses and validates a TracingConfiguration file (YAML or JSON) as
 * kube-apiserver does: apiVersion apiserver.config.k8s.io/v1 (or v1beta1,
 * v1alpha1), kind TracingConfiguration, no unknown field (strict decoding),
 * `endpoint` a gRPC target of scheme dns (the default, `host:port`), unix or
 * unix-abstract (refused here: the exporter cannot dial it), `samplingRatePerMillion` 0 to 1,000,000. Pure. Throws
 * TracingConfigError naming each bad field (`; ` between them).
 */
export function parseTracingConfiguration(text: string): TracingConfiguration {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new TracingConfigError(`not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new TracingConfigError('expected a TracingConfiguration object');
  const r = raw as Record<string, unknown>;
  if (!API_VERSIONS.includes(String(r.apiVersion)) || r.kind !== 'TracingConfiguration') {
    throw new TracingConfigError(`expected kind TracingConfiguration in ${API_VERSIONS.join(', ')}; got ${String(r.apiVersion)}/${String(r.kind)}`);
  }
  const unknown = Object.keys(r).filter((k) => !KNOWN_FIELDS.has(k));
  if (unknown.length > 0) throw new TracingConfigError(`strict decoding error: ${unknown.map((k) => `unknown field ${JSON.stringify(k)}`).join(', ')}`);
  const errors: string[] = [];
  if (r.endpoint !== undefined && r.endpoint !== null) {
    if (typeof r.endpoint !== 'string') errors.push(`endpoint: Invalid value: ${JSON.stringify(r.endpoint)}: must be a string`);
    else errors.push(...endpointErrors(r.endpoint));
  }
  if (r.samplingRatePerMillion !== undefined && r.samplingRatePerMillion !== null) errors.push(...samplingErrors(r.samplingRatePerMillion));
  if (errors.length > 0) throw new TracingConfigError(errors.join('; '));
  return {
    endpoint: typeof r.endpoint === 'string' && r.endpoint !== '' ? r.endpoint : 'localhost:4317',
    samplingRatePerMillion: typeof r.samplingRatePerMillion === 'number' ? r.samplingRatePerMillion : 0,
  };
}

/**
 * The URL the OTLP gRPC exporter takes for a validated `endpoint`:
 * `http://host:port` (plain gRPC, as upstream's exporter: no TLS), or the
 * `unix:` target as it is.
 */
export function exporterUrl(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return endpoint;
  if (endpoint.startsWith('unix:')) return `unix://${endpoint.slice('unix:'.length)}`;
  const host = endpoint.replace(/^dns:\/\/[^/]*\//, '').replace(/^dns:/, '');
  return `http://${host}`;
}
