import YAML from 'yaml';
import { openApiV2DocumentType } from './openapi-v2-proto.descriptor.js';

type Json = Record<string, unknown>;
type Message = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const asObject = (v: unknown): Json => (isObject(v) ? v : {});
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Drops undefined and empty-array fields so proto3 defaults stay off the wire, as Go's encoder leaves them. */
function compact(m: Message): Message {
  const out: Message = {};
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
function bool(v: unknown): boolean | undefined {
  return v === true ? true : undefined;
}
function strings(v: unknown): string[] {
  return asArray(v).filter((s): s is string => typeof s === 'string');
}

/** gnostic's Any: the value rendered as YAML, which client-go parses back. */
function toAny(v: unknown): Message | undefined {
  return v === undefined ? undefined : { yaml: YAML.stringify(v, { lineWidth: 0 }) };
}

function vendorExtensions(obj: Json): Message[] {
  return Object.entries(obj)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, value]) => ({ name, value: toAny(value) }));
}

function named<T>(obj: unknown, convert: (v: unknown) => T): Array<{ name: string; value: T }> {
  return Object.entries(asObject(obj))
    .filter(([k]) => !k.startsWith('x-'))
    .map(([name, value]) => ({ name, value: convert(value) }));
}

function toExternalDocs(v: unknown): Message | undefined {
  if (!isObject(v)) return undefined;
  return compact({ description: str(v.description), url: str(v.url), vendor_extension: vendorExtensions(v) });
}

function toSchema(v: unknown): Message {
  const s = asObject(v);
  const ap = s.additionalProperties;
  const type = s.type;
  return compact({
    _ref: str(s.$ref),
    format: str(s.format),
    title: str(s.title),
    description: str(s.description),
    default: toAny(s.default),
    multiple_of: num(s.multipleOf),
    maximum: num(s.maximum),
    exclusive_maximum: bool(s.exclusiveMaximum),
    minimum: num(s.minimum),
    exclusive_minimum: bool(s.exclusiveMinimum),
    max_length: num(s.maxLength),
    min_length: num(s.minLength),
    pattern: str(s.pattern),
    max_items: num(s.maxItems),
    min_items: num(s.minItems),
    unique_items: bool(s.uniqueItems),
    max_properties: num(s.maxProperties),
    min_properties: num(s.minProperties),
    required: strings(s.required),
    enum: asArray(s.enum).map(toAny),
    additional_properties: typeof ap === 'boolean' ? { boolean: ap } : isObject(ap) ? { schema: toSchema(ap) } : undefined,
    type: typeof type === 'string' ? { value: [type] } : Array.isArray(type) ? { value: strings(type) } : undefined,
    items: Array.isArray(s.items) ? { schema: s.items.map(toSchema) } : isObject(s.items) ? { schema: [toSchema(s.items)] } : undefined,
    all_of: asArray(s.allOf).map(toSchema),
    properties: isObject(s.properties) ? { additional_properties: Object.entries(s.properties).map(([name, p]) => ({ name, value: toSchema(p) })) } : undefined,
    discriminator: str(s.discriminator),
    read_only: bool(s.readOnly),
    external_docs: toExternalDocs(s.externalDocs),
    example: toAny(s.example),
    vendor_extension: vendorExtensions(s),
  });
}

function toPrimitivesItems(v: unknown): Message | undefined {
  if (!isObject(v)) return undefined;
  return compact({
    type: str(v.type),
    format: str(v.format),
    items: toPrimitivesItems(v.items),
    collection_format: str(v.collectionFormat),
    default: toAny(v.default),
    enum: asArray(v.enum).map(toAny),
    unique_items: bool(v.uniqueItems),
    vendor_extension: vendorExtensions(v),
  });
}

const SUB_SCHEMA_FIELD: Readonly<Record<string, string>> = {
  header: 'header_parameter_sub_schema',
  formData: 'form_data_parameter_sub_schema',
  query: 'query_parameter_sub_schema',
  path: 'path_parameter_sub_schema',
};

/** A Parameter message (body or one of the non-body sub-schemas by `in`); undefined for an unknown `in`. */
function toParameter(v: unknown): Message | undefined {
  const p = asObject(v);
  const common = { description: str(p.description), name: str(p.name), in: str(p.in), required: bool(p.required) };
  if (p.in === 'body') {
    return { body_parameter: compact({ ...common, schema: isObject(p.schema) ? toSchema(p.schema) : undefined, vendor_extension: vendorExtensions(p) }) };
  }
  const field = typeof p.in === 'string' ? SUB_SCHEMA_FIELD[p.in] : undefined;
  if (!field) return undefined;
  const allowsEmpty = p.in === 'query' || p.in === 'formData';
  const sub = compact({
    ...common,
    allow_empty_value: allowsEmpty ? bool(p.allowEmptyValue) : undefined,
    type: str(p.type),
    format: str(p.format),
    items: toPrimitivesItems(p.items),
    collection_format: str(p.collectionFormat),
    default: toAny(p.default),
    maximum: num(p.maximum),
    minimum: num(p.minimum),
    max_length: num(p.maxLength),
    min_length: num(p.minLength),
    pattern: str(p.pattern),
    unique_items: bool(p.uniqueItems),
    enum: asArray(p.enum).map(toAny),
    vendor_extension: vendorExtensions(p),
  });
  return { non_body_parameter: { [field]: sub } };
}

