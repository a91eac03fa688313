/**
 * SDK-HMAC-SHA256 request signing, the algorithm of
 * @huaweicloud/huaweicloud-sdk-core auth/AKSKSigner.js: every header of the
 * request is signed (names lower-cased and sorted), the canonical URI gets a
 * trailing "/", the query is sorted and percent-encoded, and the payload hash
 * is sha256 of the body.
 *
 * The algorithm has no derived signing key (the HMAC key is the SK itself),
 * so what is computed once is HMAC's own key schedule: the SK's inner and
 * outer padded blocks, per SK. The signature is the same HMAC-SHA256.
 */
import * as crypto from 'node:crypto';
import type { HttpRequest } from './transport.js';

const NO_ESCAPE = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~'.split(''));
/** Only characters that stay as they are: the encoding is the string itself (ids, resource names). */
const UNRESERVED = /^[A-Za-z0-9\-_.~]*$/;
/** A path whose every segment is made of unreserved characters: its canonical form is itself (plus the trailing "/"). */
const UNRESERVED_PATH = /^[A-Za-z0-9\-_.~/]*$/;
/** Characters encodeURIComponent leaves as they are but the SDK encodes. */
const SUB_DELIMS = /[!'()*]/g;

/** The SDK's per-character encoding: RFC 3986 unreserved characters stay, everything else is %XX of its UTF-8 bytes. */
function encodeEach(s: string): string {
  let out = '';
  for (const ch of s) {
    if (NO_ESCAPE.has(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

export function sdkUrlEncode(s: string): string {
  if (UNRESERVED.test(s)) return s;
  // encodeURIComponent encodes exactly the same characters the same way (UTF-8, upper-case hex) except
  // !'()*, which it leaves; it throws on a lone surrogate, which the SDK encodes as U+FFFD's bytes.
  let enc: string;
  try {
    enc = encodeURIComponent(s);
  } catch {
    return encodeEach(s);
  }
  return enc.replace(SUB_DELIMS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalUri(path: string): string {
  const p = UNRESERVED_PATH.test(path)
    ? path
    : path
        .split('/')
        .map((s) => sdkUrlEncode(s))
        .join('/');
  return p.endsWith('/') ? p : `${p}/`;
}

/** What URLSearchParams would change: percent-escapes, "+", non-ASCII (UTF-8 round trip), a leading "?" (dropped). */
const NEEDS_DECODING = /[%+\u0080-\uffff]|^\?/;

/**
 * The query's (key, value) pairs as URLSearchParams decodes them. In an
 * ASCII query without "%" and "+" (and not starting with "?") there is
 * nothing to decode: the pairs are the substrings around "&" and the first
 * "=" (empty sequences skipped, a sequence without "=" has the value ""),
 * which is what URLSearchParams yields.
 */
function queryPairs(query: string): Iterable<[string, string]> {
  if (NEEDS_DECODING.test(query)) return new URLSearchParams(query);
  const out: [string, string][] = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    out.push(eq < 0 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)]);
  }
  return out;
}

function canonicalQuery(query: string): string {
  if (query === '') return '';
  const params = new Map<string, string[]>();
  for (const [k, v] of queryPairs(query)) {
    const l = params.get(k);
    if (l) l.push(v);
    else params.set(k, [v]);
  }
  const keys = [...params.keys()].sort();
  let out = '';
  for (const k of keys) {
    const values = params.get(k)!;
    if (values.length > 1) values.sort();
    const ek = sdkUrlEncode(k);
    for (const v of values) out += `${out === '' ? '' : '&'}${ek}=${sdkUrlEncode(v)}`;
  }
  return out;
}

/** crypto.hash (Node >= 20.12): the same digest in one call, without a Hash object per call. */
const oneShot = (crypto as { hash?: { (algorithm: string, data: string | Uint8Array, encoding: 'hex'): string; (algorithm: string, data: string | Uint8Array, encoding: 'buffer'): Buffer } }).hash;
/** sha256 of the empty body (every GET and DELETE). */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const sha256 = (s: string): string => (s === '' ? EMPTY_SHA256 : oneShot ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex'));

/** SHA-256 block size (bytes): HMAC pads the key to it. */
const BLOCK = 64;

/** HMAC-SHA256 (RFC 2104) with the key's padded blocks computed once per key. */
class Hmac256 {
  /** K xor ipad, then room for the message. */
  private inner: Buffer;
  /** K xor opad, then the inner digest. */
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

  hex(message: string): string {
    const hash = oneShot!;
    const len = Buffer.byteLength(message, 'utf8');
    if (BLOCK + len > this.inner.length) {
      const grown = Buffer.alloc(BLOCK + Math.max(len, 2 * (this.inner.length - BLOCK)));
      this.inner.copy(grown, 0, 0, BLOCK);
      this.inner = grown;
    }
    this.inner.write(message, BLOCK, 'utf8');
    hash('sha256', this.inner.subarray(0, BLOCK + len), 'buffer').copy(this.outer, BLOCK);
    return hash('sha256', this.outer, 'hex');
  }
}

/** Per SK (a client signs with one or two keys over its life). */
const hmacs = new Map<string, Hmac256>();

function hmacHex(key: string, message: string): string {
  if (!oneShot) return crypto.createHmac('sha256', key).update(message).digest('hex');
  let h = hmacs.get(key);
  if (!h) {
    if (hmacs.size >= 64) hmacs.clear();
    hmacs.set(key, (h = new Hmac256(key)));
  }
  return h.hex(message);
}

let lastDateSecond = Number.NaN;
let lastDate = '';

/** "YYYYMMDDTHHmmssZ" (the last one is remembered: calls at the same virtual second share it). */
export function sdkDate(now: Date): string {
  const second = Math.floor(now.getTime() / 1000);
  if (second !== lastDateSecond) {
    lastDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
    lastDateSecond = second;
  }
  return lastDate;
}

/**
 * Return a copy of `req` with X-Sdk-Date, host and Authorization headers.
 * Any existing Authorization header is replaced; every other header is signed.
 */
export function signRequest(req: HttpRequest, creds: { ak: string; sk: string }, host: string, now: Date): HttpRequest {
  const headers: Record<string, string> = {};
  for (const k in req.headers) {
    const lk = k.toLowerCase();
    if (lk === 'authorization' || lk === 'x-sdk-date' || lk === 'host') continue;
    headers[lk] = req.headers[k]!;
  }
  const date = sdkDate(now);
  headers['x-sdk-date'] = date;
  headers['host'] = host;
  const names = Object.keys(headers).sort();
  let canonicalHeaders = '';
  for (const n of names) canonicalHeaders += `${n}:${headers[n]}\n`;
  const signedHeaders = names.join(';');
  const q = req.path.indexOf('?');
  const path = q >= 0 ? req.path.slice(0, q) : req.path;
  const query = q >= 0 ? req.path.slice(q + 1) : '';
  const payloadHash = headers['x-sdk-content-sha256'] ?? sha256(req.body ?? '');
  const canonical = `${req.method.toUpperCase()}\n${canonicalUri(path)}\n${canonicalQuery(query)}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const signature = hmacHex(creds.sk, `SDK-HMAC-SHA256\n${date}\n${sha256(canonical)}`);
  headers['authorization'] = `SDK-HMAC-SHA256 Access=${creds.ak}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { ...req, headers };
}
