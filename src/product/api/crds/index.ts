export * from '../../../core/kube/schema.js';
export * from './definitions.js';
export * from './install.js';
