/**
 * The testbed on a real management cluster (`hcs-testbed run --backend
 * kubeconfig=FILE`, or the kube-apiserver built by tools/kube): the Cluster
 * API core, the provider and the workload controllers reconcile objects
 * stored in that cluster through @kubernetes/client-node; the fake HCS cloud,
 * the workload clusters and the guests stay embedded. Time stays virtual:
 * the simulation waits for the apiserver's watches (ClientNodeKube.settled)
 * before it decides that an instant is quiescent and moves the clock.
 *
 * What the cluster must have: the testbed's CRDs (installed here), and the
 * admission rules: the CEL rules are in the CRDs; the others come from the
 * testbed's admission webhook when one is given (src/harness/realcluster/apiserver/webhook.ts).
 * A bare kube-apiserver has no garbage collector: the testbed runs its own
 * (src/core/runtime/garbage-collector.ts); on kind the real one runs too and the
 * two only race to delete the same orphans.
 *
 * The management cluster must be dedicated to the testbed: before each
 * scenario, every object of the testbed's kinds is deleted (finalizers
 * removed) so that each scenario starts from the same empty cluster.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ClientNodeKube, kubeRequest, loadKubeconfig } from '../../core/kube/client-node.js';
import { CRDS, type CustomResourceDefinition } from '../../product/api/crds/index.js';
import { testbedCrdsForUpstream } from './upstream/upstream.js';
import { tlsPairOf, type Secret } from '../../product/api/core.js';
import { KubeApiError } from '../../core/kube/errors.js';
import { BUILTIN_GROUPS, RESOURCES } from '../../core/kube/resources.js';
import type { KubeObject } from '../../core/kube/types.js';
import { installCrdSchemas } from '../../product/api/crds/install.js';
import { setupGarbageCollector } from '../../core/runtime/garbage-collector.js';
import { DEFAULT_NAMESPACES } from '../../world/facade/controllers.js';
import { ensureNamespaces, installCrds } from './apiserver/crds.js';
import type { TestbedFactory } from '../scenario/runner.js';
import { EmbeddedStore } from '../../core/kube/embedded-store.js';
import { startFacade, type Facade } from '../../world/facade/index.js';
import type { LogEvent } from '../../core/events.js';
import { createEnv, type Env } from '../../world/embedded.js';
import { CloudFront, PROVIDER_DEPLOYMENT, type CapiMode, type ProviderMode } from './external.js';
import { DEFAULT_SPEED, PacedSimulation } from './paced.js';
import { assembleTestbed, type TestbedOptions, type TestbedParts } from '../testbed/testbed.js';
import { followProviderLog, readProviderLog, mirrorProviderEvents } from '../../product/provider/process.js';
import { setupServedEtcdFaults } from './upstream/etcd-faults.js';
import { setupUpstreamHarness } from './upstream/harness.js';
import { writeSecretFile } from '../../core/secret-file.js';
import { KEEP_LABEL } from './kind/capi-incluster.js';
import { WALL_SKEW_MS } from '../scenario/pool-status.js';

/** Kinds the testbed's controllers create, own or read in the management cluster. */
// Not the built-in groups (core, apps, RBAC, storage): a real cluster's own objects there are not the testbed's to watch or reset.
const TESTBED_KINDS = RESOURCES.filter((r) => !BUILTIN_GROUPS.has(r.group)).map((r) => r.kind);
/** Core kinds the testbed writes (bootstrap data, credentials, events). */
const CORE_KINDS = ['Secret', 'ConfigMap', 'Event'];
/** Namespaces a reset never touches (the cluster's own objects). */
const SYSTEM_NAMESPACE = /^kube-/;

export interface RemoteOptions {
  /** Path of the management cluster's kubeconfig. */
  kubeconfig: string;
  context?: string;
  /** Wall time the barrier waits for the apiserver's watches (default 60 s). */
  settleTimeoutMs?: number;
  /**
   * The Cluster API: the testbed's controllers in this process (`embedded`,
   * default), or none started here: `external` (the cluster has its own,
   * e.g. kind after `clusterctl init`), `upstream` (the upstream managers,
   * started by the backend). Anything but embedded paces time (paced.ts).
   */
  capi?: CapiMode;
  /** `external`: no provider here; an outside process reconciles against `cloudFront` (paces time). */
  provider?: ProviderMode;
  /** Virtual seconds per wall second of paced time (default 10). */
  speed?: number;
  /** --provider external: where the outside provider reaches each scenario's mock-hcs. */
  cloudFront?: CloudFront;
  /** --provider external: the outside provider's log (JSON lines), read by the controllerLog check and kubectl logs (OPS-3). */
  providerLog?: string;
  /**
   * Where the served workload clusters listen (default 127.0.0.1): the address of this machine as the cluster's
   * pods see it when the Cluster API or the provider runs in the cluster (kind: the gateway of its Docker network).
   */
  serveHost?: string;
}

