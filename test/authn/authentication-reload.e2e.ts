import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import { stringify } from 'yaml';
import { CertificateAuthority } from '../../apps/api/src/pki/certificate-authority.js';
import { anonymousIdentity, requestAs, tokenIdentity } from '../support/credentials.js';
import { eventually } from '../support/eventually.js';
import { OidcTestIssuer } from '../support/oidc-test-issuer.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ANONYMOUS = { enabled: true, conditions: [{ path: '/healthz' }] };

// PLINTH_AUTHENTICATION_CONFIG is reloaded when the file changes, as upstream's: JWT issuers added and removed
// without a restart, a bad file keeping the configuration in force, the anonymous block fixed at start-up.
describe('reloading the authentication configuration without a restart', { timeout: 150_000 }, () => {
  let s: TestServer;
  let ca: CertificateAuthority;
  let file: string;
  const a = new OidcTestIssuer();
  const b = new OidcTestIssuer();

  const jwt = (issuer: OidcTestIssuer, prefix: string) => ({
    issuer: { url: issuer.url, audiences: ['plinth'], certificateAuthority: ca.certPem },
    claimMappings: { username: { claim: 'sub', prefix } },
  });
  const doc = (entries: unknown[], anonymous: unknown = ANONYMOUS) => stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AuthenticationConfiguration', jwt: entries, anonymous });
  /** Replaces the file in one step (a rename), as editors and ConfigMap volumes do. */
  const replaceFile = (text: string) => {
    const tmp = `${file}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
    return text;
  };
  /** The user a bearer token authenticates as (SelfSubjectReview), or the HTTP status when it does not. */
  const whoIs = async (token: string): Promise<string | number> => {
    const r = await requestAs(s.url, tokenIdentity(token)).post('/apis/authentication.k8s.io/v1/selfsubjectreviews').send({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    return r.status === 201 ? r.body.status.userInfo.username : r.status;
  };
  const metric = async (name: string, labels: string): Promise<number | undefined> => {
    const text = (await request(s.url).get('/metrics').expect(200)).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p)));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const reloads = (status: string) => metric('apiserver_authentication_config_controller_automatic_reloads_total', `status="${status}"`);
  const configHash = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

  before(async () => {
    ca = await CertificateAuthority.generate('issuer-ca');
    await a.start(ca);
    await b.start(ca);
    file = path.join(mkdtempSync(path.join(tmpdir(), 'plinth-authn-reload-')), 'authn.yaml');
    writeFileSync(file, doc([jwt(a, 'a:')]));
    s = await startTestServer('authn_reload', { PLINTH_AUTHENTICATION_CONFIG: file, PLINTH_AUTHENTICATION_CONFIG_RELOAD_INTERVAL_SECONDS: '1' });
  });
  after(async () => {
    await s?.close();
    await a.close();
    await b.close();
  });

  it('starts with the issuers of the file and reports its hash', async () => {
    assert.equal(await whoIs(await a.sign({ sub: 'ann' })), 'a:ann');
    assert.equal(await whoIs(await b.sign({ sub: 'bob' })), 401);
    assert.equal(await metric('apiserver_authentication_config_controller_last_config_info', `hash="${configHash(doc([jwt(a, 'a:')]))}"`), 1);
    assert.equal(await reloads('success'), undefined);
  });

  it('adds an issuer when the file gains one: its tokens authenticate at once, the others still do', async () => {
    const text = replaceFile(doc([jwt(a, 'a:'), jwt(b, 'b:')]));
    const bob = await b.sign({ sub: 'bob' });
    await eventually(async () => assert.equal(await whoIs(bob), 'b:bob'), { timeoutMs: 20_000, intervalMs: 200, message: 'the added issuer accepted' });
    assert.equal(await whoIs(await a.sign({ sub: 'ann' })), 'a:ann');
    assert.equal(await reloads('success'), 1);
    assert.equal(await metric('apiserver_authentication_config_controller_last_config_info', `hash="${configHash(text)}"`), 1);
    assert.ok((await metric('apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds', 'status="success"'))! > Date.now() / 1000 - 60);
  });

  it('removes an issuer when the file loses it: its tokens get 401', async () => {
    replaceFile(doc([jwt(b, 'b:')]));
    const ann = await a.sign({ sub: 'ann' });
    await eventually(async () => assert.equal(await whoIs(ann), 401), { timeoutMs: 20_000, intervalMs: 200, message: 'the removed issuer refused' });
    assert.equal(await whoIs(await b.sign({ sub: 'bob' })), 'b:bob');
    assert.equal(await reloads('success'), 2);
  });

  it('keeps the configuration in force when the new file is invalid, counting a failure', async () => {
    const before = (await reloads('failure')) ?? 0;
    replaceFile(doc([jwt(b, 'b:'), { issuer: { url: a.url, audiences: ['plinth'], certificateAuthority: ca.certPem }, claimMappings: { username: { expression: 'claims.' } } }]));
    await eventually(async () => assert.equal(await reloads('failure'), before + 1), { timeoutMs: 20_000, intervalMs: 200, message: 'the failed reload counted' });
    assert.equal(await whoIs(await b.sign({ sub: 'bob' })), 'b:bob');
    assert.equal(await whoIs(await a.sign({ sub: 'ann' })), 401);
    replaceFile('apiVersion: [not yaml');
    await eventually(async () => assert.equal(await reloads('failure'), before + 2), { timeoutMs: 20_000, intervalMs: 200, message: 'the second failed reload counted' });
    assert.equal(await whoIs(await b.sign({ sub: 'bob' })), 'b:bob');
    assert.equal(await reloads('success'), 2);
  });

  it('refuses a reload that changes the anonymous block (upstream: fixed at start-up), keeping everything in force', async () => {
    const before = (await reloads('failure')) ?? 0;
    replaceFile(doc([jwt(a, 'a:'), jwt(b, 'b:')], { enabled: true, conditions: [{ path: '/healthz' }, { path: '/readyz' }] }));
    await eventually(async () => assert.equal(await reloads('failure'), before + 1), { timeoutMs: 20_000, intervalMs: 200, message: 'the refused reload counted' });
    assert.equal(await whoIs(await a.sign({ sub: 'ann' })), 401);
    await requestAs(s.url, anonymousIdentity()).get('/healthz').expect(200);
    await requestAs(s.url, anonymousIdentity()).get('/readyz').expect(401);
    // The same issuers with the anonymous block as it was: accepted.
    replaceFile(doc([jwt(a, 'a:'), jwt(b, 'b:')]));
    const ann = await a.sign({ sub: 'ann' });
    await eventually(async () => assert.equal(await whoIs(ann), 'a:ann'), { timeoutMs: 20_000, intervalMs: 200, message: 'the issuer added back' });
    assert.equal(await reloads('success'), 3);
  });
});
