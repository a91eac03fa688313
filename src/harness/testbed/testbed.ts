/**
 * Assembles one complete embedded testbed: virtual clock, management cluster
 * (with admission), simulated workload clusters, the fake HCS cloud reached
 * over (in-process) signed HTTP, the simulated Cluster API core, the HCS
 * provider and the guests. One seed fixes the whole run.
 */
import { NODE_LIFECYCLE_CONTROLLER, setupNodeLifecycle } from '../../world/workload/node-lifecycle.js';
import { createMockHcs, DEFAULT_DOMAIN, MockHcsAppPool, usersOf, type CloudConfig, type MockHcs } from '../../../mock-hcs/src/index.js';
import { installAdmission } from '../../world/admission.js';
import { secretValue, type Secret } from '../../product/api/core.js';
import { installCrdSchemas } from '../../product/api/crds/install.js';
import { setupCapiControllers } from '../../world/capi/index.js';
import { dispatchTransport, HcsClient, inProcessTransport, issueToken, type HcsTransport } from '../../product/cloud/index.js';
import { GuestFleet, type GuestOptions } from '../../world/guest/index.js';
import { setupProviderControllers, type DiskClaimer, type ProviderControllers, type ProviderOptions } from '../../product/provider/index.js';
import type { TestbedFactory, TestbedHandle } from '../scenario/runner.js';
import type { World } from '../scenario/world.js';
import { setupWorkloadControllers, type AppReleaseTimings, type WorkloadControllers } from '../../world/workload/index.js';
import { startFacade, type Facade } from '../../world/facade/index.js';
import { createEmbeddedEnv, type EmbeddedEnv, type Env } from '../../world/embedded.js';
import type { LogEvent } from '../../core/events.js';

/** The kind each kind-keyed controller reconciles (for resync after a restart). */
const CONTROLLER_KINDS: Record<string, string> = {
  'capi-cluster': 'Cluster',
  'capi-machinedeployment': 'MachineDeployment',
  'capi-machineset': 'MachineSet',
  'capi-machine': 'Machine',
  'capi-kubeadmconfig': 'KubeadmConfig',
  'capi-kubeadmcontrolplane': 'KubeadmControlPlane',
  hcscluster: 'HCSCluster',
  hcsmachineconfigpool: 'HCSMachineConfigPool',
  hcsmachine: 'HCSMachine',
};

/** Controller groups a scenario can crash by name. */
const CONTROLLER_GROUPS: Record<string, (all: string[]) => string[]> = {
  provider: () => ['hcscluster', 'hcsmachineconfigpool', 'hcsmachine'],
  capi: (all) => all.filter((n) => n.startsWith('capi-')),
  guest: () => ['guest'],
  all: (all) => all,
};

export function expandControllers(names: string[], known: string[]): string[] {
  const out = new Set<string>();
  for (const n of names) {
    const group = CONTROLLER_GROUPS[n];
    const members = group ? group(known) : [n];
    for (const m of members) {
      if (!known.includes(m)) throw new Error(`unknown controller "${m}" (known: ${known.join(', ')}; groups: ${Object.keys(CONTROLLER_GROUPS).join(', ')})`);
      out.add(m);
    }
  }
  return [...out];
}

/**
 * The provider's cloud credentials (HCS-5), as an operator manages them: a
 * Secret in the management cluster with keys `ak` and `sk`. Absent = the
 * cloud project's own AK/SK. Creating, changing or deleting it switches the
 * credentials of every following provider call (a wrong SK is refused by the
 * fake cloud's signature verification with 401 APIGW.0301).
 */
export const CLOUD_CREDENTIALS_SECRET = { namespace: 'cpaas-system', name: 'hcs-cloud-credentials' } as const;

