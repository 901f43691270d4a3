import { TENANT_EXTRA_KEY } from '@plinth/apimachinery';
import { AuthenticationError, type AuthenticationResult, type CredentialRequest, type PeerCertificate, type RequestAuthenticator } from './authenticator.js';

/** Extended key usage OID of client authentication. */
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
/** Extended key usage OID of "any". */
const ANY_EKU_OID = '2.5.29.37.0';

/** The group no tenant-bound certificate may carry (CertificateSubjectRestriction refuses to issue one). */
const MASTERS_GROUP = 'system:masters';

/**
 * Client certificates signed by the client CA, as upstream's x509
 * authenticator: user = subject CN, groups = subject O values. A presented
 * certificate that does not verify, or is not for client authentication, is
 * an error (other authenticators may still succeed). A certificate bound to
 * a tenant (issued through a CertificateSigningRequest there) reaches that
 * tenant only: its user carries the tenant as `tenancy.plinth.dev/tenant`
 * extra, which authentication and impersonation hold it to; a bound
 * certificate naming system:masters, or a malformed binding, is refused.
 */
export class X509Authenticator implements RequestAuthenticator {
  readonly name = 'x509';

  /**
   * `tenantUid`: the uid of a tenant as it exists now (undefined when it does not): a bound certificate must name it.
   * `parseUid`: AllowParsingUserUIDFromCertAuth (beta, on by default since 1.34): the user's uid is the subject's
   * one UID attribute (OID 1.3.6.1.4.1.57683.2); several, an empty one or one that is not a string refuse the certificate.
   */
  constructor(
    private readonly tenantUid: (tenant: string) => Promise<string | undefined>,
    private readonly parseUid = true,
  ) {}

  authenticate(req: CredentialRequest): AuthenticationResult | null | Promise<AuthenticationResult | null> {
    const cert = req.peerCertificate;
    if (!cert) return null;
    if (!cert.verified) throw new AuthenticationError(`x509: certificate signed by unknown authority or invalid (${cert.verifyError ?? 'unverified'})`);
    if (cert.extKeyUsage && !cert.extKeyUsage.includes(CLIENT_AUTH_OID) && !cert.extKeyUsage.includes(ANY_EKU_OID)) {
      throw new AuthenticationError('x509: certificate specifies an incompatible key usage');
    }
    if (cert.bindingError) throw new AuthenticationError(`x509: ${cert.bindingError}`);
    if (!cert.commonName) return null;
    const uid = this.parseUid ? userUid(cert) : undefined;
    const named = uid === undefined ? {} : { uid };
    if (cert.tenant === undefined) return { user: { username: cert.commonName, ...named, groups: [...cert.organizations] } };
    if (cert.organizations.includes(MASTERS_GROUP)) throw new AuthenticationError(`x509: a tenant certificate may not carry ${MASTERS_GROUP}`);
    const result: AuthenticationResult = {
      user: { username: cert.commonName, ...named, groups: [...cert.organizations], extra: { [TENANT_EXTRA_KEY]: [cert.tenant] } },
      tenants: [cert.tenant],
    };
    // Elsewhere the chain refuses it anyway (its tenants); here, only the incarnation it was issued in admits it.
    if (cert.tenant !== req.tenant) return result;
    const issuedIn = cert.tenantUid;
    return this.tenantUid(cert.tenant).then((uid) => {
      if (uid === undefined || uid !== issuedIn) throw new AuthenticationError(`x509: the certificate was issued in an earlier tenant named ${cert.tenant}`);
      return result;
    });
  }
}

/** The user's uid from the certificate's UID attributes, with upstream's errors; undefined when it has none. */
function userUid(cert: PeerCertificate): string | undefined {
  if (cert.uidError) throw new AuthenticationError(`x509: ${cert.uidError}`);
  const uids = cert.uids ?? [];
  if (uids.length === 0) return undefined;
  if (uids.length !== 1) throw new AuthenticationError(`x509: expected 1 UID, but found multiple: [${uids.join(' ')}]`);
  if (uids[0] === '') throw new AuthenticationError('x509: UID cannot be an empty string');
  return uids[0];
}
