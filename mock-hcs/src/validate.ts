/** Small body validators: every failure is a 400 naming the field. */
import { CloudError } from './errors.js';

export type Json = Record<string, unknown>;

export class Validator {
  /** The error code of this validator's 400 answers. */
  constructor(readonly code: string) {}

  fail(path: string, reason: string, rules: string[] = []): never {
    throw new CloudError(400, this.code, `Invalid request parameter ${path}: ${reason}`, rules);
  }

  obj(v: unknown, path: string): Json {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(path, 'must be an object');
    return v as Json;
  }

  optObj(v: unknown, path: string): Json | undefined {
    return v === undefined || v === null ? undefined : this.obj(v, path);
  }

  str(v: unknown, path: string, opts: { max?: number; pattern?: RegExp; patternText?: string } = {}): string {
    if (typeof v !== 'string' || v.length === 0) this.fail(path, 'is required and must be a non-empty string');
    if (opts.max !== undefined && v.length > opts.max) this.fail(path, `must be at most ${opts.max} characters`);
    if (opts.pattern && !opts.pattern.test(v)) this.fail(path, `must match ${opts.patternText ?? String(opts.pattern)}`);
    return v;
  }

  optStr(v: unknown, path: string, opts: { max?: number; pattern?: RegExp; patternText?: string } = {}): string | undefined {
    return v === undefined || v === null ? undefined : this.str(v, path, opts);
  }

  int(v: unknown, path: string, min: number, max: number): number {
    const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n)) this.fail(path, 'must be an integer');
    if (n < min || n > max) this.fail(path, `must be between ${min} and ${max}`);
    return n;
  }

  optInt(v: unknown, path: string, min: number, max: number): number | undefined {
    return v === undefined || v === null ? undefined : this.int(v, path, min, max);
  }

  bool(v: unknown, path: string, dflt: boolean): boolean {
    if (v === undefined || v === null) return dflt;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'True') return true;
    if (v === 'false' || v === 'False') return false;
    this.fail(path, 'must be a boolean');
  }

  arr(v: unknown, path: string, min: number, max: number): unknown[] {
    if (!Array.isArray(v)) this.fail(path, 'must be an array');
    if (v.length < min || v.length > max) this.fail(path, `must have between ${min} and ${max} entries`);
    return v;
  }

  optArr(v: unknown, path: string, min: number, max: number): unknown[] | undefined {
    return v === undefined || v === null ? undefined : this.arr(v, path, min, max);
  }

  stringMap(v: unknown, path: string): Record<string, string> {
    if (v === undefined || v === null) return {};
    const o = this.obj(v, path);
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(o)) {
      if (typeof val !== 'string') this.fail(`${path}.${k}`, 'must be a string');
      if (k.length === 0 || k.length > 255) this.fail(path, `key "${k}" must be 1..255 characters`);
      setOwn(out, k, val);
    }
    return out;
  }
}

/**
 * A record's own entry for a key that came from a request (an id, a
 * metadata key): never an inherited member such as `__proto__`,
 * `constructor` or `toString`.
 */
export function own<T>(rec: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(rec, key) ? rec[key] : undefined;
}

/** Set an own entry (a key such as `__proto__` becomes an ordinary entry instead of changing the prototype). */
export function setOwn<T>(rec: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(rec, key, { value, enumerable: true, writable: true, configurable: true });
}