export interface TestbedOptions {
  seed: number;
  /** Virtual time at the start (default DEFAULT_EPOCH_MS; `hcs-testbed serve` starts at the wall time). */
  startMs?: number;
  cloudConfig?: CloudConfig;
  /** Start the provider with these AK/SK instead of the project's (HCS-5: wrong credentials). The Secret above overrides them. */
  credentials?: { ak: string; sk: string };
  /**
   * The provider authenticates with an IAM token (X-Auth-Token) of the project's first user instead of AK/SK
   * (HCS-5, issue 37: with CloudConfig.tokenTtlMs short, tokens expire during a run). `reauthenticate: false` is the
   * bug of a client that keeps its first token after a 401 (test/library/guards.test.ts).
   */
  providerToken?: { reauthenticate: boolean };
  /** Page size of the provider's list calls (HcsClientOptions.pageSize): small pages take the paging loops with small pools (issue 37). */
  providerPageSize?: number;
  /** Build the provider's DiskClaimer from the cloud client (tests swap in a broken one to prove the checks can fail). */
  diskClaimer?: (cloud: HcsClient) => DiskClaimer;
  /** Mutant hooks for the negative tests (test/library/negative.test.ts): each replaces one part of the system. */
  /** The provider's MD-3 detection. */
  surgeCheck?: ProviderOptions['surgeCheck'];
  /** Adjust the guests' options (e.g. wrap the hypervisor view, override image versions). */
  guest?: (defaults: GuestOptions) => GuestOptions;
  /** AppRelease phase durations (OVN-4). */
  appReleaseTimings?: Partial<AppReleaseTimings>;
  /**
   * Which controllers of the testbed run in this process (default both):
   * `capi: false` when the management cluster has its own Cluster API
   * (`run --capi external|upstream`), `provider: false` when an outside
   * provider process reconciles (`run --provider external`).
   */
  parts?: { capi?: boolean; provider?: boolean };
  /**
   * The clock mock-hcs checks a signature's X-Sdk-Date against (default: the
   * run's clock). Paced runs with an outside provider pass the wall clock: the
   * outside process signs with the wall time, as against HCS.
   */
  cloudAuthNow?: () => number;
  /**
   * The testbed's own cloud clients sign every request, and mock-hcs verifies
   * the signature, as over the wire (default: they hand their keys beside the
   * request, checked with the same decisions: product/cloud inProcessTransport).
   * test/testbed/in-process-credentials.test.ts runs the library both ways.
   */
  signedCloudCalls?: boolean;
  /**
   * mock-hcs takes its fastify app from this pool when it holds an idle one,
   * and gives it back on close (mock-hcs/src/binding.ts): ~6 ms of CPU saved per
   * testbed for runs that make one after another (embeddedTestbedFactory,
   * explore's workers). test/testbed/app-pool.test.ts runs the library both ways.
   */
  appPool?: MockHcsAppPool;
  /** Events of a run this one continues (a replay from a captured bundle, src/harness/capture/replay.ts): the log starts with them. */
  history?: readonly LogEvent[];
}

/** The parts of a testbed that do not depend on the management cluster's backend. */
export interface TestbedParts extends TestbedHandle {
  cloud: MockHcs;
  hcs: HcsClient;
  guests: GuestFleet;
  /** The provider's controllers (crash/restart them to model a process restart); absent when an outside provider runs. */
  provider?: ProviderControllers;
  workload: WorkloadControllers;
}

export interface Testbed extends TestbedParts {
  env: EmbeddedEnv;
  /** The embedded testbed always runs the provider in process. */
  provider: ProviderControllers;
}

/** What differs between management-cluster backends. */
export interface Backend {
  /** A kubeconfig for the real kubectl (`real: true` steps). */
  kubeconfig(): Promise<string>;
  /** Catch up with writes made outside the testbed's client (after the real kubectl ran). */
  sync?(): Promise<void>;
  /** Keys of every object of a kind (a restarted controller's resync). */
  keys(kind: string): Promise<string[]>;
  /** Changes with every write to the management cluster (World.revision); absent where the backend cannot tell. */
  revision?(): string;
  /** The same, synchronously, where the backend can (embedded): a restart then enqueues its resync at once. */
  keysSync?(kind: string): string[];
  close(): Promise<void>;
}

