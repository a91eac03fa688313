/**
 * The KubeClient contract (test/kube/contract.ts) through the client-node
 * backend against a real kube-apiserver + etcd. Differences of a bare
 * apiserver are capabilities of the backend, not exceptions in the suite:
 * no garbage collector (no kube-controller-manager, as in envtest), and
 * expiry of old resourceVersions by compacting etcd instead of a short
 * history.
 */
import { describe, it } from 'vitest';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { kubeClientContract } from '../kube/contract.js';
import { realCluster, skipReason, suiteSuffix } from './env.js';

const NAMESPACES = ['contract', 'other'];
const KINDS = ['MachineDeployment', 'HCSMachineTemplate', 'Secret'];

/** Remove what a contract test left behind (finalizers first), so the next one starts clean. */
async function clean(c: ClientNodeKube): Promise<void> {
  for (const kind of KINDS) {
    for (const namespace of NAMESPACES) {
      for (const o of await c.list<KubeObject>(kind, { namespace })) {
        const ref = { kind, namespace, name: o.metadata.name };
        if (o.metadata.finalizers?.length) await c.patch(ref, 'merge', { metadata: { finalizers: null } }).catch(() => undefined);
        await c.delete(ref, { ignoreNotFound: true });
      }
    }
  }
}

if (skipReason) {
  describe.skip(`KubeClient contract: client-node backend → real kube-apiserver${suiteSuffix}`, () => {
    it('needs the real binaries', () => {});
  });
} else {
  kubeClientContract('client-node backend → real kube-apiserver', async () => {
    const cp = await realCluster(NAMESPACES);
    const client = ClientNodeKube.fromKubeconfig(cp.kubeconfigPath);
    await clean(client);
    return {
      client,
      remote: true,
      garbageCollection: false,
      expire: async () => {
        await cp.compact();
      },
      close: () => clean(client),
    };
  });
}
