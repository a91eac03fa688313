#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader (no build step needed).
import { setFlagsFromString } from 'node:v8';
import { register } from 'tsx/esm/api';
// TurboFan only for truly hot code: a testbed's fresh objects keep invalidating optimized code, and with V8's
// default budget its background recompilation cost as much CPU as the runs themselves (src/explore/pool.ts, WORKER_EXEC_ARGV).
setFlagsFromString('--interrupt-budget=540672');
register();
const { main } = await import('../src/cli/main.ts');
process.exit(await main(process.argv.slice(2)));
