/**
 * `hcs-testbed demo`'s usage errors (the demo itself runs in
 * test/dashboard/hostnames.test.ts against a served testbed).
 */
import { describe, expect, it } from 'vitest';
import { demoMain } from '../../src/harness/cli/demo.js';

const run = async (...argv: string[]) => {
  let out = '';
  const code = await demoMain(argv, (t) => (out += t));
  return { code, out };
};

describe('hcs-testbed demo: usage', () => {
  it('names the two documents; an unknown one, none, or two are refused with exit 2', async () => {
    expect((await run('--help')).out).toContain('hcs-testbed demo worker-nodes');
    for (const argv of [['nodes'], [], ['worker-nodes', 'cluster-upgrade']]) {
      const r = await run(...argv);
      expect(r.code).toBe(2);
      expect(r.out).toMatch(/^error: give one document: worker-nodes or cluster-upgrade/);
    }
  });

  it('--pace is a number of virtual seconds per wall second (0 to 10000); anything else is refused with exit 2, nothing run', async () => {
    expect((await run('--help')).out).toMatch(/--pace X +virtual seconds per wall second while a step waits \(default 30/);
    for (const bad of ['abc', '-1', '20000', '']) expect(await run('worker-nodes', '--kubeconfig', '/etc/hostname', '--kubectl', '/bin/true', `--pace=${bad}`)).toEqual({ code: 2, out: `error: --pace must be a number from 0 to 10000 (virtual seconds per wall second), got "${bad}"\n` });
  });

  it('a missing kubeconfig or kubectl is named', async () => {
    expect(await run('worker-nodes', '--kubeconfig', '/nonexistent/kubeconfig')).toEqual({ code: 2, out: 'error: --kubeconfig: give the kubeconfig hcs-testbed serve printed (no file /nonexistent/kubeconfig)\n' });
    expect((await run('worker-nodes', '--kubeconfig', '/etc/hostname', '--kubectl', '/nonexistent/kubectl')).out).toBe('error: --kubectl: no kubectl at /nonexistent/kubectl\n');
  });
});
