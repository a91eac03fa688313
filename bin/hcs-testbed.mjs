#!/usr/bin/env node
// The hcs-testbed CLI: src/harness/cli/main.ts, from its precompiled bundle (src/harness/cli/cli-bundle.ts) when it is up to
// date with the sources (rebuilt here when one changed), else the TypeScript through tsx's loader.
import { setFlagsFromString } from 'node:v8';
import { pathToFileURL } from 'node:url';
import { freshBundle } from '../src/harness/bundle/fresh.mjs';
// TurboFan only for truly hot code: a testbed's fresh objects keep invalidating optimized code, and with V8's
// default budget its background recompilation cost as much CPU as the runs themselves (src/harness/explore/pool.ts, WORKER_EXEC_ARGV).
setFlagsFromString('--interrupt-budget=540672');
const argv = process.argv.slice(2);

async function fromSources() {
  const { register } = await import('tsx/esm/api');
  register();
  return (await import('../src/harness/cli/main.ts')).main;
}

/** main from the bundle: undefined with a --plugin (TypeScript importing the sources), HCS_TESTBED_CLI_TSX=1, or no bundle to be had. */
async function fromBundle() {
  if (process.env.HCS_TESTBED_CLI_TSX === '1' || argv.some((a) => a === '--plugin' || a.startsWith('--plugin='))) return undefined;
  let entry = freshBundle('cli');
  if (!entry) {
    try {
      const { register } = await import('tsx/esm/api');
      register();
      entry = await (await import('../src/harness/cli/cli-bundle.ts')).ensureCliBundle();
    } catch (e) {
      process.stderr.write(`hcs-testbed: the CLI's bundle could not be built (${e instanceof Error ? e.message : String(e)}); running the sources through tsx\n`);
      return undefined;
    }
  }
  if (!entry) return undefined;
  try {
    const main = (await import(pathToFileURL(entry).href)).default.main;
    return typeof main === 'function' ? main : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `time` and `status` are one HTTP call to a running serve: run them from the small `lite` bundle (src/harness/cli/lite.ts),
 * not the full CLI (whose start cost 2–3.5 s a call). Undefined: not such a command, or no lite bundle to be had.
 */
async function fromLite() {
  if (argv[0] !== 'time' && argv[0] !== 'status') return undefined;
  if (process.env.HCS_TESTBED_CLI_TSX === '1') return undefined;
  let entry = freshBundle('lite');
  if (!entry) {
    try {
      const { register } = await import('tsx/esm/api');
      register();
      entry = await (await import('../src/harness/cli/cli-bundle.ts')).ensureLiteBundle();
    } catch {
      return undefined;
    }
  }
  if (!entry) return undefined;
  try {
    const main = (await import(pathToFileURL(entry).href)).default.main;
    return typeof main === 'function' ? main : undefined;
  } catch {
    return undefined;
  }
}

const lite = await fromLite();
if (lite) process.exit(await lite(argv));
const main = (await fromBundle()) ?? (await fromSources());
process.exit(await main(argv));
