import { AuthenticationError, type AuthenticationResult, type CredentialRequest, type RequestAuthenticator } from './authenticator.js';

/** Extended key usage OID of client authentication. */
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
/** Extended key usage OID of "any". */
const ANY_EKU_OID = '2.5.29.37.0';

/**
 * Client certificates signed by the client CA, as upstream's x509
 * authenticator: user = subject CN, groups = subject O values. A presented
 * certificate that does not verify, or is not for client authentication, is
 * an error (other authenticators may still succeed).
 */
export class X509Authenticator implements RequestAuthenticator {
  readonly name = 'x509';

  authenticate(req: CredentialRequest): AuthenticationResult | null {
    const cert = req.peerCertificate;
    if (!cert) return null;
    if (!cert.verified) throw new AuthenticationError(`x509: certificate signed by unknown authority or invalid (${cert.verifyError ?? 'unverified'})`);
    if (cert.extKeyUsage && !cert.extKeyUsage.includes(CLIENT_AUTH_OID) && !cert.extKeyUsage.includes(ANY_EKU_OID)) {
      throw new AuthenticationError('x509: certificate specifies an incompatible key usage');
    }
    if (!cert.commonName) return null;
    return { user: { username: cert.commonName, groups: [...cert.organizations] } };
  }
}
