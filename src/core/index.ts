export * from './clock.js';
export * from './rng.js';
export * from './events.js';
export * from './errors.js';
