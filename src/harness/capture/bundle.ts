/**
 * The incident bundle (issue 35): one JSON document with what a management
 * cluster and its HCS project showed at one instant, safe to attach to a bug
 * report. `hcs-testbed capture` writes it (src/harness/capture/capture.ts,
 * offline.ts); `doctor` judges it (doctor.ts); `run`/`serve`/`explore`
 * start a testbed from it (replay.ts). docs/incident.md describes every
 * section.
 *
 * Reading a bundle is all or nothing: `parseBundle` checks the whole document
 * (format, schema version, every section's shape) and throws a BundleError
 * naming the file, the field and the problem before anything uses it.
 */
import type { KubeObject } from '../../core/kube/types.js';
import type { LogEvent } from '../../core/events.js';

export const BUNDLE_FORMAT = 'hcs-testbed-bundle';
/** The schema this build writes and reads. A bundle of a newer schema is refused (never half-read). */
export const BUNDLE_SCHEMA = 1;

/** A server as ECS ListServersDetails returns it, its user data decoded and with its secrets cut out (redact.ts). */
export interface BundleServer {
  id: string;
  name: string;
  status: string;
  [k: string]: unknown;
}

/** A volume as EVS ListVolumes returns it. */
export interface BundleVolume {
  id: string;
  name: string;
  status: string;
  metadata: Record<string, string>;
  attachments: { server_id: string; device?: string; attachment_id?: string; attached_at?: string }[];
  [k: string]: unknown;
}

export interface BundleCloud {
  /** The HCS project (id; region and endpoint when known). Never its AK/SK. */
  projectId: string;
  region?: string;
  endpoint?: string;
  servers: BundleServer[];
  volumes: BundleVolume[];
  /** VPC ports (server NICs included) and subnets, IMS images, ECS flavors and AZs, as the list calls return them. */
  ports: Record<string, unknown>[];
  subnets: Record<string, unknown>[];
  images: Record<string, unknown>[];
  flavors: Record<string, unknown>[];
  availabilityZones: string[];
}

/**
 * What is on a disk, where the source can tell (the cloud cannot: no HCS API reads a disk). A testbed shows it
 * through its guests (the round trip); for a real incident, what `lsblk -f` and the data files showed on the
 * nodes, given to `capture --disks FILE`. Only data markers: never files under /etc/kubernetes or any key.
 */
export interface BundleDisk {
  volumeId: string;
  fsType?: string;
  label?: string;
  /** path on the volume -> content. */
  files: Record<string, string>;
}

export interface DataMarker {
  hostname: string;
  path: string;
  content: string;
  volumeId: string;
  persistent: boolean;
  mountPath: string;
}

export interface WorkloadSnapshot {
  namespace: string;
  cluster: string;
  objects: KubeObject[];
  /** Why the workload cluster could not be read (its objects are then absent). */
  error?: string;
}

export interface Redaction {
  /** What was cut, e.g. "Secret cpaas-system/demo-ca data[tls.key]". */
  what: string;
  why: string;
}

/** One object of the walked graph: how it was reached (clusterctl move's object graph). */
export interface GraphNode {
  /** kind/namespace/name */
  key: string;
  /** Keys of its owners in the graph (ownerReferences, references from a Cluster's or a template's spec). */
  owners: string[];
  /** The Cluster(s) it belongs to (namespace/name). */
  clusters: string[];
}

export interface Bundle {
  format: typeof BUNDLE_FORMAT;
  schemaVersion: number;
  /** RFC 3339 with milliseconds: the instant the state was read (the replay's virtual clock starts there). */
  capturedAt: string;
  tool: { name: 'hcs-testbed'; version: string };
  source: {
    /** live: a kubeconfig and a cloud endpoint; offline: kubectl dumps and SDK JSON files. */
    kind: 'live' | 'offline';
    context?: string;
    namespaces: string[];
    /** Free text: the kubeconfig's server, the dump files. */
    detail?: string;
  };
  management: { objects: KubeObject[]; graph: GraphNode[] };
  /** core/v1 Events of the captured namespaces. */
  events: KubeObject[];
  workloads: WorkloadSnapshot[];
  cloud: BundleCloud;
  disks: BundleDisk[];
  /**
   * The data files written on the nodes and where they landed (the testbed's `write` steps; for a real incident, the
   * files the user knows held data). The replay's `markers` check reads them (DISK-8).
   */
  dataMarkers: DataMarker[];
  providerLog?: string;
  /**
   * What happened before the capture, where the source keeps it: a testbed's event log (the round trip:
   * `capture` of a running testbed). The replay continues it (checks counting events over the whole run agree).
   */
  history?: LogEvent[];
  redactions: Redaction[];
}

