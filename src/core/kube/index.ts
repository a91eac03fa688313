export * from './types.js';
export * from './errors.js';
export * from './client.js';
export * from './resources.js';
export * from './patch.js';
export * from './embedded-store.js';
