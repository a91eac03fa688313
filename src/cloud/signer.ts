/**
 * SDK-HMAC-SHA256 request signing, the algorithm of
 * @huaweicloud/huaweicloud-sdk-core auth/AKSKSigner.js: every header of the
 * request is signed (names lower-cased and sorted), the canonical URI gets a
 * trailing "/", the query is sorted and percent-encoded, and the payload hash
 * is sha256 of the body.
 *
 * The hash primitives (SHA-256, HMAC-SHA256 with the SK's padded blocks
 * computed once per SK) are in src/core/sha256.ts, shared with mock-hcs.
 */
import { hmacSha256Hex, sha256Hex } from '../core/sha256.js';
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
  const payloadHash = headers['x-sdk-content-sha256'] ?? sha256Hex(req.body ?? '');
  const canonical = `${req.method.toUpperCase()}\n${canonicalUri(path)}\n${canonicalQuery(query)}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const signature = hmacSha256Hex(creds.sk, `SDK-HMAC-SHA256\n${date}\n${sha256Hex(canonical)}`);
  headers['authorization'] = `SDK-HMAC-SHA256 Access=${creds.ak}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { ...req, headers };
}
