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
 * On a real cluster uids, generated names and the order in which watch
 * events interleave come from the apiserver, so event logs are not
 * byte-identical between runs; verdicts are what compares (see
 * test/realcluster/library.test.ts).
 */
import { InputError } from '../core/errors.js';
import { startControlPlane, type ControlPlane } from '../realcluster/apiserver.js';
import { findKubeBinaries } from '../realcluster/binaries.js';
import { installWebhookConfigurations, removeWebhookConfigurations, startAdmissionWebhook, type AdmissionWebhook } from '../realcluster/webhook.js';
import type { TestbedFactory } from '../scenario/runner.js';
import { loadKubeConfig, prepareCluster, remoteTestbedFactory } from './remote.js';
import { embeddedTestbedFactory } from './testbed.js';

export const BACKENDS = ['embedded', 'kubeconfig', 'apiserver'] as const;
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
}

export interface OpenBackend {
  factory: TestbedFactory;
  /** One line for the console ("kube-apiserver v1.33.13 at https://127.0.0.1:34567"). */
  description: string;
  close(): Promise<void>;
}

function defaultKubeconfig(): string {
  const env = process.env.KUBECONFIG?.split(':')[0];
  return env || `${process.env.HOME ?? ''}/.kube/config`;
}

export async function openBackend(o: BackendOptions): Promise<OpenBackend> {
  if (o.backend === 'embedded') return { factory: embeddedTestbedFactory(), description: 'embedded management cluster', close: async () => {} };
  let cp: ControlPlane | undefined;
  let webhook: AdmissionWebhook | undefined;
  let kubeconfig: string;
  let description: string;
  if (o.backend === 'apiserver') {
    const found = findKubeBinaries();
    if ('missing' in found) throw new InputError(`--backend apiserver needs the kube-apiserver and etcd binaries: ${found.missing} (build them with tools/kube/build.sh)`, 'backend');
    cp = await startControlPlane({ binaries: found });
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
  const close = async (): Promise<void> => {
    if (webhook) {
      if (!cp) await removeWebhookConfigurations(loadKubeConfig(remote)).catch(() => undefined);
      await webhook.close();
    }
    await cp?.stop();
  };
  try {
    await prepareCluster(remote);
    if (o.webhook ?? (o.backend === 'apiserver' || o.webhookHost !== undefined)) {
      webhook = await startAdmissionWebhook({ ...(o.webhookHost ? { host: o.webhookHost } : {}) });
      await installWebhookConfigurations(loadKubeConfig(remote), webhook);
      description += `, admission webhook at ${webhook.url}`;
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { factory: remoteTestbedFactory({ ...remote, prepared: true }), description, close };
}
