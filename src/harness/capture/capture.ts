/**
 * `hcs-testbed capture` (issue 35): read a management cluster and its HCS
 * project into one bundle, through what a user has — a Kubernetes client
 * (a kubeconfig) and the HCS APIs with the project's AK/SK. Nothing else:
 * no mock-hcs /_admin, no testbed internals.
 *
 * - Management cluster: every object of the Cluster API and HCS kinds, with
 *   Secrets and ConfigMaps, in the namespaces given (default: every
 *   namespace that holds a Cluster), walked into clusterctl move's object
 *   graph (graph.ts); the namespaces' core/v1 Events.
 * - Workload clusters: through each Cluster's `<cluster>-kubeconfig` Secret
 *   (read, used, never stored): Nodes and everything else the testbed knows.
 * - The cloud: ECS servers, EVS volumes, VPC ports and subnets, IMS images
 *   (all paged by marker, cloud.ts), flavors and availability zones.
 *
 * Then everything is passed through the Redactor (redact.ts).
 */
import type { KubeClient } from '../../core/kube/client.js';
import type { KubeObject } from '../../core/kube/types.js';
import { RESOURCES } from '../../core/kube/resources.js';
import type { LogEvent } from '../../core/events.js';
import { errorMessage } from '../../core/errors.js';
import { rfc3339Ms } from './time.js';
import type { HcsClient } from '../../product/cloud/index.js';
import { KUBECONFIG_DATA_KEY, kubeconfigSecretName } from '../../product/api/capi.js';
import { secretValue, type Secret } from '../../product/api/core.js';
import { BUNDLE_FORMAT, BUNDLE_SCHEMA, type Bundle, type BundleDisk, type DataMarker, type WorkloadSnapshot } from './bundle.js';
import { GRAPH_KINDS, objectGraph } from './graph.js';
import { Redactor } from './redact.js';
import { listCloud } from './cloud.js';
import { TOOL_VERSION } from './version.js';

/** Kinds read from a workload cluster (what the testbed's workload clusters hold; Events left out). */
export const WORKLOAD_KINDS = RESOURCES.filter((r) => !['Event', ...GRAPH_KINDS.filter((k) => k !== 'Secret' && k !== 'ConfigMap')].includes(r.kind) && r.group !== 'cluster.x-k8s.io' && !r.group.endsWith('.cluster.x-k8s.io')).map((r) => r.kind);

export interface CaptureOptions {
  mgmt: KubeClient;
  /** Default: every namespace that holds a Cluster. */
  namespaces?: string[];
  /** A client for a workload cluster from its kubeconfig (the `<cluster>-kubeconfig` Secret's value); undefined: not read. */
  workloadClient?: (kubeconfig: string, namespace: string, cluster: string) => KubeClient | undefined;
  cloud: HcsClient;
  /** Shown in the bundle (never the credentials). */
  cloudEndpoint?: string;
  region?: string;
  /** Credential values to cut wherever they appear (the AK, the SK, passwords, tokens). */
  secrets?: (string | undefined)[];
  providerLog?: string;
  disks?: BundleDisk[];
  dataMarkers?: DataMarker[];
  history?: readonly LogEvent[];
  /** The capture's instant (ms): the wall clock for a live cluster, the testbed's clock for a testbed. */
  now: number;
  /** Page size of the cloud's list calls (default the largest each API allows). */
  pageSize?: number;
  context?: string;
  detail?: string;
}

export async function captureBundle(o: CaptureOptions): Promise<Bundle> {
  const red = new Redactor(o.secrets ?? []);
  const namespaces = o.namespaces?.length ? [...new Set(o.namespaces)].sort() : [...new Set((await o.mgmt.list<KubeObject>('Cluster')).map((c) => c.metadata.namespace ?? 'default'))].sort();
  const raw: KubeObject[] = [];
  const events: KubeObject[] = [];
  for (const ns of namespaces) {
    for (const kind of GRAPH_KINDS) raw.push(...(await listKind(o.mgmt, kind, ns)));
    events.push(...(await listKind(o.mgmt, 'Event', ns)));
  }
  // Workload clusters, through the kubeconfig Secrets (before redaction drops their data).
  const workloads: WorkloadSnapshot[] = [];
  for (const c of raw.filter((x) => x.kind === 'Cluster')) {
    const ns = c.metadata.namespace ?? 'default';
    const secret = raw.find((x) => x.kind === 'Secret' && x.metadata.namespace === ns && x.metadata.name === kubeconfigSecretName(c.metadata.name)) as Secret | undefined;
    const kubeconfig = secret ? secretValue(secret, KUBECONFIG_DATA_KEY) : undefined;
    const snap: WorkloadSnapshot = { namespace: ns, cluster: c.metadata.name, objects: [] };
    if (!kubeconfig) snap.error = `no ${kubeconfigSecretName(c.metadata.name)} Secret with a kubeconfig`;
    else if (!o.workloadClient) snap.error = 'not read (no workload cluster access given)';
    else {
      try {
        const client = o.workloadClient(kubeconfig, ns, c.metadata.name);
        if (!client) snap.error = 'its kubeconfig could not be used';
        else for (const kind of WORKLOAD_KINDS) snap.objects.push(...(await listKind(client, kind)).map((x) => red.object(x)));
      } catch (e) {
        snap.error = `could not be read: ${errorMessage(e)}`;
        snap.objects = [];
      }
    }
    workloads.push(snap);
  }
  const objects = raw.map((x) => red.object(x));
  const cloud = await listCloud(o.cloud, red, { ...(o.pageSize ? { pageSize: o.pageSize } : {}) });
  const bundle: Bundle = {
    format: BUNDLE_FORMAT,
    schemaVersion: BUNDLE_SCHEMA,
    capturedAt: rfc3339Ms(o.now),
    tool: { name: 'hcs-testbed', version: TOOL_VERSION },
    source: { kind: 'live', ...(o.context ? { context: o.context } : {}), namespaces, ...(o.detail ? { detail: red.text(o.detail, 'source') } : {}) },
    management: { objects, graph: objectGraph(objects) },
    events: events.map((e) => red.object(e)),
    workloads,
    cloud: { ...cloud, ...(o.region ? { region: o.region } : {}), ...(o.cloudEndpoint ? { endpoint: red.text(o.cloudEndpoint, 'cloud endpoint') } : {}) },
    disks: (o.disks ?? []).map((d) => red.strings(d, `disk ${d.volumeId}`)),
    dataMarkers: (o.dataMarkers ?? []).map((m) => red.strings(m, `data marker ${m.hostname}:${m.path}`)),
    ...(o.providerLog !== undefined ? { providerLog: red.text(o.providerLog, 'provider log') } : {}),
    ...(o.history ? { history: red.strings([...o.history], 'history') } : {}),
    redactions: [],
  };
  bundle.redactions = dedupe(red.redactions);
  return bundle;
}

/** Every object of a kind (in a namespace); a kind the cluster does not serve (no CRD) is none. */
async function listKind(c: KubeClient, kind: string, namespace?: string): Promise<KubeObject[]> {
  try {
    const items = await c.list<KubeObject>(kind, namespace ? { namespace } : {});
    return items.map((x) => ({ ...x, kind }));
  } catch (e) {
    const reason = (e as { reason?: string }).reason;
    if (reason === 'NotFound') return [];
    throw e;
  }
}

/** One line per distinct cut (the user data of 1,000 servers says so once per server, not per key). */
function dedupe<T extends { what: string; why: string }>(xs: T[]): T[] {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const k = `${x.what}\u0000${x.why}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
