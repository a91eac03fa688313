import { KubeApiError } from './errors.js';

/** JSON values as they appear in Kubernetes objects. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7386 JSON merge patch (what `kubectl patch --type merge` sends for CRDs). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

function parsePointer(p: string): string[] {
  if (p === '') return [];
  if (!p.startsWith('/')) throw new KubeApiError('BadRequest', `invalid JSON pointer "${p}": must start with "/"`);
  return p
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: unknown, tokens: string[], path: string): unknown {
  let cur: unknown = doc;
  for (const t of tokens) {
    if (Array.isArray(cur)) {
      const i = Number(t);
      if (!Number.isInteger(i) || i < 0 || i >= cur.length) throw missing(path);
      cur = cur[i];
    } else if (isObject(cur)) {
      if (!(t in cur)) throw missing(path);
      cur = cur[t];
    } else throw missing(path);
  }
  return cur;
}

function missing(path: string): KubeApiError {
  return new KubeApiError('Invalid', `the server rejected our request due to an error in our request: doc is missing path: "${path}"`);
}

function setAt(doc: unknown, tokens: string[], value: unknown, mode: 'add' | 'replace', path: string): unknown {
  if (tokens.length === 0) return value;
  const parent = getAt(doc, tokens.slice(0, -1), path);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    if (last === '-' && mode === 'add') parent.push(value);
    else {
      const i = Number(last);
      const max = mode === 'add' ? parent.length : parent.length - 1;
      if (!Number.isInteger(i) || i < 0 || i > max) throw missing(path);
      if (mode === 'add') parent.splice(i, 0, value);
      else parent[i] = value;
    }
  } else if (isObject(parent)) {
    if (mode === 'replace' && !(last in parent)) throw missing(path);
    parent[last] = value;
  } else throw missing(path);
  return doc;
}

function removeAt(doc: unknown, tokens: string[], path: string): unknown {
  const parent = getAt(doc, tokens.slice(0, -1), path);
  const last = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const i = Number(last);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length) throw missing(path);
    parent.splice(i, 1);
  } else if (isObject(parent)) {
    if (!(last in parent)) throw missing(path);
    delete parent[last];
  } else throw missing(path);
  return doc;
}

/** RFC 6902 JSON patch (what `kubectl patch --type json` sends). Applies to a copy; the input is untouched. */
export function applyJsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw new KubeApiError('BadRequest', 'json patch must be an array of operations');
  let doc = structuredClone(target);
  for (const raw of ops) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw new KubeApiError('BadRequest', `invalid json patch operation ${JSON.stringify(raw)}: needs "op" and "path"`);
    }
    const op = raw as unknown as JsonPatchOp;
    const tokens = parsePointer(op.path);
    switch (op.op) {
      case 'add':
        doc = setAt(doc, tokens, structuredClone(op.value), 'add', op.path);
        break;
      case 'replace':
        doc = setAt(doc, tokens, structuredClone(op.value), 'replace', op.path);
        break;
      case 'remove':
        doc = removeAt(doc, tokens, op.path);
        break;
      case 'move':
      case 'copy': {
        if (typeof op.from !== 'string') throw new KubeApiError('BadRequest', `json patch ${op.op} needs "from"`);
        const fromTokens = parsePointer(op.from);
        const v = structuredClone(getAt(doc, fromTokens, op.from));
        if (op.op === 'move') doc = removeAt(doc, fromTokens, op.from);
        doc = setAt(doc, tokens, v, 'add', op.path);
        break;
      }
      case 'test': {
        const v = getAt(doc, tokens, op.path);
        if (JSON.stringify(v) !== JSON.stringify(op.value)) {
          throw new KubeApiError('Invalid', `json patch test failed at "${op.path}"`);
        }
        break;
      }
      default:
        throw new KubeApiError('BadRequest', `unknown json patch op "${String((op as { op: unknown }).op)}"`);
    }
  }
  return doc;
}

/** Deep equality of JSON values (key order independent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => jsonEqual(ao[k], bo[k]));
}

/**
 * A deep copy of JSON data (what Kubernetes objects are): the same result as
 * structuredClone for plain objects, arrays and primitives, several times
 * faster (the store copies on every read and write). Anything else (a Date,
 * say) falls back to structuredClone.
 *
 * `for...in` rather than Object.keys (no key array per object; for a plain
 * object, whose prototype has no enumerable properties, it visits the same
 * own keys in the same order), and primitives are copied without a call:
 * ~35 % less CPU than the plain recursion, optimized or not.
 */
export function jsonClone<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  return cloneNode(v) as T;
}

function cloneNode(v: object): unknown {
  if (Array.isArray(v)) {
    const n = v.length;
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) {
      const x: unknown = v[i];
      out[i] = typeof x === 'object' && x !== null ? cloneNode(x) : x;
    }
    return out;
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return structuredClone(v);
  const src = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k in src) {
    const x = src[k];
    out[k] = typeof x === 'object' && x !== null ? cloneNode(x) : x;
  }
  return out;
}
