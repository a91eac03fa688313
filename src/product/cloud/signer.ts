/**
 * SDK-HMAC-SHA256 request signing, the algorithm of
 * @huaweicloud/huaweicloud-sdk-core auth/AKSKSigner.js: every header of the
 * request is signed (names lower-cased and sorted), the canonical URI gets a
 * trailing "/", the query is sorted and percent-encoded, and the payload hash
 * is sha256 of the body.
 *
 * The canonical request and the hash primitives are in
 * src/core/sdk-signing.ts, shared with mock-hcs's verifier; this module
 * chooses what to sign (every header) and writes the Authorization header.
 */
import { canonicalRequestHash, hmacSha256Hex, sdkUrlEncode, sha256Hex, stringToSign } from '../../core/sdk-signing.js';
import type { HttpRequest } from './transport.js';

export { sdkUrlEncode };

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
 * The headers a signed request carries besides Authorization: names
 * lower-cased, any Authorization dropped, X-Sdk-Date and host set (the
 * in-process transport sends exactly these, with the keys beside them).
 */
export function datedHeaders(req: HttpRequest, host: string, now: Date): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const k in req.headers) {
    const lk = k.toLowerCase();
    if (lk === 'authorization' || lk === 'x-sdk-date' || lk === 'host') continue;
    headers[lk] = req.headers[k]!;
  }
  headers['x-sdk-date'] = sdkDate(now);
  headers['host'] = host;
  return headers;
}

/**
 * Return a copy of `req` with X-Sdk-Date, host and Authorization headers.
 * Any existing Authorization header is replaced; every other header is signed.
 */
export function signRequest(req: HttpRequest, creds: { ak: string; sk: string }, host: string, now: Date): HttpRequest {
  const headers = datedHeaders(req, host, now);
  const date = headers['x-sdk-date']!;
  const names = Object.keys(headers).sort();
  let canonicalHeaders = '';
  for (const n of names) canonicalHeaders += `${n}:${headers[n]}\n`;
  const signedHeaders = names.join(';');
  const payloadHash = headers['x-sdk-content-sha256'] ?? sha256Hex(req.body ?? '');
  const canonical = canonicalRequestHash(req.method, req.path, canonicalHeaders, signedHeaders, payloadHash);
  const signature = hmacSha256Hex(creds.sk, stringToSign(date, canonical));
  headers['authorization'] = `SDK-HMAC-SHA256 Access=${creds.ak}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return { ...req, headers };
}
