/**
 * Issue 24, limits of the scenario input:
 * - `hcs-testbed validate` prints at most MAX_PRINTED_ERRORS errors and the
 *   total (100,000 unknown keys used to print 100,001 lines);
 * - `advance`, `wait.timeout` and `crash.downFor` are bounded
 *   (MAX_STEP_DURATION_MS, src/harness/scenario/parse.ts), the field named
 *   (`advance: 876000h` used to run on without end).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main, MAX_PRINTED_ERRORS } from '../../src/harness/cli/main.js';
import { MAX_STEP_DURATION_MS } from '../../src/harness/scenario/parse.js';

async function validate(text: string): Promise<{ code: number; out: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'limits-'));
  const file = join(dir, 'big.yaml');
  writeFileSync(file, text);
  let out = '';
  const code = await main(['validate', file], (s) => (out += s));
  return { code, out };
}

describe('issue 24: validate caps its error list, and step durations are bounded', () => {
  it('100,000 unknown keys: exit 2, the first 100 errors, "… and N more", the total; not 100,001 lines', async () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `bogus${i}: 1`).join('\n');
    const { code, out } = await validate(`name: big\nrules: [OPS-1]\nsteps:\n  - advance: 1m\n${keys}\n`);
    expect(code).toBe(2);
    const lines = out.trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('error: '))).toHaveLength(MAX_PRINTED_ERRORS);
    expect(lines.length).toBeLessThanOrEqual(MAX_PRINTED_ERRORS + 2);
    expect(out).toMatch(/… and 99900 more errors not shown/);
    expect(lines.at(-1)).toBe('100000 errors in 1 of 1 scenario file');
  }, 120_000);

  it('a few errors are all printed, with no "more" line', async () => {
    const { code, out } = await validate('name: small\nrules: [OPS-1]\nsteps:\n  - advance: 1m\nbogusA: 1\nbogusB: 2\n');
    expect(code).toBe(2);
    expect(out.match(/^error: /gm)).toHaveLength(2);
    expect(out).not.toMatch(/more error/);
  }, 60_000);

  it('advance 876000h, a wait timeout of 25h and a crash downFor in seconds beyond a day are refused, naming the field', async () => {
    expect(MAX_STEP_DURATION_MS).toBe(24 * 3_600_000);
    const cases: [string, RegExp][] = [
      ['  - advance: 876000h\n', /steps\[0\]\.advance.*must be at most 24h of virtual time, got "876000h"/],
      ['  - wait:\n      - machines: {phase: Running, count: 1}\n    timeout: 25h\n', /steps\[0\]\.timeout.*must be at most 24h/],
      ['  - advance: 86401\n', /steps\[0\]\.advance.*got 86401 \(seconds\)/],
      ['  - advance: .inf\n', /steps\[0\]\.advance/],
    ];
    for (const [step, re] of cases) {
      const { code, out } = await validate(`name: long\nrules: [OPS-1]\nsteps:\n${step}`);
      expect(code, step).toBe(2);
      expect(out, step).toMatch(re);
    }
    // The bound itself is allowed.
    const ok = await validate('name: day\nrules: [OPS-1]\nsteps:\n  - advance: 24h\n');
    expect(ok.out).toMatch(/^ok /m);
    expect(ok.code).toBe(0);
  }, 60_000);
});
