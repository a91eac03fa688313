export * from './kubectl.js';
export * from './tokenize.js';
