import 'reflect-metadata';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';
import * as x509 from '@peculiar/x509';

/**
 * How a client certificate is bound to one tenant: a URI subject
 * alternative name `urn:plinth:tenant:<tenant>/<uid>` (as SPIFFE carries a
 * workload's identity). Only Plinth's signer writes it: it refuses
 * requests that ask for a URI with this prefix and adds the request's own
 * tenant and that tenant's uid. Plinth's authentication admits a bound
 * certificate in that tenant only, and only while the tenant is the same
 * one (a tenant deleted and created again under its name has another uid);
 * other TLS stacks ignore it.
 */
export const TENANT_URI_PREFIX = 'urn:plinth:tenant:';

/** The tenant (and the uid of its incarnation) a certificate is bound to. */
export interface TenantBinding {
  tenant: string;
  uid: string;
}

/** The alternative name binding a certificate to `tenant` whose uid is `uid`. */
export function tenantBindingName(tenant: string, uid: string): x509.JsonGeneralName {
  return { type: 'url', value: `${TENANT_URI_PREFIX}${tenant}/${uid}` };
}

/** True when `uri` falls under the reserved prefix (a request may not ask for it). Case-insensitive, as URN prefixes are. */
export function isTenantBindingUri(uri: string): boolean {
  return uri.toLowerCase().startsWith(TENANT_URI_PREFIX);
}

/**
 * The tenant a DER certificate is bound to; undefined when it carries no
 * binding. Throws when it carries more than one, or one without a tenant
 * or a uid (the caller must refuse such a certificate).
 */
export function boundTenant(der: Uint8Array): TenantBinding | undefined {
  const cert = new x509.X509Certificate(der);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  if (!san) return undefined;
  const bound = san.names.items.filter((n) => n.type === 'url' && isTenantBindingUri(n.value)).map((n) => n.value.slice(TENANT_URI_PREFIX.length));
  if (bound.length === 0) return undefined;
  const slash = bound[0].indexOf('/');
  if (bound.length > 1 || slash <= 0 || slash === bound[0].length - 1) throw new Error('malformed tenant binding');
  return { tenant: bound[0].slice(0, slash), uid: bound[0].slice(slash + 1) };
}

/** The subject attribute upstream reads a client certificate's user UID from (AllowParsingUserUIDFromCertAuth, beta in 1.34). */
export const USER_UID_OID = '1.3.6.1.4.1.57683.2';

/**
 * The values of a DER certificate's subject UID attributes ({@link USER_UID_OID}), in order. Throws "unable to parse UID
 * into a string" when one is not an ASN.1 string type (upstream's message).
 */
export function subjectUids(der: Uint8Array): string[] {
  const cert = AsnConvert.parse(der, Certificate);
  const uids: string[] = [];
  for (const rdn of cert.tbsCertificate.subject) {
    for (const attribute of rdn) {
      if (attribute.type !== USER_UID_OID) continue;
      // A string type fills one of the DirectoryString fields; anything else is kept as `anyValue`.
      if (attribute.value.anyValue !== undefined) throw new Error('unable to parse UID into a string');
      uids.push(attribute.value.toString());
    }
  }
  return uids;
}
