import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sourceIps } from './source-ips.js';

describe('sourceIps (upstream utilnet.SourceIPs)', () => {
  it('is the connection address when no proxy header is set, IPv4-mapped addresses printed as IPv4', () => {
    assert.deepEqual(sourceIps([], '127.0.0.1'), ['127.0.0.1']);
    assert.deepEqual(sourceIps(['Host', 'x'], '::ffff:10.0.0.7'), ['10.0.0.7']);
    assert.deepEqual(sourceIps([], '2001:DB8:0:0:0:0:0:1'), ['2001:db8::1']);
    assert.deepEqual(sourceIps([], undefined), []);
  });

  it('puts the X-Forwarded-For chain and X-Real-Ip first, skipping invalid entries, the connection address last', () => {
    assert.deepEqual(
      sourceIps(['X-Forwarded-For', '203.0.113.7, not-an-ip, 2001:DB8::1 ,', 'X-Real-Ip', '198.51.100.2'], '127.0.0.1'),
      ['203.0.113.7', '2001:db8::1', '198.51.100.2', '127.0.0.1'],
    );
  });

  it('does not repeat X-Real-Ip when the chain has it, nor the connection address when it ends the chain', () => {
    assert.deepEqual(sourceIps(['x-forwarded-for', '203.0.113.7, 127.0.0.1', 'x-real-ip', '203.0.113.7'], '::ffff:127.0.0.1'), ['203.0.113.7', '127.0.0.1']);
  });

  it('reads only the first X-Forwarded-For header and takes X-Real-Ip as it is, as Go\'s Header.Get and ParseIPSloppy do', () => {
    assert.deepEqual(sourceIps(['X-Forwarded-For', '192.0.2.1', 'X-Forwarded-For', '192.0.2.2', 'X-Real-Ip', ' 192.0.2.3'], '127.0.0.1'), ['192.0.2.1', '127.0.0.1']);
    assert.deepEqual(sourceIps(['X-Forwarded-For', 'fe80::1%eth0, 256.1.1.1, 010.000.0.1'], '127.0.0.1'), ['10.0.0.1', '127.0.0.1'], 'no zones; leading zeros read as decimal (ParseIPSloppy)');
  });
});
