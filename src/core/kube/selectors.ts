/**
 * Label and field selectors with the apiserver's syntax
 * (k8s.io/apimachinery/pkg/labels and pkg/fields):
 *
 *   labels: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`
 *   fields: `metadata.name=x`, `metadata.namespace!=y`, `involvedObject.uid=z`
 */
import { KubeApiError } from './errors.js';
import type { ListOptions } from './client.js';
import type { KubeObject, WatchEvent } from './types.js';

export type LabelOp = '=' | '!=' | 'in' | 'notin' | 'exists' | '!';
export interface LabelRequirement {
  key: string;
  op: LabelOp;
  values: string[];
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$/;

/** Split on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

function badSelector(s: string, why: string): KubeApiError {
  return new KubeApiError('BadRequest', `unable to parse requirement: ${why} (selector "${s}")`);
}

/** Parse a label selector string. Throws BadRequest like the apiserver. */
export function parseLabelSelector(s: string): LabelRequirement[] {
  const reqs: LabelRequirement[] = [];
  for (const part of splitTop(s)) {
    let m: RegExpExecArray | null;
    let req: LabelRequirement;
    if ((m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part))) {
      req = { key: m[1]!, op: m[2] as 'in' | 'notin', values: m[3]!.split(',').map((v) => v.trim()).filter((v) => v !== '') };
    } else if ((m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part))) {
      req = { key: m[1]!, op: m[2] === '!=' ? '!=' : '=', values: [m[3]!] };
    } else if ((m = /^!\s*(\S+)$/.exec(part))) {
      req = { key: m[1]!, op: '!', values: [] };
    } else if (/^\S+$/.test(part)) {
      req = { key: part, op: 'exists', values: [] };
    } else throw badSelector(s, `cannot parse "${part}"`);
    if (!KEY.test(req.key) || req.key.length > 317) throw badSelector(s, `invalid label key "${req.key}"`);
    reqs.push(req);
  }
  return reqs;
}

export function selectorFromMap(m: Record<string, string>): LabelRequirement[] {
  return Object.entries(m).map(([key, v]) => ({ key, op: '=' as const, values: [v] }));
}

export function labelSelectorString(m: Record<string, string> | string): string {
  if (typeof m === 'string') return m;
  return Object.entries(m)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

export function matchesLabels(labels: Record<string, string> | undefined, reqs: LabelRequirement[]): boolean {
  for (const r of reqs) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = labels?.[r.key];
    switch (r.op) {
      case '=': if (v !== r.values[0]) return false; break;
      case '!=': if (has && v === r.values[0]) return false; break;
      case 'in': if (!has || !r.values.includes(v!)) return false; break;
      case 'notin': if (has && r.values.includes(v!)) return false; break;
      case 'exists': if (!has) return false; break;
      case '!': if (has) return false; break;
    }
  }
  return true;
}

export interface FieldRequirement {
  path: string;
  op: '=' | '!=';
  value: string;
}

/** Parse a field selector (`a.b=c,d!=e`). */
export function parseFieldSelector(s: string): FieldRequirement[] {
  return splitTop(s).map((part) => {
    const m = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw new KubeApiError('BadRequest', `invalid field selector: "${part}": expected field=value or field!=value`);
    return { path: m[1]!, op: m[2] === '!=' ? '!=' : '=', value: m[3]! };
  });
}

function fieldValue(o: KubeObject, path: string): string {
  let cur: unknown = o;
  for (const p of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur === undefined || cur === null ? '' : String(cur);
}

export function matchesFields(o: KubeObject, reqs: FieldRequirement[]): boolean {
  return reqs.every((r) => (fieldValue(o, r.path) === r.value) === (r.op === '='));
}

/** Field selectors the apiserver supports besides metadata.name/namespace, per kind. */
const FIELD_LABELS: Record<string, string[]> = {
  Event: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'],
  Pod: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'spec.hostNetwork', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  Node: ['spec.unschedulable'],
  Secret: ['type'],
  Namespace: ['status.phase'],
};

/** A compiled list/watch filter (namespace + label selector + field selector). */
export function objectFilter(kind: string, opts: ListOptions): ((o: KubeObject) => boolean) | undefined {
  return listFilter(kind, opts).match;
}

/**
 * objectFilter with the parsed label requirements beside it (the embedded
 * store narrows a list to the objects its label index allows, then applies
 * `match` to each: src/core/kube/label-index.ts).
 */
export function listFilter(kind: string, opts: ListOptions): { match?: (o: KubeObject) => boolean; labels?: LabelRequirement[] } {
  const labels = opts.labelSelector === undefined ? undefined : typeof opts.labelSelector === 'string' ? parseLabelSelector(opts.labelSelector) : selectorFromMap(opts.labelSelector);
  const fields = opts.fieldSelector ? parseFieldSelector(opts.fieldSelector) : undefined;
  for (const f of fields ?? []) {
    if (f.path !== 'metadata.name' && f.path !== 'metadata.namespace' && !(FIELD_LABELS[kind] ?? []).includes(f.path)) {
      throw new KubeApiError('BadRequest', `field label not supported: ${f.path}`);
    }
  }
  if (!opts.namespace && !labels?.length && !fields?.length) return {};
  return {
    match: (o) =>
      (!opts.namespace || o.metadata.namespace === opts.namespace) &&
      (!labels || matchesLabels(o.metadata.labels, labels)) &&
      (!fields || matchesFields(o, fields)),
    ...(labels?.length ? { labels } : {}),
  };
}

/**
 * The event a watch with a selector reports for one change, as the
 * apiserver does (k8s.io/apiserver/pkg/storage/cacher): an object that
 * starts matching is ADDED, one that stops matching is DELETED, one that
 * matches before and after is MODIFIED; undefined when the watch sees
 * nothing. `old` is the previous version (absent: treated as unchanged).
 */
export function selectedEventType(match: (o: KubeObject) => boolean, type: WatchEvent['type'], obj: KubeObject, old: KubeObject | undefined): WatchEvent['type'] | undefined {
  const now = match(obj);
  if (type !== 'MODIFIED') return now ? type : undefined;
  const before = old ? match(old) : now;
  if (now && before) return 'MODIFIED';
  if (now) return 'ADDED';
  return before ? 'DELETED' : undefined;
}
