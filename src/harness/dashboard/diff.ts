/**
 * What the page receives after its first view: only what changed (issue 34:
 * an update at 100 machines under 50 KB). A view is a JSON object whose
 * top-level values are either plain values or lists of items with a string
 * `id`; a patch names, per changed key, the new value, or for a keyed list
 * the items added or changed, the ids removed and, when it changed, the new
 * order. The page applies it with the same rules (static/app.js applyPatch).
 */

export type Keyed = { id: string };

export interface ListPatch {
  upsert?: unknown[];
  remove?: string[];
  /** New items' places: [id, index in the new list], ascending (the items kept stay in their order). */
  at?: [string, number][];
  /** The ids in their new order: only when items kept changed their order. */
  order?: string[];
}

export type Patch = Record<string, { set: unknown } | { list: ListPatch }>;

const isKeyedList = (v: unknown): v is Keyed[] => Array.isArray(v) && v.length > 0 && v.every((x) => x !== null && typeof x === 'object' && typeof (x as Keyed).id === 'string');

/**
 * The serialized form of each item, cached by identity: a view computed
 * from the same objects reuses their text. Callers pass the previous view's
 * cache in; it is rebuilt for the new view.
 */
export class ViewText {
  readonly items = new Map<string, Map<string, string>>();
  readonly values = new Map<string, string>();

  static of(view: Record<string, unknown>): ViewText {
    const t = new ViewText();
    for (const [k, v] of Object.entries(view)) {
      if (isKeyedList(v)) t.items.set(k, new Map(v.map((x) => [x.id, JSON.stringify(x)])));
      else t.values.set(k, JSON.stringify(v));
    }
    return t;
  }
}

/** The patch from `prev` to `next` (their texts from ViewText.of); empty when nothing changed. */
export function diffView(prev: ViewText, next: ViewText, nextView: Record<string, unknown>): Patch {
  const patch: Patch = {};
  for (const [k, v] of Object.entries(nextView)) {
    const items = next.items.get(k);
    const before = prev.items.get(k);
    if (items && before) {
      const upsert: unknown[] = [];
      for (const x of v as Keyed[]) if (before.get(x.id) !== items.get(x.id)) upsert.push(x);
      const remove = [...before.keys()].filter((id) => !items.has(id));
      const ids = [...items.keys()];
      // The items kept in the same order: new ones are placed by index; otherwise the whole order goes.
      const kept = [...before.keys()].filter((id) => items.has(id));
      const keptNext = ids.filter((id) => before.has(id));
      const sameOrder = kept.every((id, i) => keptNext[i] === id);
      const at: [string, number][] = sameOrder ? ids.flatMap((id, i) => (before.has(id) ? [] : [[id, i] as [string, number]])) : [];
      if (upsert.length || remove.length || !sameOrder) patch[k] = { list: { ...(upsert.length ? { upsert } : {}), ...(remove.length ? { remove } : {}), ...(at.length ? { at } : {}), ...(sameOrder ? {} : { order: ids }) } };
      continue;
    }
    const text = items ? undefined : next.values.get(k);
    const was = prev.values.get(k);
    if (items || text !== was || (!prev.values.has(k) && !prev.items.has(k))) patch[k] = { set: v };
  }
  for (const k of [...prev.values.keys(), ...prev.items.keys()]) if (!(k in nextView)) patch[k] = { set: undefined };
  return patch;
}

/** Apply a patch to a view (the page does the same; tests and the bench use this). */
export function applyPatch(view: Record<string, unknown>, patch: Patch): Record<string, unknown> {
  const out: Record<string, unknown> = { ...view };
  for (const [k, p] of Object.entries(patch)) {
    if ('set' in p) {
      if (p.set === undefined) delete out[k];
      else out[k] = p.set;
      continue;
    }
    const prev = (out[k] as Keyed[] | undefined) ?? [];
    const removed = new Set(p.list.remove ?? []);
    const byId = new Map(((p.list.upsert ?? []) as Keyed[]).map((x) => [x.id, x]));
    if (p.list.order) {
      const cur = new Map(prev.filter((x) => !removed.has(x.id)).map((x) => [x.id, x]));
      for (const [id, x] of byId) cur.set(id, x);
      out[k] = p.list.order.map((id) => cur.get(id)).filter((x): x is Keyed => x !== undefined);
      continue;
    }
    const list = prev.filter((x) => !removed.has(x.id)).map((x) => byId.get(x.id) ?? x);
    for (const [id, i] of p.list.at ?? []) list.splice(i, 0, byId.get(id)!);
    out[k] = list;
  }
  return out;
}
