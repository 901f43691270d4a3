import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration } from '@plinth/apimachinery';
import { decodeKmsConfiguration } from './kms-config.js';

describe('KMS provider configuration', () => {
  it('is the one parser: an EncryptionConfiguration\'s kms timeout reads exactly as a request\'s ?timeout=', () => {
    const kmsTimeout = (timeout: string) => decodeKmsConfiguration({ apiVersion: 'v2', name: 'k', endpoint: 'unix:///tmp/kms.sock', timeout }, 'kms').timeoutMs;
    for (const text of ['1m30s', '1.5s', '250ms', '1h1h', '.5s', '5.s', '1\u03bcs']) assert.equal(kmsTimeout(text), parseGoDuration(text), text);
    for (const text of ['10', '3 s', '1d', '9223372036854775808ns']) {
      assert.throws(() => kmsTimeout(text), { message: errorOf(text) }, text);
    }
  });
});

function errorOf(text: string): string {
  try {
    parseGoDuration(text);
    return '(none)';
  } catch (err) {
    return (err as Error).message;
  }
}
