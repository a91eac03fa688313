// The Stryker plugin entry (stryker.config.mjs `plugins`): Stryker imports plugins as JavaScript, so this registers
// tsx and hands over test/mutation/scenario-runner.ts, the scenario library as a Stryker test runner.
import { register } from 'tsx/esm/api';

register();
export const { strykerPlugins } = await import('./scenario-runner.ts');
