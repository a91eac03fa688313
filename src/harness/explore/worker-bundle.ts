/**
 * The worker processes' code as one precompiled JavaScript file (src/harness/bundle/build.ts),
 * so that a worker starts without tsx.
 *
 * Through tsx (worker-entry.mjs) every start resolved and transpiled the ~140
 * TypeScript modules a run needs: about 1 s of CPU per worker; from the
 * bundle with its V8 code cache ~0.2 s (bench/explore.ts prints both). As
 * separate modules, resolving, reading and compiling fastify, yaml and the
 * Ajv compiler alone took ~0.3 s of CPU per worker, half the run of a short
 * scenario, so the npm packages are in the bundle too.
 *
 * Testbed plugins (`--plugin`) are TypeScript modules importing the sources,
 * so a pool with a plugin always uses the tsx entry.
 */
import { join } from 'node:path';
import { bundlePaths, CACHE_DIR, ensureBundle, readManifest } from '../bundle/build.js';

const SPEC = { name: 'explore-worker', source: 'src/harness/explore/worker.ts' };

/** The entry a pool forks: loads the code file with V8's code cache. */
export const BUNDLE = bundlePaths(SPEC.name).entry;
export const BUNDLE_MANIFEST = bundlePaths(SPEC.name).manifest;

/** The code file of the current bundle (what BUNDLE runs), or undefined when there is none. */
export function bundleCodeFile(): string | undefined {
  const m = readManifest(SPEC.name);
  return m ? join(CACHE_DIR, m.code) : undefined;
}

let pending: Promise<string | undefined> | undefined;

/**
 * The path of an up-to-date bundle of the worker (built now if needed), or
 * undefined when it cannot be had (then use worker-entry.mjs). Checked and
 * built at most once per process.
 */
export function workerBundle(): Promise<string | undefined> {
  if (process.env.HCS_TESTBED_WORKER_TSX === '1') return Promise.resolve(undefined); // debugging: always the sources through tsx
  pending ??= ensureWorkerBundle().catch((e: unknown) => {
    // Not silent: a bundle that cannot be built is a bug to see (the workers still run, through tsx, only slower).
    process.stderr.write(`hcs-testbed: the workers' bundle could not be built (${e instanceof Error ? e.message : String(e)}); workers run the sources through tsx\n`);
    return undefined;
  });
  return pending;
}

/** Check the cached bundle against its inputs and rebuild it if any changed (every call; workerBundle() does it once per process). */
export function ensureWorkerBundle(): Promise<string | undefined> {
  return ensureBundle(SPEC);
}
