/**
 * bin/hcs-testbed.mjs runs the CLI from its precompiled bundle
 * (src/harness/cli/cli-bundle.ts, src/harness/bundle/build.ts) when it is up to date, rebuilds
 * it when a source changed, and runs the sources through tsx with a
 * `--plugin` or HCS_TESTBED_CLI_TSX=1. What the CLI does is the same either
 * way: the same output and the same event log (start-up times are printed by
 * `npm run bench -- cli`, never asserted).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CACHE_DIR, readManifest } from '../../src/harness/bundle/build.js';
import type { InputRecord } from '../../src/harness/bundle/fresh.mjs';
import { CLI_BUNDLE, ensureCliBundle } from '../../src/harness/cli/cli-bundle.js';

const BIN = resolve('bin/hcs-testbed.mjs');

function bin(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');
const v8cache = (): string => join(CACHE_DIR, readManifest('cli')!.code.replace(/\.cjs$/, '.v8cache'));

describe('the CLI bundle', () => {
  it('is built from src/harness/cli/main.ts with every input recorded; each module keeps its own import.meta.url', async () => {
    const entry = await ensureCliBundle();
    expect(entry).toBe(join(CACHE_DIR, 'cli.mjs'));
    const m = readManifest(CLI_BUNDLE.name)!;
    for (const f of ['src/harness/cli/main.ts', 'src/harness/bundle/fresh.mjs', 'src/harness/scenario/runner.ts', 'node_modules/fastify/fastify.js']) expect(m.inputs[f]?.sha256, f).toBe(sha(f));
    const code = readFileSync(join(CACHE_DIR, m.code), 'utf8');
    expect(code).not.toContain('import.meta.url');
    expect(code).not.toMatch(/import_meta\d* = \{\}/); // esbuild's empty stand-in: paths computed from it would be wrong
    expect(code).toContain(JSON.stringify(new URL('../../src/harness/bundle/fresh.mjs', import.meta.url).href));
    expect(code.startsWith('#!')).toBe(false);
  });

  it('answers --help exactly as the sources through tsx do, and the bundle is what ran (it wrote its code cache)', async () => {
    await ensureCliBundle();
    rmSync(v8cache(), { force: true });
    const fast = await bin(['--help']);
    expect(existsSync(v8cache())).toBe(true);
    const slow = await bin(['--help'], { HCS_TESTBED_CLI_TSX: '1' });
    expect(fast.code).toBe(0);
    expect(slow.code).toBe(0);
    expect(fast.stdout).toContain('Usage:');
    expect(fast.stdout).toBe(slow.stdout);
  }, 120_000);

  it('a scenario run from the bundle writes the event log of a run through tsx, byte for byte', async () => {
    const logs: string[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'cli-bundle-'));
    try {
      for (const tsx of [false, true]) {
        const out = join(dir, tsx ? 'tsx' : 'bundle');
        const r = await bin(['run', 'scenarios/create-cluster.yaml', '--report', 'json', '--out', out, '--no-color'], tsx ? { HCS_TESTBED_CLI_TSX: '1' } : {});
        expect(r.code, r.stdout + r.stderr).toBe(0);
        logs.push(readFileSync(join(out, 'create-cluster.events.jsonl'), 'utf8'));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(logs[0]!.split('\n').length).toBeGreaterThan(100);
    expect(logs[1]).toBe(logs[0]);
  }, 120_000);

  it("keeps the bundler's own import.meta.url pattern: the CLI's copy of src/harness/bundle/build.ts rebuilds the workers' bundle with each module's URL", async () => {
    // The plugin once matched the plain string, so bundling build.ts into the CLI rewrote the plugin's own literals:
    // the CLI's copy then found nothing to rewrite, and the workers' bundle it rebuilt crashed on start
    // (new URL('../../data/os-support-matrix.yaml', undefined) in src/product/matrix/matrix.ts).
    await ensureCliBundle();
    const code = readFileSync(join(CACHE_DIR, readManifest('cli')!.code), 'utf8');
    expect(code).toContain(String(/\bimport\.meta\.url\b/));
    expect(code).not.toMatch(/text\.includes\("file:|text\.includes\('"file:/);
  });

  it('is rebuilt by bin/hcs-testbed.mjs when an input changed', async () => {
    await ensureCliBundle();
    const manifest = join(CACHE_DIR, 'cli.json');
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as { inputs: Record<string, InputRecord> };
    m.inputs['src/harness/cli/main.ts'] = { sha256: '0'.repeat(64), size: statSync('src/harness/cli/main.ts').size, mtimeMs: 1 };
    writeFileSync(manifest, JSON.stringify(m));
    const r = await bin(['validate', 'scenarios/create-cluster.yaml']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readManifest('cli')!.inputs['src/harness/cli/main.ts']?.sha256).toBe(sha('src/harness/cli/main.ts'));
  }, 120_000);

  it('with --plugin runs the sources through tsx: the plugin and the CLI share one copy of the modules', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cli-plugin-'));
    try {
      const marker = join(dir, 'marker.json');
      const r = await bin(['run', 'scenarios/invalid-manifests.yaml', '--plugin', 'test/cli/fixtures/marker-plugin.ts', '--out', join(dir, 'out'), '--no-color'], { MARKER_FILE: marker });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(JSON.parse(readFileSync(marker, 'utf8'))).toEqual({ sameModules: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
