export * from './source.js';
export * from './manifests.js';
