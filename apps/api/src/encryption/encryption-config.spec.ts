import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { decodeEncryptionConfiguration } from './encryption-config.parser.js';
import { aggregateFieldErrors, validateEncryptionConfiguration } from './encryption-config.validation.js';
import { buildTransformerRules, loadEncryptionConfig, ruleFor } from './encryption-transformers.js';

const KEY32 = Buffer.alloc(32, 7).toString('base64');
const KEY16 = Buffer.alloc(16, 3).toString('base64');

function config(resources: unknown): string {
  return JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources });
}

/** The aggregated validation message of a configuration, as upstream's ToAggregate().Error() prints it ('' when valid). */
function validationOf(resources: unknown): string {
  const errors = validateEncryptionConfiguration(decodeEncryptionConfiguration(config(resources)));
  return errors.length === 0 ? '' : aggregateFieldErrors(errors);
}

describe('EncryptionConfiguration decoding (strict, as upstream)', () => {
  it('reads YAML with every provider', () => {
    const c = decodeEncryptionConfiguration(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets, configmaps]
    providers:
      - aesgcm: {keys: [{name: key1, secret: ${KEY32}}]}
      - aescbc: {keys: [{name: key2, secret: ${KEY16}}]}
      - secretbox: {keys: [{name: key3, secret: ${KEY32}}]}
      - identity: {}
`);
    assert.deepEqual(c.resources[0].resources, ['secrets', 'configmaps']);
    assert.deepEqual(Object.keys(c.resources[0].providers[0]), ['aesgcm']);
    assert.equal(validateEncryptionConfiguration(c).length, 0);
  });

  it('refuses unknown fields with upstream\'s strict decoding error', () => {
    assert.throws(() => decodeEncryptionConfiguration(config([{ resources: ['secrets'], providers: [{ identity: {} }, { aesgcm: { keys: [], pandas: 1 } }] }])), {
      message: 'strict decoding error: unknown field "resources[0].providers[1].aesgcm.pandas"',
    });
  });

  it('refuses another kind or version as upstream\'s scheme does', () => {
    assert.throws(() => decodeEncryptionConfiguration(JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfigurations' })), {
      message: 'no kind "EncryptionConfigurations" is registered for version "apiserver.config.k8s.io/v1"',
    });
  });

  it('refuses duplicate keys', () => {
    assert.throws(() => decodeEncryptionConfiguration('apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nkind: EncryptionConfiguration\n'), /strict decoding error/);
  });
});

describe('EncryptionConfiguration validation (upstream\'s field paths and messages)', () => {
  it('names a short aescbc key without showing it', () => {
    assert.equal(
      validationOf([{ resources: ['secrets'], providers: [{ aescbc: { keys: [{ name: 'k', secret: Buffer.from('short').toString('base64') }] } }] }]),
      'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of [16 24 32]',
    );
  });

  it('names a secretbox key that is not 32 bytes, a secret that is not base64, and a missing name', () => {
    assert.equal(
      validationOf([{ resources: ['secrets'], providers: [{ secretbox: { keys: [{ name: 'k', secret: KEY16 }, { name: '', secret: 'not base64!' }] } }] }]),
      '[resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32], resources[0].providers[0].secretbox.keys[1].name: Required value: name is a mandatory field for a key, resources[0].providers[0].secretbox.keys[1].secret: Invalid value: "REDACTED": secrets must be base64 encoded]',
    );
  });

  it('refuses an entry without or with two providers, and no keys', () => {
    assert.match(validationOf([{ resources: ['secrets'], providers: [{}] }]), /^resources\[0\]\.providers\[0\]: Invalid value: .*: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity$/);
    assert.match(validationOf([{ resources: ['secrets'], providers: [{ identity: {}, aesgcm: { keys: [{ name: 'a', secret: KEY32 }] } }] }]), /more than one provider specified in a single element, should split into different list elements$/);
    assert.equal(validationOf([{ resources: ['secrets'], providers: [{ aesgcm: { keys: [] } }] }]), 'resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required');
    assert.equal(validationOf([]), 'resources: Required value: at least one resources is required');
    assert.equal(validationOf([{ resources: [], providers: [] }]), '[resources[0].resources: Required value: at least one resources[0].resources is required, resources[0].providers: Required value: at least one resources[0].providers is required]');
  });

  it('refuses resource names as upstream does', () => {
    const one = (res: string[]) => validationOf([{ resources: res, providers: [{ identity: {} }] }]);
    assert.equal(one(['Secrets']), 'resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters');
    assert.equal(one(['*']), `resources[0].resources[0]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`);
    assert.equal(one(['secrets', '*.']), `resources[0].resources: Invalid value: []string{"secrets", "*."}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`);
    assert.equal(one(['secrets', 'secrets']), 'resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same resource cannot be specified multiple times');
    assert.equal(one(['foo.*']), 'resources[0].resources[0]: Invalid value: "foo.*": encrypting the same resource across groups is not supported');
    assert.equal(one(['events.events.k8s.io']), `resources[0].resources[0]: Invalid value: "events.events.k8s.io": '*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file`);
    assert.equal(one(['serviceipallocations']), 'resources[0].resources[0]: Invalid value: "serviceipallocations": resources which do not have REST API/s cannot be encrypted');
  });

  it('accepts a kms v2 provider, defaults its timeout to 3s and its apiVersion to v1', () => {
    assert.equal(validationOf([{ resources: ['secrets'], providers: [{ identity: {} }, { kms: { apiVersion: 'v2', name: 'k', endpoint: 'unix:///tmp/kms.sock' } }] }]), '');
    const c = decodeEncryptionConfiguration(config([{ resources: ['secrets'], providers: [{ kms: { name: 'k', endpoint: 'unix:///tmp/kms.sock', timeout: '1m30s' } }] }]));
    assert.equal(c.resources[0].providers[0].kms?.apiVersion, 'v1');
    assert.equal(c.resources[0].providers[0].kms?.timeoutMs, 90_000);
  });

  it('validates kms fields with upstream\'s messages', () => {
    const kms = (k: Record<string, unknown>) => validationOf([{ resources: ['secrets'], providers: [{ kms: { apiVersion: 'v2', name: 'k', endpoint: 'unix:///tmp/kms.sock', ...k } }] }]);
    assert.equal(kms({ name: '' }), 'resources[0].providers[0].kms.name: Required value: name is a mandatory field for a provider');
    assert.equal(kms({ endpoint: '' }), 'resources[0].providers[0].kms.endpoint: Invalid value: "": endpoint is a mandatory field for a kms');
    assert.equal(kms({ cachesize: 5 }), 'resources[0].providers[0].kms.cachesize: Invalid value: 5: cachesize is not supported in v2');
    assert.equal(kms({ apiVersion: 'v3' }), 'resources[0].providers[0].kms.apiVersion: Invalid value: "v3": unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported');
    assert.equal(kms({ timeout: '-1s' }), 'resources[0].providers[0].kms.timeout: Invalid value: -1s: timeout should be a positive value');
    assert.throws(() => decodeEncryptionConfiguration(config([{ resources: ['secrets'], providers: [{ kms: { name: 'k', endpoint: 'unix:///x', timeout: '3 s' } }] }])), { message: 'time: unknown unit " s" in duration "3 s"' });
  });
});

