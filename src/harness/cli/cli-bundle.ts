/**
 * The `hcs-testbed` CLI as one precompiled file (src/harness/bundle/build.ts), which
 * bin/hcs-testbed.mjs loads instead of the sources through tsx: `--help`
 * took ~1.8 s of wall time (2.5 s of CPU) through tsx, ~0.3 s from the
 * bundle with its code cache, and every command starts that much sooner
 * (`npm run bench -- cli` prints both).
 *
 * bin/hcs-testbed.mjs uses the sources through tsx instead when a
 * `--plugin` is given (a plugin is TypeScript importing the sources: with the
 * bundle they would be loaded twice) or HCS_TESTBED_CLI_TSX=1 is set.
 */
import { ensureBundle, freshBundle } from '../bundle/build.js';

export const CLI_BUNDLE = {
  name: 'cli',
  source: 'src/harness/cli/main.ts',
  // esbuild finds its binary from its own package; tsx registers its loader from its own files.
  external: ['esbuild', 'tsx', 'tsx/*'],
};

/** `time` and `status` (src/harness/cli/lite.ts): one HTTP call each, without the testbed's start-up. */
export const LITE_BUNDLE = { name: 'lite', source: 'src/harness/cli/lite.ts', external: [] as string[] };

/** The lite bundle's entry, built now when its sources changed; undefined when it cannot be had. */
export function ensureLiteBundle(): Promise<string | undefined> {
  return ensureBundle(LITE_BUNDLE);
}

/** The CLI bundle's entry, built now when the sources changed; undefined when it cannot be had. */
export function ensureCliBundle(): Promise<string | undefined> {
  return ensureBundle(CLI_BUNDLE);
}

export { freshBundle };
