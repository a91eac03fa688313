/**
 * `hcs-testbed kind up|down`: the command sequence with a fake runner, the
 * clear failure without kind or Docker, and (only where Docker and kind
 * work, e.g. GitHub Actions, docs/ci-github-actions.md) a real cluster.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kindMain, kindUnavailable, resolveTool, spawnRunner, type RunResult, type Runner } from '../../src/harness/cli/kind.js';
import { main } from '../../src/harness/cli/main.js';
import { ClientNodeKube } from '../../src/core/kube/client-node.js';
import { kindNodeImage } from '../../src/harness/realcluster/kind/kind-binaries.js';
import { findCapiBinaries } from '../../src/harness/realcluster/upstream/capi-binaries.js';

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
    const f = fake({ 'kind get clusters': ok('other\n'), 'docker image inspect': { status: 1, stdout: '', stderr: 'No such image' } });
    let out = '';
    const code = await kindMain(['up', '--name', 'n1', '--kubeconfig', 'out/test-kind/kc'], (s) => (out += s), f.run, ENV);
    expect(code, out).toBe(0);
    const cmds = f.calls.filter((c) => !/version|docker info|docker image inspect/.test(c));
    expect(cmds[0]).toBe('kind get clusters');
    expect(cmds[1]).toMatch(/^kind create cluster --name n1 --kubeconfig \S+out\/test-kind\/kc --wait 120s$/);
    expect(cmds[2]).toMatch(/^kubectl --kubeconfig \S+ apply --server-side --force-conflicts -f \S+crds\.yaml$/);
    expect(cmds[3]).toContain('wait --for=condition=Established crd -l hcs-testbed.io/generated=true');
    expect(cmds[4]).toMatch(/create namespace cpaas-system$/);
    expect(out).toContain('export KUBECONFIG=');
    expect(out).toContain("node image: kind's default (kindest/node)");
    rmSync('out/test-kind', { recursive: true, force: true });
  });

  it('up: the node image is --image, else $HCS_TESTBED_KIND_IMAGE, else the one tools/kind/build.sh built when Docker has it', async () => {
    const built = kindNodeImage();
    expect(built).toMatch(/^hcs-testbed\/kind-node:v1\.\d+\.\d+$/);
    const create = async (args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> => {
      const f = fake({ 'kind get clusters': ok('') });
      expect(await kindMain(['up', '--kubeconfig', 'out/test-kind/kc', ...args], () => {}, f.run, env)).toBe(0);
      return f.calls.find((c) => c.startsWith('kind create cluster'));
    };
    expect(await create([], ENV)).toContain(`--image ${built}`);
    expect(await create([], { ...ENV, HCS_TESTBED_KIND_IMAGE: 'kindest/node:v1.33.1' })).toContain('--image kindest/node:v1.33.1');
    expect(await create(['--image', 'x/y:z'], { ...ENV, HCS_TESTBED_KIND_IMAGE: 'kindest/node:v1.33.1' })).toContain('--image x/y:z');
    rmSync('out/test-kind', { recursive: true, force: true });
  }, 30_000);

  it('up --load: kind load docker-image for each image after the CRDs; a failed step exits 1 naming it', async () => {
    const f = fake({ 'kind get clusters': ok('hcs-testbed\n') });
    expect(await kindMain(['up', '--kubeconfig', 'out/test-kind/kc', '--load', 'a:1', '--load', 'b:2'], () => {}, f.run, ENV)).toBe(0);
    const loads = f.calls.filter((c) => c.startsWith('kind load'));
    expect(loads).toEqual(['kind load docker-image --name hcs-testbed a:1', 'kind load docker-image --name hcs-testbed b:2']);
    expect(f.calls.findIndex((c) => c.startsWith('kind load'))).toBeGreaterThan(f.calls.findIndex((c) => c.includes('apply --server-side')));

    const g = fake({ 'kind get clusters': ok(''), 'kind create cluster': { status: 1, stdout: '', stderr: 'ERROR: failed to create cluster: could not find a log line that matches "Reached target .*Multi-User System.*|detected cgroup v1"' } });
    let out = '';
    expect(await kindMain(['up', '--kubeconfig', 'out/test-kind/kc', '--load', 'a:1'], (s) => (out += s), g.run, ENV)).toBe(1);
    expect(out).toContain('error: create cluster failed (exit 1):\nERROR: failed to create cluster: could not find a log line');
    expect(g.calls.some((c) => c.includes('apply') || c.startsWith('kind load'))).toBe(false);

    const h = fake({ 'kind get clusters': ok('hcs-testbed\n'), 'kind load': { status: 1, stdout: '', stderr: 'ERROR: image: "a:1" not present locally' } });
    out = '';
    expect(await kindMain(['up', '--kubeconfig', 'out/test-kind/kc', '--load', 'a:1'], (s) => (out += s), h.run, ENV)).toBe(1);
    expect(out).toContain('error: load image a:1 failed (exit 1):\nERROR: image: "a:1" not present locally');
    rmSync('out/test-kind', { recursive: true, force: true });
  }, 30_000);

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

  it('up --managers in-cluster: bad values exit 2; without the Cluster API managers, or when the image build fails, exit 1 naming the step', async () => {
    let out = '';
    expect(await kindMain(['up', '--managers', 'sideways'], (s) => (out += s), fake({}).run, ENV), out).toBe(2);
    expect(out).toContain('--managers: unknown mode "sideways" (known: none, in-cluster)');
    out = '';
    expect(await kindMain(['up', '--speed', '20'], (s) => (out += s), fake({}).run, ENV), out).toBe(2);
    expect(out).toContain('--speed goes with --managers in-cluster');
    const noCapi = { ...ENV, HCS_TESTBED_CAPI_BIN: '/nonexistent/capi' };
    const f = fake({ 'kind get clusters': ok('n2\n') });
    out = '';
    expect(await kindMain(['up', '--name', 'n2', '--kubeconfig', 'out/test-kind/kc2', '--managers', 'in-cluster'], (s) => (out += s), f.run, noCapi), out).toBe(1);
    expect(out).toMatch(/error: find the Cluster API managers failed: .*\/nonexistent\/capi.*tools\/capi\/build\.sh/);
    expect(f.calls.some((c) => c.includes('images.sh'))).toBe(false);
    if (!('missing' in findCapiBinaries())) {
      const g = fake({ 'kind get clusters': ok('n2\n'), bash: { status: 1, stdout: '', stderr: 'kind/images: no Docker engine; start one with tools/docker/start.sh' } });
      out = '';
      expect(await kindMain(['up', '--name', 'n2', '--kubeconfig', 'out/test-kind/kc2', '--managers', 'in-cluster'], (s) => (out += s), g.run, ENV), out).toBe(1);
      expect(out).toContain('error: build images (exit 1) failed: kind/images: no Docker engine');
      expect(g.calls.some((c) => c.includes('load docker-image'))).toBe(false);
      // The CRDs (the testbed's HCS kinds; upstream's Cluster API CRDs come with the managers) went in before.
      expect(out).toContain('install CRDs');
    }
    rmSync('out/test-kind', { recursive: true, force: true });
  });

  it('without Docker: exit 3 and a message naming docker info (no cluster command is run)', async () => {
    const f = fake({ 'docker info': { status: 1, stdout: '', stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' } });
    let out = '';
    expect(await kindMain(['up'], (s) => (out += s), f.run, ENV)).toBe(3);
    expect(out).toMatch(/no usable Docker engine \(`docker info` failed: Cannot connect to the Docker daemon/);
    expect(out).toContain('tools/docker/start.sh');
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
    const kubectl = resolveTool('kubectl');
    it('up creates the cluster (node Ready), installs the CRDs; the client-node backend lists them; down deletes the cluster', async () => {
      const name = `hcs-testbed-test-${process.pid}`;
      const kubeconfig = `out/kind-test/${name}.kubeconfig`;
      let out = '';
      try {
        expect(await kindMain(['up', '--name', name, '--kubeconfig', kubeconfig], (s) => (out += s)), out).toBe(0);
        // kind create --wait 120s waits for the control plane; bounded extra wait for the Ready condition
        const ready = spawnRunner(kubectl, ['--kubeconfig', kubeconfig, 'wait', '--for=condition=Ready', 'node', '--all', '--timeout=180s'], { timeoutMs: 200_000 });
        expect(ready.status, ready.stderr).toBe(0);
        const c = ClientNodeKube.fromKubeconfig(kubeconfig);
        // Just after Established, a new CRD's watch cache may still answer 429
        // "storage is (re)initializing" (seen here once): retry that alone, bounded (30 s).
        let pools: unknown[] | undefined;
        for (let i = 0; pools === undefined; i++) {
          try {
            pools = await c.list('HCSMachineConfigPool', { namespace: 'cpaas-system' });
          } catch (e) {
            if (i >= 30 || !/storage is \(re\)initializing/.test((e as Error).message)) throw e;
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
        expect(pools).toEqual([]);
      } finally {
        let down = '';
        expect(await kindMain(['down', '--name', name], (s) => (down += s)), down).toBe(0);
      }
      const left = spawnRunner(resolveTool('kind'), ['get', 'clusters']);
      expect(left.stdout.split('\n')).not.toContain(name);
    }, 900_000);

    it('a failing step (a node image that exists nowhere): exit 1, the message names the step and has kind\'s error', async () => {
      const name = `hcs-testbed-bad-${process.pid}`;
      let out = '';
      try {
        const code = await kindMain(['up', '--name', name, '--kubeconfig', `out/kind-test/${name}.kubeconfig`, '--image', 'hcs-testbed/no-such-node:v0'], (s) => (out += s));
        expect(code, out).toBe(1);
        expect(out).toMatch(/error: create cluster failed \(exit 1\):\n[^]*(no-such-node|pull)/);
      } finally {
        await kindMain(['down', '--name', name], () => {});
      }
    }, 300_000);

    it('the CLI without a reachable Docker engine: exit 3 and a message naming `docker info` and tools/docker/start.sh', () => {
      const r = spawnSync(process.execPath, ['bin/hcs-testbed.mjs', 'kind', 'up', '--name', 'never-created'], {
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
      });
      expect(r.status, r.stdout + r.stderr).toBe(3);
      expect(r.stdout).toMatch(/error: hcs-testbed kind up: no usable Docker engine \(`docker info` failed: .*\/nonexistent\/docker\.sock/);
      expect(r.stdout).toContain('tools/docker/start.sh');
    }, 150_000);
  });
});
