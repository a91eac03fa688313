/**
 * The management-cluster backends of `hcs-testbed run`:
 *
 * - `embedded` (default): an in-process management cluster per scenario;
 *   deterministic (same scenario + seed → same event log), seconds for the
 *   whole library.
 * - `kubeconfig`: a real cluster the user runs (kind from `hcs-testbed kind
 *   up`, or any dedicated cluster): CRDs installed, emptied before each
 *   scenario, controllers reconciling through @kubernetes/client-node.
 * - `apiserver`: the kube-apiserver + etcd built by tools/kube/build.sh,
 *   started for the run (as envtest does) and stopped after it.
 *
 * With `capi: 'upstream'` (apiserver only) the upstream Cluster API v1.10.10
 * managers (tools/capi) are started beside it and are the Cluster API; the
 * testbed runs only its own parts on paced time (src/harness/realcluster/upstream/upstream.ts).
 *
 * On a real cluster uids, generated names and the order in which watch
 * events interleave come from the apiserver, so event logs are not
 * byte-identical between runs; verdicts are what compares (see
 * test/realcluster/library.test.ts).
 */
import { InputError } from '../../core/errors.js';
import { startControlPlane, type ControlPlane } from './apiserver/apiserver.js';
import { findKubeBinaries } from './apiserver/binaries.js';
import { installWebhookConfigurations, removeWebhookConfigurations, startAdmissionWebhook, type AdmissionWebhook } from './apiserver/webhook.js';
import type { TestbedFactory } from '../scenario/runner.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { followProviderPodLog, startInClusterCloudFront, waitProviderAvailable, type LogFollower } from './kind/incluster.js';
import { CloudFront, clearExternalMarkers, ephemeralPortRange, pickHealthPort, writeExternalInfo, type CapiMode, type ExternalInfo, type ProviderMode } from './external.js';
import { loadKubeConfig, prepareCluster, remoteTestbedFactory } from './remote.js';
import { embeddedTestbedFactory } from '../testbed/testbed.js';
import { withBundles } from '../capture/replay.js';
import { keepLogs, prepareUpstreamCluster, upstreamProblem } from './upstream/upstream.js';
import type { UpstreamManagers } from './upstream/capi-managers.js';

export const BACKENDS = ['embedded', 'kubeconfig', 'apiserver'] as const;
export { CAPI_MODES, PROVIDER_MODES, type CapiMode, type ProviderMode } from './external.js';
export type BackendName = (typeof BACKENDS)[number];

export interface BackendOptions {
  backend: BackendName;
  /** kubeconfig backend: the file (default $KUBECONFIG, then ~/.kube/config). */
  kubeconfig?: string;
  context?: string;
  /**
   * Serve the testbed's admission webhook to the cluster (default: on for
   * `apiserver`, off for `kubeconfig` unless `webhookHost` is given: a
   * cluster in a container must be told how to reach this host).
   */
  webhook?: boolean;
  webhookHost?: string;
  /** The Cluster API (default embedded: the testbed's, in process); external: none started (the cluster has one). */
  capi?: CapiMode;
  /** external: no provider in process; an outside one reconciles against the run's mock-hcs (docs/real-clusters.md §7). */
  provider?: ProviderMode;
  /** Paced time (anything external): virtual seconds per wall second. */
  speed?: number;
  /** --provider external: where provider.env / provider.json / cloud-ca.pem are written. */
  externalDir?: string;
  /** --provider external: the cloud front's port (default a free one). */
  cloudPort?: number;
  /** --provider external: the outside provider's log file (JSON lines), for the controllerLog check and kubectl logs. */
  providerLog?: string;
  /**
   * --provider external: wait (up to providerWaitMs) until this URL answers 200 before the first scenario;
   * `auto`: the /readyz of the health address the run wrote to provider.env (HCS_HEALTH_ADDR).
   */
  providerHealth?: string;
  providerWaitMs?: number;
  /** --provider external: the ready marker, written once provider.env and the other files are in place (default <externalDir>/ready). */
  externalReadyFile?: string;
  /** --provider external: at the end, how long to wait for the provider to stop after the stop file appears, before the apiserver goes (default 15 s). */
  providerStopWaitMs?: number;
  /** Progress lines while starting (--capi upstream: when the managers are ready). */
  log?: (line: string) => void;
}

export interface OpenBackend {
  factory: TestbedFactory;
  /** One line for the console ("kube-apiserver v1.33.13 at https://127.0.0.1:34567"). */
  description: string;
  /** --provider external: what the outside provider is started with, and the files holding it. */
  external?: { info: ExternalInfo; envFile: string; jsonFile: string; readyFile: string };
  /** --capi upstream: the directory of the managers' logs (<manager>.log: core, bootstrap, controlplane). */
  managersDir?: string;
  close(): Promise<void>;
}

