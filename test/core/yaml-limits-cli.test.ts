/**
 * The YAML limits through the command line: `validate` and `run` refuse a
 * scenario file or a manifest over a limit with file:line:col and exit 2
 * (before: a 10 MB file ran out of memory and exited 134 with no message; an
 * alias bomb inside a manifest exited 1 naming no file).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { aliasBomb } from '../support/yaml-bomb.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

async function run(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await main(args, (s) => (out += s));
  return { code, out };
}

const HEAD = 'name: limits\nseed: 1\nsteps:\n';

/** A folder with three bad scenario files: too big, too deep, and one applying an alias-bomb manifest. */
function fixtures(): string {
  const d = mkdtempSync(join(tmpdir(), 'hcs-yaml-cli-'));
  mkdirSync(join(d, 'manifests'));
  writeFileSync(join(d, 'manifests', 'lol.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n  namespace: default\ndata:\n${aliasBomb('  ')}`);
  writeFileSync(join(d, 'a-bomb-manifest.yaml'), `${HEAD}  - apply: manifests/lol.yaml\n`);
  writeFileSync(join(d, 'b-deep.yaml'), `${HEAD}  - advance: 1s\nx: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
  writeFileSync(join(d, 'c-big.yaml'), `${HEAD}  - advance: 1s\ndescription: |\n${'  twelve MB of text in lines of thirty-two bytes\n'.repeat(250_000)}`);
  return d;
}

describe('YAML limits on the command line: file:line:col, exit 2', () => {
  it('validate and run print every limit crossed (size, depth, an alias bomb in a manifest) and exit 2', async () => {
    const d = fixtures();
    for (const cmd of ['validate', 'run']) {
      const r = await run([cmd, d]);
      expect(r.code, r.out).toBe(2);
      expect(r.out).toMatch(/lol\.yaml:11:10: YAML aliases stand for more than 10000 nodes \(alias limit, billion-laughs protection\)/);
      expect(r.out).toMatch(/b-deep\.yaml:5:\d+: YAML nests deeper than the depth limit of 100 levels/);
      expect(r.out).toMatch(/c-big\.yaml:\d+:\d+: YAML input is 11\.\d MiB \(\d+ bytes\), over the size limit of 4 MiB/);
      expect(r.out).toContain('3 errors in 3 of 3 scenario files');
    }
  });

  it('the real process exits 2 with the messages (no out-of-memory abort, no stack trace)', () => {
    const d = fixtures();
    const p = spawnSync(process.execPath, [join(ROOT, 'bin/hcs-testbed.mjs'), 'validate', d], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(p.status, p.stderr).toBe(2);
    expect(p.stdout).toMatch(/over the size limit of 4 MiB/);
    expect(p.stdout).toMatch(/alias limit/);
    expect(p.stdout).toMatch(/depth limit of 100 levels/);
    expect(p.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});
