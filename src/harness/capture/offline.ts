/**
 * Capture without access (issue 35, `capture --offline`): a bundle from what
 * a user can attach when the cluster is out of reach — `kubectl get ... -o
 * yaml` (or -o json) dumps of the management cluster, a workload cluster's
 * Nodes the same way, and the official SDKs' (or the API's) JSON answers of
 * the list calls. The same redaction and graph walk as a live capture.
 *
 * Cloud files are recognised by their list key: `servers` (ECS
 * ListServersDetails), `volumes` (EVS ListVolumes), `ports`, `subnets` (VPC),
 * `images` (IMS), `flavors` (ECS ListFlavors), `availabilityZoneInfo` (Nova
 * AZs). Several pages of one list are several files (items joined, in order;
 * one id twice is refused).
 */
import { readFileSync } from 'node:fs';
import { errorMessage } from '../../core/errors.js';
import { loadAllYaml } from '../../core/yaml.js';
import type { KubeObject } from '../../core/kube/types.js';
import { RESOURCES } from '../../core/kube/resources.js';
import { BUNDLE_FORMAT, BUNDLE_SCHEMA, BundleError, type Bundle, type BundleCloud, type BundleDisk, type BundleServer, type BundleVolume, type DataMarker, type WorkloadSnapshot } from './bundle.js';
import { GRAPH_KINDS, objectGraph } from './graph.js';
import { Redactor } from './redact.js';
import { USER_DATA_REDACTED } from './cloud.js';
import { rfc3339Ms } from './time.js';
import { TOOL_VERSION } from './version.js';

export interface OfflineInput {
  /** Management cluster dumps (kubectl get ... -o yaml|json; a List or a YAML stream). */
  kubeDumps: string[];
  /** Workload cluster dumps: "namespace/cluster=FILE". */
  workloadDumps?: { namespace: string; cluster: string; file: string }[];
  /** SDK / API JSON answers of the cloud's list calls. */
  cloudFiles: string[];
  projectId: string;
  region?: string;
  providerLog?: string;
  disks?: BundleDisk[];
  dataMarkers?: DataMarker[];
  secrets?: (string | undefined)[];
  /** The instant the dumps were taken (default: the newest timestamp in them, else now). */
  now?: number;
}

/** Kubernetes objects of a dump file (a List's items, a YAML stream's documents). */
export function readKubeDump(file: string): KubeObject[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new BundleError(`cannot read: ${errorMessage(e)}`, file);
  }
  let docs: unknown[];
  try {
    docs = text.trimStart().startsWith('{') ? [JSON.parse(text)] : loadAllYaml(text);
  } catch (e) {
    throw new BundleError(`not a kubectl -o yaml/json dump: ${errorMessage(e)}`, file);
  }
  const out: KubeObject[] = [];
  const known = new Set(RESOURCES.map((r) => r.kind));
  const take = (o: unknown, where: string): void => {
    if (!o || typeof o !== 'object') return;
    const x = o as { kind?: unknown; items?: unknown; metadata?: { name?: unknown } };
    if (typeof x.kind === 'string' && x.kind.endsWith('List') && Array.isArray(x.items)) {
      x.items.forEach((it, i) => take(it, `${where}.items[${i}]`));
      return;
    }
    if (typeof x.kind !== 'string' || typeof x.metadata?.name !== 'string') throw new BundleError(`${where} is not a Kubernetes object (kind, metadata.name)`, file);
    if (!known.has(x.kind)) throw new BundleError(`${where}: kind ${x.kind} is not one the testbed knows (${[...known].join(', ')})`, file);
    out.push(o as KubeObject);
  };
  docs.forEach((d, i) => take(d, `document ${i + 1}`));
  return out;
}

const CLOUD_KEYS = ['servers', 'volumes', 'ports', 'subnets', 'images', 'flavors'] as const;

