import { setTimeout as sleep } from 'node:timers/promises';
import { type Caller, type JsonAnswer, requestJson } from './caller-kubeconfig.js';
import { generateClientRequest, renderUserKubeconfig } from '../pki/user-credentials.js';

const SIGNER = 'kubernetes.io/kube-apiserver-client';
const PLATFORM_TENANT = 'default';

/** What to issue. */
export interface IssueOptions {
  caller: Caller;
  tenant: string;
  user: string;
  groups: string[];
  expirationSeconds?: number;
  /** How long to wait for approval and the certificate. */
  waitMs: number;
  /** Progress lines (to stderr in the CLI). */
  log: (line: string) => void;
}

/** The outcome: the kubeconfig text and the request's name. */
export interface Issued {
  kubeconfig: string;
  requestName: string;
}

/** `https://host/clusters/<tenant>`, or the base URL for the platform scope. */
export function tenantUrl(baseUrl: string, tenant: string): string {
  return tenant === PLATFORM_TENANT ? baseUrl : `${baseUrl}/clusters/${encodeURIComponent(tenant)}`;
}

function failure(what: string, a: JsonAnswer): Error {
  return new Error(`${what}: ${a.status} ${typeof a.body.message === 'string' ? a.body.message : JSON.stringify(a.body)}`);
}

type Csr = { status?: { certificate?: string; conditions?: Array<{ type: string; status: string; message?: string }> } };

/**
 * Issues a client certificate for `user` of `tenant` through the API, as
 * the caller: generates a key and a request, creates the
 * CertificateSigningRequest (kube-apiserver-client signer) in the tenant,
 * approves it when the caller may (else waits for an approver), waits for
 * the certificate and returns a kubeconfig for the tenant. Throws when the
 * request is refused, denied, fails or is not issued within `waitMs`.
 */
export async function issueUserKubeconfig(o: IssueOptions): Promise<Issued> {
  const base = `${tenantUrl(o.caller.baseUrl, o.tenant)}/apis/certificates.k8s.io/v1/certificatesigningrequests`;
  const { keyPem, csrPem } = await generateClientRequest(o.user, o.groups);
  const created = await requestJson(o.caller, 'POST', base, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: `${o.user.replace(/[^a-z0-9.-]/g, '-').slice(0, 40) || 'user'}-` },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName: SIGNER, usages: ['digital signature', 'client auth'], ...(o.expirationSeconds ? { expirationSeconds: o.expirationSeconds } : {}) },
  });
  if (created.status !== 201) throw failure('creating the CertificateSigningRequest', created);
  const name = (created.body.metadata as { name: string }).name;
  o.log(`certificatesigningrequest/${name} created in tenant ${o.tenant}`);
  await approve(o, `${base}/${name}`, created.body);
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    const got = await requestJson(o.caller, 'GET', `${base}/${name}`);
    if (got.status !== 200) throw failure(`reading certificatesigningrequest/${name}`, got);
    const status = (got.body as Csr).status ?? {};
    const ended = status.conditions?.find((c) => (c.type === 'Denied' || c.type === 'Failed') && c.status === 'True');
    if (ended) throw new Error(`certificatesigningrequest/${name} ${ended.type.toLowerCase()}: ${ended.message ?? ''}`);
    if (status.certificate) {
      const certPem = Buffer.from(status.certificate, 'base64').toString('utf8');
      const kubeconfig = renderUserKubeconfig({ server: tenantUrl(o.caller.baseUrl, o.tenant), caPem: o.caller.caPem, certPem, keyPem, context: `${o.user}@${o.tenant}`, user: o.user });
      return { kubeconfig, requestName: name };
    }
    if (Date.now() > deadline) throw new Error(`certificatesigningrequest/${name} was not issued in time; an approver can run: kubectl certificate approve ${name}`);
    await sleep(500);
  }
}

/** Adds the Approved condition through `approval` when the caller may; otherwise says who must. */
async function approve(o: IssueOptions, url: string, csr: Record<string, unknown>): Promise<void> {
  const status = (csr.status ?? {}) as { conditions?: unknown[] };
  const body = {
    ...csr,
    status: { ...status, conditions: [...(status.conditions ?? []), { type: 'Approved', status: 'True', reason: 'PlinthKubeconfigApprove', message: 'approved by plinth kubeconfig' }] },
  };
  const approved = await requestJson(o.caller, 'PUT', `${url}/approval`, body);
  if (approved.status === 200) return o.log(`approved`);
  if (approved.status !== 403) throw failure('approving the request', approved);
  o.log(`you may not approve it; waiting for an approver: kubectl certificate approve ${String((csr.metadata as { name: string }).name)}`);
}
