import { contractStore, kubeClientContract } from './contract.js';

kubeClientContract('embedded store', async () => ({ client: contractStore(), remote: false, close: async () => {} }));
