/**
 * Motion the eye can follow (issue 34): with a pace, the guided demo lets the
 * live clock run after an action instead of jumping to the end — the page's
 * stream carries the new machine's phases one after the other
 * (Provisioning → Running), the `-w` watch's lines are printed as they come
 * (spread over the wait, not in one block at its end), and time is paused
 * again once the step is done. A real server and a real wall clock: the
 * waits are bounded (a scale out is a few virtual minutes, at 60 virtual s
 * per wall s a few wall seconds). And a watch while time is paused (kubectl
 * wait, kubectl get -w) is told why nothing changes instead of hanging
 * silently.
 */
import { mkdtempSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveTarget } from '../../src/harness/dashboard/time-client.js';
import { getJson, runSteps, type DemoCtx } from '../../src/harness/demo/run.js';
import { parseServeArgs, startServe, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { REPO } from '../facade/fixture.js';
import { haveKubectl } from '../facade/kubectl.js';

/** The page's stream, read as a browser does: every `patch` message's tree items (kind Machine: name → phases seen). */
function watchStream(s: Served): { phases: Map<string, string[]>; stop: () => void } {
  const url = new URL(s.facade.url);
  const phases = new Map<string, string[]>();
  let buf = '';
  const req = request({ host: url.hostname, port: url.port, path: '/_testbed/stream', headers: s.facade.authHeaders(), ...(s.facade.caPem ? { ca: s.facade.caPem } : {}) }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      buf += d;
      let at: number;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        const msg = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const type = /^event: (\w+)/m.exec(msg)?.[1];
        const data = /^data: (.*)$/m.exec(msg)?.[1];
        if (!data || (type !== 'patch' && type !== 'view')) continue;
        const p = JSON.parse(data) as Record<string, { set?: unknown; list?: { upsert?: unknown[] } } | unknown>;
        const tree = type === 'view' ? (p.tree as unknown[]) : ((p.tree as { list?: { upsert?: unknown[] }; set?: unknown[] } | undefined)?.list?.upsert ?? (p.tree as { set?: unknown[] } | undefined)?.set ?? []);
        for (const n of tree as { kind: string; name: string; phase: string }[]) {
          if (n.kind !== 'Machine') continue;
          const seen = phases.get(n.name) ?? [];
          if (seen.at(-1) !== n.phase) seen.push(n.phase);
          phases.set(n.name, seen);
        }
      }
    });
  });
  req.end();
  return { phases, stop: () => req.destroy() };
}

describe.skipIf(!haveKubectl)('the guided demo at a pace: the clock runs after an action, the page and a -w watch follow it', () => {
  let s: Served;
  beforeAll(async () => {
    const o: ServeOptions = { ...(parseServeArgs(['--preset', 'worker-cluster', '--speed', '0', '--port', '0']) as ServeOptions), kubeconfigDir: mkdtempSync(join(tmpdir(), 'pace-kc-')) };
    s = await startServe(o);
  }, 120_000);
  afterAll(async () => s?.close());

  it('scale out at 60 virtual s per wall s: Provisioning then Running on the page, the watch streamed, time paused after', async () => {
    const kc = s.facade.kubeconfigPaths.combined;
    const lines: { t: number; line: string }[] = [];
    const ctx: DemoCtx = {
      io: { write: (x) => lines.push(...x.split('\n').filter((l) => l).map((line) => ({ t: Date.now(), line }))) },
      target: resolveTarget({ kubeconfig: kc }),
      kubectl: '/usr/bin/kubectl',
      kubeconfig: kc,
      workloadKubeconfig: kc,
      dir: mkdtempSync(join(tmpdir(), 'pace-')),
      pace: 60,
    };
    const stream = watchStream(s);
    const running = async () => (await getJson<{ items: { status?: { phase?: string } }[] }>(ctx, '/apis/cluster.x-k8s.io/v1beta1/namespaces/cpaas-system/machines')).items.filter((m) => m.status?.phase === 'Running').length;
    const t0 = s.tb.clock.now();
    const results = await runSteps(
      ctx,
      [
        { id: 'pool', title: 'a fourth pool entry (POOL-3)', command: () => `kubectl apply -f ${join(REPO, 'scenarios/manifests/scale-out/worker-pool-4.yaml')}`, look: 'the entry' },
        { id: 'scale', title: 'replicas 4', command: () => `kubectl patch machinedeployment demo-md-0 -n cpaas-system --type='json' -p='[{"op": "replace", "path": "/spec/replicas", "value": 4}]'`, look: 'a new machine' },
        { id: 'watch', title: 'watch', command: () => 'kubectl get machines -n cpaas-system -w', watch: true, until: { what: 'four machines Running', cond: async () => (await running()) === 4 }, look: 'Running' },
      ],
      'pace',
    );
    stream.stop();
    expect(results.map((r) => [r.id, r.code, r.waited ?? ''])).toEqual([['pool', 0, ''], ['scale', 0, ''], ['watch', 0, 'done']]);
    // The clock moved (a few virtual minutes) and is paused again.
    expect(s.tb.clock.now() - t0).toBeGreaterThan(60_000);
    expect(s.time.status().paused).toBe(true);
    // The page's stream saw the new machine go through its phases, not only its end.
    const added = [...stream.phases].find(([, ph]) => ph.includes('Provisioning'));
    expect(added, JSON.stringify([...stream.phases])).toBeDefined();
    expect(added![1].slice(-1)).toEqual(['Running']);
    expect(added![1].length).toBeGreaterThanOrEqual(2);
    // The watch's lines came while time moved: the first more than half a second before the last.
    // The clock ran before the watch started: no "time is paused" warning in the middle of a paced demo.
    expect(lines.filter((l) => /Warning: virtual time is paused/.test(l.line))).toEqual([]);
    const watch = lines.filter((l) => /^ {5}demo-md-0-/.test(l.line));
    expect(watch.length).toBeGreaterThan(4);
    expect(watch.at(-1)!.t - watch[0]!.t).toBeGreaterThan(500);
  }, 120_000);

  it('kubectl wait while virtual time is paused says why nothing changes (a Kubernetes warning); running, it does not', async () => {
    const kc = s.facade.kubeconfigPaths.combined;
    const name = s.tb.env.mgmt.listSync('Machine', { namespace: 'cpaas-system' })[0]!.metadata.name;
    const wait = async () => {
      try {
        await promisify(execFile)('/usr/bin/kubectl', ['--kubeconfig', kc, 'wait', '--for=delete', `machine/${name}`, '-n', 'cpaas-system', '--timeout=1s'], { timeout: 20_000 });
        return '';
      } catch (e) {
        return String((e as { stderr?: string }).stderr ?? e);
      }
    };
    expect(s.time.status().paused).toBe(true);
    const paused = await wait();
    expect(paused).toMatch(/^Warning: virtual time is paused \(hcs-testbed serve\): nothing changes until it is advanced or resumed/m);
    expect(paused).toMatch(/timed out waiting/);
    s.time.setSpeed(1);
    s.time.resume();
    const running = await wait();
    s.time.pause();
    expect(running).toMatch(/timed out waiting/);
    expect(running).not.toMatch(/virtual time is paused/);
  }, 60_000);
});
