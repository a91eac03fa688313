/**
 * `run --jobs`: a worker's failure is not a scenario's verdict (src/harness/cli/jobs.ts).
 * A scenario whose run on a worker gave no verdict (the worker exited, stalled,
 * or the testbed did not start) is run once more, and the outcome says why; a
 * second failure is given as the outcome, still with the first reason. An
 * input error is a verdict and is not run again. (A CI run once failed the
 * library on one scenario answered "internal error" by a worker, with 0 events.)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runParallel, workerFailure, type Outcome } from '../../src/harness/cli/jobs.js';
import { WorkerPool } from '../../src/harness/explore/pool.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';

const DYING = resolve('test/cli/fixtures/dying-worker.mjs');
const SCENARIO = loadScenario('scenarios/create-cluster.yaml');
let dir: string;
const runs = (): string[] => (existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8').trim().split('\n') : []);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'jobs-retry-'));
  process.env.DYING_LOG = join(dir, 'log');
});
afterEach(() => {
  delete process.env.DYING_LOG;
  delete process.env.DYING_MODE;
  rmSync(dir, { recursive: true, force: true });
});

async function runWith(mode: string): Promise<Outcome> {
  process.env.DYING_MODE = mode;
  const pool = new WorkerPool({ jobs: 1, entries: [DYING] });
  try {
    const outs = await runParallel([SCENARIO, { ...SCENARIO, name: 'second' }], { jobs: 1, pool }, () => {});
    return outs[0]!;
  } finally {
    await pool.close();
  }
}

describe('run --jobs: a worker that gives no verdict', () => {
  it('a worker that exits mid-run: the scenario runs again on the replacement and its verdict is given, with the reason', async () => {
    const out = await runWith('first-exits');
    expect('result' in out && out.result.ok).toBe(true);
    expect(out.retried).toBe('the worker process exited (code 7) during the run');
    expect(runs()).toEqual([SCENARIO.name, SCENARIO.name, 'second']);
  }, 60_000);

  it('a stalled worker (answered with a summary): run again, the stall named', async () => {
    const out = await runWith('stall');
    expect('result' in out && out.result.ok).toBe(true);
    expect(out.retried).toMatch(/^the worker gave up on the run: stall: the run stopped making progress \(no event for 60s\)$/);
  }, 60_000);

  it('a worker that dies every time: run twice, then given as an error with the first reason', async () => {
    const out = await runWith('always-exits');
    expect('error' in out && out.error).toBe('the worker process exited (code 7) during the run');
    expect(out.retried).toBe('the worker process exited (code 7) during the run');
    expect(runs().filter((n) => n === SCENARIO.name)).toHaveLength(2);
  }, 60_000);

  it('a testbed that did not start is run again too; a second failure is the verdict', async () => {
    const out = await runWith('no-start');
    expect('result' in out && out.result.ok).toBe(false);
    expect(out.retried).toBe('the testbed did not start: boom');
    expect(runs().filter((n) => n === SCENARIO.name)).toHaveLength(2);
  }, 60_000);

  it('an input error is a verdict: not run again', async () => {
    const out = await runWith('input');
    expect('error' in out && out.input).toBe(true);
    expect(out.retried).toBeUndefined();
    expect(runs()).toEqual([SCENARIO.name, 'second']);
  }, 60_000);

  it('a scenario that failed in a step is a verdict, not a worker failure', () => {
    const step = { index: 3, kind: 'wait' as const, title: 'wait', line: 9, ok: false, startMs: 0, endMs: 0, detail: [], error: 'timed out', rules: [] };
    const result = { scenario: SCENARIO, seed: 1, ok: false, steps: [step], events: [], virtualMs: 0, wallMs: 0, rulesExercised: [], violations: [] };
    expect(workerFailure({ result })).toBeUndefined();
    expect(workerFailure({ result: { ...result, steps: [{ ...step, index: 0, error: 'the testbed did not start: x' }] } })).toBe('the testbed did not start: x');
  });
});