export class BundleError extends Error {
  override name = 'BundleError';
  constructor(
    message: string,
    readonly file?: string,
    readonly field?: string,
  ) {
    super(`${file ? `${file}: ` : ''}${field ? `field ${field}: ` : ''}${message}`);
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parse and check a bundle's text. Throws BundleError naming the file, the field and the problem. */
export function parseBundle(text: string, file?: string): Bundle {
  if (text.trim() === '') throw new BundleError('the file is empty, not an hcs-testbed bundle', file);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    // A bundle is one JSON object: text cut short ends inside it.
    const truncated = text.trimStart().startsWith('{') && /Unexpected end|Unterminated|end of JSON/i.test(why);
    throw new BundleError(truncated ? `the bundle is truncated (${text.length} bytes; JSON ends early: ${why}); capture it again or copy the whole file` : `not JSON (${why}): an hcs-testbed bundle is one JSON document`, file);
  }
  return checkBundle(doc, file);
}

/** Check a parsed document (the whole of it, before anything is used). */
export function checkBundle(doc: unknown, file?: string): Bundle {
  const fail = (field: string, why: string): never => {
    throw new BundleError(why, file, field);
  };
  if (!isObj(doc)) return fail('(document)', `an hcs-testbed bundle is a JSON object, got ${Array.isArray(doc) ? 'an array' : typeof doc}`);
  if (doc.format !== BUNDLE_FORMAT) {
    const hint = doc.format === 'mock-hcs-state' ? ' (a mock-hcs state dump: load it with mock-hcs --data-file)' : doc.kind !== undefined && doc.apiVersion !== undefined ? ` (a Kubernetes ${String(doc.kind)}: capture --offline reads kubectl dumps)` : '';
    return fail('format', `is ${JSON.stringify(doc.format)}, expected "${BUNDLE_FORMAT}": not an hcs-testbed bundle${hint}`);
  }
  const v = doc.schemaVersion;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) return fail('schemaVersion', `is ${JSON.stringify(v)}, expected a positive integer`);
  if (v > BUNDLE_SCHEMA) return fail('schemaVersion', `is ${v}: the bundle comes from a newer hcs-testbed (this one reads schema ${BUNDLE_SCHEMA}); upgrade hcs-testbed to read it`);
  if (typeof doc.capturedAt !== 'string' || Number.isNaN(Date.parse(doc.capturedAt))) fail('capturedAt', `is ${JSON.stringify(doc.capturedAt)}, expected an RFC 3339 time`);
  if (!isObj(doc.tool) || typeof doc.tool.version !== 'string') fail('tool', 'expected {name, version}');
  if (!isObj(doc.source) || (doc.source.kind !== 'live' && doc.source.kind !== 'offline')) fail('source.kind', 'expected "live" or "offline"');
  const src = doc.source as Obj;
  if (!Array.isArray(src.namespaces) || !src.namespaces.every((n) => typeof n === 'string')) fail('source.namespaces', 'expected a list of namespace names');
  if (!isObj(doc.management)) fail('management', 'expected {objects, graph}');
  const mgmt = doc.management as Obj;
  checkObjects(mgmt.objects, 'management.objects', fail);
  if (!Array.isArray(mgmt.graph)) fail('management.graph', 'expected a list');
  checkObjects(doc.events, 'events', fail);
  if (!Array.isArray(doc.workloads)) fail('workloads', 'expected a list');
  (doc.workloads as unknown[]).forEach((w, i) => {
    if (!isObj(w) || typeof w.namespace !== 'string' || typeof w.cluster !== 'string') fail(`workloads[${i}]`, 'expected {namespace, cluster, objects}');
    checkObjects((w as Obj).objects, `workloads[${i}].objects`, fail);
  });
  checkCloud(doc.cloud, fail);
  if (!Array.isArray(doc.disks)) fail('disks', 'expected a list');
  (doc.disks as unknown[]).forEach((d, i) => {
    if (!isObj(d) || typeof d.volumeId !== 'string' || !isObj(d.files)) fail(`disks[${i}]`, 'expected {volumeId, files}');
    for (const [p, c] of Object.entries((d as Obj).files as Obj)) if (typeof c !== 'string') fail(`disks[${i}].files[${JSON.stringify(p)}]`, 'expected text');
  });
  if (!Array.isArray(doc.dataMarkers)) fail('dataMarkers', 'expected a list');
  (doc.dataMarkers as unknown[]).forEach((m, i) => {
    if (!isObj(m) || typeof m.hostname !== 'string' || typeof m.path !== 'string' || typeof m.content !== 'string' || typeof m.volumeId !== 'string' || typeof m.mountPath !== 'string') fail(`dataMarkers[${i}]`, 'expected {hostname, path, content, volumeId, persistent, mountPath}');
  });
  if (doc.providerLog !== undefined && typeof doc.providerLog !== 'string') fail('providerLog', 'expected text');
  if (doc.history !== undefined) {
    if (!Array.isArray(doc.history)) fail('history', 'expected a list of events');
    (doc.history as unknown[]).forEach((e, i) => {
      if (!isObj(e) || typeof e.seq !== 'number' || typeof e.t !== 'number' || typeof e.source !== 'string' || typeof e.type !== 'string' || typeof e.message !== 'string') fail(`history[${i}]`, 'expected {seq, t, source, type, message}');
    });
  }
  if (!Array.isArray(doc.redactions)) fail('redactions', 'expected a list (what capture cut out)');
  return doc as unknown as Bundle;
}

