/**
 * The standalone provider process on upstream Cluster API (issue 16 "must
 * show"): `hcs-testbed run --backend apiserver --capi upstream --provider
 * external` through the CLI, with `hcs-testbed provider` started from the
 * run's provider.env as a separate OS process; scale-out-workers and
 * maxsurge-disk-reuse pass with every step, as with the model Cluster API
 * and the in-process provider. The run waits for the provider's /readyz
 * (--provider-health) before the first scenario; SIGTERM stops it with exit 0.
 *
 * The upstream managers' webhook servers bind every interface, so this runs
 * only in an lo-only network namespace: `npm run test:upstream` (root,
 * unshare -n); elsewhere it is skipped, saying why.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { loadScenario } from '../../src/scenario/parse.js';
import { runScenario } from '../../src/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/testbed/testbed.js';
import { upstreamProblem } from '../../src/testbed/upstream.js';

const skip = upstreamProblem();
const SCENARIOS = ['scenarios/scale-out-workers.yaml', 'scenarios/maxsurge-disk-reuse.yaml'];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.skipIf(!!skip)(`hcs-testbed provider as the provider of a run on upstream Cluster API v1.10.10${skip ? ` [skipped: ${skip}]` : ''}`, () => {
  it('scale-out-workers and maxsurge-disk-reuse pass with every step, as on the model with the in-process provider', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs-provider-upstream-'));
    const logFile = join(dir, 'provider.log');
    const port = await freePort();
    let out = '';
    const run = main(['run', ...SCENARIOS, '--backend', 'apiserver', '--capi', 'upstream', '--provider', 'external', '--speed', '10', '--provider-log', logFile, '--external-dir', join(dir, 'ext'), '--provider-health', `http://127.0.0.1:${port}/readyz`, '--no-color'], (s) => (out += s));
    // The provider, once the run has written what it needs.
    const envFile = join(dir, 'ext', 'provider.env');
    const deadline = Date.now() + 180_000;
    while (!existsSync(envFile)) {
      if (Date.now() > deadline) throw new Error(`no ${envFile} after 180 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const fd = openSync(logFile, 'a');
    const child = spawn('sh', ['-c', `set -a; . '${envFile}'; set +a; exec '${process.execPath}' bin/hcs-testbed.mjs provider --health-addr 127.0.0.1:${port} --speed 10`], { stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
    let code: number;
    try {
      code = await run;
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exit, stderr).toEqual({ code: 0, signal: null });
    console.log(out.split('\n').filter((l) => /PASS|FAIL|passed/.test(l)).join('\n'));
    expect(code, out).toBe(0);
    expect(out).toContain('Cluster API: upstream v1.10.10 managers');
    expect(out).toContain('provider: external');
    for (const f of SCENARIOS) {
      const s = loadScenario(f);
      const model = await runScenario(s, embeddedTestbedFactory());
      expect(model.ok).toBe(true);
      expect(out).toContain(`PASS ${s.name}: ${model.steps.length}/${model.steps.length} steps passed`);
    }
  }, 900_000);
});
