/**
 * The pieces of the SDK-HMAC-SHA256 request signature
 * (@huaweicloud/huaweicloud-sdk-core auth/AKSKSigner.js) that the client's
 * signer (src/product/cloud/signer.ts) and mock-hcs's verifier (mock-hcs/src/auth.ts)
 * both need, written once:
 *
 *   canonical request = METHOD \n canonicalURI \n canonicalQuery \n
 *                       canonicalHeaders \n signedHeaders \n payloadHash
 *   string to sign    = "SDK-HMAC-SHA256" \n X-Sdk-Date \n hex(sha256(canonical request))
 *   signature         = hex(hmac-sha256(SK, string to sign))
 *
 * canonicalURI: every path segment percent-encoded, trailing "/" added.
 * canonicalQuery: keys sorted, key=value percent-encoded, array values sorted.
 * The signer chooses which headers to sign, the verifier checks them; both
 * build the canonical request here. That both sides agree with the SDK is
 * tested against the official SDK signer (test/cloud/signer.test.ts,
 * test/mock-hcs/sdk*.test.ts) and against the plain per-character algorithm
 * (test/support/sdk-signing-reference.ts), not against each other.
 *
 * The other algorithms the official SDKs offer share the canonical request
 * and differ in hash and signature (huaweicloud-sdk-go-v3 core/auth/signer,
 * huaweicloudsdkcore signer/signer.py):
 *   SDK-HMAC-SM3:          SM3 instead of SHA-256 for the payload hash (header
 *                          X-Sdk-Content-Sm3), the canonical-request hash and the HMAC.
 *   SDK-ECDSA-P256-SHA256: as SDK-HMAC-SHA256 up to the string to sign, which is
 *                          signed with ECDSA P-256 / SHA-256 (DER, hex) by a
 *                          private key derived from AK and SK (p256PrivateKey).
 *   SDK-SM2-SM3:           SM2 signature (not verifiable with node:crypto).
 *
 * The algorithm has no derived signing key (the HMAC key is the SK itself),
 * so what is computed once per key is HMAC's own key schedule (RFC 2104): the
 * key's inner and outer padded blocks. A signature is then two one-shot
 * SHA-256 calls, the same bytes as crypto.createHmac.
 */
import * as crypto from 'node:crypto';

/** crypto.hash (Node >= 20.12): the same digest in one call, without a Hash object per call. */
const oneShot = (crypto as { hash?: { (algorithm: string, data: string | Uint8Array, encoding: 'hex'): string; (algorithm: string, data: string | Uint8Array, encoding: 'buffer'): Buffer } }).hash;

/** sha256 of the empty body (every GET and DELETE). */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/**
 * The last few results of a pure function of one or two strings, by input.
 * In process the client signs a request and mock-hcs verifies it a moment
 * later: both build the canonical request, hash the same body and compute the
 * HMAC of the same string to sign, and the second side finds the digest here
 * instead of hashing again. Only an input equal to the one hashed hits (the
 * verifier still builds everything from what it received and compares it);
 * a string comparison costs far less than a digest (a native call each).
 */
class Recent<V> {
  private readonly a: string[] = [];
  private readonly b: string[] = [];
  private readonly v: V[] = [];
  private next = 0;

  constructor(private readonly size: number) {}

  get(a: string, b = ''): V | undefined {
    for (let i = 0; i < this.a.length; i++) if (this.a[i] === a && this.b[i] === b) return this.v[i];
    return undefined;
  }

  set(a: string, b: string, v: V): V {
    this.a[this.next] = a;
    this.b[this.next] = b;
    this.v[this.next] = v;
    this.next = (this.next + 1) % this.size;
    return v;
  }
}

/** Bodies and canonical requests of the last couple of requests (each side hashes two strings per request). */
const recentSha256 = new Recent<string>(4);

/** hex(sha256(s)) of the UTF-8 bytes of `s`. */
export function sha256Hex(s: string): string {
  if (s === '') return EMPTY_SHA256;
  const hit = recentSha256.get(s);
  if (hit !== undefined) return hit;
  return recentSha256.set(s, '', oneShot ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex'));
}

/** SHA-256 block size (bytes): HMAC pads the key to it. */
const BLOCK = 64;

/** HMAC-SHA256 with the key's padded blocks computed once. */
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

  /** The outer block followed by the inner digest of `message`, ready for the outer hash. */
  private outerInput(message: string): Buffer {
    const hash = oneShot!;
    const len = Buffer.byteLength(message, 'utf8');
    if (BLOCK + len > this.inner.length) {
      const grown = Buffer.alloc(BLOCK + Math.max(len, 2 * (this.inner.length - BLOCK)));
      this.inner.copy(grown, 0, 0, BLOCK);
      this.inner = grown;
    }
    this.inner.write(message, BLOCK, 'utf8');
    hash('sha256', this.inner.subarray(0, BLOCK + len), 'buffer').copy(this.outer, BLOCK);
    return this.outer;
  }

  digest(message: string): Buffer {
    return oneShot!('sha256', this.outerInput(message), 'buffer');
  }
}

