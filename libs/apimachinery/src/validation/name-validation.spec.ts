import assert from 'node:assert/strict';
import { goQuote } from '../text/go-strings.js';
import { describe, it } from 'node:test';
import {
  byteLength,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPathSegmentName,
  isValidPathSegmentPrefix,
  validateName,
} from './name-validation.js';

const LABEL_REGEX_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_REGEX_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART_REGEX_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_REGEX_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const CONFIG_KEY_REGEX_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

describe('isDNS1123Label', () => {
  it('accepts lower-case alphanumerics with inner dashes', () => {
    assert.deepEqual(isDNS1123Label('my-name'), []);
    assert.deepEqual(isDNS1123Label('123-abc'), []);
  });

  it('rejects a label longer than 63 characters with the upstream length message', () => {
    assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
  });

  it('says "must not contain dots" for a valid subdomain that is not a label', () => {
    assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
  });

  it('rejects upper case and edge dashes with the regex message', () => {
    assert.deepEqual(isDNS1123Label('My-name'), [LABEL_REGEX_MSG]);
    assert.deepEqual(isDNS1123Label('-abc'), [LABEL_REGEX_MSG]);
    assert.deepEqual(isDNS1123Label(''), [LABEL_REGEX_MSG]);
  });
});

describe('isDNS1123Subdomain', () => {
  it('accepts dotted lower-case names up to 253 characters', () => {
    assert.deepEqual(isDNS1123Subdomain('example.com'), []);
    assert.deepEqual(isDNS1123Subdomain(`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`), []);
  });

  it('rejects a name longer than 253 characters', () => {
    assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 characters']);
  });

  it('rejects underscores, upper case and empty labels with the regex message', () => {
    assert.deepEqual(isDNS1123Subdomain('a_b'), [SUBDOMAIN_REGEX_MSG]);
    assert.deepEqual(isDNS1123Subdomain('Example.com'), [SUBDOMAIN_REGEX_MSG]);
    assert.deepEqual(isDNS1123Subdomain('a..b'), [SUBDOMAIN_REGEX_MSG]);
  });
});

describe('isDNS1035Label', () => {
  it('rejects a leading digit that DNS-1123 would allow', () => {
    assert.deepEqual(isDNS1123Label('1abc'), []);
    assert.equal(isDNS1035Label('1abc').length, 1);
    assert.match(isDNS1035Label('1abc')[0], /^a DNS-1035 label must consist of/);
  });
});

describe('isQualifiedName', () => {
  it('accepts plain and prefixed names with mixed case', () => {
    assert.deepEqual(isQualifiedName('MyName'), []);
    assert.deepEqual(isQualifiedName('example.com/My_name.x-y'), []);
  });

  it('rejects more than one slash with the whole-key message', () => {
    const errs = isQualifiedName('a/b/c');
    assert.equal(errs.length, 1);
    assert.match(errs[0], /^a valid label key must consist of/);
    assert.match(errs[0], /with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/);
  });

  it('rejects an empty prefix', () => {
    assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty']);
  });

  it('rejects an invalid prefix with "prefix part" details', () => {
    assert.deepEqual(isQualifiedName('Example.com/a'), [`prefix part ${SUBDOMAIN_REGEX_MSG}`]);
    assert.deepEqual(isQualifiedName(`${'a'.repeat(254)}/a`), ['prefix part must be no more than 253 bytes']);
  });

  it('rejects an empty name part with both the empty and regex details', () => {
    assert.deepEqual(isQualifiedName('example.com/'), ['name part must be non-empty', NAME_PART_REGEX_MSG]);
  });

  it('rejects a name part longer than 63 bytes, counting UTF-8 bytes', () => {
    assert.deepEqual(isQualifiedName('a'.repeat(64)), ['name part must be no more than 63 bytes']);
    assert.deepEqual(isQualifiedName('é'.repeat(32)), ['name part must be no more than 63 bytes', NAME_PART_REGEX_MSG]);
  });

  it('rejects a name part with bad characters or edges', () => {
    assert.deepEqual(isQualifiedName('-abc'), [NAME_PART_REGEX_MSG]);
    assert.deepEqual(isQualifiedName('a b'), [NAME_PART_REGEX_MSG]);
  });
});

