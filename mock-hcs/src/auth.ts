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
import { hmacSha256, hmacSha256Hex, sha256Hex as sha256HexCore } from '../../src/core/sha256.js';

const NO_ESCAPE = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~'.split(''));
/** Only characters that stay as they are: the encoding is the string itself. */
const UNRESERVED = /^[A-Za-z0-9\-_.~]*$/;
/** A path whose every segment is made of unreserved characters: its canonical form is itself (plus the trailing "/"). */
const UNRESERVED_PATH = /^[A-Za-z0-9\-_.~/]*$/;
/** Characters encodeURIComponent leaves as they are but the SDK encodes. */
const SUB_DELIMS = /[!'()*]/g;

/** Percent-encoding of the SDK signer: RFC 3986 unreserved characters stay, everything else is %XX of its UTF-8 bytes. */
export function sdkUrlEncode(s: string): string {
  if (UNRESERVED.test(s)) return s;
  // encodeURIComponent encodes exactly the same characters the same way (UTF-8, upper-case hex) except
  // !'()*, which it leaves; it throws on a lone surrogate, which the per-character loop encodes as U+FFFD's bytes.
  let enc: string;
  try {
    enc = encodeURIComponent(s);
  } catch {
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
  return enc.replace(SUB_DELIMS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function canonicalUri(rawPath: string): string {
  const p = UNRESERVED_PATH.test(rawPath)
    ? rawPath
    : rawPath
        .split('/')
        .map((seg) => sdkUrlEncode(seg))
        .join('/');
  return p.endsWith('/') ? p : `${p}/`;
}

/** What URLSearchParams would change: percent-escapes, "+", non-ASCII (UTF-8 round trip), a leading "?" (dropped). */
const NEEDS_DECODING = /[%+\u0080-\uffff]|^\?/;

/**
 * The raw query's (key, value) pairs as URLSearchParams decodes them. In an
 * ASCII query without "%" and "+" (and not starting with "?") there is
 * nothing to decode: the pairs are the substrings around "&" and the first
 * "=" (empty sequences skipped, a sequence without "=" has the value "").
 */
function queryPairs(rawQuery: string): Iterable<[string, string]> {
  if (NEEDS_DECODING.test(rawQuery)) return new URLSearchParams(rawQuery);
  const out: [string, string][] = [];
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    out.push(eq < 0 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)]);
  }
  return out;
}

/** Canonical query from the raw query string as sent on the wire (decoded first, then re-encoded the SDK way). */
export function canonicalQuery(rawQuery: string): string {
  if (!rawQuery) return '';
  const params = new Map<string, string[]>();
  for (const [k, v] of queryPairs(rawQuery)) {
    const list = params.get(k);
    if (list) list.push(v);
    else params.set(k, [v]);
  }
  const keys = [...params.keys()].sort();
  const parts: string[] = [];
  for (const k of keys) {
    const values = params.get(k)!;
    if (values.length > 1) values.sort();
    const ek = sdkUrlEncode(k);
    for (const v of values) parts.push(`${ek}=${sdkUrlEncode(v)}`);
  }
  return parts.join('&');
}

/** hex(sha256(s)); the hash primitives are shared with the client's signer (src/core/sha256.ts). */
export const sha256Hex = sha256HexCore;

export function hmacHex(key: string, s: string): string {
  return hmacSha256Hex(key, s);
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

let lastDateText = '';
let lastDateMs: number | undefined;

/** Parse "YYYYMMDDTHHmmssZ" (the last one is remembered: requests signed in the same second share it). */
export function parseSdkDate(s: string | undefined): number | undefined {
  if (!s) return undefined;
  if (s === lastDateText) return lastDateMs;
  lastDateMs = parseSdkDateText(s);
  lastDateText = s;
  return lastDateMs;
}

function parseSdkDateText(s: string): number | undefined {
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

/** A request header by lower-case name (repeated values joined with ","). */
function headerOf(headers: VerifyInput['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

export function verifySignature(req: VerifyInput, lookupSk: (ak: string) => string | undefined, nowMs: number, skewMs: number): VerifyResult {
  const auth = parseAuthorization(headerOf(req.headers, 'authorization'));
  if (!auth) return { ok: false, reason: 'missing or malformed Authorization header (expected SDK-HMAC-SHA256 Access=..., SignedHeaders=..., Signature=...)' };
  const sk = lookupSk(auth.ak);
  if (sk === undefined) return { ok: false, reason: `access key ${auth.ak} does not exist` };
  const dateText = headerOf(req.headers, 'x-sdk-date');
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
    const v = headerOf(req.headers, name);
    if (v === undefined) return { ok: false, reason: `signed header ${name} is missing from the request` };
    canonicalHeaders += `${name}:${v}\n`;
  }
  const q = req.url.indexOf('?');
  const rawPath = q >= 0 ? req.url.slice(0, q) : req.url;
  const rawQuery = q >= 0 ? req.url.slice(q + 1) : '';
  const contentSha = headerOf(req.headers, 'x-sdk-content-sha256');
  const bodyHash = sha256Hex(req.body);
  if (contentSha !== undefined && contentSha !== 'UNSIGNED-PAYLOAD' && contentSha.toLowerCase() !== bodyHash) {
    return { ok: false, reason: 'X-Sdk-Content-Sha256 does not match the request body' };
  }
  const payloadHash = contentSha ?? bodyHash;
  const canonical = `${req.method.toUpperCase()}\n${canonicalUri(rawPath)}\n${canonicalQuery(rawQuery)}\n${canonicalHeaders}\n${signed.join(';')}\n${payloadHash}`;
  const stringToSign = `SDK-HMAC-SHA256\n${dateText}\n${sha256Hex(canonical)}`;
  const expected = hmacSha256(sk, stringToSign);
  const got = Buffer.from(auth.signature, 'hex');
  if (got.length !== expected.length || !crypto.timingSafeEqual(got, expected)) {
    return { ok: false, reason: 'verify aksk signature fail' };
  }
  return { ok: true, ak: auth.ak };
}
