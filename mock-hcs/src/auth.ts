/**
 * SDK-HMAC-SHA256 (AK/SK) verification, mirroring
 * @huaweicloud/huaweicloud-sdk-core auth/AKSKSigner.js (HCS-5). The canonical
 * request and hashes are src/core/sdk-signing.ts (shared with the client's
 * signer); this module parses and checks what the request claims:
 * canonicalHeaders: the headers named in SignedHeaders, "name:value\n" each.
 * payloadHash: X-Sdk-Content-Sha256 when present (e.g. UNSIGNED-PAYLOAD), else sha256 of the body.
 */
import * as crypto from 'node:crypto';
import { canonicalRequestHash, hmacSha256, sha256Hex, stringToSign } from '../../src/core/sdk-signing.js';

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
  const contentSha = headerOf(req.headers, 'x-sdk-content-sha256');
  const bodyHash = sha256Hex(req.body);
  if (contentSha !== undefined && contentSha !== 'UNSIGNED-PAYLOAD' && contentSha.toLowerCase() !== bodyHash) {
    return { ok: false, reason: 'X-Sdk-Content-Sha256 does not match the request body' };
  }
  const payloadHash = contentSha ?? bodyHash;
  const expected = hmacSha256(sk, stringToSign(dateText!, canonicalRequestHash(req.method, req.url, canonicalHeaders, signed.join(';'), payloadHash)));
  const got = Buffer.from(auth.signature, 'hex');
  if (got.length !== expected.length || !crypto.timingSafeEqual(got, expected)) {
    return { ok: false, reason: 'verify aksk signature fail' };
  }
  return { ok: true, ak: auth.ak };
}