/** Whether the run's time is paced by the wall clock (something outside reconciles). */
export function isPaced(o: Pick<RemoteOptions, 'capi' | 'provider'>): boolean {
  return (o.capi ?? 'embedded') !== 'embedded' || (o.provider ?? 'embedded') !== 'embedded';
}

export interface RemoteTestbed extends TestbedParts {
  env: Env<ClientNodeKube>;
}

export function loadKubeConfig(o: RemoteOptions): KubeConfig {
  return loadKubeconfig(o.kubeconfig, o.context);
}

/** CRDs installed and established, the namespaces the scenarios use created. Once per cluster. */
export async function prepareCluster(o: RemoteOptions): Promise<void> {
  const kc = loadKubeConfig(o);
  await installCrds(kc, (o.capi ?? 'embedded') === 'external' ? await crdsBesideOwnClusterApi(kc) : CRDS);
  await ensureNamespaces(kc, DEFAULT_NAMESPACES);
}

/**
 * `--capi external`: the cluster's own Cluster API (e.g. upstream's managers after `clusterctl init` or `kind up
 * --managers in-cluster`) owns its CRDs, with their conversion webhooks and caBundles: the testbed installs its
 * own Cluster API CRDs only where none exists (or where the existing one is the testbed's), and its HCS ones with
 * the v1beta1 contract label the core controllers look the provider's version up by (as with --capi upstream).
 */
export async function crdsBesideOwnClusterApi(kc: KubeConfig): Promise<CustomResourceDefinition[]> {
  const server = kc.getCurrentCluster()!.server.replace(/\/+$/, '');
  const out: CustomResourceDefinition[] = [...testbedCrdsForUpstream()];
  const kept = new Set(out.map((c) => c.metadata.name));
  for (const crd of CRDS) {
    if (kept.has(crd.metadata.name)) continue;
    const r = await kubeRequest(kc, 'GET', new URL(`${server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`));
    const labels = (r.body as { metadata?: { labels?: Record<string, string> } } | undefined)?.metadata?.labels ?? {};
    // Upstream's kustomizations label their CRDs with the provider (cluster.x-k8s.io/provider: cluster-api, ...).
    const theirs = labels['cluster.x-k8s.io/provider'] !== undefined || (r.status < 300 && labels['hcs-testbed.io/generated'] !== 'true');
    if (r.status === 404 || !theirs) out.push(crd);
  }
  return out;
}

/**
 * Delete every object of the testbed's kinds (and the Secrets, ConfigMaps
 * and Events outside kube-* namespaces, except service-account tokens and
 * the root CA bundle), removing finalizers first, and wait until they are
 * gone. Returns how many objects were deleted.
 */
export async function resetCluster(o: RemoteOptions, timeoutMs = 60_000): Promise<number> {
  const client = new ClientNodeKube(loadKubeConfig(o));
  let n = 0;
  const doomed = async (): Promise<KubeObject[]> => {
    const out: KubeObject[] = [];
    for (const kind of [...TESTBED_KINDS, ...CORE_KINDS]) {
      for (const x of await client.list<KubeObject & { type?: string }>(kind)) {
        if (SYSTEM_NAMESPACE.test(x.metadata.namespace ?? '')) continue;
        // What `kind up --managers in-cluster` installed for the cluster's own controllers (webhook certificates, the provider's configuration).
        if (x.metadata.labels?.[KEEP_LABEL] === 'true') continue;
        if (kind === 'Secret' && x.type === 'kubernetes.io/service-account-token') continue;
        if (kind === 'ConfigMap' && x.metadata.name === 'kube-root-ca.crt') continue;
        out.push(x);
      }
    }
    return out;
  };
  const deadline = Date.now() + timeoutMs;
  for (let left = await doomed(); left.length > 0; left = await doomed()) {
    if (Date.now() > deadline) throw new Error(`could not empty the management cluster: ${left.length} objects left (first: ${left[0]!.kind} ${left[0]!.metadata.namespace}/${left[0]!.metadata.name})`);
    for (const x of left) {
      const ref = { kind: x.kind, ...(x.metadata.namespace ? { namespace: x.metadata.namespace } : {}), name: x.metadata.name };
      try {
        if ((x.metadata.finalizers ?? []).length) await client.patch(ref, 'merge', { metadata: { finalizers: null } });
        await client.delete(ref, { ignoreNotFound: true });
        n++;
      } catch (e) {
        if (!(e instanceof KubeApiError && (e.reason === 'NotFound' || e.reason === 'Conflict'))) throw e;
      }
    }
  }
  client.close();
  return n;
}

