import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';
import type { OpenBackend } from '../../src/harness/realcluster/backends.js';

const MANIFESTS = resolve('scenarios/manifests/worker-cluster');

/** A small scenario: create the worker cluster, optionally add a fault, scale in to 2. */
function scenario(name: string, seed: number, fault = ''): string {
  return `name: ${name}
seed: ${seed}
steps:
  - apply: ${MANIFESTS}
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 3}
    timeout: 30m
${fault}  - kubectl: kubectl scale machinedeployment demo-md-0 -n cpaas-system --replicas=2
  - wait:
      - machines: {deployment: demo-md-0, phase: Running, count: 2}
      - servers: {count: 2}
    timeout: 1h
`;
}

async function run(args: string[], backend?: (seed: number) => OpenBackend): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await main(args, (s) => (out += s), backend ? { openBackend: () => Promise.resolve(backend(0)) } : {});
  return { code, out };
}

describe('the runner never dies silently (issue 14)', () => {
  it('latency faults in mode response (detachVolume 5 s and 10 min, showServer 60 s) run to a verdict: the drain moves virtual time while a reconcile awaits the held response', async () => {
    const d = mkdtempSync(join(tmpdir(), 'hcs-robust-'));
    const lat = (op: string, ms: number): string => `  - fault: {service: ecs, operation: ${op}, effect: {type: latency, ms: ${ms}, mode: response}}\n`;
    writeFileSync(join(d, 'a-detach-5s.yaml'), scenario('detach-5s', 3, lat('detachVolume', 5000)));
    writeFileSync(join(d, 'b-detach-10m.yaml'), scenario('detach-10m', 3, lat('detachVolume', 600_000)));
    writeFileSync(join(d, 'c-show-60s.yaml'), scenario('show-60s', 3, lat('showServer', 60_000)));
    const out = join(d, 'out');
    const r = await run(['run', d, '--report', 'console,json', '--out', out, '--no-color']);
    expect(r.out).toContain('PASS detach-5s');
    expect(r.out).toContain('PASS detach-10m');
    expect(r.out).toContain('PASS show-60s');
    expect(r.code).toBe(0);
    // The held responses cost virtual time, recorded in the verdicts (HCS-6).
    const verdict = JSON.parse(readFileSync(join(out, 'detach-10m.result.json'), 'utf8')) as { ok: boolean; virtualMs: number };
    expect(verdict.ok).toBe(true);
    expect(verdict.virtualMs).toBeGreaterThan(600_000);
  }, 120_000);

  it('a scenario whose testbed crashes (at start, or mid-run) fails with its reason; the others still run and every report is written', async () => {
    const d = mkdtempSync(join(tmpdir(), 'hcs-robust-'));
    writeFileSync(join(d, 'a-ok.yaml'), scenario('first-ok', 5));
    writeFileSync(join(d, 'b-no-start.yaml'), scenario('no-start', 666));
    writeFileSync(join(d, 'c-mid-run.yaml'), scenario('mid-run', 667));
    writeFileSync(join(d, 'd-ok.yaml'), scenario('last-ok', 6));
    const embedded = embeddedTestbedFactory();
    const backend = (): OpenBackend => ({
      description: 'embedded with planted crashes',
      close: () => Promise.resolve(),
      factory: async (seed) => {
        if (seed === 666) throw new Error('planted: the testbed cannot start');
        const tb = await embedded(seed);
        if (seed === 667) {
          let calls = 0;
          const settle = tb.sim.settle.bind(tb.sim);
          tb.sim.settle = () => (++calls > 3 ? Promise.reject(new TypeError('planted: cannot read properties of undefined')) : settle());
        }
        return tb;
      },
    });
    const out = join(d, 'out');
    const r = await run(['run', d, '--report', 'console,json,junit,html', '--out', out, '--no-color'], backend);
    expect(r.code).toBe(1);
    expect(r.out).toContain('PASS first-ok');
    expect(r.out).toContain('PASS last-ok');
    expect(r.out).toMatch(/FAIL no-start[\s\S]*/);
    expect(r.out).toContain('the testbed did not start: planted: the testbed cannot start');
    expect(r.out).toContain('planted: cannot read properties of undefined');
    for (const f of ['first-ok.result.json', 'no-start.result.json', 'mid-run.result.json', 'last-ok.result.json', 'no-start.events.jsonl', 'junit.xml', 'report.html']) expect(existsSync(join(out, f)), f).toBe(true);
    const junit = readFileSync(join(out, 'junit.xml'), 'utf8');
    expect(junit).toContain('no-start');
    expect(junit).toContain('mid-run');
  }, 120_000);
});
