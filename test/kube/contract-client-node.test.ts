import { VirtualClock } from '../../src/core/clock.js';
import { startFacade } from '../../src/facade/index.js';
import { ClientNodeKube } from '../../src/kube/client-node.js';
import { contractStore, kubeClientContract } from './contract.js';

kubeClientContract('client-node backend → HTTP facade', async () => {
  const store = contractStore();
  const facade = await startFacade({ mgmt: store, clock: new VirtualClock(Date.UTC(2026, 0, 1)) });
  return { client: ClientNodeKube.fromKubeconfig(facade.kubeconfigPath), remote: true, close: () => facade.close() };
});
