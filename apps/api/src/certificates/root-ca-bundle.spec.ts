import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rootCaBundle } from './root-ca-bundle.js';

const pem = (n: string) => `-----BEGIN CERTIFICATE-----\n${n}\n-----END CERTIFICATE-----`;
const serving = (certPem: string) => ({ certPem, keyPem: '' });

describe('rootCaBundle', () => {
  it('is the platform CA when it signed the serving certificate', () => {
    assert.equal(rootCaBundle({ caPem: pem('CA'), operatorServingCert: false, serving: serving(pem('LEAF')) }), pem('CA'));
  });

  it("is the CA certificates of the operator's serving chain, without the leaf", () => {
    const chain = `${pem('LEAF')}\n${pem('INTERMEDIATE')}\n${pem('ROOT')}\n`;
    assert.equal(rootCaBundle({ caPem: pem('CA'), operatorServingCert: true, serving: serving(chain) }), `${pem('INTERMEDIATE')}\n${pem('ROOT')}\n`);
  });

  it("is the operator's root CA file when one is given, whoever signed the serving certificate", () => {
    const rootCaPem = `${pem('ROOT-A')}\n${pem('ROOT-B')}\n`;
    assert.equal(rootCaBundle({ caPem: pem('CA'), operatorServingCert: false, serving: serving(pem('LEAF')), rootCaPem }), rootCaPem);
    assert.equal(rootCaBundle({ caPem: pem('CA'), operatorServingCert: true, serving: serving(`${pem('LEAF')}\n${pem('ROOT')}`), rootCaPem }), rootCaPem);
  });

  it("is the operator's lone serving certificate itself (self-signed, or pinned)", () => {
    assert.equal(rootCaBundle({ caPem: pem('CA'), operatorServingCert: true, serving: serving(pem('SELF')) }), `${pem('SELF')}\n`);
  });
});
