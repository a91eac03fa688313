/**
 * The workers' precompiled bundle (src/harness/explore/worker-bundle.ts, src/harness/bundle/build.ts): built from
 * the sources, rebuilt when an input changes, each module keeping its own
 * import.meta.url, compiled with a V8 code cache that the first worker writes
 * and the next ones use, and a run in a bundled worker writes the event log
 * of a run through tsx byte for byte (determinism; the start-up times are
 * printed by `npm run bench -- explore`, never asserted).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../src/harness/explore/pool.js';
import { BUNDLE, BUNDLE_MANIFEST, bundleCodeFile, ensureWorkerBundle } from '../../src/harness/explore/worker-bundle.js';
import { freshBundle } from '../../src/harness/bundle/build.js';
import type { InputRecord } from '../../src/harness/bundle/fresh.mjs';

const FIXTURE = 'test/explore/fixtures/one-worker-upgrade.yaml';

afterEach(() => {
  delete process.env.HCS_TESTBED_WORKER_TSX;
});

describe('the explore/--jobs worker bundle', () => {
  it('is built from the sources with a manifest of every input, its sha256, size and mtime; import.meta.url stays the source file\'s', async () => {
    expect(await ensureWorkerBundle()).toBe(BUNDLE);
    const m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, InputRecord> };
    for (const f of ['src/harness/explore/worker.ts', 'src/harness/scenario/runner.ts', 'src/harness/scenario/parse.ts', 'mock-hcs/src/index.ts', 'node_modules/fastify/fastify.js']) {
      expect(m.inputs[f]?.sha256, f).toBe(createHash('sha256').update(readFileSync(f)).digest('hex'));
      expect(m.inputs[f]?.size, f).toBe(statSync(f).size);
      expect(m.inputs[f]?.mtimeMs, f).toBe(statSync(f).mtimeMs);
    }
    const codeFile = bundleCodeFile()!;
    expect(readFileSync(BUNDLE, 'utf8')).toContain(JSON.stringify(codeFile));
    const code = readFileSync(codeFile, 'utf8');
    expect(code).not.toContain('import.meta.url');
    expect(code).toContain(JSON.stringify(pathToFileURL(resolve('src/core/repo.ts')).href)); // REPO_ROOT's import.meta.url
  });

  it('is taken as it is when an input\'s mtime moved but its content did not (a fresh clone)', async () => {
    await ensureWorkerBundle();
    const m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, InputRecord> };
    m.inputs['src/harness/explore/worker.ts']!.mtimeMs = 1;
    writeFileSync(BUNDLE_MANIFEST, JSON.stringify(m));
    expect(freshBundle('explore-worker')).toBe(BUNDLE);
    m.inputs['src/harness/explore/worker.ts']!.sha256 = '0'.repeat(64);
    writeFileSync(BUNDLE_MANIFEST, JSON.stringify(m));
    expect(freshBundle('explore-worker')).toBeUndefined();
  });

  it('is rebuilt when an input no longer matches its recorded hash', async () => {
    await ensureWorkerBundle();
    const m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, InputRecord> };
    m.inputs['src/harness/explore/worker.ts'] = { sha256: '0'.repeat(64), size: statSync('src/harness/explore/worker.ts').size, mtimeMs: 1 };
    writeFileSync(BUNDLE_MANIFEST, JSON.stringify(m));
    const before = statSync(BUNDLE).mtimeMs;
    const stale = bundleCodeFile()!.replace(/-[0-9a-f]+\.cjs$/, '-0123456789abcdef01234567.cjs');
    writeFileSync(stale, '// an earlier build');
    writeFileSync(stale.replace(/\.cjs$/, '.v8cache'), 'earlier');
    await new Promise((r) => setTimeout(r, 20)); // a later mtime for the rebuilt file
    expect(await ensureWorkerBundle()).toBe(BUNDLE);
    expect(statSync(BUNDLE).mtimeMs).toBeGreaterThan(before);
    // Earlier builds' code and caches are removed.
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(stale.replace(/\.cjs$/, '.v8cache'))).toBe(false);
    expect((JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, InputRecord> }).inputs['src/harness/explore/worker.ts']?.sha256).toBe(
      createHash('sha256').update(readFileSync('src/harness/explore/worker.ts')).digest('hex'),
    );
  });

  it('the CLI from its own bundle rebuilds a stale worker bundle whose workers then start (no fallback to tsx)', async () => {
    // The bundler is itself inside the CLI's bundle: its import.meta.url rewrite once rewrote its own pattern there,
    // and every worker bundle the CLI rebuilt crashed on start (src/harness/bundle/build.ts, IMPORT_META_URL).
    await ensureWorkerBundle();
    const m = JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, InputRecord> };
    m.inputs['src/harness/explore/worker.ts'] = { sha256: '0'.repeat(64), size: statSync('src/harness/explore/worker.ts').size, mtimeMs: 1 };
    writeFileSync(BUNDLE_MANIFEST, JSON.stringify(m));
    const r = await new Promise<{ code: number; stderr: string }>((done) =>
      execFile(process.execPath, ['bin/hcs-testbed.mjs', 'run', 'scenarios/create-cluster.yaml', 'scenarios/invalid-manifests.yaml', '--jobs', '2', '--no-color', '--out', 'out/test-worker-rebuild'], { timeout: 120_000 }, (err, _stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
      ),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('workers now start from');
    expect((JSON.parse(readFileSync(BUNDLE_MANIFEST, 'utf8')) as { inputs: Record<string, InputRecord> }).inputs['src/harness/explore/worker.ts']?.sha256).toBe(
      createHash('sha256').update(readFileSync('src/harness/explore/worker.ts')).digest('hex'),
    );
  }, 120_000);

  it('the first worker writes the V8 code cache when it exits; the next one uses it as it is', async () => {
    await ensureWorkerBundle();
    const cache = bundleCodeFile()!.replace(/\.cjs$/, '.v8cache');
    rmSync(cache, { force: true });
    const once = async (): Promise<void> => {
      const pool = new WorkerPool({ jobs: 1 });
      try {
        const r = await pool.run({ type: 'explore', file: FIXTURE, seed: 5, schedule: [] });
        expect('summary' in r && r.summary.ok, JSON.stringify(r)).toBe(true);
      } finally {
        await pool.close();
      }
    };
    await once();
    expect(statSync(cache).size).toBeGreaterThan(100_000);
    const written = statSync(cache).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    await once();
    // Accepted by V8 (a rejected or missing cache would be written again at exit).
    expect(statSync(cache).mtimeMs).toBe(written);
  }, 120_000);

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
