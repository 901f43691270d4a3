import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  type AdmissionError,
  type EgressRefusal,
  OPAQUE_TRANSPORT_FAILURE,
  ServiceResolver,
  StaticWebhookSource,
  ValidatingWebhookModule,
  WebhookClient,
  WebhookEgressPolicy,
  WebhookTransportError,
} from '@plinth/admission';
import { makeCertificates, type TestCertificates, TestWebhookServer, webhookConfiguration } from './support/webhook-server.js';

/** Lets an untrusted tenant reach this machine's loopback, so the opaque errors can be observed locally. */
class AnywherePolicy extends WebhookEgressPolicy {
  override refusal(): EgressRefusal | undefined {
    return undefined;
  }
  override hostRefusal(): EgressRefusal | undefined {
    return undefined;
  }
}

describe('WebhookEgressPolicy', () => {
  const policy = new WebhookEgressPolicy({ trustedTenants: ['platform'], ownAddresses: ['192.0.2.7'], allowPrivateNetworks: false });

  it('refuses loopback, unspecified, link-local, multicast, own and (when configured) private addresses', () => {
    const cases: Array<[string, EgressRefusal | undefined]> = [
      ['127.0.0.1', 'loopback'],
      ['127.8.9.10', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['0.0.0.0', 'loopback'],
      ['::', 'loopback'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['224.0.0.1', 'multicast'],
      ['192.0.2.7', 'own address'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['fd00::1', 'private'],
      ['93.184.216.34', undefined],
      ['2606:4700::1', undefined],
    ];
    for (const [address, want] of cases) assert.equal(policy.refusal('tenant', address), want, address);
    assert.equal(new WebhookEgressPolicy({ ownAddresses: [] }).refusal('tenant', '10.1.2.3'), undefined, 'private ranges are allowed by default');
  });

  it('exempts trusted tenants from loopback and own addresses, never from link-local', () => {
    assert.equal(policy.refusal('platform', '127.0.0.1'), undefined);
    assert.equal(policy.refusal('platform', '192.0.2.7'), undefined);
    assert.equal(policy.refusal('platform', '169.254.169.254'), 'link-local');
    assert.equal(policy.hostRefusal('platform', 'localhost'), undefined);
    assert.equal(policy.hostRefusal('tenant', 'LOCALHOST.'), 'loopback');
    assert.equal(policy.hostRefusal('tenant', 'api.localhost'), 'loopback');
    assert.equal(policy.hostRefusal('tenant', 'example.com'), undefined, 'names are checked after resolution');
  });

  it('refuses a name whose resolution includes a refused address', async () => {
    const lookup = policy.lookupFor('tenant');
    const err = await new Promise<Error | null>((resolve) => (lookup as unknown as (h: string, o: object, cb: (e: Error | null) => void) => void)('localhost', {}, resolve));
    assert.equal((err as { code?: string } | null)?.code, 'EGRESS_REFUSED');
  });
});

describe('webhook failures seen by an untrusted tenant', () => {
  let certs: TestCertificates;
  let hooks: TestWebhookServer;
  let closedPort: number;
  let plainTcp: net.Server;
  let plainPort: number;
  const client = new WebhookClient();

  before(async () => {
    certs = await makeCertificates();
    hooks = await TestWebhookServer.start(certs);
    hooks.on('/secret', () => ({ raw: 'internal service secret: db password hunter2', status: 500 }));
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedPort = (probe.address() as net.AddressInfo).port;
    await new Promise((r) => probe.close(r));
    plainTcp = net.createServer((sock) => sock.end('SSH-2.0-OpenSSH_9.6\r\n'));
    await new Promise<void>((r) => plainTcp.listen(0, '127.0.0.1', r));
    plainPort = (plainTcp.address() as net.AddressInfo).port;
  });
  after(async () => {
    await client.close();
    await hooks?.close();
    plainTcp?.close();
  });

  async function failure(port: number, egress: boolean): Promise<string> {
    const target = { url: new URL(`https://127.0.0.1:${port}/x`), caBundle: certs.caBundle, ...(egress ? { egress: { policy: new AnywherePolicy(), tenant: 'acme' } } : {}) };
    const err = await client.post(target, '{}', 5000).then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WebhookTransportError);
    return err.message;
  }

  it('gets the same words for a closed port and an open port that is not a webhook', async () => {
    const closed = await failure(closedPort, true);
    const open = await failure(plainPort, true);
    assert.equal(closed, OPAQUE_TRANSPORT_FAILURE);
    assert.equal(open, OPAQUE_TRANSPORT_FAILURE);
    // Operator-configured targets keep the detailed texts.
    assert.match(await failure(closedPort, false), /connect: connection refused/);
  });

  it('never sees the body of an HTTP error', async () => {
    const module = (egress: WebhookEgressPolicy) =>
      new ValidatingWebhookModule({
        source: new StaticWebhookSource([], [webhookConfiguration('Validating', 'secret', [{ name: 'secret.plinth.test', url: hooks.url('/secret'), caBundle: certs.caBundle }]) as never]),
        client,
        services: ServiceResolver.parse(''),
        egress,
        namespaceLabels: async () => ({}),
      });
    const attrs = {
      tenant: 'acme',
      user: { username: 'u', groups: [] },
      operation: 'CREATE' as const,
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      subresource: '',
      namespace: 'ns',
      namespaced: true,
      name: 'cm',
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'ns' } },
      oldObject: null,
      dryRun: false,
      options: {},
    };
    const untrusted = await module(new AnywherePolicy()).validate!(attrs as never, { warnings: [] }).then(
      () => assert.fail('expected a failure'),
      (e: AdmissionError) => e.message,
    );
    assert.equal(untrusted, 'Internal error occurred: failed calling webhook "secret.plinth.test": the webhook answered with HTTP status 500');
    const trusted = await module(new AnywherePolicy({ trustedTenants: ['acme'] })).validate!(attrs as never, { warnings: [] }).then(
      () => assert.fail('expected a failure'),
      (e: AdmissionError) => e.message,
    );
    assert.match(trusted, /hunter2/, 'the trusted tenant (local development) gets the detailed text');
  });
});
