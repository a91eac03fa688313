export * from './capi.js';
export * from './hcs.js';
export * from './core.js';
