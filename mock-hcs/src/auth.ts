/**
 * AK/SK signature verification (HCS-5), for the algorithms the official SDKs
 * sign with: SDK-HMAC-SHA256 (every SDK's default), SDK-HMAC-SM3 and
 * SDK-ECDSA-P256-SHA256 (huaweicloud-sdk-go-v3 core/auth/signer, Python
 * huaweicloudsdkcore signer/signer.py). SDK-SM2-SM3 and the derived
 * V11-HMAC-SHA256 are refused as unsupported, by name. The canonical request,
 * hashes and the ECDSA key derivation are src/core/sdk-signing.ts (shared with
 * the client's signer); this module parses and checks what the request claims:
 * canonicalHeaders: the headers named in SignedHeaders, "name:value\n" each
 * (values trimmed, as both SDKs do). Which headers are signed is the client's
 * choice: the Go SDK signs its own header map (e.g. user-agent;x-project-id;x-sdk-date,
 * never host or content-type), the Node and Python SDKs add host. Only
 * x-sdk-date must be among them (it dates the signature).
 * payloadHash: X-Sdk-Content-Sha256 (X-Sdk-Content-Sm3 for SM3) when present
 * (e.g. UNSIGNED-PAYLOAD), else the digest of the body.
 */
import * as crypto from 'node:crypto';
import {
  SIGNING_ALGORITHMS,
  canonicalRequestDigest,
  contentHashHeader,
  digestHex,
  digestOf,
  hmacSha256,
  hmacSm3,
  p256Verify,
  stringToSign,
  type SigningAlgorithm,
} from '../../src/core/sdk-signing.js';

export interface ParsedAuthorization {
  algorithm: SigningAlgorithm;
  ak: string;
  signedHeaders: string[];
  signature: string;
}

const SUPPORTED = new Set<string>(SIGNING_ALGORITHMS);

/** The algorithm word of an Authorization header that names one (e.g. "SDK-SM2-SM3 Access=..."). */
export function authorizationAlgorithm(h: string | undefined): string | undefined {
  return h ? /^([A-Za-z0-9][A-Za-z0-9-]*)\s/.exec(h)?.[1] : undefined;
}

export function parseAuthorization(h: string | undefined): ParsedAuthorization | undefined {
  if (!h) return undefined;
  const m = /^(SDK-HMAC-SHA256|SDK-HMAC-SM3|SDK-ECDSA-P256-SHA256)\s+Access=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-fA-F]+)\s*$/.exec(h);
  if (!m) return undefined;
  return { algorithm: m[1] as SigningAlgorithm, ak: m[2]!, signedHeaders: m[3]!.split(';'), signature: m[4]!.toLowerCase() };
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

/**
 * What a signature and in-process keys are checked for alike, in this order:
 * the access key exists (its secret key), and X-Sdk-Date parses and is within
 * the skew of the cloud's clock.
 */
function keyAndDate(ak: string, dateText: string | undefined, lookupSk: (ak: string) => string | undefined, nowMs: number, skewMs: number): { ok: false; reason: string } | { ok: true; sk: string } {
  const sk = lookupSk(ak);
  if (sk === undefined) return { ok: false, reason: `access key ${ak} does not exist` };
  const date = parseSdkDate(dateText);
  if (date === undefined) return { ok: false, reason: 'missing or malformed X-Sdk-Date header (expected YYYYMMDDTHHmmssZ)' };
  if (Math.abs(nowMs - date) > skewMs) {
    return { ok: false, reason: `X-Sdk-Date ${dateText} is outside the allowed clock skew of ${Math.round(skewMs / 1000)}s` };
  }
  return { ok: true, sk };
}

