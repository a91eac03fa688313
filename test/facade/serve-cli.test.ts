/**
 * `hcs-testbed serve` and `hcs-testbed time` (docs/demo.md): flags checked
 * before anything starts (exit 2 with a message, no stack trace), the
 * presets, the banner's contexts, and the live clock driven through the
 * time API by the CLI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { banner, parseServeArgs, startServe, UsageError, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { timeMain } from '../../src/harness/cli/time.js';
import { REPO } from './fixture.js';
import { raw } from './http.js';

describe('OPS-1: serve: flags', () => {
  it('refuses bad values and unknown flags with a message naming the flag', () => {
    const bad: [string[], RegExp][] = [
      [['--port', 'abc'], /--port must be an integer from 0 to 65535, got "abc"/],
      [['--port', '70000'], /--port/],
      [['--apply', '/nonexistent'], /--apply: no such file or directory: \/nonexistent/],
      [['--speed', 'fast'], /--speed must be a number/],
      [['--speed', '-3'], /--speed/],
      [['--preset', 'nope'], /unknown preset "nope" \(known: worker-cluster, cluster\)/],
      [['--bogus'], /Unknown option '--bogus'/],
      [['stray'], /positional/],
    ];
    for (const [argv, re] of bad) {
      expect(() => parseServeArgs(argv), argv.join(' ')).toThrow(UsageError);
      expect(() => parseServeArgs(argv)).toThrow(re);
    }
  });

  it('presets name the library fixture sets; --apply adds paths', () => {
    const o = parseServeArgs(['--preset', 'cluster', '--apply', join(REPO, 'scenarios/manifests/scale-out'), '--speed', '0', '--port', '0']) as ServeOptions;
    expect(o.manifests).toEqual([join(REPO, 'scenarios/manifests/cluster'), join(REPO, 'scenarios/manifests/scale-out')]);
    expect(o.speed).toBe(0);
    expect(o.port).toBe(0);
    expect(parseServeArgs(['--help'])).toBe('help');
  });

  it('the real command line: --help exits 0, bad flags exit 2 with one line, no stack trace', () => {
    const run = (args: string[]) => spawnSync(process.execPath, [join(REPO, 'bin/hcs-testbed.mjs'), ...args], { cwd: REPO, encoding: 'utf8', timeout: 30_000 });
    const help = run(['serve', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--preset NAME');
    for (const args of [['serve', '--port', 'abc']]) {
      const r = run(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout + r.stderr).toMatch(/^error: /);
      expect(r.stdout + r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe('OPS-1: serve --preset cluster: bring-up, banner, the time API and CLI', () => {
  let s: Served;
  let o: ServeOptions;
  const out: string[] = [];
  const time = async (...args: string[]) => {
    out.length = 0;
    const code = await timeMain([...args, '--kubeconfig', s.facade.kubeconfigPaths.combined], (t) => out.push(t));
    return { code, text: out.join('') };
  };

  beforeAll(async () => {
    o = { ...(parseServeArgs(['--preset', 'cluster', '--speed', '0', '--port', '0']) as ServeOptions), kubeconfigDir: mkdtempSync(join(tmpdir(), 'serve-kc-')), tickMs: 0, startMs: Date.UTC(2026, 5, 1, 12, 0, 0) };
    s = await startServe(o);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('the bring-up runs to completion although --speed 0, and the clock then stands still', async () => {
    expect(s.bringUp.ok).toBe(true);
    expect(s.bringUp.machines).toBe(6); // 3 control plane (KubeadmControlPlane) + 3 workers
    expect(s.time.status().paused).toBe(true);
    const t = s.tb.clock.now();
    await s.time.tick();
    expect(s.tb.clock.now()).toBe(t);
  });

  it('the banner names the kubeconfig, the contexts and the one the workload commands need', () => {
    const b = banner(s, o);
    expect(b).toContain(`export KUBECONFIG=${s.facade.kubeconfigPaths.combined}`);
    expect(b).toContain(`(or KUBECONFIG=${s.facade.kubeconfigPaths.clientCert}: the same contexts, logged in by a client certificate`);
    expect(b).toMatch(/management \(current\)/);
    expect(b).toContain('kubectl --context demo get nodes');
    expect(b).toContain('need --context demo');
    // Typed on the management context they do not "find nothing" (issue 34): kubectl get nodes lists the management cluster's own node.
    expect(b).not.toContain('find nothing');
    expect(b).toContain('typed on the management context they answer for the management cluster instead (kubectl get nodes lists its own node)');
    expect(s.tb.env.mgmt.listSync('Node').map((n) => n.metadata.name)).toEqual(['management-control-plane']);
  });

  it('hcs-testbed time: status, advance, speed, resume, pause, next; bad values refused (exit 2 or 400), nothing changed', async () => {
    const t0 = s.tb.clock.now();
    expect((await time('status')).text).toMatch(/paused/);
    const adv = await time('advance', '5m');
    expect(adv.code).toBe(0);
    expect(s.tb.clock.now()).toBe(t0 + 300_000);
    expect(adv.text).toContain(new Date(t0 + 300_000).toISOString());
    expect((await time('speed', '60')).code).toBe(0);
    expect(s.time.status()).toMatchObject({ speed: 60, paused: true });
    expect((await time('resume')).text).toMatch(/running at 60x/);
    expect(s.time.running).toBe(true);
    expect((await time('pause')).code).toBe(0);
    expect(s.time.running).toBe(false);
    const nx = await time('next');
    expect(nx.code).toBe(0);
    expect(nx.text).toMatch(/moved/);

    const before = s.tb.clock.now();
    const bad = await time('advance', '5 minutes');
    expect(bad.code).toBe(1);
    expect(bad.text).toMatch(/answered 400: advance: invalid duration "5 minutes"/);
    expect((await time('speed', 'fast')).code).toBe(2);
    expect((await time('frobnicate')).code).toBe(2);
    expect(s.tb.clock.now()).toBe(before);
    expect(s.time.status().speed).toBe(60);
  });

  it('the wall-driven clock: speed x elapsed wall time per tick while running', async () => {
    let wall = 1_000_000;
    const { TimeControl } = await import('../../src/world/facade/timecontrol.js');
    const tc = new TimeControl(s.tb.sim, { speed: 30, tickMs: 0, wallNow: () => wall });
    const t = s.tb.clock.now();
    wall += 2000;
    await tc.tick();
    expect(s.tb.clock.now()).toBe(t + 60_000);
    tc.pause();
    wall += 2000;
    await tc.tick();
    expect(s.tb.clock.now()).toBe(t + 60_000);
    tc.resume();
    wall += 1000;
    await tc.tick();
    expect(s.tb.clock.now()).toBe(t + 90_000);
    tc.close();
  });

  it('GET / answers the apiserver root paths to API clients', async () => {
    const r = await raw(s.facade, 'GET', '/', { headers: { Accept: 'application/json' } });
    expect(r.code).toBe(200);
    const body = r.json as { paths: string[] };
    expect(body.paths).toContain('/apis/cluster.x-k8s.io/v1beta1');
    expect(body.paths).toContain('/version');
  });
});