function defaultKubeconfig(): string {
  const env = process.env.KUBECONFIG?.split(':')[0];
  return env || `${process.env.HOME ?? ''}/.kube/config`;
}

export async function openBackend(o: BackendOptions): Promise<OpenBackend> {
  const capi = o.capi ?? 'embedded';
  const provider = o.provider ?? 'embedded';
  if (o.backend === 'embedded') {
    if (capi !== 'embedded') throw new InputError(`--capi ${capi} needs a real management cluster: use --backend apiserver or --backend kubeconfig (the embedded backend always runs the testbed's Cluster API)`, 'capi');
    if (provider !== 'embedded') throw new InputError(`--provider ${provider} needs a real management cluster the outside provider can reach: use --backend apiserver or --backend kubeconfig`, 'provider');
    return { factory: withBundles(embeddedTestbedFactory()), description: 'embedded management cluster', close: async () => {} };
  }
  if (capi === 'upstream') {
    if (o.backend !== 'apiserver') throw new InputError(`--capi upstream goes with --backend apiserver: the upstream managers are started beside the kube-apiserver built by tools/kube (got --backend ${o.backend}; a cluster with its own Cluster API is --capi external)`, 'capi');
    const problem = upstreamProblem();
    if (problem) throw new InputError(`--capi upstream cannot run here: ${problem}`, 'capi');
  }
  if (provider === 'in-cluster' && o.backend !== 'kubeconfig') throw new InputError(`--provider in-cluster goes with --backend kubeconfig: the provider runs as a Deployment in that cluster (hcs-testbed kind up --managers in-cluster); got --backend ${o.backend}`, 'provider');
  const externalDir = o.externalDir ?? 'out/external';
  // Nobody may start from a previous run's files: they go before anything starts; the new ones come once all is in place.
  if (provider === 'external') clearExternalMarkers(externalDir, o.externalReadyFile);
  let cp: ControlPlane | undefined;
  let webhook: AdmissionWebhook | undefined;
  let kubeconfig: string;
  let description: string;
  if (o.backend === 'apiserver') {
    const found = findKubeBinaries();
    if ('missing' in found) throw new InputError(`--backend apiserver needs the kube-apiserver and etcd binaries: ${found.missing} (build them with tools/kube/build.sh)`, 'backend');
    cp = await startControlPlane({ binaries: found, keepDir: keepLogs() });
    kubeconfig = cp.kubeconfigPath;
    description = `kube-apiserver at ${cp.url} (started for this run; logs in ${cp.dir})`;
  } else {
    kubeconfig = o.kubeconfig ?? defaultKubeconfig();
    try {
      loadKubeConfig({ kubeconfig, ...(o.context ? { context: o.context } : {}) });
    } catch (e) {
      throw new InputError(`cannot load kubeconfig: ${(e as Error).message}`, kubeconfig);
    }
    description = `management cluster from ${kubeconfig}${o.context ? ` (context ${o.context})` : ''}`;
  }
  const remote = { kubeconfig, ...(o.context ? { context: o.context } : {}) };
  let front: CloudFront | undefined;
  let external: OpenBackend['external'];
  let healthUrl: string | undefined;
  const close = async (): Promise<void> => {
    // An orderly end: the outside provider stops first (the stop file, then its health endpoint going away), while
    // the apiserver and the cloud still answer, so its last reconciles end cleanly instead of in connection errors.
    if (external) await stopExternal(external.info, healthUrl, o.providerStopWaitMs ?? 15_000, o.log);
    await follower?.stop();
    await managers?.stop();
    await front?.close();
    if (webhook) {
      if (!cp) await removeWebhookConfigurations(loadKubeConfig(remote)).catch(() => undefined);
      await webhook.close();
    }
    await cp?.stop();
  };
  let managers: UpstreamManagers | undefined;
  let follower: LogFollower | undefined;
  let providerLog = o.providerLog;
  try {
    if (capi === 'upstream') {
      // The upstream CRDs instead of the testbed's Cluster API ones, the testbed's webhook, then the managers (upstream.ts).
      const up = await prepareUpstreamCluster(kubeconfig, { ...(o.log ? { log: o.log } : {}), ...(cp ? { keepDir: keepLogs() } : {}) });
      webhook = up.webhook;
      managers = up.managers;
      description += `, admission webhook at ${webhook.url}; Cluster API: upstream v1.10.10 managers (logs in ${managers.dir})`;
    } else await prepareCluster({ ...remote, capi });
    if (capi !== 'upstream' && (o.webhook ?? (o.backend === 'apiserver' || o.webhookHost !== undefined))) {
      webhook = await startAdmissionWebhook({ ...(o.webhookHost ? { host: o.webhookHost } : {}) });
      await installWebhookConfigurations(loadKubeConfig(remote), webhook);
      description += `, admission webhook at ${webhook.url}`;
    }
    if (capi === 'external') description += '; Cluster API: external (none started here)';
    if (provider === 'in-cluster') {
      // The Deployment's own endpoint (address on the kind network, certificate its CA signed), its log into a file.
      const kc = loadKubeConfig(remote);
      front = await startInClusterCloudFront(kc);
      const selector = await waitProviderAvailable(kc, o.providerWaitMs ?? 300_000);
      providerLog ??= join(externalDir, 'provider.log');
      mkdirSync(dirname(providerLog), { recursive: true });
      follower = await followProviderPodLog(kc, selector, providerLog, (m) => o.log?.(m));
      description += `; provider: in-cluster deployment/hcs-controller-manager — mock-hcs served at ${front.url}, its log followed into ${providerLog}`;
      o.log?.(`in-cluster provider: Available; mock-hcs at ${front.url}; log → ${providerLog}`);
    }
    if (provider === 'external') {
      front = await CloudFront.start({ ...(o.cloudPort !== undefined ? { port: o.cloudPort } : {}) });
      const healthPort = await pickHealthPort();
      const files = writeExternalInfo(externalDir, front, remote, { healthPort, copyKubeconfig: !!cp, ...(o.externalReadyFile ? { readyFile: o.externalReadyFile } : {}) });
      external = { info: files.info, envFile: files.env, jsonFile: files.json, readyFile: files.ready };
      description += `; provider: external — mock-hcs at ${front.url} (CA ${files.info.caFile}), AK/SK, project, region, kubeconfig, health address and stop file in ${files.env} and ${files.json}; ready marker ${files.ready}`;
      o.log?.(`external provider: ${files.env} is ready (marker ${files.ready})`);
      if (o.providerHealth) {
        healthUrl = o.providerHealth === 'auto' ? `http://${files.info.healthAddr}/readyz` : o.providerHealth;
        checkHealthPort(healthUrl, { front: front.url, ...(webhook ? { webhook: webhook.url } : {}), ...(cp ? { apiserver: cp.url } : {}) });
        await waitHealthy(healthUrl, o.providerWaitMs ?? 120_000);
      }
    }
  } catch (e) {
    await close();
    throw e;
  }
  const factory = remoteTestbedFactory({
    ...remote,
    prepared: true,
    capi,
    provider,
    ...(o.speed !== undefined ? { speed: o.speed } : {}),
    ...(front ? { cloudFront: front } : {}),
    ...(providerLog ? { providerLog } : {}),
    // Served workload clusters where the cluster's pods reach them, when the Cluster API or the provider runs there.
    ...(o.webhookHost && o.backend === 'kubeconfig' && (capi !== 'embedded' || provider === 'in-cluster') ? { serveHost: o.webhookHost } : {}),
  });
  return { factory, description, ...(external ? { external } : {}), ...(managers ? { managersDir: managers.dir } : {}), close };
}