function checkObjects(v: unknown, field: string, fail: (field: string, why: string) => never): void {
  if (!Array.isArray(v)) fail(field, 'expected a list of Kubernetes objects');
  (v as unknown[]).forEach((o, i) => {
    if (!isObj(o) || typeof o.kind !== 'string' || !isObj(o.metadata) || typeof o.metadata.name !== 'string') fail(`${field}[${i}]`, 'expected a Kubernetes object with kind and metadata.name');
  });
}

function checkCloud(v: unknown, fail: (field: string, why: string) => never): void {
  if (!isObj(v)) return fail('cloud', 'expected {projectId, servers, volumes, ...}');
  if (typeof v.projectId !== 'string' || !v.projectId) fail('cloud.projectId', 'expected the HCS project id');
  for (const k of ['servers', 'volumes', 'ports', 'subnets', 'images', 'flavors', 'availabilityZones'] as const) if (!Array.isArray(v[k])) fail(`cloud.${k}`, 'expected a list');
  (v.servers as unknown[]).forEach((s, i) => {
    if (!isObj(s) || typeof s.id !== 'string' || typeof s.name !== 'string' || typeof s.status !== 'string') fail(`cloud.servers[${i}]`, 'expected an ECS server {id, name, status, ...}');
  });
  (v.volumes as unknown[]).forEach((x, i) => {
    if (!isObj(x) || typeof x.id !== 'string' || typeof x.status !== 'string' || !isObj(x.metadata) || !Array.isArray(x.attachments)) fail(`cloud.volumes[${i}]`, 'expected an EVS volume {id, status, metadata, attachments, ...}');
  });
}

/** The bundle's text: stable key order as built, two-space indented (reviewable before it is attached). */
export function serializeBundle(b: Bundle): string {
  return JSON.stringify(b, null, 1) + '\n';
}

/** kind/namespace/name of an object. */
export function objectKey(o: { kind: string; metadata: { namespace?: string; name: string } }): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}