/** Per key (a client signs with one or two SKs over its life; the mock verifies for its configured projects). Bounded. */
const hmacs = new Map<string, Hmac256>();

function keyed(key: string): Hmac256 {
  let h = hmacs.get(key);
  if (!h) {
    if (hmacs.size >= 256) hmacs.clear();
    hmacs.set(key, (h = new Hmac256(key)));
  }
  return h;
}

/** Signatures of the last requests, by (key, string to sign): the verifier's HMAC of what the signer just signed. Never handed out (callers get copies). */
const recentHmac = new Recent<Buffer>(2);

function hmacDigest(key: string, message: string): Buffer {
  const hit = recentHmac.get(key, message);
  if (hit) return hit;
  return recentHmac.set(key, message, oneShot ? keyed(key).digest(message) : crypto.createHmac('sha256', key).update(message).digest());
}

/** HMAC-SHA256(key, message) as bytes (the caller's own Buffer). */
export function hmacSha256(key: string, message: string): Buffer {
  return Buffer.from(hmacDigest(key, message));
}

/** HMAC-SHA256(key, message) as lower-case hex. */
export function hmacSha256Hex(key: string, message: string): string {
  return hmacDigest(key, message).toString('hex');
}

// ---------------------------------------------------------------- canonical forms

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

/** Percent-encoding of the SDK signer. */
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