describe('isValidLabelValue', () => {
  it('accepts the empty string and usual values', () => {
    assert.deepEqual(isValidLabelValue(''), []);
    assert.deepEqual(isValidLabelValue('my_value.1-2'), []);
    assert.deepEqual(isValidLabelValue('a'.repeat(63)), []);
  });

  it('rejects a value longer than 63 bytes', () => {
    assert.deepEqual(isValidLabelValue('a'.repeat(64)), ['must be no more than 63 bytes']);
  });

  it('rejects bad characters with the label-value regex message', () => {
    assert.deepEqual(isValidLabelValue('bad value'), [LABEL_VALUE_REGEX_MSG]);
    assert.deepEqual(isValidLabelValue('_x'), [LABEL_VALUE_REGEX_MSG]);
  });
});

describe('isConfigMapKey', () => {
  it('accepts dotted, underscored and dashed keys', () => {
    assert.deepEqual(isConfigMapKey('key.name'), []);
    assert.deepEqual(isConfigMapKey('KEY_NAME'), []);
    assert.deepEqual(isConfigMapKey('.dockercfg'), []);
  });

  it('rejects spaces and slashes with the config-key regex message', () => {
    assert.deepEqual(isConfigMapKey('a b'), [CONFIG_KEY_REGEX_MSG]);
    assert.deepEqual(isConfigMapKey('a/b'), [CONFIG_KEY_REGEX_MSG]);
    assert.deepEqual(isConfigMapKey(''), [CONFIG_KEY_REGEX_MSG]);
  });

  it('rejects "." , ".." and a leading ".."', () => {
    assert.deepEqual(isConfigMapKey('.'), ["must not be '.'"]);
    assert.deepEqual(isConfigMapKey('..'), ["must not be '..'"]);
    assert.deepEqual(isConfigMapKey('..data'), ["must not start with '..'"]);
  });

  it('rejects a key longer than 253 characters', () => {
    assert.deepEqual(isConfigMapKey('k'.repeat(254)), ['must be no more than 253 characters']);
  });
});

describe('path-segment names', () => {
  it('rejects "." and ".." as whole names only', () => {
    assert.deepEqual(isValidPathSegmentName('.'), ["may not be '.'"]);
    assert.deepEqual(isValidPathSegmentName('..'), ["may not be '..'"]);
    assert.deepEqual(isValidPathSegmentPrefix('..'), []);
  });

  it("reports each of '/' and '%'", () => {
    assert.deepEqual(isValidPathSegmentName('a/b%c'), ["may not contain '/'", "may not contain '%'"]);
    assert.deepEqual(isValidPathSegmentPrefix('a%'), ["may not contain '%'"]);
  });

  it('accepts anything else, including upper case and colons', () => {
    assert.deepEqual(isValidPathSegmentName('system:Admin'), []);
  });
});

describe('validateName', () => {
  it('tolerates a trailing dash on generateName prefixes', () => {
    assert.deepEqual(validateName('subdomain', 'foo-', true), []);
    assert.deepEqual(validateName('label', 'foo-', true), []);
    assert.deepEqual(validateName('subdomain', 'foo-', false), [SUBDOMAIN_REGEX_MSG]);
  });

  it('does not mask a lone dash', () => {
    assert.deepEqual(validateName('label', '-', true), [LABEL_REGEX_MSG]);
  });

  it('applies the label rule to label-named kinds', () => {
    assert.deepEqual(validateName('label', 'a.b', false), ['must not contain dots']);
    assert.deepEqual(validateName('subdomain', 'a.b', false), []);
  });

  it('applies the path-segment rule, without the exact-name check for prefixes', () => {
    assert.deepEqual(validateName('path-segment', '..', false), ["may not be '..'"]);
    assert.deepEqual(validateName('path-segment', '..', true), []);
  });
});

describe('byteLength and goQuote', () => {
  it('counts UTF-8 bytes like Go len()', () => {
    assert.equal(byteLength('aé€😀'), 10);
    assert.equal(byteLength('\ud800'), 3);
  });

  it('quotes with Go escapes', () => {
    assert.equal(goQuote('a"b\\\n\u0001é'), '"a\\"b\\\\\\n\\x01é"');
  });
});
