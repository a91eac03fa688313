/**
 * SDK-HMAC-SHA256 (AK/SK) verification, mirroring
 * @huaweicloud/huaweicloud-sdk-core auth/AKSKSigner.js (HCS-5):
 *
 *   canonical request = METHOD \n canonicalURI \n canonicalQuery \n
 *                       canonicalHeaders \n signedHeaders \n payloadHash
 *   string to sign    = "SDK-HMAC-SHA256" \n X-Sdk-Date \n hex(sha256(canonical request))
 *   signature         = hex(hmac-sha256(SK, string to sign))
 *
 * canonicalURI: every path segment percent-encoded, trailing "/" added.
 * canonicalQuery: keys sorted, key=value percent-encoded, array values sorted.
 * canonicalHeaders: the headers named in SignedHeaders, "name:value\n" each.
 * payloadHash: X-Sdk-Content-Sha256 when present (e.g. UNSIGNED-PAYLOAD), else sha256 of the body.
 */
import * as crypto from 'node:crypto';

const NO_ESCAPE = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~'.split(''));
/** Only characters that stay as they are: the encoding is the string itself. */
const UNRESERVED = /^[A-Za-z0-9\-_.~]*$/;

/** Percent-encoding of the SDK signer: RFC 3986 unreserved characters stay, everything else is %XX of its UTF-8 bytes. */
export function sdkUrlEncode(s: string): string {
  if (UNRESERVED.test(s)) return s;
  let out = '';
  for (const ch of s) {
    if (NO_ESCAPE.has(ch)) {
      out += ch;
      continue;
    }
    for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

export function canonicalUri(rawPath: string): string {
  const p = rawPath
    .split('/')
    .map((seg) => sdkUrlEncode(seg))
    .join('/');
  return p.endsWith('/') ? p : `${p}/`;
}

/** Canonical query from the raw query string as sent on the wire (decoded first, then re-encoded the SDK way). */
export function canonicalQuery(rawQuery: string): string {
  const params = new Map<string, string[]>();
  if (rawQuery) {
    for (const [k, v] of new URLSearchParams(rawQuery)) {
      const list = params.get(k);
      if (list) list.push(v);
      else params.set(k, [v]);
    }
  }
  const keys = [...params.keys()].sort();
  const parts: string[] = [];
  for (const k of keys) {
    const values = params.get(k)!;
    if (values.length > 1) values.sort();
    for (const v of values) parts.push(`${sdkUrlEncode(k)}=${sdkUrlEncode(v)}`);
  }
  return parts.join('&');
}

/** crypto.hash (Node >= 20.12): the same digest in one call, without a Hash object per call. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
/** sha256 of the empty body (every GET and DELETE). */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export function sha256Hex(s: string): string {
  if (s === '') return EMPTY_SHA256;
  return oneShot ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex');
}

export function hmacHex(key: string, s: string): string {
  return crypto.createHmac('sha256', key).update(s).digest('hex');
}

export interface ParsedAuthorization {
  ak: string;
  signedHeaders: string[];
  signature: string;
}

export function parseAuthorization(h: string | undefined): ParsedAuthorization | undefined {
  if (!h) return undefined;
  const m = /^SDK-HMAC-SHA256\s+Access=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-fA-F]+)\s*$/.exec(h);
  if (!m) return undefined;
  return { ak: m[1]!, signedHeaders: m[2]!.split(';'), signature: m[3]!.toLowerCase() };
}

/** Parse "YYYYMMDDTHHmmssZ". */
export function parseSdkDate(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return undefined;
  const t = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  return Number.isNaN(t) ? undefined : t;
}

export interface VerifyInput {
  method: string;
  /** Path and query exactly as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type VerifyResult = { ok: true; ak: string } | { ok: false; reason: string };

export function verifySignature(req: VerifyInput, lookupSk: (ak: string) => string | undefined, nowMs: number, skewMs: number): VerifyResult {
  const header = (name: string): string | undefined => {
    const v = req.headers[name.toLowerCase()];
    return Array.isArray(v) ? v.join(',') : v;
  };
  const auth = parseAuthorization(header('authorization'));
  if (!auth) return { ok: false, reason: 'missing or malformed Authorization header (expected SDK-HMAC-SHA256 Access=..., SignedHeaders=..., Signature=...)' };
  const sk = lookupSk(auth.ak);
  if (sk === undefined) return { ok: false, reason: `access key ${auth.ak} does not exist` };
  const dateText = header('x-sdk-date');
  const date = parseSdkDate(dateText);
  if (date === undefined) return { ok: false, reason: 'missing or malformed X-Sdk-Date header (expected YYYYMMDDTHHmmssZ)' };
  if (Math.abs(nowMs - date) > skewMs) {
    return { ok: false, reason: `X-Sdk-Date ${dateText} is outside the allowed clock skew of ${Math.round(skewMs / 1000)}s` };
  }
  const signed = auth.signedHeaders.map((h) => h.toLowerCase());
  if (!signed.includes('x-sdk-date') || !signed.includes('host')) {
    return { ok: false, reason: 'SignedHeaders must include host and x-sdk-date' };
  }
  let canonicalHeaders = '';
  for (const name of signed) {
    const v = header(name);
    if (v === undefined) return { ok: false, reason: `signed header ${name} is missing from the request` };
    canonicalHeaders += `${name}:${v}\n`;
  }
  const q = req.url.indexOf('?');
  const rawPath = q >= 0 ? req.url.slice(0, q) : req.url;
  const rawQuery = q >= 0 ? req.url.slice(q + 1) : '';
  const contentSha = header('x-sdk-content-sha256');
  const bodyHash = sha256Hex(req.body);
  if (contentSha !== undefined && contentSha !== 'UNSIGNED-PAYLOAD' && contentSha.toLowerCase() !== bodyHash) {
    return { ok: false, reason: 'X-Sdk-Content-Sha256 does not match the request body' };
  }
  const payloadHash = contentSha ?? bodyHash;
  const canonical = [req.method.toUpperCase(), canonicalUri(rawPath), canonicalQuery(rawQuery), canonicalHeaders, signed.join(';'), payloadHash].join('\n');
  const stringToSign = ['SDK-HMAC-SHA256', dateText, sha256Hex(canonical)].join('\n');
  const expected = Buffer.from(hmacHex(sk, stringToSign), 'hex');
  const got = Buffer.from(auth.signature, 'hex');
  if (got.length !== expected.length || !crypto.timingSafeEqual(got, expected)) {
    return { ok: false, reason: 'verify aksk signature fail' };
  }
  return { ok: true, ak: auth.ak };
}