describe('transformer rules (upstream\'s lookup and masking)', () => {
  const rules = (resources: unknown) => buildTransformerRules(decodeEncryptionConfiguration(config(resources)));
  const gcm = { aesgcm: { keys: [{ name: 'k', secret: KEY32 }] } };

  it('finds a resource by exact rule, then *.group, then *.*', () => {
    const r = rules([
      { resources: ['secrets'], providers: [gcm] },
      { resources: ['*.apps', 'widgets.example.com'], providers: [{ secretbox: { keys: [{ name: 's', secret: KEY32 }] } }] },
      { resources: ['*.*'], providers: [{ identity: {} }] },
    ]);
    assert.equal(ruleFor(r, 'secrets')?.encrypts, true);
    assert.equal(ruleFor(r, 'apps/deployments')?.transformer.writePrefix.toString(), 'k8s:enc:secretbox:v1:');
    assert.equal(ruleFor(r, 'widgets.example.com')?.transformer.writePrefix.toString(), 'k8s:enc:secretbox:v1:');
    assert.equal(ruleFor(r, 'configmaps')?.encrypts, false);
  });

  it('leaves resources no rule names stored as they are', () => {
    assert.equal(ruleFor(rules([{ resources: ['secrets'], providers: [gcm] }]), 'configmaps'), undefined);
  });

  it('refuses a rule masked by an earlier wildcard with upstream\'s message', () => {
    assert.throws(() => rules([{ resources: ['*.'], providers: [gcm] }, { resources: ['secrets'], providers: [gcm] }]), { message: 'resource "secrets" is masked by earlier rule "*."' });
    assert.throws(() => rules([{ resources: ['*.*'], providers: [gcm] }, { resources: ['*.'], providers: [gcm] }]), { message: 'resource "*." is masked by earlier rule "*.*"' });
  });

  it('loads a file with upstream\'s wrapping of each failure', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'enc-'));
    const file = path.join(dir, 'enc.yaml');
    assert.throws(() => loadEncryptionConfig(file), /^Error: error while parsing file: error while loading file: error reading encryption provider configuration file ".*enc\.yaml"/);
    writeFileSync(file, '');
    assert.throws(() => loadEncryptionConfig(file), { message: `error while parsing file: error while loading file: encryption provider configuration file "${file}" is empty` });
    writeFileSync(file, config([{ resources: ['secrets'], providers: [{ aesgcm: { keys: [{ name: 'k', secret: 'AAAA' }] } }] }]));
    assert.throws(() => loadEncryptionConfig(file), { message: 'error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 3, expected one of [16 24 32]' });
    writeFileSync(file, config([{ resources: ['*.'], providers: [gcm] }, { resources: ['secrets'], providers: [gcm] }]));
    assert.throws(() => loadEncryptionConfig(file), { message: 'error while building transformers: resource "secrets" is masked by earlier rule "*."' });
    writeFileSync(file, config([{ resources: ['secrets'], providers: [gcm] }]));
    assert.match(loadEncryptionConfig(file).hash, /^sha256:[0-9a-f]{64}$/);
  });
});
