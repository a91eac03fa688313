/**
 * Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`):
 * the columns `kubectl get` shows. Custom resources use their CRD's
 * additionalPrinterColumns (src/core/kube/crds), built-in kinds the columns of the
 * apiserver's printers (pkg/printers/internalversion).
 */
import { crdForKind, type PrinterColumn } from '../../product/api/crds/index.js';
import type { KubeObject } from '../../core/kube/types.js';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/**
 * The JSONPath subset printer columns use: `.a.b`, `.a[0]`, `.a[*]`,
 * `.labels['x\.y/z']`, `.conditions[?(@.type=="Ready")].status`.
 * Returns every match (the apiserver prints the first).
 */
export function evalColumnPath(path: string, obj: unknown): unknown[] {
  const tokens: ({ key: string } | { index: number | '*' } | { filter: [string, string] })[] = [];
  const re = /\.([A-Za-z0-9_\-$]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.]+)\s*==\s*["']([^"']*)["']\)\]|\.\*/g;
  let m: RegExpExecArray | null;
  let pos = 0;
  while ((m = re.exec(path)) !== null) {
    if (m.index !== pos) return [];
    pos = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ key: m[1] });
    else if (m[2] !== undefined) tokens.push({ key: m[2].replace(/\\(.)/g, '$1') });
    else if (m[3] !== undefined) tokens.push({ key: m[3].replace(/\\(.)/g, '$1') });
    else if (m[4] !== undefined) tokens.push({ index: m[4] === '*' ? '*' : Number(m[4]) });
    else if (m[5] !== undefined) tokens.push({ filter: [m[5], m[6]!] });
    else tokens.push({ index: '*' });
  }
  if (pos !== path.length) return [];
  let vals: unknown[] = [obj];
  for (const t of tokens) {
    vals = vals.flatMap((v): unknown[] => {
      if (typeof v !== 'object' || v === null) return [];
      if ('key' in t) {
        const n = (v as Record<string, unknown>)[t.key];
        return n === undefined ? [] : [n];
      }
      if ('index' in t) {
        const items = Array.isArray(v) ? v : Object.values(v);
        if (t.index === '*') return items;
        return items[t.index] === undefined ? [] : [items[t.index]];
      }
      if (!Array.isArray(v)) return [];
      return v.filter((x) => evalColumnPath('.' + t.filter[0], x)[0] === t.filter[1]);
    });
  }
  return vals;
}

type Cell = (o: KubeObject, now: number) => unknown;
interface Col {
  def: TableColumnDefinition;
  cell: Cell;
}

const col = (name: string, type: string, cell: Cell, description = '', format = '', priority = 0): Col => ({ def: { name, type, format, description, priority }, cell });

