/**
 * SDK-HMAC-SHA256 request signing, the algorithm of
 * @huaweicloud/huaweicloud-sdk-core auth/AKSKSigner.js: every header of the
 * request is signed (names lower-cased and sorted), the canonical URI gets a
 * trailing "/", the query is sorted and percent-encoded, and the payload hash
 * is sha256 of the body.
 */
import * as crypto from 'node:crypto';
import type { HttpRequest } from './transport.js';

const NO_ESCAPE = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~'.split(''));
/** Only characters that stay as they are: the encoding is the string itself (ids, resource names). */
const UNRESERVED = /^[A-Za-z0-9\-_.~]*$/;

export function sdkUrlEncode(s: string): string {
  if (UNRESERVED.test(s)) return s;
  let out = '';
  for (const ch of s) {
    if (NO_ESCAPE.has(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function canonicalUri(path: string): string {
  const p = path
    .split('/')
    .map((s) => sdkUrlEncode(s))
    .join('/');
  return p.endsWith('/') ? p : `${p}/`;
}

function canonicalQuery(query: string): string {
  const params = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(query)) {
    const l = params.get(k);
    if (l) l.push(v);
    else params.set(k, [v]);
  }
  return [...params.keys()]
    .sort()
    .flatMap((k) => params.get(k)!.sort().map((v) => `${sdkUrlEncode(k)}=${sdkUrlEncode(v)}`))
    .join('&');
}

/** crypto.hash (Node >= 20.12): the same digest in one call, without a Hash object per call. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;
/** sha256 of the empty body (every GET and DELETE). */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const sha256 = (s: string): string => (s === '' ? EMPTY_SHA256 : oneShot ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex'));

/** "YYYYMMDDTHHmmssZ" */
export function sdkDate(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Return a copy of `req` with X-Sdk-Date, host and Authorization headers.
 * Any existing Authorization header is replaced; every other header is signed.
 */
export function signRequest(req: HttpRequest, creds: { ak: string; sk: string }, host: string, now: Date): HttpRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    const lk = k.toLowerCase();
    if (lk === 'authorization' || lk === 'x-sdk-date' || lk === 'host') continue;
    headers[lk] = v;
  }
  const date = sdkDate(now);
  headers['x-sdk-date'] = date;
  headers['host'] = host;
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]}\n`).join('');
  const signedHeaders = names.join(';');
  const q = req.path.indexOf('?');
  const path = q >= 0 ? req.path.slice(0, q) : req.path;
  const query = q >= 0 ? req.path.slice(q + 1) : '';
  const payloadHash = headers['x-sdk-content-sha256'] ?? sha256(req.body ?? '');
  const canonical = [req.method.toUpperCase(), canonicalUri(path), canonicalQuery(query), canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const stringToSign = ['SDK-HMAC-SHA256', date, sha256(canonical)].join('\n');
  const signature = crypto.createHmac('sha256', creds.sk).update(stringToSign).digest('hex');
  headers['authorization'] = `SDK-HMAC-SHA256 Access=${creds.ak}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { ...req, headers };
}
