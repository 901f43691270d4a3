import * as x509 from '@peculiar/x509';
import type { Logger } from 'pino';
import { ApiError, type KubeObject } from '@plinth/apimachinery';
import type { ControllerManager } from '../controllers/controller-manager.js';
import { InformerController, type KeySource, onInformer } from '../controllers/informer-controller.js';
import type { SharedInformer } from '../controllers/shared-informer.js';
import {
  csrSpec,
  decodeBytes,
  hasTrueCondition,
  issuedCertificate,
  KUBE_APISERVER_CLIENT_SIGNER,
  MASTERS_GROUP,
  parseCertificateRequest,
  requestedOrganizations,
} from '../kinds/certificates/csr-api.js';
import { csrStatusStrategy } from '../kinds/certificates/csr.strategy.js';
import type { CertificateAuthority } from '../pki/certificate-authority.js';
import { isTenantBindingUri, tenantBindingName } from '../pki/tenant-binding.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { ResourceStoreService } from '../resource-store/resource-store.service.js';
import type { WriteContext } from '../resource-store/write-context.js';
import { clientCertificateValidity, clientUsagesError } from './client-signer-policy.js';

/** The identity of the signer's writes (upstream's certificate controller). */
const SIGNER_USER = { username: 'system:serviceaccount:kube-system:certificate-controller', uid: '', groups: ['system:masters', 'system:authenticated'] };

/** What the signer needs. */
export interface ClientSignerDeps {
  /** The CA that signs (the generated one, which the client CA bundle holds). */
  ca: CertificateAuthority;
  registry: ResourceRegistry;
  store: ResourceStoreService;
  /** CertificateSigningRequests of every tenant (the shared informer the signer reads from). */
  requests: SharedInformer;
  /** The uid of a tenant as it exists now (its certificates name it); undefined when it does not exist. */
  tenantUid: (tenant: string) => Promise<string | undefined>;
  logger: Logger;
  queues: Pick<ControllerManager, 'queue'>;
  now?: () => Date;
}

/** The requested DNS, IP, email and URI alternative names (what upstream's signer copies; other kinds are dropped). */
function requestedAltNames(request: x509.Pkcs10CertificateRequest): x509.JsonGeneralNames {
  const ext = request.getExtension('2.5.29.17');
  if (!ext) return [];
  return new x509.SubjectAlternativeNameExtension(ext.rawData).names.toJSON().filter((n) => ['dns', 'ip', 'email', 'url'].includes(n.type));
}

const keyOf = (tenant: string, name: string) => `${tenant}\u0000${name}`;

const KEY_USAGE_FLAGS: Record<string, number> = {
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
};

/**
 * Upstream's `kubernetes.io/kube-apiserver-client` signer
 * (pkg/controller/certificates/signer), one per cluster (elected): an
 * approved request of that signer, neither failed nor issued yet, gets a
 * client certificate from the CA in status.certificate: the request's
 * subject and alternative names, its key, the requested usages, valid for
 * expirationSeconds capped at one year, and bound to the request's tenant
 * (a URI alternative name, pki/tenant-binding.ts), so it authenticates in
 * that tenant only. A request this signer refuses (usages other than client
 * auth with digital signature and key encipherment, a system:masters
 * organization, or a URI under the binding's prefix) gets
 * the condition Failed with reason SignerValidationFailure instead.
 */
export class KubeApiserverClientSigner extends InformerController {
  constructor(private readonly deps: ClientSignerDeps) {
    super({ name: 'csrsigning-kube-apiserver-client', workers: 2, queues: deps.queues });
  }

  /** Every request that is not deleted, as it changes (and all of them when the controller starts). */
  protected sources(): KeySource[] {
    return [onInformer(this.deps.requests, (e) => (e.type === 'delete' ? undefined : keyOf(e.object.key.tenant, e.object.key.name)))];
  }

  protected async reconcile(key: string): Promise<void> {
    const [tenant, name] = key.split('\u0000');
    const def = this.deps.registry.lookup(tenant, 'certificates.k8s.io', 'v1', 'certificatesigningrequests');
    if (!def) return;
    const csr = this.deps.requests.get(tenant, '', name)?.body as KubeObject | undefined;
    if (!csr || !this.wants(csr)) return;
    const status = await this.decide(tenant, csr);
    const ctx: WriteContext = {
      tenant,
      def,
      namespace: '',
      subresource: 'status',
      user: SIGNER_USER,
      dryRun: false,
      options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1' },
      warnings: [],
      fieldManager: 'kube-controller-manager',
    };
    try {
      await this.deps.store.update(ctx, name, (o) => (this.wants(o) && o.metadata.uid === csr.metadata.uid ? status(o) : o), csrStatusStrategy);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return;
      throw err;
    }
  }

  /** Approved, of this signer, not failed, not issued. */
  private wants(csr: KubeObject): boolean {
    return csrSpec(csr).signerName === KUBE_APISERVER_CLIENT_SIGNER && hasTrueCondition(csr, 'Approved') && !hasTrueCondition(csr, 'Failed') && issuedCertificate(csr) === '';
  }

  /** What the request's status becomes: the certificate, or the Failed condition. Signs before the write (no I/O inside the update). */
  private async decide(tenant: string, csr: KubeObject): Promise<(o: KubeObject) => KubeObject> {
    const spec = csrSpec(csr);
    const usages = spec.usages ?? [];
    let refusal = clientUsagesError(usages);
    let request: x509.Pkcs10CertificateRequest | undefined;
    try {
      request = await parseCertificateRequest(decodeBytes(spec.request) ?? Buffer.alloc(0));
      if (!refusal && requestedOrganizations(request).includes(MASTERS_GROUP)) refusal = `a tenant may not request the ${MASTERS_GROUP} group`;
      if (!refusal && requestedAltNames(request).some((n) => n.type === 'url' && isTenantBindingUri(n.value))) refusal = 'the tenant binding URI may not be requested';
    } catch (err) {
      refusal ??= `unable to parse csr: ${(err as Error).message}`;
    }
    const uid = refusal || !request ? undefined : await this.deps.tenantUid(tenant);
    if (!refusal && uid === undefined) refusal = `tenant ${tenant} does not exist`;
    if (refusal || !request || uid === undefined) return (o) => this.fail(o, refusal ?? 'unable to parse csr');
    const certPem = await this.sign(tenant, uid, request, usages, spec.expirationSeconds);
    return (o) => {
      o.status = { ...(o.status as object), certificate: Buffer.from(certPem).toString('base64') };
      return o;
    };
  }

  private fail(o: KubeObject, message: string): KubeObject {
    const status = (o.status ?? {}) as { conditions?: unknown[] };
    const at = (this.deps.now?.() ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
    status.conditions = [...(status.conditions ?? []), { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message, lastUpdateTime: at }];
    o.status = status;
    return o;
  }

  private async sign(tenant: string, uid: string, request: x509.Pkcs10CertificateRequest, usages: string[], expirationSeconds: number | undefined): Promise<string> {
    const { notBefore, notAfter } = clientCertificateValidity(this.deps.now?.() ?? new Date(), expirationSeconds);
    const names = requestedAltNames(request);
    return this.deps.ca.sign({
      publicKey: request.publicKey,
      subject: request.subjectName,
      notBefore,
      notAfter,
      keyUsages: usages.reduce((flags, u) => flags | (KEY_USAGE_FLAGS[u] ?? 0), 0),
      extKeyUsages: [x509.ExtendedKeyUsage.clientAuth],
      extensions: [new x509.SubjectAlternativeNameExtension([...names, tenantBindingName(tenant, uid)])],
    });
  }
}
