/**
 * Testbed plugins: a module that adjusts every testbed a run builds — the
 * way a planted bug (a mutant provider part, see test/explore/mutant-plugin.ts)
 * reaches explore's worker processes and `hcs-testbed run --plugin`.
 *
 * A plugin module exports (named or as its default export):
 *   options?(): TestbedOptions without the seed   — e.g. { diskClaimer: ... }
 *   prepare?(testbed): void                       — called on each fresh testbed before the scenario runs
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError } from '../../core/errors.js';
import type { TestbedFactory } from '../scenario/runner.js';
import { createTestbed, type Testbed, type TestbedOptions } from '../testbed/testbed.js';
import { createReplayTestbed, readBundleFile } from '../capture/replay.js';
import type { MockHcsAppPool } from '../../../mock-hcs/src/index.js';

export interface TestbedPlugin {
  options?(): Omit<TestbedOptions, 'seed'>;
  prepare?(tb: Testbed): void;
}

export async function loadPlugin(path: string): Promise<TestbedPlugin> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (e) {
    throw new InputError(`cannot load testbed plugin: ${(e as Error).message}`, path);
  }
  const p = (typeof mod.default === 'object' && mod.default !== null ? mod.default : mod) as TestbedPlugin;
  if (typeof p.options !== 'function' && typeof p.prepare !== 'function') throw new InputError('a testbed plugin exports options() and/or prepare(testbed)', path);
  return p;
}

/**
 * Embedded testbeds with the plugin applied; `onTestbed` sees each one (profiles, snapshots). `appPool`: their
 * mock-hcs apps come from it and go back to it (a worker keeps one pool for all its runs; TestbedOptions.appPool).
 */
export function embeddedFactory(plugin?: TestbedPlugin, onTestbed?: (tb: Testbed) => void, appPool?: MockHcsAppPool): TestbedFactory {
  return async (seed, scenario) => {
    const options = { ...(plugin?.options?.() ?? {}), ...(appPool ? { appPool } : {}), seed };
    // A scenario with `from:` starts from its captured bundle (issue 35), with the plugin's options too.
    const tb = scenario?.from ? await createReplayTestbed(readBundleFile(scenario.from), options) : await createTestbed(options);
    plugin?.prepare?.(tb);
    onTestbed?.(tb);
    return tb;
  };
}
