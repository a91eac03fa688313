/**
 * Replay (issue 35): an embedded testbed whose starting state is a captured
 * bundle — `run` with `from:` in a scenario, `serve --from`, `explore --from`.
 *
 * Loaded, in this order, before any controller runs:
 * - the clock at the bundle's capturedAt, and its history (a testbed's event
 *   log) as the start of the event log;
 * - the cloud: the bundle's servers, volumes, ports and subnets through
 *   mock-hcs's listing loader (mock-hcs/src/load.ts: in-flight transitions
 *   finish as the cloud would), with the disks' file systems and data files;
 * - the management objects as captured (uids, owners, finalizers, statuses);
 * - the workload clusters' objects (Nodes among them);
 * - a guest for each server that was running with its Node: taken over as
 *   joined (GuestFleet.adopt), not booted again.
 *
 * What the bundle does not hold is made anew, and said so in the event log
 * (`replay.*` events): each cluster gets a new CA (the captured one's key
 * was never captured) in its `<cluster>-ca` Secret; the servers' user data
 * gets new kubelet certificates and keys from it, and new bootstrap tokens,
 * where capture cut them; the `<cluster>-kubeconfig` Secrets are rebuilt by
 * the Cluster controller; bootstrap data Secrets whose data was cut are
 * rebuilt by the KubeadmConfig controller for machines still waiting for a
 * server. Secrets whose data capture cut are restored without it (the
 * provider's credentials Secret among them: the replay's provider uses the
 * replay cloud's own AK/SK).
 */
import { errorMessage } from '../../core/errors.js';
import type { KubeObject } from '../../core/kube/types.js';
import { generateCASync, issueCertificateSync, type CertKeyPair } from '../../core/pki/index.js';
import type { Rng } from '../../core/rng.js';
import { configFromListing, defaultCloudConfig, stateFromListing, type CloudConfig } from '../../../mock-hcs/src/index.js';
import { KUBECONFIG_DATA_KEY, kubeconfigSecretName, type Machine } from '../../product/api/capi.js';
import type { HCSMachine } from '../../product/api/hcs.js';
import type { Node, Secret } from '../../product/api/core.js';
import { META_CLUSTER, META_HOSTNAME, META_NAMESPACE } from '../../product/api/metadata.js';
import { KUBELET_CERT_PATH, KUBELET_KEY_PATH, parseCloudConfig, renderCloudConfig, type WriteFile } from '../../product/provider/cloudinit.js';
import { createTestbed, type Testbed, type TestbedOptions } from '../testbed/testbed.js';
import { BundleError, type Bundle } from './bundle.js';
import { readBundleFile } from './bundle-file.js';
import type { TestbedFactory } from '../scenario/runner.js';
export { readBundleFile };
import { USER_DATA_REDACTED } from './cloud.js';
import { REDACTED } from './redact.js';
import { parseInstant } from './time.js';

