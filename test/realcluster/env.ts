/**
 * Shared setup of the real-cluster tests: one etcd + kube-apiserver per test
 * file (started on first use, stopped after the file), the testbed's CRDs
 * installed and the admission rules served by the admission webhook
 * (src/harness/realcluster/apiserver/webhook.ts), as src/harness/realcluster/apiserver/serve.ts runs them.
 * Skipped, with the reason in the suite name, when the binaries are not
 * built (tools/kube/build.sh) or HCS_TESTBED_KUBE_BIN is unset.
 */
import { afterAll } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../src/harness/realcluster/apiserver/apiserver.js';
import { findKubeBinaries } from '../../src/harness/realcluster/apiserver/binaries.js';
import { ensureNamespaces, installCrds, loadKubeconfig } from '../../src/harness/realcluster/apiserver/crds.js';
import { installWebhookConfigurations, startAdmissionWebhook, type AdmissionWebhook } from '../../src/harness/realcluster/apiserver/webhook.js';

const found = findKubeBinaries();
/** Why the real-cluster tests are skipped, or undefined when they run. */
export const skipReason: string | undefined = 'missing' in found ? found.missing : undefined;
/** Suffix for describe() names, so the skip reason shows in the test report. */
export const suiteSuffix = skipReason ? ` [skipped: ${skipReason}]` : '';

let cp: Promise<ControlPlane> | undefined;
let webhook: AdmissionWebhook | undefined;

/** The file's control plane, with CRDs and the admission webhook installed and the given namespaces created. */
export function realCluster(namespaces: string[] = []): Promise<ControlPlane> {
  cp ??= (async () => {
    const c = await startControlPlane();
    try {
      const kc = loadKubeconfig(c.kubeconfigPath);
      await installCrds(kc);
      webhook = await startAdmissionWebhook();
      await installWebhookConfigurations(kc, webhook);
      return c;
    } catch (e) {
      await c.stop();
      await webhook?.close();
      throw e;
    }
  })();
  return cp.then(async (c) => {
    if (namespaces.length) await ensureNamespaces(loadKubeconfig(c.kubeconfigPath), namespaces);
    return c;
  });
}

afterAll(async () => {
  if (cp) await (await cp.catch(() => undefined))?.stop();
  await webhook?.close();
}, 30_000);