export function verifySignature(req: VerifyInput, lookupSk: (ak: string) => string | undefined, nowMs: number, skewMs: number): VerifyResult {
  const header = headerOf(req.headers, 'authorization');
  const auth = parseAuthorization(header);
  if (!auth) {
    const alg = authorizationAlgorithm(header);
    if (alg !== undefined && !SUPPORTED.has(alg)) {
      return { ok: false, reason: `unsupported signing algorithm ${alg} (mock-hcs verifies ${SIGNING_ALGORITHMS.join(', ')})` };
    }
    return { ok: false, reason: `missing or malformed Authorization header (expected <${SIGNING_ALGORITHMS.join('|')}> Access=..., SignedHeaders=..., Signature=...)` };
  }
  const dateText = headerOf(req.headers, 'x-sdk-date');
  const known = keyAndDate(auth.ak, dateText, lookupSk, nowMs, skewMs);
  if (!known.ok) return known;
  const { sk } = known;
  const signed = auth.signedHeaders.map((h) => h.toLowerCase());
  if (!signed.includes('x-sdk-date')) return { ok: false, reason: 'SignedHeaders must include x-sdk-date' };
  let canonicalHeaders = '';
  for (const name of signed) {
    const v = headerOf(req.headers, name);
    if (v === undefined) return { ok: false, reason: `signed header ${name} is missing from the request` };
    canonicalHeaders += `${name}:${v.trim()}\n`;
  }
  const digest = digestOf(auth.algorithm);
  const contentHeader = contentHashHeader(auth.algorithm);
  const contentHash = headerOf(req.headers, contentHeader);
  const bodyHash = digestHex(digest, req.body);
  if (contentHash !== undefined && contentHash !== 'UNSIGNED-PAYLOAD' && contentHash.toLowerCase() !== bodyHash) {
    return { ok: false, reason: `${contentHeader === 'x-sdk-content-sm3' ? 'X-Sdk-Content-Sm3' : 'X-Sdk-Content-Sha256'} does not match the request body` };
  }
  const payloadHash = contentHash ?? bodyHash;
  const sts = stringToSign(dateText!, canonicalRequestDigest(digest, req.method, req.url, canonicalHeaders, signed.join(';'), payloadHash), auth.algorithm);
  const got = Buffer.from(auth.signature, 'hex');
  let good: boolean;
  if (auth.algorithm === 'SDK-ECDSA-P256-SHA256') {
    good = p256Verify(auth.ak, sk, sts, got);
  } else {
    const expected = auth.algorithm === 'SDK-HMAC-SM3' ? hmacSm3(sk, sts) : hmacSha256(sk, sts);
    good = got.length === expected.length && crypto.timingSafeEqual(got, expected);
  }
  if (!good) return { ok: false, reason: auth.algorithm === 'SDK-HMAC-SHA256' ? 'verify aksk signature fail' : `verify aksk signature fail (${auth.algorithm})` };
  return { ok: true, ak: auth.ak };
}

/**
 * The access key and secret key of an in-process caller, handed beside the
 * request instead of a signature (the embedded testbed's transport,
 * src/product/cloud/transport.ts `inProcessTransport`; mock-hcs's
 * `dispatch` only: nothing on the wire can carry them).
 */
export interface InProcessCredentials {
  ak: string;
  sk: string;
}

/**
 * verifySignature's decisions for a request that carries its credentials
 * instead of a signature, in the same order and with the same reasons: an
 * unknown access key, a missing or malformed X-Sdk-Date, a date outside the
 * skew, and a secret key that is not the access key's ("verify aksk
 * signature fail": the signature an SDK would have made with it would not
 * match). What only a signature can get wrong (its header's syntax, the
 * signed headers, the content hash) has no counterpart here: the signer is
 * proven over the wire (test/cloud, the SDK suites).
 */
export function verifyCredentials(creds: InProcessCredentials, dateText: string | undefined, lookupSk: (ak: string) => string | undefined, nowMs: number, skewMs: number): VerifyResult {
  const known = keyAndDate(creds.ak, dateText, lookupSk, nowMs, skewMs);
  if (!known.ok) return known;
  const a = Buffer.from(creds.sk);
  const b = Buffer.from(known.sk);
  if (a.length !== b.length || !crypto.timingSafeEqual(a, b)) return { ok: false, reason: 'verify aksk signature fail' };
  return { ok: true, ak: creds.ak };
}