/**
 * A --provider-health URL on a port of the run's own listeners would answer (or refuse) for them, never for the
 * provider: refused at once, naming the flag, instead of waiting the whole --provider-wait.
 */
export function checkHealthPort(healthUrl: string, own: Record<string, string>): void {
  let u: URL;
  try {
    u = new URL(healthUrl);
  } catch {
    throw new InputError(`--provider-health: not a URL: "${healthUrl}"`, 'provider-health');
  }
  const port = (x: URL): string => x.port || (x.protocol === 'https:' ? '443' : '80');
  for (const [what, url] of Object.entries(own)) {
    if (port(new URL(url)) === port(u)) {
      throw new InputError(`--provider-health ${healthUrl}: port ${port(u)} is this run's own ${what} (${url}); start the provider on HCS_HEALTH_ADDR from provider.env (outside the ephemeral port range ${ephemeralPortRange().join('-')}) and pass --provider-health auto`, 'provider-health');
    }
  }
}

/** The end of a run with an outside provider: create the stop file, then wait (bounded) until its health endpoint is gone. */
async function stopExternal(info: ExternalInfo, healthUrl: string | undefined, timeoutMs: number, log?: (line: string) => void): Promise<void> {
  try {
    writeFileSync(info.stopFile, 'stop\n');
  } catch {
    return; // the directory is gone: nobody to tell
  }
  const url = healthUrl ?? `http://${info.healthAddr}/healthz`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(url, { signal: AbortSignal.timeout(1000) });
    } catch {
      return; // nothing listens any more (or never did): the provider is gone
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  log?.(`external provider: still serving ${url} ${timeoutMs / 1000} s after ${info.stopFile} appeared; stopping the apiserver anyway`);
}

/** Poll an outside controller's health URL until it answers 200. */
async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      if (r.status === 200) return;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new InputError(`the external provider's health endpoint ${url} did not answer 200 within ${timeoutMs / 1000} s (last: ${last})`, 'provider-health');
}
