import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';

async function run(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await main(args, (s) => (out += s));
  return { code, out };
}

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'hcs-testbed-cli-'));
}

describe('hcs-testbed CLI', () => {
  it('--help explains the commands and options', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('hcs-testbed run [PATH...]');
    expect(r.out).toContain('--seed N');
    expect((await run([])).code).toBe(2);
  });

  it('--backend: unknown names, misplaced --kubeconfig and an unreadable kubeconfig are bad input (exit 2)', async () => {
    const unknown = await run(['run', 'scenarios/scale-out-workers.yaml', '--backend', 'k3s']);
    expect(unknown.code).toBe(2);
    expect(unknown.out).toContain('--backend: unknown backend "k3s" (known: embedded, kubeconfig, apiserver)');
    const misplaced = await run(['run', 'scenarios/scale-out-workers.yaml', '--kubeconfig', '/nonexistent']);
    expect(misplaced.code).toBe(2);
    expect(misplaced.out).toContain('--kubeconfig and --context go with --backend kubeconfig');
    const missing = await run(['run', 'scenarios/scale-out-workers.yaml', '--backend', 'kubeconfig', '--kubeconfig', join(tmp(), 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.out).toMatch(/error: --backend kubeconfig: .*nope.*cannot load kubeconfig/);
    expect((await run(['--help'])).out).toContain('--backend NAME');
  });

  it('a malformed scenario file: exit 2, message names file, line and field', async () => {
    const d = tmp();
    const f = join(d, 'bad.yaml');
    writeFileSync(f, 'name: bad\nseed: 1\nsteps:\n  - wait:\n      - machines: {count: three}\n    timeout: 1m\n');
    const r = await run(['run', f]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/bad\.yaml:5: field steps\[0\]\.wait\[0\]\.machines\.count: must be a number/);
  });

  it('a manifest rejected by a SPEC rule: exit 2, message names file, line, field and rule; nothing applied after it', async () => {
    const d = tmp();
    mkdirSync(join(d, 'm'));
    writeFileSync(
      join(d, 'm', 'pool.yaml'),
      [
        'apiVersion: infrastructure.cluster.x-k8s.io/v1beta1',
        'kind: HCSMachineConfigPool',
        'metadata:',
        '  name: p',
        '  namespace: cpaas-system',
        'spec:',
        '  configs:',
        '    - hostname: w1',
        '      networks:',
        '        - subnetName: worker-subnet',
        '          ipAddress: 192.168.10.11',
        '      persistentDisks:',
        '        - slot: 1',
        '          size: 100',
        '          type: SSD',
        '          mountPath: /var/cpaas',
        '          format: xfs',
        '',
      ].join('\n'),
    );
    writeFileSync(join(d, 's.yaml'), 'name: s\nsteps:\n  - apply: m/pool.yaml\n');
    const r = await run(['run', join(d, 's.yaml'), '--no-color']);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/pool\.yaml:13: field spec\.configs\[0\]\.persistentDisks: .*DISK-2: .*contiguous from 0/);
  });

  it('rejects bad flags with a clear message', async () => {
    expect(await run(['run', '--seed', 'abc'])).toMatchObject({ code: 2, out: expect.stringContaining('--seed must be an integer') });
    expect(await run(['run', '--report', 'pdf'])).toMatchObject({ code: 2, out: expect.stringContaining('unknown report "pdf"') });
    expect(await run(['run', '/nonexistent/x.yaml'])).toMatchObject({ code: 2, out: expect.stringContaining('no such file or directory') });
  });

  it('validate parses the library without running it', async () => {
    const r = await run(['validate', 'scenarios']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('ok scenarios/scale-out-workers.yaml');
  });
});
