/**
 * Start a real management cluster (etcd + kube-apiserver, built by
 * tools/kube/build.sh) with the testbed's CRDs, write its kubeconfig and run
 * until interrupted:
 *
 *   tools/kube/build.sh
 *   npx tsx src/realcluster/serve.ts [--kubeconfig out/real/kubeconfig] [--namespace cpaas-system] [--watch-cache]
 *   KUBECONFIG=out/real/kubeconfig kubectl get crd
 *
 * Ctrl-C (SIGINT/SIGTERM) stops both processes and removes the temp dir.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startControlPlane } from './apiserver.js';
import { ensureNamespaces, installCrds, loadKubeconfig } from './crds.js';

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      kubeconfig: { type: 'string', default: 'out/real/kubeconfig' },
      namespace: { type: 'string', multiple: true, default: ['cpaas-system'] },
      'watch-cache': { type: 'boolean', default: false },
    },
  });
  const t0 = Date.now();
  const cp = await startControlPlane({ watchCache: values['watch-cache'] });
  const stop = async (): Promise<void> => {
    await cp.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  try {
    const kc = loadKubeconfig(cp.kubeconfigPath);
    await installCrds(kc);
    await ensureNamespaces(kc, values.namespace);
    const out = resolve(values.kubeconfig);
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(cp.kubeconfigPath, out);
    process.stdout.write(`kube-apiserver ${cp.url} ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (etcd ${cp.etcdUrl}, logs in ${cp.dir})\nexport KUBECONFIG=${out}\n`);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    await cp.stop();
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) void serve(process.argv.slice(2));
