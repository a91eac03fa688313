/**
 * Seeded random source (ARCHITECTURE: "Deterministic"). Names, jitter and
 * choices come from here, never from Math.random, so (scenario, seed) fixes
 * the whole run.
 *
 * Algorithm: mulberry32 over a 32-bit state seeded through splitmix32.
 */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Random string of `len` characters from `alphabet`. */
  string(len: number, alphabet?: string): string;
  /** RFC 4122-shaped version-4 UUID drawn from this source. */
  uuid(): string;
  /** Hex string of `len` characters. */
  hex(len: number): string;
  /** An independent child stream derived from this one and a label. */
  fork(label: string): Rng;
}

function splitmix32(a: number): number {
  a = (a + 0x9e3779b9) | 0;
  let t = a ^ (a >>> 16);
  t = Math.imul(t, 0x21f0aaad);
  t = t ^ (t >>> 15);
  t = Math.imul(t, 0x735a2d97);
  return (t ^ (t >>> 15)) >>> 0;
}

function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Kubernetes' rand.String alphabet (no vowels, no confusable characters). */
export const K8S_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

export class SeededRng implements Rng {
  private state: number;

  constructor(readonly seed: number) {
    if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
    this.state = splitmix32(seed >>> 0);
  }

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    if (!(n > 0)) throw new RangeError(`int(n) needs n > 0, got ${n}`);
    return Math.floor(this.next() * n);
  }

  string(len: number, alphabet = K8S_ALPHANUMS): string {
    let out = '';
    for (let i = 0; i < len; i++) out += alphabet[this.int(alphabet.length)];
    return out;
  }

  hex(len: number): string {
    return this.string(len, '0123456789abcdef');
  }

  uuid(): string {
    const h = this.hex(32).split('');
    h[12] = '4';
    h[16] = '89ab'[this.int(4)]!;
    const s = h.join('');
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }

  fork(label: string): Rng {
    return new SeededRng((splitmix32(this.seed >>> 0) ^ hashLabel(label)) | 0);
  }
}