function toParametersItem(v: unknown): Message | undefined {
  const p = asObject(v);
  if (typeof p.$ref === 'string') return { json_reference: compact({ _ref: p.$ref, description: str(p.description) }) };
  const parameter = toParameter(p);
  return parameter && { parameter };
}

function toParametersItems(v: unknown): Message[] {
  return asArray(v)
    .map(toParametersItem)
    .filter((m): m is Message => m !== undefined);
}

function toResponse(v: unknown): Message {
  const r = asObject(v);
  return compact({
    description: str(r.description),
    schema: isObject(r.schema) ? { schema: toSchema(r.schema) } : undefined,
    vendor_extension: vendorExtensions(r),
  });
}

function toResponses(v: unknown): Message | undefined {
  if (!isObject(v)) return undefined;
  const codes = named(v, (r) => {
    const o = asObject(r);
    return typeof o.$ref === 'string' ? { json_reference: compact({ _ref: o.$ref, description: str(o.description) }) } : { response: toResponse(o) };
  });
  return compact({ response_code: codes, vendor_extension: vendorExtensions(v) });
}

function toSecurity(v: unknown): Message[] {
  return asArray(v).map((req) => ({
    additional_properties: Object.entries(asObject(req)).map(([name, scopes]) => ({ name, value: { value: strings(scopes) } })),
  }));
}

function toOperation(v: unknown): Message | undefined {
  if (!isObject(v)) return undefined;
  return compact({
    tags: strings(v.tags),
    summary: str(v.summary),
    description: str(v.description),
    external_docs: toExternalDocs(v.externalDocs),
    operation_id: str(v.operationId),
    produces: strings(v.produces),
    consumes: strings(v.consumes),
    parameters: toParametersItems(v.parameters),
    responses: toResponses(v.responses),
    schemes: strings(v.schemes),
    deprecated: bool(v.deprecated),
    security: toSecurity(v.security),
    vendor_extension: vendorExtensions(v),
  });
}

function toPathItem(v: unknown): Message {
  const p = asObject(v);
  const item: Message = { _ref: str(p.$ref), parameters: toParametersItems(p.parameters), vendor_extension: vendorExtensions(p) };
  for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch']) item[method] = toOperation(p[method]);
  return compact(item);
}

function toSecurityDefinitions(v: unknown): Message | undefined {
  if (!isObject(v)) return undefined;
  const items = named(v, (d) => {
    const o = asObject(d);
    const base = { type: str(o.type), description: str(o.description), vendor_extension: vendorExtensions(o) };
    if (o.type === 'basic') return { basic_authentication_security: compact(base) };
    if (o.type === 'apiKey') return { api_key_security: compact({ ...base, name: str(o.name), in: str(o.in) }) };
    return undefined;
  }).filter((e) => e.value !== undefined);
  return { additional_properties: items };
}

function toInfo(v: unknown): Message | undefined {
  if (!isObject(v)) return undefined;
  const contact = isObject(v.contact) ? compact({ name: str(v.contact.name), url: str(v.contact.url), email: str(v.contact.email), vendor_extension: vendorExtensions(v.contact) }) : undefined;
  const license = isObject(v.license) ? compact({ name: str(v.license.name), url: str(v.license.url), vendor_extension: vendorExtensions(v.license) }) : undefined;
  return compact({
    title: str(v.title),
    version: str(v.version),
    description: str(v.description),
    terms_of_service: str(v.termsOfService),
    contact,
    license,
    vendor_extension: vendorExtensions(v),
  });
}

function toDocument(doc: Json): Message {
  const paths = isObject(doc.paths) ? compact({ vendor_extension: vendorExtensions(doc.paths), path: named(doc.paths, toPathItem) }) : undefined;
  return compact({
    swagger: str(doc.swagger),
    info: toInfo(doc.info),
    host: str(doc.host),
    base_path: str(doc.basePath),
    schemes: strings(doc.schemes),
    consumes: strings(doc.consumes),
    produces: strings(doc.produces),
    paths,
    definitions: isObject(doc.definitions) ? { additional_properties: named(doc.definitions, toSchema) } : undefined,
    parameters: isObject(doc.parameters) ? { additional_properties: named(doc.parameters, toParameter).filter((e) => e.value !== undefined) } : undefined,
    responses: isObject(doc.responses) ? { additional_properties: named(doc.responses, toResponse) } : undefined,
    security: toSecurity(doc.security),
    security_definitions: toSecurityDefinitions(doc.securityDefinitions),
    tags: asArray(doc.tags).map((t) => compact({ name: str(asObject(t).name), description: str(asObject(t).description), external_docs: toExternalDocs(asObject(t).externalDocs) })),
    external_docs: toExternalDocs(doc.externalDocs),
    vendor_extension: vendorExtensions(doc),
  });
}

/**
 * Encodes a Swagger 2.0 JSON document as gnostic's `openapi.v2.Document`
 * protobuf message, the `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`
 * form of `/openapi/v2` that client-go decodes. Vendor extensions (`x-…`)
 * become NamedAny entries holding YAML; `$ref` becomes `_ref`. Keys the
 * message has no field for are dropped. Pure: `doc` is not mutated.
 */
export function encodeOpenApiV2Proto(doc: object): Uint8Array {
  const message = openApiV2DocumentType.fromObject(toDocument(asObject(doc)));
  return openApiV2DocumentType.encode(message).finish();
}
