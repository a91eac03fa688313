/**
 * Start a real management cluster (etcd + kube-apiserver, built by
 * tools/kube/build.sh) with the testbed's CRDs and its admission webhook
 * (src/harness/realcluster/apiserver/webhook.ts: every rule of src/admission, as the embedded
 * store enforces them), write its kubeconfig and run until interrupted:
 *
 *   tools/kube/build.sh
 *   npx tsx src/harness/realcluster/apiserver/serve.ts [--kubeconfig out/real/kubeconfig] [--namespace cpaas-system] [--watch-cache] [--no-webhook]
 *   KUBECONFIG=out/real/kubeconfig kubectl get crd
 *
 * Or serve only the admission webhook for a cluster that runs elsewhere
 * (kind: the apiserver runs in a container and must reach this host):
 *
 *   npx tsx src/harness/realcluster/apiserver/serve.ts --attach out/kind/kubeconfig --webhook-host 172.18.0.1
 *
 * Ctrl-C (SIGINT/SIGTERM) stops what was started (with --attach: removes the
 * webhook configurations, which would otherwise block writes with
 * failurePolicy Fail).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startControlPlane, type ControlPlane } from './apiserver.js';
import { ensureNamespaces, installCrds, loadKubeconfig } from './crds.js';
import { installWebhookConfigurations, removeWebhookConfigurations, startAdmissionWebhook, type AdmissionWebhook } from './webhook.js';

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      kubeconfig: { type: 'string', default: 'out/real/kubeconfig' },
      namespace: { type: 'string', multiple: true, default: ['cpaas-system'] },
      'watch-cache': { type: 'boolean', default: false },
      /** Serve the admission webhook and install its configurations (default). */
      webhook: { type: 'boolean', default: true },
      'no-webhook': { type: 'boolean', default: false },
      /** Address the apiserver reaches the webhook at (default 127.0.0.1); for kind, the Docker network's gateway or host.docker.internal. */
      'webhook-host': { type: 'string', default: '127.0.0.1' },
      'webhook-port': { type: 'string', default: '0' },
      /** Listen address of the webhook (default: --webhook-host when it is an IP, 0.0.0.0 otherwise). */
      'webhook-listen': { type: 'string' },
      /** An existing cluster's kubeconfig: start no apiserver, serve the webhook for that cluster. */
      attach: { type: 'string' },
    },
  });
  const withWebhook = values.webhook && !values['no-webhook'];
  if (values.attach && !withWebhook) {
    process.stderr.write('--attach serves the admission webhook; it cannot be combined with --no-webhook\n');
    process.exit(2);
  }
  const t0 = Date.now();
  let cp: ControlPlane | undefined;
  let webhook: AdmissionWebhook | undefined;
  const attached = values.attach ? loadKubeconfig(resolve(values.attach)) : undefined;
  const stop = async (code: number): Promise<void> => {
    if (attached && webhook) await removeWebhookConfigurations(attached).catch((e: unknown) => process.stderr.write(`removing the webhook configurations: ${(e as Error).message}\n`));
    await cp?.stop();
    await webhook?.close();
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  try {
    if (!attached) cp = await startControlPlane({ watchCache: values['watch-cache'] });
    const kc = attached ?? loadKubeconfig(cp!.kubeconfigPath);
    if (cp) {
      await installCrds(kc);
      await ensureNamespaces(kc, values.namespace);
    }
    if (withWebhook) {
      webhook = await startAdmissionWebhook({ host: values['webhook-host'], port: Number(values['webhook-port']), ...(values['webhook-listen'] ? { listen: values['webhook-listen'] } : {}) });
      await installWebhookConfigurations(kc, webhook);
    }
    const hook = webhook ? `admission webhook ${webhook.url} in effect` : 'no admission webhook (only the CEL rules of the CRDs are enforced)';
    if (cp) {
      const out = resolve(values.kubeconfig);
      mkdirSync(dirname(out), { recursive: true });
      copyFileSync(cp.kubeconfigPath, out);
      process.stdout.write(`kube-apiserver ${cp.url} ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (etcd ${cp.etcdUrl}, logs in ${cp.dir}); ${hook}\nexport KUBECONFIG=${out}\n`);
    } else {
      process.stdout.write(`${hook} for ${kc.getCurrentCluster()?.server ?? values.attach} (${((Date.now() - t0) / 1000).toFixed(1)} s); Ctrl-C removes it\n`);
    }
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    await stop(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) void serve(process.argv.slice(2));
