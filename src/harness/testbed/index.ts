export * from '../../world/embedded.js';
export * from './testbed.js';