export interface ReplayOptions extends Omit<TestbedOptions, 'startMs' | 'cloudConfig' | 'history'> {
  /** The cloud the bundle's project is loaded into (default mock-hcs's default configuration). */
  baseCloudConfig?: CloudConfig;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** An embedded testbed starting from `bundle`. Throws BundleError naming the problem; on error nothing keeps running. */
export async function createReplayTestbed(bundle: Bundle, opts: ReplayOptions): Promise<Testbed> {
  const startMs = parseInstant(bundle.capturedAt);
  let cloudConfig: CloudConfig;
  try {
    cloudConfig = configFromListing(opts.baseCloudConfig ?? defaultCloudConfig(), bundle.cloud);
  } catch (e) {
    throw new BundleError(`the cloud cannot be loaded: ${errorMessage(e)}`, undefined, 'cloud');
  }
  // Not the seed itself: its streams would hand out the names and uids the captured run already gave its first objects.
  const tb = await createTestbed({ ...opts, seed: replaySeed(opts.seed, bundle), startMs, cloudConfig, ...(bundle.history ? { history: bundle.history } : {}) });
  try {
    await loadInto(tb, bundle, startMs);
    tb.resumed = true;
  } catch (e) {
    await tb.close().catch(() => undefined);
    throw e instanceof BundleError ? e : new BundleError(`the state cannot be loaded: ${errorMessage(e)}`);
  }
  return tb;
}

async function loadInto(tb: Testbed, bundle: Bundle, now: number): Promise<void> {
  const env = tb.env;
  const rng = env.rng.fork('replay');
  const record = (type: string, message: string, data?: Record<string, unknown>): void => {
    env.events.record({ source: 'runtime', type, message, ...(data ? { data } : {}) });
  };
  const objects = bundle.management.objects;
  // 1. A new CA per cluster that had one (its key was never captured).
  const cas = new Map<string, CertKeyPair>();
  const caOf = (ns: string, cluster: string): CertKeyPair => {
    const k = `${ns}/${cluster}`;
    let ca = cas.get(k);
    if (!ca) cas.set(k, (ca = generateCASync(rng, now, 'kubernetes')));
    return ca;
  };
  for (const o of objects) if (o.kind === 'Cluster') caOf(o.metadata.namespace ?? 'default', o.metadata.name);

  // 2. The cloud, its user data made whole again.
  const servers = bundle.cloud.servers.map((s) => {
    const text = s[USER_DATA_REDACTED];
    const { [USER_DATA_REDACTED]: _dropped, ...rest } = s;
    if (typeof text !== 'string') return rest;
    const meta = (s.metadata ?? {}) as Record<string, string>;
    const ns = meta[META_NAMESPACE];
    const cluster = meta[META_CLUSTER];
    const ips = Object.values((s.addresses ?? {}) as Record<string, { addr?: string }[]>).flat().map((a) => a.addr).filter((x): x is string => !!x);
    const filled = refillUserData(text, { ca: ns && cluster ? caOf(ns, cluster) : undefined, hostname: meta[META_HOSTNAME] ?? s.name, ips, rng, now });
    return { ...rest, userData: b64(filled) };
  });
  let data;
  try {
    data = stateFromListing({ ...bundle.cloud, servers }, tb.cloud.config, now, bundle.disks);
  } catch (e) {
    throw new BundleError(errorMessage(e), undefined, 'cloud');
  }
  try {
    await tb.cloud.restoreState(data);
  } catch (e) {
    throw new BundleError(`the cloud refused the state: ${errorMessage(e)}`, undefined, 'cloud');
  }
  record('replay.cloud-loaded', `cloud loaded from the bundle: ${bundle.cloud.servers.length} servers, ${bundle.cloud.volumes.length} volumes, ${Object.keys(data.tasks).length} transitions in flight`, {
    servers: bundle.cloud.servers.length,
    volumes: bundle.cloud.volumes.length,
  });

  // 3. Management objects.
  const hcsMachines = objects.filter((o): o is HCSMachine => o.kind === 'HCSMachine');
  const machines = objects.filter((o): o is Machine => o.kind === 'Machine');
  const waiting = new Set<string>();
  for (const m of machines) {
    const hm = hcsMachines.find((h) => h.metadata.namespace === m.metadata.namespace && h.metadata.name === m.spec.infrastructureRef?.name);
    if (!hm?.spec.serverId && m.spec.bootstrap?.dataSecretName) waiting.add(`${m.metadata.namespace}/${m.spec.bootstrap.dataSecretName}`);
  }
  const load: KubeObject[] = [];
  for (const o of objects) {
    const ns = o.metadata.namespace ?? 'default';
    if (o.kind === 'Secret') {
      const sec = o as Secret;
      const cluster = objects.find((c) => c.kind === 'Cluster' && c.metadata.namespace === ns && sec.metadata.name === `${c.metadata.name}-ca`);
      if (cluster) {
        const ca = caOf(ns, cluster.metadata.name);
        load.push({ ...sec, data: { 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) } } as Secret);
        record('replay.ca-regenerated', `Secret ${ns}/${sec.metadata.name}: a new cluster CA (the captured key was never in the bundle)`, { secret: sec.metadata.name });
        continue;
      }
      if (objects.some((c) => c.kind === 'Cluster' && c.metadata.namespace === ns && sec.metadata.name === kubeconfigSecretName(c.metadata.name)) && !sec.data?.[KUBECONFIG_DATA_KEY]) continue; // rebuilt by the Cluster controller
      if (waiting.has(`${ns}/${sec.metadata.name}`) && !sec.data?.value) continue; // rebuilt by the KubeadmConfig controller (below)
    }
    if (o.kind === 'KubeadmConfig') {
      const st = (o as KubeObject & { status?: { ready?: boolean; dataSecretName?: string } }).status;
      if (st?.dataSecretName && waiting.has(`${ns}/${st.dataSecretName}`) && !objects.some((x) => x.kind === 'Secret' && x.metadata.namespace === ns && x.metadata.name === st.dataSecretName && (x as Secret).data?.value)) {
        const { dataSecretName: _d, ...restStatus } = st;
        load.push({ ...o, status: { ...restStatus, ready: false } } as KubeObject);
        record('replay.bootstrap-rebuilt', `KubeadmConfig ${ns}/${o.metadata.name}: bootstrap data to be generated again (its Secret's data was never in the bundle; the machine has no server yet)`, { config: o.metadata.name });
        continue;
      }
    }
    load.push(o);
  }
  env.mgmt.restore([...load, ...bundle.events.filter((e) => !load.some((x) => x.kind === 'Event' && x.metadata.name === e.metadata.name && x.metadata.namespace === e.metadata.namespace))]);
  record('replay.objects-loaded', `management cluster loaded from the bundle: ${load.length} objects, ${bundle.events.length} Events`, { objects: load.length, events: bundle.events.length });

  // 4. Workload clusters.
  for (const w of bundle.workloads) {
    if (w.error) record('replay.workload-missing', `workload cluster ${w.namespace}/${w.cluster} was not captured (${w.error}): it starts empty`, { cluster: w.cluster });
    env.workloads.store(w.namespace, w.cluster).restore(w.objects);
  }