/** Cluster API's `<cluster>-etcd` Secret (tls.crt, tls.key: the etcd CA KCP generates, or a user's), if it exists. */
async function etcdCaOf(env: Env, namespace: string, cluster: string): Promise<{ certPem: string; keyPem: string } | undefined> {
  return tlsPairOf(await env.mgmt.get<Secret>({ kind: 'Secret', namespace, name: `${cluster}-etcd` }));
}

/** Cluster API's `<cluster>-ca` Secret (tls.crt, tls.key: the cluster CA that signs kubeadm's apiserver certificate), if it exists. */
async function clusterCaOf(env: Env, namespace: string, cluster: string): Promise<{ certPem: string; keyPem: string } | undefined> {
  return tlsPairOf(await env.mgmt.get<Secret>({ kind: 'Secret', namespace, name: `${cluster}-ca` }));
}

export async function createRemoteTestbed(opts: TestbedOptions & RemoteOptions): Promise<RemoteTestbed> {
  const kc = loadKubeConfig(opts);
  const paced = isPaced(opts);
  // external (a process the user starts) or in-cluster (a Deployment in the cluster): not in this process.
  const externalProvider = (opts.provider ?? 'embedded') !== 'embedded';
  // After every settle barrier: what an outside provider logged since (followProviderLog), into the event log.
  let afterBarrier: (() => void) | undefined;
  const env = createEnv(
    // Paced: virtual time starts at the wall time, as the outside controllers' clocks do.
    { seed: opts.seed, ...(opts.startMs !== undefined ? { startMs: opts.startMs } : paced ? { startMs: Date.now() } : {}) },
    (clock) => new ClientNodeKube(kc, { clock, cacheReads: true, ...(opts.settleTimeoutMs ? { settleTimeoutMs: opts.settleTimeoutMs } : {}) }),
    (client) => () => client.settled(),
  );
  let sim: PacedSimulation | undefined;
  if (paced) {
    // The upstream managers react in chains (Machine → MachineSet status → MachineDeployment status), each hop through
    // their caches and rate-limited queues: a longer quiet period before a step's checks (docs/real-clusters.md §6.2).
    // An external Cluster API (the cluster's own: upstream's managers in kind) reacts the same way.
    const quiet = opts.capi === 'upstream' || opts.capi === 'external' ? { quietMs: 1000, maxQuietMs: 20_000 } : {};
    const barrier = async (): Promise<void> => {
      await env.mgmt.settled();
      afterBarrier?.();
    };
    sim = new PacedSimulation(env.clock, env.manager, barrier, { speed: opts.speed ?? DEFAULT_SPEED, ...quiet });
    env.sim = sim;
    for (const kind of TESTBED_KINDS) env.mgmt.watch(kind, () => sim!.noteActivity(), { shared: true });
  }
  env.workloads.onCreate((_key, store) => installCrdSchemas(store));
  const stopGc = setupGarbageCollector({ mgmt: env.mgmt, manager: env.manager, events: env.events, kinds: [...TESTBED_KINDS, 'Secret'] });
  // An outside provider reaches the workload clusters through <cluster>-kubeconfig: serve them (the management
  // store of this facade is a stand-in nobody uses; the management cluster is the real one).
  let workloadFacade: Facade | undefined;
  const realCapi = (opts.capi ?? 'embedded') !== 'embedded';
  if (externalProvider || realCapi) {
    workloadFacade = await startFacade({
      ...(opts.serveHost ? { host: opts.serveHost } : {}),
      mgmt: new EmbeddedStore({ clock: env.clock, rng: env.rng.fork('facade'), clusterName: 'unused' }),
      workloads: env.workloads,
      clock: env.clock,
      // The etcd members KCP reads through pods/etcd-<node>/portforward are served with the cluster's etcd CA (src/world/facade/portforward/etcd-forward.ts).
      etcdCa: (namespace, cluster) => etcdCaOf(env, namespace, cluster),
      // KCP's reconcileCertificateExpiries reads the apiserver certificate through pods/kube-apiserver-<node>/portforward (src/world/facade/portforward/apiserver-forward.ts).
      clusterCa: (namespace, cluster) => clusterCaOf(env, namespace, cluster),
    });
  }
  let kubeconfigForKubectl: string | undefined;
  const parts = await assembleTestbed(env, { ...opts, parts: { capi: (opts.capi ?? 'embedded') === 'embedded', provider: !externalProvider }, ...(externalProvider ? { cloudAuthNow: Date.now } : {}) }, {
    // The real kubectl gets the same cluster: with --context, a copy of the kubeconfig whose current context is that one.
    // An absolute path: the real kubectl runs in the scenario's directory (a relative --kubeconfig pointed nowhere
    // there, and kubectl fell back to localhost:8080).
    kubeconfig: async () => (kubeconfigForKubectl ??= opts.context ? writeKubeconfigCopy(kc) : resolve(opts.kubeconfig)),
    sync: () => env.mgmt.sync(),
    keys: async (kind) => (await env.mgmt.list(kind)).map((o) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`),
    close: async () => {
      stopGc();
      await workloadFacade?.close();
      env.mgmt.close();
      if (kubeconfigForKubectl && kubeconfigForKubectl !== resolve(opts.kubeconfig)) rmSync(dirname(kubeconfigForKubectl), { recursive: true, force: true });
    },
  });
  if (realCapi && workloadFacade) {
    // A real Cluster API (upstream's managers, or the cluster's own): what a site has around it (upstream-harness.ts).
    const f = workloadFacade;
    const stopHarness = setupUpstreamHarness(env.ctx, {
      endpoint: (ns, name) => ({ server: f.clusterUrl(ns, name), ...(f.caPem ? { caPem: f.caPem } : {}), token: f.token }),
      createWorkload: (ns, name) => void env.workloads.store(ns, name),
    });
    // The testbed etcd's faults and operator action (KCP-5) on the etcd served to the real KCP (etcd-faults.ts).
    const stopEtcdFaults = setupServedEtcdFaults(env.ctx, (ns, name) => f.etcd(ns, name));
    // The real KCP's Warning Events (its recorder's component: controlplane/kubeadm/internal/controllers/controller.go
    // GetEventRecorderFor) into the run's log as the model's KCP puts its own there (e.g. the preflight checks'
    // ControlPlaneUnhealthy, KCP-5): an Event the recorder repeats is one object with a count, so once per message.
    const stopKcpEvents = mirrorProviderEvents(env.mgmt, (e: Omit<LogEvent, 'seq' | 't'>) => env.events.record(e), 'kubeadmcontrolplane-controller', { source: 'capi', warningsOnly: true });
    const close = parts.close;
    parts.close = async () => {
      stopKcpEvents();
      stopEtcdFaults();
      stopHarness();
      await close();
    };
  }
  if (externalProvider) {
    const cloud = parts.cloud;
    opts.cloudFront?.attach(cloud);
    const close = parts.close;
    parts.close = async () => {
      opts.cloudFront?.detach(cloud);
      await close();
    };
    // The outside provider's log and Kubernetes Events stand in for the in-process provider's (OPS-3, the events check);
    // the decisions it logged become its events (followProviderLog: the report's timeline, test/upstream's sequences).
    const log = opts.providerLog ? readProviderLog(opts.providerLog) : undefined;
    const inner = parts.world.controllerLog.bind(parts.world);
    parts.world.controllerLog = (d) => (d === PROVIDER_DEPLOYMENT && log ? log() : inner(d));
    mirrorProviderEvents(env.mgmt, (e: Omit<LogEvent, 'seq' | 't'>) => env.events.record(e));
    if (opts.providerLog) {
      const follower = followProviderLog(opts.providerLog, (e) => env.events.record(e));
      afterBarrier = follower.drain;
      const close = parts.close;
      parts.close = async () => {
        follower.drain();
        await close();
      };
    }
  }
  // Every watch established before the first step writes anything.
  await env.mgmt.settled();
  return { ...parts, env, ...(externalProvider ? { stampSkewMs: WALL_SKEW_MS } : {}) };
}

function writeKubeconfigCopy(kc: KubeConfig): string {
  const dir = mkdtempSync(join(tmpdir(), 'hcs-testbed-kubeconfig-'));
  const file = join(dir, 'kubeconfig');
  writeSecretFile(file, kc.exportConfig());
  return file;
}

/**
 * `--backend kubeconfig`: prepare the cluster once (unless `prepared`: the
 * caller did), then a fresh testbed on an emptied cluster per scenario.
 */
export function remoteTestbedFactory(opts: Omit<TestbedOptions, 'seed'> & RemoteOptions & { prepared?: boolean }): TestbedFactory {
  let prepared: Promise<void> | undefined = opts.prepared ? Promise.resolve() : undefined;
  return async (seed, scenario) => {
    if (scenario?.from) throw new Error(`from: ${scenario.from}: a captured bundle is replayed in the embedded testbed only (run it without --backend)`);
    prepared ??= prepareCluster(opts);
    await prepared;
    await resetCluster(opts);
    return createRemoteTestbed({ ...opts, seed });
  };
}