export function readCloudFiles(files: readonly string[], projectId: string, red: Redactor, region?: string): BundleCloud {
  const lists: Record<(typeof CLOUD_KEYS)[number], Record<string, unknown>[]> = { servers: [], volumes: [], ports: [], subnets: [], images: [], flavors: [] };
  const azs: string[] = [];
  for (const file of files) {
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (e) {
      throw new BundleError(`not the JSON of a list call: ${errorMessage(e)}`, file);
    }
    const key = CLOUD_KEYS.find((k) => Array.isArray(doc?.[k]));
    if (key) {
      const seen = new Set(lists[key].map((x) => x.id));
      for (const [i, item] of (doc[key] as Record<string, unknown>[]).entries()) {
        if (!item || typeof item.id !== 'string') throw new BundleError(`${key}[${i}] has no id`, file);
        if (seen.has(item.id)) throw new BundleError(`${key}[${i}]: ${item.id} is listed twice (pages overlap)`, file);
        seen.add(item.id);
        lists[key].push(item);
      }
    } else if (Array.isArray(doc?.availabilityZoneInfo)) {
      for (const z of doc.availabilityZoneInfo as { zoneName?: unknown }[]) if (typeof z.zoneName === 'string') azs.push(z.zoneName);
    } else throw new BundleError(`holds none of ${[...CLOUD_KEYS, 'availabilityZoneInfo'].join(', ')}: not the JSON of a list call this capture reads`, file);
  }
  const servers = lists.servers.map((raw) => {
    const s = { ...raw } as BundleServer;
    const ud = s['OS-EXT-SRV-ATTR:user_data'];
    delete s['OS-EXT-SRV-ATTR:user_data'];
    if (typeof ud === 'string' && ud !== '') s[USER_DATA_REDACTED] = red.userData(Buffer.from(ud, 'base64').toString('utf8'), `server ${s.name} (${s.id})`);
    return red.strings(s, `server ${s.name}`);
  });
  for (const [i, v] of lists.volumes.entries()) {
    if (typeof v.status !== 'string' || typeof v.metadata !== 'object' || !Array.isArray(v.attachments)) throw new BundleError(`volumes[${i}] (${String(v.id)}) is not an EVS volume (status, metadata, attachments)`);
  }
  return {
    projectId,
    ...(region ? { region } : {}),
    servers,
    volumes: lists.volumes.map((v) => red.strings(v, `volume ${String(v.name)}`) as BundleVolume),
    ports: lists.ports,
    subnets: lists.subnets,
    images: lists.images,
    flavors: lists.flavors,
    availabilityZones: [...new Set(azs)],
  };
}

export function offlineBundle(o: OfflineInput): Bundle {
  const red = new Redactor(o.secrets ?? []);
  const all = o.kubeDumps.flatMap((f) => readKubeDump(f));
  const mgmtKinds = new Set<string>(GRAPH_KINDS);
  const objects = all.filter((x) => mgmtKinds.has(x.kind)).map((x) => red.object(x));
  const events = all.filter((x) => x.kind === 'Event').map((x) => red.object(x));
  const workloads: WorkloadSnapshot[] = (o.workloadDumps ?? []).map((w) => ({ namespace: w.namespace, cluster: w.cluster, objects: readKubeDump(w.file).map((x) => red.object(x)) }));
  for (const c of objects.filter((x) => x.kind === 'Cluster')) {
    const ns = c.metadata.namespace ?? 'default';
    if (!workloads.some((w) => w.namespace === ns && w.cluster === c.metadata.name)) workloads.push({ namespace: ns, cluster: c.metadata.name, objects: [], error: 'no dump of this workload cluster was given' });
  }
  const namespaces = [...new Set(objects.map((x) => x.metadata.namespace ?? 'default'))].sort();
  const times = all.flatMap((x) => [x.metadata.creationTimestamp, (x as { lastTimestamp?: string }).lastTimestamp]).filter((t): t is string => typeof t === 'string').map((t) => Date.parse(t)).filter((t) => !Number.isNaN(t));
  const now = o.now ?? (times.length ? Math.max(...times) : Date.now());
  const bundle: Bundle = {
    format: BUNDLE_FORMAT,
    schemaVersion: BUNDLE_SCHEMA,
    capturedAt: rfc3339Ms(now),
    tool: { name: 'hcs-testbed', version: TOOL_VERSION },
    source: { kind: 'offline', namespaces, detail: red.text(`kubectl dumps: ${o.kubeDumps.join(', ')}; cloud JSON: ${o.cloudFiles.join(', ')}`, 'source') },
    management: { objects, graph: objectGraph(objects) },
    events,
    workloads,
    cloud: readCloudFiles(o.cloudFiles, o.projectId, red, o.region),
    disks: o.disks ?? [],
    dataMarkers: o.dataMarkers ?? [],
    ...(o.providerLog !== undefined ? { providerLog: red.text(o.providerLog, 'provider log') } : {}),
    redactions: [],
  };
  bundle.redactions = red.redactions.filter((r, i, xs) => xs.findIndex((x) => x.what === r.what && x.why === r.why) === i);
  return bundle;
}
