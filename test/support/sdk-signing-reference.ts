/**
 * The SDK-HMAC-SHA256 canonical forms written the plain way (per character,
 * URLSearchParams), as the signer and verifier were first written: the
 * reference the faster client signer (test/cloud/signer.test.ts) and mock-hcs
 * verifier (test/mock-hcs/auth-shortcuts.test.ts) are compared against, over
 * generated strings.
 */
import type { SeededRng } from '../../src/core/index.js';

const NO_ESCAPE = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~'.split(''));

/** RFC 3986 unreserved characters stay, everything else is %XX of its UTF-8 bytes. */
export function refEncode(s: string): string {
  let out = '';
  for (const ch of s) {
    if (NO_ESCAPE.has(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** A segment's percent-escapes decoded, as the Python SDK's signer unquotes the path (a malformed one kept as sent). */
export function refDecode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}

/** Every path segment decoded, then encoded; a trailing "/" added. */
export function refUri(path: string): string {
  const p = path.split('/').map((seg) => refEncode(refDecode(seg))).join('/');
  return p.endsWith('/') ? p : `${p}/`;
}

/** Keys sorted, the values of a key sorted, key=value encoded, joined with "&". */
export function refQuery(query: string): string {
  const params = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(query)) {
    const l = params.get(k);
    if (l) l.push(v);
    else params.set(k, [v]);
  }
  return [...params.keys()]
    .sort()
    .flatMap((k) => params.get(k)!.sort().map((v) => `${refEncode(k)}=${refEncode(v)}`))
    .join('&');
}

/** Characters that exercise every branch: unreserved, sub-delims, %, +, ?, =, &, space, non-ASCII, a lone surrogate. */
export const ALPHABET = ['a', 'Z', '0', '-', '_', '.', '~', '!', "'", '(', ')', '*', '%', '%2', '%41', '%zz', '+', '?', '=', '&', ' ', '/', ':', '@', ',', ';', '"', 'é', '雪', '😀', '\ud800', '\u0000'];
/** Unreserved characters only (the fast paths). */
export const PLAIN = ['a', 'b', 'Z', '0', '9', '-', '_', '.', '~'];

/** Up to `max` characters drawn from `alphabet`. */
export function text(rng: SeededRng, max: number, alphabet: readonly string[] = ALPHABET): string {
  let s = '';
  for (let n = rng.int(max + 1); n > 0; n--) s += alphabet[rng.int(alphabet.length)];
  return s;
}