  // 5. Guests: a server that ran with its Node is taken over; the rest boot when their server is ACTIVE.
  for (const s of bundle.cloud.servers) {
    const meta = (s.metadata ?? {}) as Record<string, string>;
    const ns = meta[META_NAMESPACE];
    const cluster = meta[META_CLUSTER];
    if ((s.status !== 'ACTIVE' && s.status !== 'SHUTOFF') || !ns || !cluster) continue;
    const hostname = meta[META_HOSTNAME] ?? s.name;
    const wl = bundle.workloads.find((w) => w.namespace === ns && w.cluster === cluster);
    const node = wl?.objects.find((o): o is Node => o.kind === 'Node' && o.metadata.name === hostname);
    const hm = hcsMachines.find((h) => h.spec.serverId === s.id);
    if (!node || !hm || (node.spec.providerID && hm.spec.providerID && node.spec.providerID !== hm.spec.providerID)) continue;
    const why = tb.guests.adopt(s.id, node.metadata.name);
    if (why) record('replay.guest-not-adopted', `server ${s.name} (${s.id}): not taken over (${why}); it boots`, { serverId: s.id });
  }
  for (const s of tb.cloud.hypervisor.listServers()) env.manager.enqueue('guest', s.id);
  tb.world.markers.push(...bundle.dataMarkers);
  // The provider's log so far (kubectl logs deployment/hcs-controller-manager), then the replay's own lines.
  if (bundle.providerLog) {
    const before = bundle.providerLog.endsWith('\n') || bundle.providerLog === '' ? bundle.providerLog : `${bundle.providerLog}\n`;
    const own = tb.world.controllerLog.bind(tb.world);
    tb.world.controllerLog = (d) => (d === PROVIDER_DEPLOYMENT ? before + own(d) : own(d));
  }
}

/** The deployment whose log a bundle's providerLog is (kubectl logs -n cpaas-system deployment/hcs-controller-manager). */
export const PROVIDER_DEPLOYMENT = 'hcs-controller-manager';

/** The replay's seed: the run's, mixed with the bundle's instant (same bundle and seed, same replay). */
export function replaySeed(seed: number, bundle: Bundle): number {
  let h = 2166136261;
  for (const c of `${seed}|${bundle.capturedAt}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

interface Refill {
  ca: CertKeyPair | undefined;
  hostname: string;
  ips: string[];
  rng: Rng;
  now: number;
}

/**
 * Put back what capture cut from a `#cloud-config` user data: the kubelet certificate and key (issued anew by the
 * replay's cluster CA), the CA's own files, other cut keys (new ones), bootstrap tokens (new ones). Other user data
 * stays as captured.
 */
export function refillUserData(text: string, r: Refill): string {
  if (!text.includes(REDACTED)) return text;
  let doc;
  try {
    doc = parseCloudConfig(text);
  } catch {
    return text;
  }
  const files = (doc.write_files ?? []) as WriteFile[];
  const byPath = new Map(files.map((f) => [f.path, f]));
  const set = (path: string, content: string): void => {
    const f = byPath.get(path);
    if (!f) return;
    f.content = content;
    delete f.encoding;
  };
  if (r.ca) {
    const kubelet = issueCertificateSync(r.ca, { commonName: `system:node:${r.hostname}`, organization: 'system:nodes', dnsNames: [r.hostname], ips: r.ips }, r.rng, r.now);
    set(KUBELET_CERT_PATH, kubelet.certPem);
    set(KUBELET_KEY_PATH, kubelet.keyPem);
    set('/etc/kubernetes/pki/ca.crt', r.ca.certPem);
    set('/etc/kubernetes/pki/ca.key', r.ca.keyPem);
  }
  // Any other cut key gets a new pair (its certificate with it, when the user data carries one beside it).
  for (const f of files) {
    if (!f.content?.includes(REDACTED) || !f.path.endsWith('.key')) continue;
    const pair = generateCASync(r.rng, r.now, f.path.split('/').pop()!.replace(/\.key$/, ''));
    f.content = pair.keyPem;
    set(f.path.replace(/\.key$/, '.crt'), pair.certPem);
  }
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const out = renderCloudConfig(doc);
  return out.split(REDACTED).map((part, i) => (i === 0 ? part : `${r.rng.string(6, alphabet)}.${r.rng.string(16, alphabet)}${part}`)).join('');
}

/**
 * `factory`, except for a scenario with `from:`: that one starts from its bundle (read when the run starts, so a
 * bundle changed between runs is read anew). `opts`: the testbed options of the embedded factory (a plugin's).
 */
export function withBundles(factory: TestbedFactory, opts: () => Omit<ReplayOptions, 'seed'> = () => ({})): TestbedFactory {
  return (seed, scenario) => (scenario?.from ? createReplayTestbed(readBundleFile(scenario.from), { ...opts(), seed }) : factory(seed, scenario));
}
