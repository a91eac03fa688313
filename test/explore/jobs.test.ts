/**
 * `hcs-testbed run --jobs N` (src/harness/cli/jobs.ts): the scenarios on this process
 * and worker processes give the sequential run's console output (in the same
 * order; wall times aside), reports and event logs, byte for byte.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';

/** A few library scenarios of different lengths, one with a failing step expected (invalid manifests). */
const FILES = ['scenarios/kube-ovn-upgrade.yaml', 'scenarios/pool-exhausted.yaml', 'scenarios/invalid-manifests.yaml', 'scenarios/scale-out-workers.yaml', 'scenarios/network.yaml'];

async function run(jobs: number): Promise<{ code: number; console: string; out: string }> {
  const out = mkdtempSync(join(tmpdir(), `hcs-jobs-${jobs}-`));
  let text = '';
  const code = await main(['run', ...FILES, '--jobs', String(jobs), '--no-color', '--report', 'console,json,junit', '--out', out], (t) => (text += t));
  // Wall times differ; the live progress lines of long waits (throttled on wall time) appear only when running in sequence.
  const normal = text
    .split('\n')
    .filter((l) => !/^\s+\[\d\d:\d\d:\d\d\] … /.test(l))
    .map((l) => l.replace(/ in [\d.]+s wall/, ' in Xs wall').replaceAll(out, 'OUT'))
    .join('\n');
  return { code, console: normal, out };
}

describe('run --jobs', () => {
  it('--jobs 2 prints what --jobs 1 prints, in the same order, and writes the same event logs', async () => {
    const seq = await run(1);
    const par = await run(2);
    expect(par.code).toBe(seq.code);
    expect(par.console).toBe(seq.console);
    const logs = readdirSync(seq.out).filter((f) => f.endsWith('.events.jsonl')).sort();
    expect(logs).toHaveLength(FILES.length);
    expect(readdirSync(par.out).filter((f) => f.endsWith('.events.jsonl')).sort()).toEqual(logs);
    for (const f of logs) expect(readFileSync(join(par.out, f), 'utf8'), f).toBe(readFileSync(join(seq.out, f), 'utf8'));
    const verdicts = (dir: string): unknown[] => logs.map((f) => JSON.parse(readFileSync(join(dir, f.replace('.events.jsonl', '.result.json')), 'utf8')) as { steps: { ok: boolean; title: string }[] }).map((r) => r.steps.map((s) => [s.title, s.ok]));
    expect(verdicts(par.out)).toEqual(verdicts(seq.out));
  }, 600_000);

  it('rejects a bad --jobs and --jobs with a real backend (exit 2)', async () => {
    let text = '';
    expect(await main(['run', FILES[0]!, '--jobs', '0'], (t) => (text += t))).toBe(2);
    expect(text).toContain('--jobs must be an integer >= 1');
    text = '';
    expect(await main(['run', FILES[0]!, '--jobs', '2', '--backend', 'apiserver'], (t) => (text += t))).toBe(2);
    expect(text).toContain('--jobs above 1 goes with the default embedded backend');
  });
});
