import { KubeConfig } from '@kubernetes/client-node';
import { adminIdentity, type ClientIdentity } from './credentials.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/**
 * A @kubernetes/client-node KubeConfig for `server` trusting the test CA
 * and authenticating as `id` (by default the platform administrator).
 */
export function testKubeConfig(server: string, id: ClientIdentity = adminIdentity()): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'plinth', server, caData: b64(id.caPem), skipTLSVerify: false }],
    users: [{ name: 'u', certData: id.certPem ? b64(id.certPem) : undefined, keyData: id.keyPem ? b64(id.keyPem) : undefined, token: id.token }],
    contexts: [{ name: 'c', cluster: 'plinth', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}
