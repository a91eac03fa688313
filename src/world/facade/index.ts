export * from './server.js';
export * from './tables.js';
export * from './discovery.js';
export * from './controllers.js';
export type { KubeconfigFiles } from './kubeconfig-files.js';
