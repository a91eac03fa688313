/**
 * `hcs-testbed kind up|down`: the command sequence with a fake runner, the
 * clear failure without kind or Docker, and (only where Docker and kind
 * work, e.g. GitHub Actions, docs/ci-github-actions.md) a real cluster.
 */
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kindMain, kindUnavailable, spawnRunner, type RunResult, type Runner } from '../../src/cli/kind.js';
import { main } from '../../src/cli/main.js';
import { ClientNodeKube } from '../../src/kube/client-node.js';

const ok = (stdout = ''): RunResult => ({ status: 0, stdout, stderr: '' });

function fake(answers: Record<string, RunResult>): { run: Runner; calls: string[] } {
  const calls: string[] = [];
  const run: Runner = (cmd, args) => {
    const line = [cmd, ...args].join(' ');
    calls.push(line);
    const key = Object.keys(answers).find((k) => line.startsWith(k));
    return key ? answers[key]! : ok();
  };
  return { run, calls };
}

const ENV = { PATH: process.env.PATH } as NodeJS.ProcessEnv;

describe('hcs-testbed kind', () => {
  it('up: creates the cluster, installs the CRDs server-side, waits, creates the namespace, prints the kubeconfig', async () => {
    const f = fake({ 'kind get clusters': ok('other\n') });
    let out = '';
    const code = await kindMain(['up', '--name', 'n1', '--kubeconfig', 'out/test-kind/kc'], (s) => (out += s), f.run, ENV);
    expect(code, out).toBe(0);
    const cmds = f.calls.filter((c) => !/version|docker info/.test(c));
    expect(cmds[0]).toBe('kind get clusters');
    expect(cmds[1]).toMatch(/^kind create cluster --name n1 --kubeconfig \S+out\/test-kind\/kc --wait 120s$/);
    expect(cmds[2]).toMatch(/^kubectl --kubeconfig \S+ apply --server-side --force-conflicts -f \S+crds\.yaml$/);
    expect(cmds[3]).toContain('wait --for=condition=Established crd -l hcs-testbed.io/generated=true');
    expect(cmds[4]).toMatch(/create namespace cpaas-system$/);
    expect(out).toContain('export KUBECONFIG=');
    rmSync('out/test-kind', { recursive: true, force: true });
  });

  it('up reuses an existing cluster; down deletes it', async () => {
    const f = fake({ 'kind get clusters': ok('hcs-testbed\n') });
    expect(await kindMain(['up', '--kubeconfig', 'out/test-kind/kc'], () => {}, f.run, ENV)).toBe(0);
    expect(f.calls.some((c) => c.startsWith('kind export kubeconfig --name hcs-testbed'))).toBe(true);
    expect(f.calls.some((c) => c.startsWith('kind create'))).toBe(false);
    const d = fake({});
    expect(await kindMain(['down'], () => {}, d.run, ENV)).toBe(0);
    expect(d.calls).toContain('kind delete cluster --name hcs-testbed');
    rmSync('out/test-kind', { recursive: true, force: true });
  });

  it('without Docker: exit 3 and a message naming docker info (no cluster command is run)', async () => {
    const f = fake({ 'docker info': { status: 1, stdout: '', stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' } });
    let out = '';
    expect(await kindMain(['up'], (s) => (out += s), f.run, ENV)).toBe(3);
    expect(out).toMatch(/no usable Docker engine \(`docker info` failed: Cannot connect to the Docker daemon/);
    expect(f.calls.some((c) => c.includes('create'))).toBe(false);
  });

  it('without the kind CLI: exit 3 and a message saying so', async () => {
    let out = '';
    const code = await kindMain(['up'], (s) => (out += s), spawnRunner, { ...ENV, KIND: '/nonexistent/kind' });
    expect(code).toBe(3);
    expect(out).toContain('the kind CLI is not available (`/nonexistent/kind version`: ENOENT)');
  });

  it('is a subcommand of hcs-testbed; bad usage is exit 2', async () => {
    let out = '';
    expect(await main(['kind', '--help'], (s) => (out += s))).toBe(0);
    expect(out).toContain('hcs-testbed kind up [--name N]');
    expect(await main(['kind', 'sideways'], () => {})).toBe(2);
    expect(await main(['kind', 'up', '--bogus'], () => {})).toBe(2);
  });

  const why = kindUnavailable();
  describe.skipIf(!!why || !process.env.HCS_TESTBED_KIND)(`a real kind cluster (HCS_TESTBED_KIND=1)${why ? ` [skipped: ${why}]` : ''}`, () => {
    it('up installs the CRDs; the client-node backend lists them; down deletes the cluster', async () => {
      const name = `hcs-testbed-test-${process.pid}`;
      const kubeconfig = `out/kind-test/${name}.kubeconfig`;
      let out = '';
      try {
        expect(await kindMain(['up', '--name', name, '--kubeconfig', kubeconfig], (s) => (out += s)), out).toBe(0);
        const c = ClientNodeKube.fromKubeconfig(kubeconfig);
        expect(await c.list('HCSMachineConfigPool', { namespace: 'cpaas-system' })).toEqual([]);
      } finally {
        await kindMain(['down', '--name', name], () => {});
      }
    }, 600_000);
  });
});
