import { describe, expect, it } from 'vitest';
import { compileTrust, toRateLimitAddress, withoutPort } from '../../src/http/client-address.js';

describe('toRateLimitAddress', () => {
  const cases: [string, string, number, string][] = [
    ['a compressed IPv6 address, /64', '2001:db8:1:2::a', 64, '2001:db8:1:2::/64'],
    [
      'a full IPv6 address, /64',
      '2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd',
      64,
      '2001:db8:1:2::/64',
    ],
    ['an IPv6 address, /48', '2001:db8:1:2:aaaa::1', 48, '2001:db8:1::/48'],
    ['a prefix that splits a group', '2001:db8:1:2::1', 60, '2001:db8:1::/60'],
    ['an IPv6 address, /128', '2001:db8:1:2:0:0:0:a', 128, '2001:db8:1:2::a/128'],
    ['loopback, /64', '::1', 64, '::/64'],
    ['loopback, /128', '::1', 128, '::1/128'],
    ['a zone id is dropped', 'fe80::1:2%eth0', 64, 'fe80::/64'],
    ['a zone id is dropped, /128', 'fe80::1:2%eth0', 128, 'fe80::1:2/128'],
    ['an IPv4-mapped address', '::ffff:203.0.113.5', 64, '203.0.113.5'],
    ['an IPv4-mapped address in hex', '::ffff:cb00:7105', 48, '203.0.113.5'],
    ['an IPv4-mapped address, /128', '::FFFF:203.0.113.5', 128, '203.0.113.5'],
    ['a plain IPv4 address', '203.0.113.5', 64, '203.0.113.5'],
    ['a plain IPv4 address, /48', '203.0.113.5', 48, '203.0.113.5'],
    [
      'an IPv4 address with a leading zero (octal, as ipaddr.js reads it)',
      '010.0.0.1',
      64,
      '8.0.0.1',
    ],
    ['an IPv4 address with a zero-padded octet', '192.168.001.1', 64, '192.168.1.1'],
    ['a three-part IPv4 address', '1.2.3', 64, '1.2.0.3'],
    ['something that is not an address', 'unknown', 64, 'unknown'],
  ];
  it.each(cases)('when given %s, then the key is its network', (_name, address, prefix, key) => {
    expect(toRateLimitAddress(address, prefix)).toBe(key);
  });

  it('when two addresses share a /64, then they share a key, and a neighbouring /64 does not', () => {
    const key = (address: string) => toRateLimitAddress(address, 64);
    expect(key('2001:db8:1:2::1')).toBe(key('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(key('2001:db8:1:3::1')).not.toBe(key('2001:db8:1:2::1'));
  });
});

describe('withoutPort', () => {
  const cases: [string, string, string][] = [
    ['an IPv4 address with a port', '198.51.100.7:1234', '198.51.100.7'],
    ['an IPv4 address with port 65535', '198.51.100.7:65535', '198.51.100.7'],
    ['a bracketed IPv6 address with a port', '[2001:db8::1]:443', '2001:db8::1'],
    ['a bracketed IPv6 address without a port', '[2001:db8::1]', '2001:db8::1'],
    [
      'a bracketed IPv4-mapped address with a port',
      '[::ffff:203.0.113.5]:80',
      '::ffff:203.0.113.5',
    ],
    ['a bracketed IPv6 address with a zone and a port', '[fe80::1%eth0]:8080', 'fe80::1%eth0'],
    ['a bare IPv6 address (its colons are its own)', '2001:db8::1', '2001:db8::1'],
    ['a bare IPv6 address ending in digits', '2001:db8::443', '2001:db8::443'],
    ['a bare IPv4-mapped address', '::ffff:203.0.113.5', '::ffff:203.0.113.5'],
    ['a plain IPv4 address', '198.51.100.7', '198.51.100.7'],
    ['a host name with a port (not an address)', 'proxy.test:8080', 'proxy.test:8080'],
    ['brackets around something that is no address', '[unknown]:80', '[unknown]:80'],
    ['an IPv4 address with an empty port', '198.51.100.7:', '198.51.100.7:'],
    ['something that is not an address', 'unknown', 'unknown'],
  ];
  it.each(cases)('when given %s, then it is the address alone', (_name, written, address) => {
    expect(withoutPort(written)).toBe(address);
  });

  it('when an address is written with a port, then its rate-limit key is the one without', () => {
    const key = (written: string) => toRateLimitAddress(withoutPort(written), 64);
    expect(key('198.51.100.7:1234')).toBe(key('198.51.100.7'));
    expect(key('[2001:db8::1]:443')).toBe(key('2001:db8::1'));
  });
});

describe('compileTrust', () => {
  it('when a trusted proxy is written with a port, then it is trusted as without one', () => {
    const trust = compileTrust(['loopback', '10.0.0.0/8']);
    expect(trust('127.0.0.1:5555', 1)).toBe(true);
    expect(trust('[::1]:5555', 1)).toBe(true);
    expect(trust('10.1.2.3:80', 1)).toBe(true);
    expect(trust('198.51.100.7:80', 1)).toBe(false);
  });
});
