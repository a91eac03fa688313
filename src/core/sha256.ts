/**
 * SHA-256 and HMAC-SHA256 for the SDK-HMAC-SHA256 request signature, shared
 * by the client's signer (src/cloud/signer.ts) and mock-hcs's verifier
 * (mock-hcs/src/auth.ts). Each side keeps its own canonical-request code (the
 * verifier is an independent reading of the SDK's algorithm); only the hash
 * primitives are common.
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

/** hex(sha256(s)) of the UTF-8 bytes of `s`. */
export function sha256Hex(s: string): string {
  if (s === '') return EMPTY_SHA256;
  return oneShot ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex');
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

  hex(message: string): string {
    return oneShot!('sha256', this.outerInput(message), 'hex');
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

/** HMAC-SHA256(key, message) as bytes. */
export function hmacSha256(key: string, message: string): Buffer {
  return oneShot ? keyed(key).digest(message) : crypto.createHmac('sha256', key).update(message).digest();
}

/** HMAC-SHA256(key, message) as lower-case hex. */
export function hmacSha256Hex(key: string, message: string): string {
  return oneShot ? keyed(key).hex(message) : crypto.createHmac('sha256', key).update(message).digest('hex');
}
