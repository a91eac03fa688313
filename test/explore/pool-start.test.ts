/**
 * Worker processes that cannot start (src/harness/explore/pool.ts): a worker that
 * exits before it is ready makes the pool move on to its next entry (the
 * bundle's fallback is the sources through tsx), and on the last entry it
 * gives up after MAX_START_FAILURES in a row and answers every job with the
 * reason, instead of starting replacements forever (a broken bundle once
 * made `npm run scenarios` respawn crashing workers without end).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_START_FAILURES, WORKER_EXEC_ARGV, WorkerPool, workerExecArgv } from '../../src/harness/explore/pool.js';

const CRASH = resolve('test/explore/fixtures/crash-worker.mjs');
const LINGER = resolve('test/explore/fixtures/linger-worker.mjs');
const TSX_ENTRY = resolve('src/harness/explore/worker-entry.mjs');
let dir: string;
const starts = (): number => readFileSync(join(dir, 'starts'), 'utf8').trim().split('\n').filter(Boolean).length;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pool-start-'));
  process.env.CRASH_LOG = join(dir, 'starts');
});
afterEach(() => {
  delete process.env.CRASH_LOG;
  rmSync(dir, { recursive: true, force: true });
});

describe('a worker pool whose workers cannot start', () => {
  it('answers every job with the reason after MAX_START_FAILURES failed starts in a row, and starts no more', async () => {
    const pool = new WorkerPool({ jobs: 2, entries: [CRASH] });
    const answers = await Promise.all([
      pool.run({ type: 'explore', file: 'test/explore/fixtures/one-worker-upgrade.yaml', seed: 1, schedule: [] }),
      pool.run({ type: 'explore', file: 'test/explore/fixtures/one-worker-upgrade.yaml', seed: 2, schedule: [] }),
    ]);
    await pool.close();
    for (const a of answers) {
      expect('error' in a && a.error).toMatch(new RegExp(`worker processes cannot start: ${MAX_START_FAILURES} in a row exited \\(last: code 3\\) before they were ready \\(entry .*crash-worker\\.mjs`));
    }
    // A job queued after the pool gave up is answered at once.
    const late = await pool.run({ type: 'explore', file: 'test/explore/fixtures/one-worker-upgrade.yaml', seed: 3, schedule: [] });
    expect('error' in late && late.error).toMatch(/cannot start/);
    // Two slots: the failures in a row reach the limit with at most one start per slot beyond it.
    expect(starts()).toBeGreaterThanOrEqual(MAX_START_FAILURES);
    expect(starts()).toBeLessThanOrEqual(MAX_START_FAILURES + 1);
  }, 60_000);

  it('moves on to the next entry when a worker of the first exits before it is ready (a broken bundle: the sources through tsx)', async () => {
    const pool = new WorkerPool({ jobs: 1, entries: [CRASH, TSX_ENTRY] });
    try {
      const r = await pool.run({ type: 'explore', file: 'test/explore/fixtures/one-worker-upgrade.yaml', seed: 5, schedule: [] });
      expect('summary' in r && r.summary.ok, JSON.stringify(r)).toBe(true);
    } finally {
      await pool.close();
    }
    expect(starts()).toBe(1);
  }, 120_000);
});

describe('closing a pool whose worker is on its way out', () => {
  // Seen in a CI run: a crashed worker's IPC channel was gone before its exit event came, and close()
  // called disconnect() on it, which threw "IPC channel is already disconnected".
  it('close() resolves when a worker has closed its IPC channel but not exited yet', { timeout: 20_000 }, async () => {
    process.env.LINGER_LOG = join(dir, 'linger');
    try {
      const pool = new WorkerPool({ jobs: 1, entries: [LINGER] });
      // bounded wait for the worker's own signal (a process, so wall time is real here)
      for (let i = 0; i < 500 && !existsSync(join(dir, 'linger')); i++) await new Promise((r) => setTimeout(r, 20));
      expect(readFileSync(join(dir, 'linger'), 'utf8')).toBe('disconnected\n');
      await expect(pool.close()).resolves.toBeUndefined();
    } finally {
      delete process.env.LINGER_LOG;
    }
  });
});

describe('profiling the workers (HCS_TESTBED_WORKER_CPU_PROF, docs/performance.md)', () => {
  it('adds --cpu-prof into the folder only when it is set', () => {
    expect(workerExecArgv({})).toEqual(WORKER_EXEC_ARGV);
    expect(workerExecArgv({ HCS_TESTBED_WORKER_CPU_PROF: '/tmp/p' })).toEqual([...WORKER_EXEC_ARGV, '--cpu-prof', '--cpu-prof-dir=/tmp/p']);
  });

  it('each worker writes a V8 CPU profile there when it exits', { timeout: 20_000 }, async () => {
    const prof = join(dir, 'prof');
    process.env.LINGER_LOG = join(dir, 'linger');
    process.env.HCS_TESTBED_WORKER_CPU_PROF = prof;
    try {
      const pool = new WorkerPool({ jobs: 1, entries: [LINGER] });
      // bounded wait for the worker's own signal (a process, so wall time is real here)
      for (let i = 0; i < 500 && !existsSync(join(dir, 'linger')); i++) await new Promise((r) => setTimeout(r, 20));
      await pool.close(); // resolves once the worker has exited
      const files = existsSync(prof) ? readdirSync(prof).filter((f) => f.endsWith('.cpuprofile')) : [];
      expect(files).toHaveLength(1);
      expect(JSON.parse(readFileSync(join(prof, files[0]!), 'utf8'))).toHaveProperty('samples');
    } finally {
      delete process.env.LINGER_LOG;
      delete process.env.HCS_TESTBED_WORKER_CPU_PROF;
    }
  });
});
