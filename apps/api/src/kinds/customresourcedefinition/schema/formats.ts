import { isIPv4, isIPv6 } from 'node:net';
import { CelUrl } from '@plinth/cel';

/**
 * The string formats a CRD schema's `format` validates, as kube-openapi's
 * strfmt registry checks them (apiextensions-apiserver's supportedFormats).
 * With 1.34's `k8s-short-name` and `k8s-long-name`. Other formats are
 * ignored, as upstream strips them. Names are normalised without dashes
 * (`date-time` ≡ `datetime`).
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const DURATION_GO = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const DURATION_SCALA = /^\s*\d+\s*(ns|us|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)\s*$/i;
const EMAIL = /^[^\s@<>()]+@[^\s@<>()]+$/;
const HOSTNAME = /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const MAC = /^([0-9A-Fa-f]{2}([:-])){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$|^([0-9A-Fa-f]{2}[:-]){7}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}[:-]){19}[0-9A-Fa-f]{2}$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** kube-openapi's ShortName: a DNS-1123 label, lower case, at most 63 characters. */
const K8S_SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** kube-openapi's LongName: dot-separated short names, at most 253 characters (no 63 limit per segment). */
const K8S_LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validDate(y: string, m: string, d: string): boolean {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}

function isDateTime(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  return validDate(m[1], m[2], m[3]) && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 61;
}

function isIsbn10(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (d[i] === 'X' ? 10 : Number(d[i])) * (10 - i);
  return sum % 11 === 0;
}

function isIsbn13(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return sum % 10 === 0;
}

function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]/g, '');
  if (!/^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < d.length; i++) {
    let n = Number(d[d.length - 1 - i]);
    if (i % 2 === 1) n = n * 2 > 9 ? n * 2 - 9 : n * 2;
    sum += n;
  }
  return sum % 10 === 0;
}

const CHECKS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: (s) => {
    try {
      CelUrl.parse(s);
      return true;
    } catch {
      return false;
    }
  },
  email: (s) => EMAIL.test(s),
  hostname: (s) => s.length <= 255 && HOSTNAME.test(s),
  ipv4: (s) => isIPv4(s),
  ipv6: (s) => isIPv6(s),
  cidr: (s) => {
    const [ip, bits, extra] = s.split('/');
    if (extra !== undefined || bits === undefined || !/^\d+$/.test(bits)) return false;
    return (isIPv4(ip) && Number(bits) <= 32) || (isIPv6(ip) && Number(bits) <= 128);
  },
  mac: (s) => MAC.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isIsbn10(s) || isIsbn13(s),
  isbn10: isIsbn10,
  isbn13: isIsbn13,
  creditcard: isCreditCard,
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) => /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: (s) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
    return !!m && validDate(m[1], m[2], m[3]);
  },
  duration: (s) => DURATION_GO.test(s) || DURATION_SCALA.test(s),
  datetime: isDateTime,
  // Kubernetes 1.34+: `k8s-short-name` and `k8s-long-name`.
  k8sshortname: (s) => s.length <= 63 && K8S_SHORT_NAME.test(s),
  k8slongname: (s) => s.length <= 253 && K8S_LONG_NAME.test(s),
};

/** The format name as go-openapi normalises it, or undefined when the format is not validated. */
export function supportedFormat(format: string | undefined): string | undefined {
  if (!format) return undefined;
  const name = format.replace(/-/g, '');
  return Object.hasOwn(CHECKS, name) ? name : undefined;
}

/** True when `value` has `format` (a name from {@link supportedFormat}). */
export function checkFormat(format: string, value: string): boolean {
  return CHECKS[format](value);
}