function age(o: KubeObject, now: number): string {
  const t = o.metadata.creationTimestamp ? Date.parse(o.metadata.creationTimestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

const NAME = col('Name', 'string', (o) => o.metadata.name, 'Name must be unique within a namespace.', 'name');
const AGE = col('Age', 'string', age, 'CreationTimestamp is a timestamp representing the server time when this object was created.');

function crdColumn(c: PrinterColumn): Col {
  return col(c.name, c.type, (o, now) => {
    const v = evalColumnPath(c.jsonPath, o)[0];
    if (v === undefined || v === null) return null;
    if (c.type === 'date') {
      const t = typeof v === 'string' ? Date.parse(v) : NaN;
      return Number.isNaN(t) ? '<invalid>' : humanDuration(now - t);
    }
    if (c.type === 'string') return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
    if (c.type === 'integer' || c.type === 'number') return typeof v === 'number' ? v : null;
    if (c.type === 'boolean') return typeof v === 'boolean' ? v : null;
    return v;
  }, c.description ?? '', '', c.priority ?? 0);
}

type Obj = Record<string, unknown>;
const at = (o: unknown, path: string): unknown => evalColumnPath(path, o)[0];

function builtinColumns(kind: string): Col[] {
  switch (kind) {
    case 'Node':
      return [
        NAME,
        col('Status', 'string', (o) => {
          const ready = (at(o, '.status.conditions') as { type: string; status: string }[] | undefined)?.find((c) => c.type === 'Ready');
          const s = ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
          return at(o, '.spec.unschedulable') === true ? `${s},SchedulingDisabled` : s;
        }),
        col('Roles', 'string', (o) => {
          const roles = Object.keys(o.metadata.labels ?? {}).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.slice('node-role.kubernetes.io/'.length));
          return roles.length ? roles.sort().join(',') : '<none>';
        }),
        AGE,
        col('Version', 'string', (o) => at(o, '.status.nodeInfo.kubeletVersion') ?? ''),
        col('Internal-IP', 'string', (o) => (at(o, '.status.addresses') as { type: string; address: string }[] | undefined)?.find((a) => a.type === 'InternalIP')?.address ?? '<none>', '', '', 1),
        col('External-IP', 'string', (o) => (at(o, '.status.addresses') as { type: string; address: string }[] | undefined)?.find((a) => a.type === 'ExternalIP')?.address ?? '<none>', '', '', 1),
        col('OS-Image', 'string', (o) => (at(o, '.status.nodeInfo.osImage') as string | undefined) || '<unknown>', '', '', 1),
        col('Kernel-Version', 'string', (o) => (at(o, '.status.nodeInfo.kernelVersion') as string | undefined) || '<unknown>', '', '', 1),
        col('Container-Runtime', 'string', (o) => (at(o, '.status.nodeInfo.containerRuntimeVersion') as string | undefined) || '<unknown>', '', '', 1),
      ];
    case 'Pod':
      return [
        NAME,
        col('Ready', 'string', (o) => {
          const cs = (at(o, '.status.containerStatuses') as { ready?: boolean }[] | undefined) ?? [];
          const total = (at(o, '.spec.containers') as unknown[] | undefined)?.length ?? cs.length;
          return `${cs.filter((c) => c.ready).length}/${total}`;
        }),
        col('Status', 'string', (o) => {
          // As kubectl prints it: a waiting container's reason (CrashLoopBackOff) before the phase.
          const waiting = ((at(o, '.status.containerStatuses') as { state?: { waiting?: { reason?: string } } }[] | undefined) ?? []).find((c) => c.state?.waiting?.reason)?.state?.waiting?.reason;
          return waiting ?? at(o, '.status.phase') ?? 'Unknown';
        }),
        col('Restarts', 'string', (o) => String(((at(o, '.status.containerStatuses') as { restartCount?: number }[] | undefined) ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0))),
        AGE,
        // kubectl get pods -o wide (the apiserver's priority-1 columns).
        col('IP', 'string', (o) => (at(o, '.status.podIP') as string | undefined) ?? '<none>', '', '', 1),
        col('Node', 'string', (o) => (at(o, '.spec.nodeName') as string | undefined) ?? '<none>', '', '', 1),
        col('Nominated Node', 'string', (o) => (at(o, '.status.nominatedNodeName') as string | undefined) ?? '<none>', '', '', 1),
        col('Readiness Gates', 'string', (o) => {
          const gates = (at(o, '.spec.readinessGates') as unknown[] | undefined) ?? [];
          return gates.length ? `0/${gates.length}` : '<none>';
        }, '', '', 1),
      ];
    case 'Deployment':
      return [
        NAME,
        col('Ready', 'string', (o) => `${(at(o, '.status.readyReplicas') as number | undefined) ?? 0}/${(at(o, '.spec.replicas') as number | undefined) ?? 1}`),
        col('Up-to-date', 'integer', (o) => at(o, '.status.updatedReplicas') ?? 0),
        col('Available', 'integer', (o) => at(o, '.status.availableReplicas') ?? 0),
        AGE,
      ];
    case 'Event':
      return [
        col('Last Seen', 'string', (o, now) => {
          const t = (o as unknown as Obj).lastTimestamp ?? (o as unknown as Obj).eventTime ?? o.metadata.creationTimestamp;
          return typeof t === 'string' ? humanDuration(now - Date.parse(t)) : '<unknown>';
        }),
        col('Type', 'string', (o) => at(o, '.type') ?? ''),
        col('Reason', 'string', (o) => at(o, '.reason') ?? ''),
        col('Object', 'string', (o) => `${String(at(o, '.involvedObject.kind') ?? '').toLowerCase()}/${String(at(o, '.involvedObject.name') ?? '')}`),
        col('Message', 'string', (o) => at(o, '.message') ?? ''),
      ];
    case 'Namespace':
      return [NAME, col('Status', 'string', (o) => at(o, '.status.phase') ?? 'Active'), AGE];
    case 'Secret':
      return [NAME, col('Type', 'string', (o) => at(o, '.type') ?? 'Opaque'), col('Data', 'string', (o) => String(Object.keys((at(o, '.data') as Obj | undefined) ?? {}).length)), AGE];
    case 'ConfigMap':
      return [NAME, col('Data', 'string', (o) => String(Object.keys((at(o, '.data') as Obj | undefined) ?? {}).length)), AGE];
    default:
      return [NAME, AGE];
  }
}

export function columnsFor(kind: string): Col[] {
  const crd = crdForKind(kind);
  const cols = crd?.spec.versions[0]?.additionalPrinterColumns;
  if (cols) return [NAME, ...cols.map(crdColumn)];
  return builtinColumns(kind);
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Build a Table for objects of one kind. */
export function toTable(kind: string, items: KubeObject[], now: number, opts: { resourceVersion?: string; includeObject?: IncludeObject; noHeaders?: boolean } = {}): Table {
  const cols = columnsFor(kind);
  const include = opts.includeObject ?? 'Metadata';
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {},
    columnDefinitions: opts.noHeaders ? [] : cols.map((c) => c.def),
    rows: items.map((o) => ({
      cells: cols.map((c) => c.cell(o, now)),
      ...(include === 'Object'
        ? { object: o }
        : include === 'Metadata'
          ? { object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata } }
          : {}),
    })),
  };
}
