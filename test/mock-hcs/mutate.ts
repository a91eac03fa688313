/**
 * Mutations of a request document for the bad-input and all-or-nothing tests of mock-hcs: one field
 * at a time made wrong (a wrong type, a bad value, missing) while every other field stays valid.
 */

/** A copy of `doc` with the value at `path` replaced (`undefined`: removed; from an array, spliced out). */
export function setAt(doc: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let cur = copy;
  for (const k of path.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(cur)) cur.splice(Number(last), 1);
    else delete cur[last];
  } else cur[last] = value;
  return copy;
}

export interface FieldCase {
  /** The field and what was done to it, e.g. `server.metadata.b="xxxx…"` or `server.nics removed`. */
  label: string;
  doc: unknown;
}

/** Wrong and bad values for a field whose valid value is `v`. */
function badValuesFor(v: unknown): unknown[] {
  const long = 'x'.repeat(300);
  if (typeof v === 'string') return [12345, null, true, '', long, '../a b\u0000', '\ud800'];
  if (typeof v === 'number') return ['1', null, -1, 0, 1.5, 1e9, 2 ** 31];
  if (typeof v === 'boolean') return ['true', 1, null];
  if (Array.isArray(v)) return ['x', {}, null, [], [...v, 12345], [...v, ...v.slice(0, 1)], [...v, {}]];
  if (v !== null && typeof v === 'object') {
    // A map (metadata) or a record: an extra key with a wrong value after the valid ones, and one with a bad key.
    return ['x', [], null, { ...v, 'zz-extra': 12345 }, { ...v, [long]: 'v' }, { ...v, 'zz-extra': long }];
  }
  return ['x', 12345];
}

/**
 * Every field of `doc` (objects, arrays and leaves, at most `maxDepth` deep) in turn: each bad value
 * of badValuesFor, and removed. The other fields keep their valid values, so a call refused at that
 * field has already walked past the fields before it: where a partial write would show.
 */
export function fieldCases(doc: unknown, maxDepth = 8): FieldCase[] {
  const out: FieldCase[] = [];
  const walk = (node: unknown, path: (string | number)[]) => {
    if (path.length > maxDepth) return;
    if (path.length > 0) {
      const name = path.join('.');
      for (const w of badValuesFor(node)) out.push({ label: `${name}=${(JSON.stringify(w) ?? String(w)).slice(0, 24)}`, doc: setAt(doc, path, w) });
      out.push({ label: `${name} removed`, doc: setAt(doc, path, undefined) });
    }
    if (Array.isArray(node)) node.forEach((x, i) => walk(x, [...path, i]));
    else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(doc, []);
  return out;
}
