/**
 * Serve a live embedded testbed to the real kubectl:
 *
 *   npx tsx src/facade/serve.ts [--seed 42] [--apply scenarios/manifests/worker-cluster]
 *                               [--port 6443] [--kubeconfig-dir out/kube] [--speed 10]
 *
 * Virtual time advances with wall time (`--speed` virtual seconds per wall
 * second; 0 freezes it), so controllers react to what kubectl changes.
 * Prints the kubeconfig paths; stop with Ctrl-C.
 */
import { resolve } from 'node:path';
import { applyObject, loadManifestPath } from '../manifests/index.js';
import { createTestbed } from '../testbed/index.js';
import { startFacade } from './server.js';

function arg(name: string, def?: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
}

async function main(): Promise<void> {
  const tb = await createTestbed({ seed: Number(arg('seed', '42')) });
  const apply = arg('apply');
  if (apply) for (const m of loadManifestPath(resolve(apply))) await applyObject(tb.env.mgmt, m.obj, m.obj.metadata.namespace);
  await tb.sim.settle();
  const port = Number(arg('port', '0'));
  const dir = arg('kubeconfig-dir');
  const facade = await startFacade({ mgmt: tb.env.mgmt, workloads: tb.env.workloads, logs: tb.env.logs, clock: tb.clock, port, ...(dir ? { kubeconfigDir: resolve(dir) } : {}) });
  const speed = Number(arg('speed', '10'));
  let busy = false;
  let known = tb.env.workloads.names().join();
  const tick = setInterval(() => {
    if (busy || speed <= 0) return;
    busy = true;
    void tb.sim.advance(speed * 100).finally(() => {
      busy = false;
      // New workload clusters get their kubeconfig contexts.
      if (tb.env.workloads.names().join() !== known) {
        known = tb.env.workloads.names().join();
        facade.writeKubeconfig();
        console.log(`workload clusters: ${known}; kubeconfig rewritten`);
      }
    });
  }, 100);
  facade.writeKubeconfig();
  console.log(`facade: ${facade.url}`);
  console.log(`export KUBECONFIG=${facade.kubeconfigPaths.combined}   # contexts: management${Object.keys(facade.kubeconfigPaths.workloads).map((k) => `, ${k.split('/')[1]}`).join('')}`);
  process.on('SIGINT', () => {
    clearInterval(tick);
    void facade.close().then(() => tb.close()).then(() => process.exit(0));
  });
}

void main();
