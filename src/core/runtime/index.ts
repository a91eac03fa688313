export * from './manager.js';
export * from './simulation.js';
export * from './context.js';
