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

/** crypto.hash (Node >= 20.12): the same digest in one call, without a Hash object per call. */
const oneShot = (crypto as { hash?: { (algorithm: string, data: string | Uint8Array, encoding: 'hex'): string; (algorithm: string, data: string | Uint8Array, encoding: 'buffer'): Buffer } }).hash;
/** sha256 of the empty body (every GET and DELETE). */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export function sha256Hex(s: string): string {
  if (s === '') return EMPTY_SHA256;
  return oneShot ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex');
}

/** SHA-256 block size (bytes): HMAC pads the key to it. */
const BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) with the key's padded blocks (K xor ipad, K xor
 * opad) computed once per key: the digest is two one-shot SHA-256 calls.
 */
class Hmac256 {
  private inner: Buffer;
  private readonly outer = Buffer.alloc(BLOCK + 32);

  constructor(key: string) {
    let k = Buffer.from(key, 'utf8');
    if (k.length > BLOCK) k = crypto.createHash('sha256').update(k).digest();
    this.inner = Buffer.alloc(BLOCK + 256);
    for (let i = 0; i < BLOCK; i++) {
      const b = i < k.length ? k[i]! : 0;
      this.inner[i] = b ^ 0x36;
      this.outer[i] = b ^ 0x5c;
    }
  }

  digest(message: string): Buffer {
    const hash = oneShot!;
    const len = Buffer.byteLength(message, 'utf8');
    if (BLOCK + len > this.inner.length) {
      const grown = Buffer.alloc(BLOCK + Math.max(len, 2 * (this.inner.length - BLOCK)));
      this.inner.copy(grown, 0, 0, BLOCK);
      this.inner = grown;
    }
    this.inner.write(message, BLOCK, 'utf8');
    hash('sha256', this.inner.subarray(0, BLOCK + len), 'buffer').copy(this.outer, BLOCK);
    return hash('sha256', this.outer, 'buffer');
  }
}

/** Per SK (the keys of the configured projects; lookupSk answers only for those). */
const hmacs = new Map<string, Hmac256>();

function hmac(key: string, s: string): Buffer {
  if (!oneShot) return crypto.createHmac('sha256', key).update(s).digest();
  let h = hmacs.get(key);
  if (!h) {
    if (hmacs.size >= 256) hmacs.clear();
    hmacs.set(key, (h = new Hmac256(key)));
  }
  return h.digest(s);
}

export function hmacHex(key: string, s: string): string {
  return hmac(key, s).toString('hex');
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
  const expected = hmac(sk, stringToSign);
  const got = Buffer.from(auth.signature, 'hex');
  if (got.length !== expected.length || !crypto.timingSafeEqual(got, expected)) {
    return { ok: false, reason: 'verify aksk signature fail' };
  }
  return { ok: true, ak: auth.ak };
}