export async function createTestbed(opts: TestbedOptions): Promise<Testbed> {
  const env = createEmbeddedEnv({ seed: opts.seed, ...(opts.startMs !== undefined ? { startMs: opts.startMs } : {}) });
  if (opts.history) env.events.continueFrom(opts.history);
  // The CRD schemas (src/core/kube/crds) prune and validate like a real apiserver, then admission applies the SPEC rules.
  installCrdSchemas(env.mgmt);
  env.workloads.onCreate((_key, store) => installCrdSchemas(store));
  installAdmission(env.mgmt);
  let facade: Facade | undefined;
  // Keys only: the shared (frozen) objects, no copies (a restarted controller resyncs every object of its kinds).
  const embeddedKeys = (kind: string): string[] => env.mgmt.listSharedSync(kind).map((o) => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`);
  const parts = await assembleTestbed(env, opts, {
    kubeconfig: async () => {
      // Started on first use (steps with `real: true`); closed with the testbed.
      facade ??= await startFacade({ mgmt: env.mgmt, workloads: env.workloads, logs: env.logs, clock: env.clock });
      return facade.writeKubeconfig().combined;
    },
    keys: async (kind) => embeddedKeys(kind),
    keysSync: (kind) => embeddedKeys(kind),
    revision: () => env.mgmt.resourceVersion(),
    close: async () => {
      await facade?.close();
    },
  });
  if (!parts.provider) throw new Error('the embedded testbed runs the provider in process (parts.provider: false is for remote backends)');
  return { ...parts, provider: parts.provider, env };
}

/**
 * The provider's client with an IAM token of the project's first user (Keystone password method): one token until
 * the cloud rejects it (401), then — re-authenticating — a new one (HcsClientOptions.token).
 */
function tokenClient(transport: HcsTransport, config: CloudConfig, project: CloudConfig['projects'][number], clock: Env['clock'], o: { reauthenticate: boolean }): HcsClient {
  const user = usersOf(project)[0];
  if (!user) throw new Error(`project ${project.name} has no IAM user to get a token for`);
  let current: Promise<string> | undefined;
  const fresh = (): Promise<string> => issueToken(transport, { user: user.name, password: user.password, domain: user.domain ?? config.domain?.name ?? DEFAULT_DOMAIN.name, project: { id: project.id } }).then((t) => t.token);
  return new HcsClient({
    transport,
    projectId: project.id,
    clock,
    token: async (rejected) => {
      if (rejected !== undefined && o.reauthenticate && (await current) === rejected) current = undefined;
      return (current ??= fresh());
    },
  });
}

/**
 * Everything above the management cluster API: the fake cloud, the Cluster
 * API core, the provider, the workload controllers and guests, and the
 * scenario's view of the world.
 */
export async function assembleTestbed(env: Env, opts: TestbedOptions, backend: Backend): Promise<TestbedParts> {
  const cloud = await createMockHcs({ clock: env.clock, rng: env.rng.fork('cloud'), events: env.events, ...(opts.cloudConfig ? { config: opts.cloudConfig } : {}), ...(opts.cloudAuthNow ? { authNow: opts.cloudAuthNow } : {}), ...(opts.appPool ? { appPool: opts.appPool } : {}) });
  const project = cloud.config.projects[0];
  if (!project) throw new Error('cloud config has no project');
  // HTTP requests into mock-hcs's request handler, in process (MockHcs.dispatch: what app.inject() answers, without
  // light-my-request), with the keys beside each request instead of a signature unless signedCloudCalls.
  const transport = opts.signedCloudCalls ? dispatchTransport(cloud) : inProcessTransport(cloud);
  const clientFor = (ak: string, sk: string): HcsClient => new HcsClient({ transport, ak, sk, projectId: project.id, clock: env.clock });
  const hcs = clientFor(project.ak, project.sk);
  // The provider's client follows the credentials Secret (HCS-5); every call goes to the current one.
  const initial = opts.credentials
    ? clientFor(opts.credentials.ak, opts.credentials.sk)
    : opts.providerToken
      ? tokenClient(transport, cloud.config, project, env.clock, opts.providerToken)
      : opts.providerPageSize
        ? new HcsClient({ transport, ak: project.ak, sk: project.sk, projectId: project.id, clock: env.clock, pageSize: opts.providerPageSize })
        : hcs;
  let current = initial;
  const providerCloud = new Proxy(hcs, {
    get(_t, prop) {
      const v = (current as unknown as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(current) : v;
    },
  });
  env.mgmt.watch<Secret>('Secret', (e) => {
    const o = e.object;
    if (o.metadata.namespace !== CLOUD_CREDENTIALS_SECRET.namespace || o.metadata.name !== CLOUD_CREDENTIALS_SECRET.name) return;
    const ak = secretValue(o, 'ak');
    const sk = secretValue(o, 'sk');
    current = e.type === 'DELETED' || !ak || !sk ? initial : clientFor(ak, sk);
  }, { shared: true });
  if (opts.parts?.capi !== false) setupCapiControllers(env.ctx);
  const provider = opts.parts?.provider === false
    ? undefined
    : setupProviderControllers(env.ctx, {
      cloud: providerCloud,
      ...(opts.diskClaimer ? { diskClaimer: opts.diskClaimer(providerCloud) } : {}),
      ...(opts.surgeCheck ? { surgeCheck: opts.surgeCheck } : {}),
    });
  const workload = setupWorkloadControllers(env.ctx, opts.appReleaseTimings ? { appReleaseTimings: opts.appReleaseTimings } : {});
  const guestDefaults: GuestOptions = { hypervisor: cloud.hypervisor, onServerChange: (fn) => cloud.onServerChange(fn) };
  const guests = new GuestFleet(env.ctx, opts.guest ? opts.guest(guestDefaults) : guestDefaults);
  guests.setup();
  const hv = cloud.hypervisor;
  // The site's cloud controller manager (node lifecycle), whichever Cluster API runs.
  setupNodeLifecycle(env.ctx, hv, () => env.workloads.names());
  const world: World = {
    clock: env.clock,
    mgmt: env.mgmt,
    workloads: env.workloads,
    cloud: {
      listServers: () => hv.listServers(),
      server: (id) => hv.server(id),
      availabilityZones: () => [...cloud.config.availabilityZones],
      listVolumes: () => hv.listVolumes(),
      readFile: (volumeId, path) => hv.readFile(volumeId, path),
      images: () => cloud.catalog().images,
    },
    guests,
    markers: [],
    controllerLog: (d) => env.logs.text(d),
    kubeconfig: () => backend.kubeconfig(),
    ...(backend.sync ? { sync: () => backend.sync!() } : {}),
    eventLog: () => env.events.all(),
    ...(backend.revision ? { revision: () => `${backend.revision!()}|${env.workloads.revision()}|${cloud.revision()}` } : {}),
    faults: {
      add: (rule) => cloud.faults.add(rule as unknown as Parameters<MockHcs['faults']['add']>[0]),
      clear: () => cloud.faults.clear(),
      releaseStuck: (target) => cloud.faults.releaseStuck(target),
    },
    serverAction: (serverId, action) => {
      const s = hv.server(serverId);
      if (!s) throw new Error(`server ${serverId} does not exist`);
      // The cloud's own ECS action (as an operator's console call), in step with the run's clock.
      return (hv as unknown as { serverAction(projectId: string, body: unknown): { job_id: string } }).serverAction(s.projectId, action === 'stop' ? { 'os-stop': { servers: [{ id: serverId }], type: 'HARD' } } : { 'os-start': { servers: [{ id: serverId }] } }).job_id;
    },
    cloudOps: {
      createVolume: async (v) => (await hcs.createVolume({ volume: { name: v.name, size: v.size, volume_type: v.type, availability_zone: v.availabilityZone, ...(v.metadata ? { metadata: v.metadata } : {}) } })).volume_ids[0]!,
      attachVolume: async (serverId, volumeId) => (await hcs.attachVolume(serverId, volumeId)).job_id,
      detachVolume: async (serverId, volumeId) => (await hcs.detachVolume(serverId, volumeId)).job_id,
      deleteVolume: (volumeId) => hcs.deleteVolume(volumeId),
    },
    crash: (names) => {
      const list = expandControllers(names, env.manager.controllerNames());
      for (const n of list) env.manager.crash(n);
      return list;
    },
    restart: (names) => {
      // Synchronous where the backend lists synchronously (embedded): the resync is enqueued before anything
      // else runs, so a scheduled restart (src/harness/explore/schedule.ts, from a timer) lands at its exact instant.
      const keys = names.map((n) => resyncKeys(n));
      if (keys.every((k) => Array.isArray(k))) {
        names.forEach((n, i) => env.manager.restart(n, keys[i] as string[]));
        return;
      }
      return (async () => {
        for (let i = 0; i < names.length; i++) env.manager.restart(names[i]!, await keys[i]!);
      })();
    },
  };
  /** Keys a restarted controller resyncs (an informer's initial list). */
  function resyncKeys(controller: string): string[] | Promise<string[]> {
    const kind = CONTROLLER_KINDS[controller];
    if (kind) return backend.keysSync ? backend.keysSync(kind) : backend.keys(kind);
    if (controller === 'guest') return hv.listServers().map((s) => s.id);
    if (controller === NODE_LIFECYCLE_CONTROLLER) return ['all'];
    return [];
  }
  return {
    cloud,
    hcs,
    guests,
    ...(provider ? { provider } : {}),
    workload,
    world,
    sim: env.sim,
    clock: env.clock,
    events: env.events,
    close: async () => {
      await backend.close();
      await cloud.close();
    },
  };
}

/**
 * The default backend of `hcs-testbed run`: a fresh embedded testbed per
 * scenario, their mock-hcs apps from one pool (TestbedOptions.appPool).
 */
export function embeddedTestbedFactory(opts: Omit<TestbedOptions, 'seed'> = {}): TestbedFactory {
  const appPool = opts.appPool ?? new MockHcsAppPool();
  return (seed) => createTestbed({ ...opts, appPool, seed });
}
