import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/**
 * The X.509 extension that binds a client certificate to one tenant: an
 * OID of the UUID arc (2.25, ITU-T X.667, unique without registration),
 * its value a DER UTF8String holding the tenant's name. Non-critical, so
 * TLS stacks that do not know it still verify the certificate; Plinth's
 * authentication reads it and admits the certificate in that tenant only.
 */
export const TENANT_BINDING_OID = '2.25.128359261175504976711696031948230774205';

/** DER tag of UTF8String. */
const UTF8_STRING = 0x0c;
/** Tenant names are DNS labels (at most 63 bytes), so the short length form always suffices. */
const MAX_SHORT_LENGTH = 127;

/** The extension binding a certificate to `tenant`. Throws when the name is too long to be a tenant's. */
export function tenantBindingExtension(tenant: string): x509.Extension {
  const bytes = Buffer.from(tenant, 'utf8');
  if (bytes.length === 0 || bytes.length > MAX_SHORT_LENGTH) throw new Error(`tenant name "${tenant}" cannot be bound into a certificate`);
  return new x509.Extension(TENANT_BINDING_OID, false, Buffer.concat([Buffer.from([UTF8_STRING, bytes.length]), bytes]));
}

/**
 * The tenant a DER certificate is bound to; undefined when it carries no
 * binding. Throws when the binding is present but malformed (the caller
 * must refuse such a certificate: it would otherwise reach every tenant).
 */
export function boundTenant(der: Uint8Array): string | undefined {
  const cert = new x509.X509Certificate(der);
  const ext = cert.extensions.find((e) => e.type === TENANT_BINDING_OID);
  if (!ext) return undefined;
  const v = Buffer.from(ext.value);
  if (v.length < 3 || v[0] !== UTF8_STRING || v[1] > MAX_SHORT_LENGTH || v[1] !== v.length - 2) throw new Error('malformed tenant binding');
  return v.subarray(2).toString('utf8');
}
