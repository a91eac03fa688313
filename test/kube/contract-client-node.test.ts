import { VirtualClock } from '../../src/core/clock.js';
import { startFacade } from '../../src/world/facade/index.js';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import { contractStore, kubeClientContract } from './contract.js';

kubeClientContract('client-node backend → HTTP facade', async () => {
  const store = contractStore();
  // The namespaces the contract writes into exist, as on the real kube-apiserver (test/realcluster/contract.test.ts):
  // the facade refuses a create into a missing namespace (NamespaceLifecycle, src/world/facade/server.ts).
  for (const name of ['contract', 'other']) await store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const facade = await startFacade({ mgmt: store, clock: new VirtualClock(Date.UTC(2026, 0, 1)) });
  return { client: ClientNodeKube.fromKubeconfig(facade.kubeconfigPath), remote: true, close: () => facade.close() };
});
