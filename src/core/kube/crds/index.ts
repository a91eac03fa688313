export * from './schema.js';
export * from './definitions.js';
export * from './install.js';
