export * from './embedded.js';
export * from './testbed.js';