/** A path segment as the request means it: percent-escapes decoded (a malformed escape is kept as it was sent). */
function decodeSegment(seg: string): string {
  if (!seg.includes('%')) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/**
 * Canonical URI of a raw path as sent on the wire: every segment decoded, then encoded the SDKs' way, and a trailing
 * "/". Decoding first is what lets every official SDK sign a path parameter that needs escaping: the Python SDK
 * sends `app%3Arole` and signs the decoded path encoded once (huaweicloudsdkcore signer `_process_canonical_uri`:
 * unquote, split, quote each segment); the Node and Go SDKs put the value in the path as it is (`app:role`) and
 * encode it once when they sign. Both give `app%3Arole`; encoding the raw path instead gave the Python SDK's
 * request `app%253Arole` (a 401). Paths without escapes are unchanged.
 */
export function canonicalUri(rawPath: string): string {
  const p = UNRESERVED_PATH.test(rawPath)
    ? rawPath
    : rawPath
        .split('/')
        .map((seg) => sdkUrlEncode(decodeSegment(seg)))
        .join('/');
  return p.endsWith('/') ? p : `${p}/`;
}

/** What URLSearchParams would change: percent-escapes, "+", non-ASCII (UTF-8 round trip), a leading "?" (dropped). */
const NEEDS_DECODING = /[%+\u0080-\uffff]|^\?/;

/**
 * The raw query's (key, value) pairs as URLSearchParams decodes them. In an
 * ASCII query without "%" and "+" (and not starting with "?") there is
 * nothing to decode: the pairs are the substrings around "&" and the first
 * "=" (empty sequences skipped, a sequence without "=" has the value ""),
 * which is what URLSearchParams yields.
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
  if (rawQuery === '') return '';
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

/**
 * hex(sha256(canonical request)) for `pathAndQuery` as sent on the wire;
 * `canonicalHeaders` is "name:value\n" per signed header, `signedHeaders`
 * their names joined with ";".
 */
export function canonicalRequestHash(method: string, pathAndQuery: string, canonicalHeaders: string, signedHeaders: string, payloadHash: string): string {
  const q = pathAndQuery.indexOf('?');
  const rawPath = q >= 0 ? pathAndQuery.slice(0, q) : pathAndQuery;
  const rawQuery = q >= 0 ? pathAndQuery.slice(q + 1) : '';
  return sha256Hex(`${method.toUpperCase()}\n${canonicalUri(rawPath)}\n${canonicalQuery(rawQuery)}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`);
}

/** The string the signature is made of. */
export function stringToSign(sdkDate: string, canonicalRequestHashHex: string, algorithm: SigningAlgorithm = 'SDK-HMAC-SHA256'): string {
  return `${algorithm}\n${sdkDate}\n${canonicalRequestHashHex}`;
}

// ---------------------------------------------------------------- other algorithms

/** The algorithms mock-hcs verifies (the Authorization header's first word). */
export const SIGNING_ALGORITHMS = ['SDK-HMAC-SHA256', 'SDK-HMAC-SM3', 'SDK-ECDSA-P256-SHA256'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

/** The digest an algorithm hashes the payload and the canonical request with. */
export function digestOf(algorithm: SigningAlgorithm): 'sha256' | 'sm3' {
  return algorithm === 'SDK-HMAC-SM3' ? 'sm3' : 'sha256';
}

/** The header that carries a precomputed payload hash (or UNSIGNED-PAYLOAD) for the algorithm. */
export function contentHashHeader(algorithm: SigningAlgorithm): 'x-sdk-content-sha256' | 'x-sdk-content-sm3' {
  return algorithm === 'SDK-HMAC-SM3' ? 'x-sdk-content-sm3' : 'x-sdk-content-sha256';
}

/** hex(digest(s)) of the UTF-8 bytes of `s`. */
export function digestHex(digest: 'sha256' | 'sm3', s: string): string {
  return digest === 'sha256' ? sha256Hex(s) : crypto.createHash('sm3').update(s, 'utf8').digest('hex');
}

/** hex(sha256 | sm3 of the canonical request): canonicalRequestHash with the algorithm's digest. */
export function canonicalRequestDigest(digest: 'sha256' | 'sm3', method: string, pathAndQuery: string, canonicalHeaders: string, signedHeaders: string, payloadHash: string): string {
  if (digest === 'sha256') return canonicalRequestHash(method, pathAndQuery, canonicalHeaders, signedHeaders, payloadHash);
  const q = pathAndQuery.indexOf('?');
  const rawPath = q >= 0 ? pathAndQuery.slice(0, q) : pathAndQuery;
  const rawQuery = q >= 0 ? pathAndQuery.slice(q + 1) : '';
  return digestHex('sm3', `${method.toUpperCase()}\n${canonicalUri(rawPath)}\n${canonicalQuery(rawQuery)}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`);
}

/** HMAC-SM3(key, message) (SDK-HMAC-SM3). */
export function hmacSm3(key: string, message: string): Buffer {
  return crypto.createHmac('sm3', key).update(message, 'utf8').digest();
}

/** Order of the P-256 group minus 2 (the derived scalar is at most n-2, then 1 is added). */
const P256_N_MINUS_TWO = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n - 2n;

/**
 * The SDK-ECDSA-P256-SHA256 private scalar of an AK/SK pair, as both SDKs
 * derive it (Go core/auth/signer/p256_sha256_signer.go derivePrivateInt,
 * Python signer.py P256SHA256Signer._derive_key): for counter 0, 1, ...:
 * candidate = HMAC-SHA256(SK, 00000001 || "SDK-ECDSA-P256-SHA256" || 00 ||
 * AK || counter || 00000100) as a big-endian integer; the first candidate
 * <= n-2 gives d = candidate + 1.
 */
export function p256PrivateScalar(ak: string, sk: string): bigint {
  for (let counter = 0; counter < 0xff; counter++) {
    const data = Buffer.concat([Buffer.from([0, 0, 0, 1]), Buffer.from('SDK-ECDSA-P256-SHA256\0', 'latin1'), Buffer.from(ak, 'utf8'), Buffer.from([counter, 0, 0, 1, 0])]);
    const candidate = BigInt(`0x${crypto.createHmac('sha256', sk).update(data).digest('hex')}`);
    if (candidate <= P256_N_MINUS_TWO) return candidate + 1n;
  }
  throw new Error('SDK-ECDSA-P256-SHA256: no key candidate for this AK/SK (counter out of range)');
}

const p256Keys = new Map<string, { priv: crypto.KeyObject; pub: crypto.KeyObject }>();

/** The derived P-256 key pair of an AK/SK pair (remembered, bounded). */
export function p256KeyPair(ak: string, sk: string): { priv: crypto.KeyObject; pub: crypto.KeyObject } {
  const id = `${ak}\n${sk}`;
  let k = p256Keys.get(id);
  if (!k) {
    const d = Buffer.from(p256PrivateScalar(ak, sk).toString(16).padStart(64, '0'), 'hex');
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.setPrivateKey(d);
    const point = ecdh.getPublicKey(); // 04 || X || Y
    const jwk = { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') };
    k = {
      pub: crypto.createPublicKey({ key: jwk, format: 'jwk' }),
      priv: crypto.createPrivateKey({ key: { ...jwk, d: d.toString('base64url') }, format: 'jwk' }),
    };
    if (p256Keys.size >= 256) p256Keys.clear();
    p256Keys.set(id, k);
  }
  return k;
}

/** hex(DER ECDSA P-256 / SHA-256 signature) of the string to sign (what the SDK's signer sends). */
export function p256SignHex(ak: string, sk: string, stringToSignText: string): string {
  return crypto.sign('sha256', Buffer.from(stringToSignText, 'utf8'), { key: p256KeyPair(ak, sk).priv, dsaEncoding: 'der' }).toString('hex');
}

/** Whether `signature` (DER bytes) is a valid SDK-ECDSA-P256-SHA256 signature of the string to sign. */
export function p256Verify(ak: string, sk: string, stringToSignText: string, signature: Buffer): boolean {
  try {
    return crypto.verify('sha256', Buffer.from(stringToSignText, 'utf8'), { key: p256KeyPair(ak, sk).pub, dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}
