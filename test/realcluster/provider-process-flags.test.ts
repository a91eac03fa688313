/**
 * Flags of `hcs-testbed provider` and of `run --capi/--provider` (issue 16):
 * every bad input exits 2 with a message naming the flag, no stack trace,
 * before anything starts. Runs everywhere (no apiserver needed).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { providerOptions } from '../../src/harness/cli/provider.js';
import { parseLoopbackAddr } from '../../src/product/provider/process.js';

async function run(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await main(args, (s) => (out += s));
  return { code, out };
}

const dir = mkdtempSync(join(tmpdir(), 'hcs-provider-flags-'));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
const base = ['--kubeconfig', kubeconfig, '--cloud-url', 'https://127.0.0.1:8443', '--cloud-ak', 'AK', '--cloud-sk', 'SK', '--project', 'p1'];

describe('hcs-testbed provider: flags (OPS-3 process, HCS-5 credentials)', () => {
  it('--help exits 0 and says how to run it and that there is no leader election', async () => {
    const r = await run(['provider', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('hcs-testbed provider --kubeconfig FILE --cloud-url URL');
    expect(r.out).toContain('Leader election: not implemented');
    expect(r.out).toContain('--health-addr');
  });

  it.each([
    [['--bogus'], "Unknown option '--bogus'"],
    [[], '--kubeconfig is required'],
    [['--kubeconfig', kubeconfig], '--cloud-url is required'],
    [[...base.slice(0, 2), '--cloud-url', 'ftp://x', ...base.slice(4)], '--cloud-url must be an http(s) URL'],
    [[...base, '--health-addr', '0.0.0.0:8081'], '--health-addr must be 127.0.0.1:PORT'],
    [[...base, '--metrics-addr', '10.0.0.1:9'], '--metrics-addr must be 127.0.0.1:PORT'],
    [[...base, '--ca-file', join(dir, 'none.pem')], '--ca-file: cannot read'],
    [[...base, '--ca-file', kubeconfig], 'holds no PEM certificate'],
    [[...base, '--speed', '0'], '--speed must be a number above 0'],
    [[...base, '--credentials-secret', 'no-slash'], '--credentials-secret must be NAMESPACE/NAME'],
    [['--kubeconfig', join(dir, 'missing'), ...base.slice(2)], '--kubeconfig: cannot read'],
  ])('%j → exit 2: %s', async (args, message) => {
    const r = await run(['provider', ...args]);
    expect(r.code).toBe(2);
    expect(r.out).toContain(message);
    expect(r.out).toContain('(see hcs-testbed provider --help)');
    expect(r.out).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('environment variables stand in for flags; a flag wins over its variable', () => {
    const o = providerOptions(['--project', 'from-flag'], { KUBECONFIG: `${kubeconfig}:/other`, HCS_CLOUD_URL: 'http://127.0.0.1:1', HCS_AK: 'a', HCS_SK: 's', HCS_PROJECT_ID: 'from-env', HCS_REGION: 'r1', HCS_NAMESPACE: 'ns1' });
    expect(o).toMatchObject({ kubeconfig, cloudUrl: 'http://127.0.0.1:1', ak: 'a', sk: 's', projectId: 'from-flag', region: 'r1', namespace: 'ns1' });
  });

  it('health and metrics addresses: loopback only', () => {
    expect(parseLoopbackAddr('--health-addr', '127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseLoopbackAddr('--health-addr', 'localhost:8081')).toEqual({ host: '127.0.0.1', port: 8081 });
    expect(() => parseLoopbackAddr('--health-addr', ':8081')).not.toThrow();
    expect(() => parseLoopbackAddr('--health-addr', '0.0.0.0:1')).toThrow(/loopback only/);
    expect(() => parseLoopbackAddr('--health-addr', '127.0.0.1:70000')).toThrow(/out of range/);
  });
});

describe('hcs-testbed run --capi / --provider: validation (issue 16)', () => {
  it.each([
    [['--capi', 'kind'], '--capi: unknown mode "kind" (known: embedded, upstream, external)'],
    [['--provider', 'go'], '--provider: unknown mode "go" (known: embedded, external, in-cluster)'],
    [['--backend', 'apiserver', '--provider', 'in-cluster'], '--provider in-cluster goes with --backend kubeconfig'],
    [['--provider', 'in-cluster'], '--provider in-cluster needs a real management cluster'],
    [['--backend', 'kubeconfig', '--provider', 'in-cluster', '--cloud-port', '9'], '--cloud-port goes with --provider external\n'],
    [['--capi', 'external'], '--capi external needs a real management cluster'],
    [['--capi', 'external', '--backend', 'embedded'], '--capi external needs a real management cluster'],
    [['--capi', 'upstream'], '--capi upstream needs a real management cluster'],
    [['--provider', 'external'], '--provider external needs a real management cluster'],
    [['--backend', 'apiserver', '--provider-log', 'x.log'], '--provider-log goes with --provider external or in-cluster'],
    [['--backend', 'apiserver', '--cloud-port', '9'], '--cloud-port goes with --provider external'],
    [['--backend', 'apiserver', '--speed', '5'], '--speed goes with --capi external|upstream or --provider external'],
    [['--backend', 'apiserver', '--provider', 'external', '--speed', 'fast'], '--speed must be a number above 0'],
    [['--backend', 'apiserver', '--provider', 'external', '--cloud-port', 'x'], '--cloud-port must be a port number'],
    [['--backend', 'apiserver', '--provider', 'external', '--provider-wait', '5 minutes'], '--provider-wait: invalid duration'],
  ])('run %j → exit 2: %s', async (args, message) => {
    const r = await run(['run', 'scenarios/scale-out-workers.yaml', ...args]);
    expect(r.code).toBe(2);
    expect(r.out).toContain(message);
    expect(r.out).not.toMatch(/\n\s+at /);
  });

  it('run --help documents the modes', async () => {
    const r = await run(['run', '--help']);
    expect(r.out).toContain('--capi MODE');
    expect(r.out).toContain('--provider MODE');
    expect(r.out).toContain('--speed X');
  });
});
