/**
 * The workers' precompiled bundle (src/explore/worker-bundle.ts): built from
 * the sources, rebuilt when an input changes, each module keeping its own
 * import.meta.url, and a run in a bundled worker writes the event log of a run
 * through tsx byte for byte (determinism; the start-up times are printed by
 * `npm run bench -- explore`, never asserted).
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../src/explore/pool.js';
import { BUNDLE, BUNDLE_MANIFEST, ensureWorkerBundle } from '../../src/explore/worker-bundle.js';

const FIXTURE = 'test/explore/fixtures/one-worker-upgrade.yaml';

afterEach(() => {
  delete process.env.HCS_TESTBED_WORKER_TSX;
});

describe('the explore/--jobs worker bundle', () => {
  it('is built from the sources with a manifest of every input and its sha256; import.meta.url stays the source file\'s', async () => {
    expect(await ensureWorkerBundle()).toBe(BUNDLE);
    const m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, string> };
    for (const f of ['src/explore/worker.ts', 'src/scenario/runner.ts', 'src/scenario/parse.ts', 'mock-hcs/src/index.ts']) {
      expect(m.inputs[f], f).toBe(createHash('sha256').update(readFileSync(f)).digest('hex'));
    }
    const code = readFileSync(BUNDLE, 'utf8');
    expect(code).not.toContain('import.meta.url');
    expect(code).toContain(JSON.stringify(pathToFileURL(resolve('src/scenario/parse.ts')).href));
  });

  it('is rebuilt when an input no longer matches its recorded hash', async () => {
    await ensureWorkerBundle();
    const m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, string> };
    m.inputs['src/explore/worker.ts'] = '0'.repeat(64);
    writeFileSync(BUNDLE_MANIFEST, JSON.stringify(m));
    const before = statSync(BUNDLE).mtimeMs;
    await new Promise((r) => setTimeout(r, 20)); // a later mtime for the rebuilt file
    expect(await ensureWorkerBundle()).toBe(BUNDLE);
    expect(statSync(BUNDLE).mtimeMs).toBeGreaterThan(before);
    expect((JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, string> }).inputs['src/explore/worker.ts']).toBe(
      createHash('sha256').update(readFileSync('src/explore/worker.ts')).digest('hex'),
    );
  });

  it('a run in a bundled worker has the same event log as one through tsx', async () => {
    const hashes: string[] = [];
    for (const tsx of [false, true]) {
      if (tsx) process.env.HCS_TESTBED_WORKER_TSX = '1';
      const pool = new WorkerPool({ jobs: 1 });
      try {
        const r = await pool.run({ type: 'explore', file: FIXTURE, seed: 5, schedule: [] });
        expect('summary' in r && r.summary.ok, JSON.stringify(r)).toBe(true);
        hashes.push('summary' in r ? r.summary.eventsHash : '');
      } finally {
        await pool.close();
      }
    }
    expect(hashes[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(hashes[1]).toBe(hashes[0]);
  }, 120_000);
});
