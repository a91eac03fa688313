import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';

const SCENARIO = `name: verbose-describe
rules: [POOL-5]
seed: 5
steps:
  - apply: library:worker-cluster
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 3}
    timeout: 30m
  - kubectl: kubectl describe hcsmachineconfigpool demo-worker-pool -n cpaas-system
`;

describe('run -v shows a step output whole (issue 14)', () => {
  it('a kubectl describe longer than 40 lines is printed to its last line, without "… N more lines"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs-verbose-'));
    const file = join(dir, 'verbose-describe.yaml');
    writeFileSync(file, SCENARIO);
    // What the describe step prints, from the run itself.
    const r = await runScenario(loadScenario(file), embeddedTestbedFactory());
    expect(r.ok).toBe(true);
    const describe = r.steps[2]!.detail;
    expect(describe.length).toBeGreaterThan(40);
    let out = '';
    const code = await main(['run', file, '-v', '--jobs', '1', '--no-color'], (s) => (out += s));
    expect(code).toBe(0);
    expect(out).not.toMatch(/more lines/);
    // Every line of the describe output, the last one included, in order.
    const printed = out.split('\n').map((l) => l.trim());
    let at = printed.findIndex((l) => l.includes('kubectl describe hcsmachineconfigpool'));
    for (const l of describe) {
      const i = printed.indexOf(l.trim(), at + 1);
      expect(i, l).toBeGreaterThan(at);
      at = i;
    }
  }, 120_000);
});
