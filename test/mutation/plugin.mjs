// The Stryker plugin entry (stryker.config.mjs `plugins`): Stryker imports plugins as JavaScript, so this registers
// tsx and hands over test/mutation/scenario-runner.ts, the scenario library as a Stryker test runner, and
// test/mutation/progress-reporter.ts, each verdict written as it comes.
import { register } from 'tsx/esm/api';

register();
const runner = await import('./scenario-runner.ts');
const progress = await import('./progress-reporter.ts');
export const strykerPlugins = [...runner.strykerPlugins, ...progress.strykerPlugins];
