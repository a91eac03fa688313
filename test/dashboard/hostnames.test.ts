/**
 * Issue 25 must-show, in a real browser (Debian's chromium through
 * playwright-core, as test/dashboard/browser.test.ts): `serve --preset
 * cluster` (3 control-plane + 3 worker machines) taken through both
 * documents with the real kubectl — the documents' own commands (taken from
 * test/docs-verbatim/seeds, placeholders filled) — and at 1440×900:
 * - the hostname view shows every hostname with its current machine and
 *   persistent disk, without scrolling, at the start, mid-rollout and at the
 *   end, with no two labels overlapping and every segment label inside its
 *   segment;
 * - the worker Kubernetes upgrade done in the worker document's order (before
 *   the control plane) stalls on Cluster API's MachineSet preflight checks,
 *   and the "why" panel says so with the check names (UPG-1, UPG-3);
 *   `hcs-testbed status` prints the same;
 * - a stuck detach (HCS-6 fault from the page) shows on its hostname's row,
 *   and DiskDetachStuck in the panel (DISK-9).
 * Screenshots go to out/ci/screenshots (CI artifacts). Virtual time moves
 * only through serve's time API; every wait is bounded.
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine } from '../../src/product/api/capi.js';
import { runDemo } from '../../src/harness/cli/demo.js';
import { statusMain } from '../../src/harness/cli/status.js';
import { parseServeArgs, startServe, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { REPO } from '../facade/fixture.js';
import { raw } from '../facade/http.js';
import { haveKubectl, KubectlRunner } from '../facade/kubectl.js';
import { fill, SeedDocument, WORKER_DOC, type Placeholders } from '../docs-verbatim/document.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const SHOTS = join(REPO, 'out', 'ci', 'screenshots');
const haveChromium = existsSync(CHROMIUM);
const NS = 'cpaas-system';
const VIEW = { width: 1440, height: 900 };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

describe.skipIf(!haveChromium || !haveKubectl)('hostname view and "why is it waiting?" at 1440x900 through both documents', () => {
  let s: Served;
  let browser: Browser;
  let page: Page;
  let k: KubectlRunner;
  const worker = new SeedDocument(WORKER_DOC);
  const all = { '<cluster-name>': 'demo', '<kcp-name>': 'demo-control-plane' };
  /** The first command of a document that contains `containing`, its placeholders filled (a command the document writes twice, e.g. the replicas patch of scale out and scale in). */
  const cmd = (doc: SeedDocument, containing: string, values: Placeholders) => {
    const c = doc.commands.find((x) => x.text.includes(containing));
    if (!c) throw new Error(`${doc.file}: no command contains "${containing}"`);
    return fill(c.text, values);
  };
  const machines = () => s.tb.env.mgmt.listSync<Machine>('Machine', { namespace: NS });
  const shot = async (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });
  const advance = async (duration: string) => {
    const r = await raw(s.facade, 'POST', '/_testbed/time/advance', { body: JSON.stringify({ duration }) });
    expect(r.code, r.text).toBe(200);
  };
  /** Advance in `step`s until `cond`; at most `max` steps. */
  const advanceUntil = async (cond: () => boolean, what: string, step = '30s', max = 240) => {
    for (let i = 0; i < max && !cond(); i++) await advance(step);
    if (!cond()) throw new Error(`not after ${max} × ${step} of virtual time: ${what}`);
  };
  const workers = () => machines().filter((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === 'demo-md-0' && !m.metadata.deletionTimestamp);
  const cps = () => machines().filter((m) => m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined && !m.metadata.deletionTimestamp);
  /** The page shows the current virtual time (its view caught up). */
  const caughtUp = async () => {
    const now = s.tb.clock.now();
    await page.waitForFunction((t) => Number(document.querySelector('#vtime')?.getAttribute('data-now')) === t, now);
  };

  /**
   * Every hostname of the pools has its row inside the 1440x900 viewport (no scrolling), showing the machine
   * that holds it now (or "free") and its disk; no two labels of the picture overlap; each segment label lies
   * inside its segment; the page has no horizontal scroll bar.
   */
  const checkFits = async (hostnames: string[]) => {
    await caughtUp();
    const rows = await page.$$eval('#hostnames g.hostrow', (gs) => gs.map((g) => {
      const r = g.getBoundingClientRect();
      return { hostname: g.getAttribute('data-hostname')!, status: g.getAttribute('data-status')!, machine: g.getAttribute('data-machine')!, disk: g.getAttribute('data-disk-state')!, box: { x: r.x, y: r.y, width: r.width, height: r.height } };
    }));
    expect(rows.map((r) => r.hostname).sort()).toEqual([...hostnames].sort());
    const pools = s.tb.env.mgmt.listSync<{ metadata: { name: string }; status?: { entries?: { hostname: string; machine?: string }[] } } & import('../../src/core/kube/types.js').KubeObject>('HCSMachineConfigPool', { namespace: NS });
    for (const r of rows) {
      expect(r.box.y + r.box.height, `${r.hostname}'s row is below the fold`).toBeLessThanOrEqual(VIEW.height);
      expect(r.box.x + r.box.width, `${r.hostname}'s row is cut at the right`).toBeLessThanOrEqual(VIEW.width);
      const holder = pools.flatMap((p) => p.status?.entries ?? []).find((e) => e.hostname === r.hostname)?.machine ?? '';
      expect(r.machine, r.hostname).toBe(holder);
      expect(r.status, r.hostname).toBe(holder ? 'serving' : r.disk ? 'kept' : 'free');
      expect(r.disk, `${r.hostname} shows its persistent disk`).not.toBe('');
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEW.width);
    // Labels: none overlaps another; a segment's label stays inside its segment.
    const texts = await page.$$eval('#hostnames svg text', (ts) => ts.map((t) => {
      const r = t.getBoundingClientRect();
      return { text: t.textContent ?? '', cls: t.getAttribute('class') ?? '', box: { x: r.x, y: r.y, width: r.width, height: r.height } };
    }));
    const overlap = (a: Box, b: Box) => a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) expect(overlap(texts[i]!.box, texts[j]!.box), `"${texts[i]!.text}" overlaps "${texts[j]!.text}"`).toBe(false);
    const svgBox = await page.$eval('#hostnames svg', (e) => {
      const r = e.getBoundingClientRect();
      return { x: r.x, width: r.width };
    });
    for (const t of texts) expect(t.box.x + t.box.width, `"${t.text}" runs past the picture`).toBeLessThanOrEqual(svgBox.x + svgBox.width + 0.5);
    const segs = await page.$$eval('#hostnames g.hostrow', (gs) => gs.flatMap((g) => {
      const spans = new Map<string, { x0: number; x1: number }>();
      for (const r of g.querySelectorAll('rect.mseg')) {
        const b = r.getBoundingClientRect();
        const m = r.getAttribute('data-machine')!;
        const cur = spans.get(m);
        spans.set(m, cur ? { x0: Math.min(cur.x0, b.x), x1: Math.max(cur.x1, b.x + b.width) } : { x0: b.x, x1: b.x + b.width });
      }
      return [...g.querySelectorAll('text.seg')].map((t) => {
        const b = t.getBoundingClientRect();
        const inside = [...spans.values()].some((sp) => b.x >= sp.x0 - 0.5 && b.x + b.width <= sp.x1 + 0.5);
        return { text: t.textContent ?? '', inside };
      });
    }));
    for (const sg of segs) expect(sg.inside, `segment label "${sg.text}" is cut by its segment`).toBe(true);
  };
  const why = async () => page.$$eval('#why li.stall', (ls) => ls.map((l) => ({ kind: l.getAttribute('data-kind'), name: l.getAttribute('data-name'), reason: l.getAttribute('data-reason'), hostname: l.getAttribute('data-hostname'), text: l.textContent ?? '' })));
  const status = async () => {
    let out = '';
    const code = await statusMain(['--kubeconfig', s.facade.kubeconfigPaths.combined], (t) => (out += t));
    expect(code, out).toBe(0);
    return out;
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const o: ServeOptions = { ...(parseServeArgs(['--preset', 'cluster', '--speed', '0', '--port', '0']) as ServeOptions), kubeconfigDir: mkdtempSync(join(tmpdir(), 'hosts-kc-')), tickMs: 0 };
    s = await startServe(o);
    k = new KubectlRunner(s.facade.kubeconfigPaths.combined);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
    page = await browser.newPage({ viewport: VIEW, ignoreHTTPSErrors: true });
    page.setDefaultTimeout(20_000);
    expect((await page.goto(s.facade.dashboardUrl))?.status()).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  const START = ['demo-cp-1', 'demo-cp-2', 'demo-cp-3', 'demo-worker-1', 'demo-worker-2', 'demo-worker-3'];
  const ALL = [...START, 'demo-worker-4'];

  it('start: every hostname with its machine and disk, on one screen; nothing is waiting', async () => {
    await checkFits(START);
    expect(await page.textContent('#why')).toContain('nothing is waiting');
    await shot('hosts-01-start');
  }, 60_000);

  it('the worker document as a guided demo (--auto): scale out, scale in, infrastructure upgrade — mid-rollout every hostname still shows what holds it; then the Kubernetes upgrade in the document\'s order stalls on the MachineSet preflight checks, and the "why" panel and hcs-testbed status say so (POOL-3, MD-5, UPG-1, UPG-3)', async () => {
    let printed = '';
    const results = await runDemo({
      doc: 'worker-nodes',
      kubeconfig: s.facade.kubeconfigPaths.combined,
      io: { write: (t) => (printed += t) },
      afterStep: async (id) => {
        if (id === 'scale-out-watch') await checkFits(ALL);
        if (id === 'infra-patch') {
          const before = workers().map((m) => m.metadata.name);
          await advanceUntil(() => machines().some((m) => m.metadata.deletionTimestamp) || workers().some((m) => !before.includes(m.metadata.name)), 'mid-rollout: an old worker deleting or a new one created', '10s');
          await advance('1m');
          await checkFits(ALL);
          await shot('hosts-02-mid-rollout');
        }
        if (id === 'k8s-patch') {
          await caughtUp();
          const stalls = await why();
          const pre = stalls.find((x) => x.kind === 'MachineSet' && x.reason === 'PreflightCheckFailed');
          expect(pre, JSON.stringify(stalls)).toBeDefined();
          expect(pre!.text).toContain('KubernetesVersionSkew');
          expect(pre!.text).toContain('KubeadmVersionSkew');
          expect(pre!.text).toContain('UPG-1');
          // The freed hostname keeps its disk with no machine: marked as such.
          const kept = await page.$$eval('#hostnames g.hostrow[data-status="kept"]', (gs) => gs.map((g) => g.getAttribute('data-hostname')));
          expect(kept).toHaveLength(2); // the one the scale-in freed, and the one the rollout removed first (maxSurge 0)
          await checkFits(ALL);
          await shot('hosts-03-preflight-stall');
          const out = await status();
          expect(out).toMatch(/MachineSet cpaas-system\/demo-md-0-\S+: .*preflight checks KubernetesVersionSkew, KubeadmVersionSkew.*PreflightCheckFailed \[KubernetesVersionSkew, KubeadmVersionSkew\] \(UPG-1 UPG-3\)/);
          expect(out).toMatch(new RegExp(`^  ${kept[0]}\\s+\\S+\\s+\\(free, disk kept\\)`, 'm'));
        }
      },
    });
    expect(results.filter((r) => r.code !== 0).map((r) => `${r.id}: ${r.out}`)).toEqual([]);
    // The guided demo itself said why it stopped waiting.
    expect(results.find((r) => r.id === 'k8s-patch')?.waited).toBe('stalled');
    expect(printed).toMatch(/not progressing: every worker at v1\.32\.3\. Why is it waiting\?[^]*KubernetesVersionSkew/);
    expect(printed).toContain('$ kubectl patch machinedeployment demo-md-0 -n cpaas-system \\\n');
    expect(printed.split('\n').filter((l) => /^ {3}\$ /.test(l) && /<[a-z-]+>/.test(l))).toEqual([]); // every placeholder filled in
  }, 300_000);

  it('the upgrade document as a guided demo (--auto): the control plane to v1.32.3, Kube-OVN phase by phase; the held workers then go on; at the end every hostname on one screen (KCP-3, OVN-4, UPG-1)', async () => {
    let printed = '';
    const results = await runDemo({
      doc: 'cluster-upgrade',
      kubeconfig: s.facade.kubeconfigPaths.combined,
      io: { write: (t) => (printed += t) },
      afterStep: async (id) => {
        if (id === 'k8s-edit') {
          const oldCp = cps().map((m) => m.metadata.name);
          await advanceUntil(() => cps().some((m) => !oldCp.includes(m.metadata.name)), 'a new control plane machine', '10s');
          await checkFits(ALL);
          await shot('hosts-04-cp-rollout');
        }
      },
    });
    expect(results.filter((r) => r.code !== 0).map((r) => `${r.id}: ${r.out}`)).toEqual([]);
    expect(results.filter((r) => r.waited === 'stalled').map((r) => r.id)).toEqual([]);
    // The phases one at a time, in order (OVN-4): Upgrading on the old revision, HealthChecking on the new, Success.
    const phases = [...printed.matchAll(/^ {5}Installed: (\S+)\n {5}Phase: (\w+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(phases.filter((p, i) => p !== phases[i - 1])).toEqual(['v4.1.6 Success', 'v4.1.6 Upgrading', 'v4.2.4 HealthChecking', 'v4.2.4 Success']);
    await advanceUntil(() => workers().length === 3 && workers().every((m) => m.status?.phase === 'Running' && m.spec.version === 'v1.32.3') && !machines().some((m) => m.metadata.deletionTimestamp), 'every worker at v1.32.3 once the control plane is');
    await advance('1m');
    await checkFits(ALL);
    expect(await page.textContent('#why')).toContain('nothing is waiting');
    await shot('hosts-05-end');
  }, 300_000);

  it('a stuck detach injected from the page shows on its hostname\'s row, and DiskDetachStuck in the "why" panel and in status (HCS-6, DISK-9)', async () => {
    await page.selectOption('#fault-preset', 'stuck-detach');
    await page.click('#inject');
    await page.waitForSelector('#faults .fault');
    await k.ok(cmd(worker, '"/spec/replicas"', { ...all, '<new-replica-count>': '2' }));
    const deleting = () => machines().find((m) => m.metadata.deletionTimestamp);
    await advanceUntil(() => deleting() !== undefined, 'a worker deleting', '10s');
    await advance('7m');
    await caughtUp();
    const gone = deleting()!;
    const host = s.tb.env.mgmt.listSync<{ status?: { hostname?: string } } & import('../../src/core/kube/types.js').KubeObject>('HCSMachine', { namespace: NS }).find((h) => h.metadata.name === gone.metadata.name)?.status?.hostname;
    expect(host).toBeDefined();
    const row = page.locator(`#hostnames g.hostrow[data-hostname="${host}"]`);
    expect(await row.getAttribute('data-disk-state')).toBe('detaching');
    expect(await row.locator('rect.disk[data-state="detaching"]').count()).toBeGreaterThan(0);
    expect(await row.locator('circle.fault').count()).toBeGreaterThan(0);
    const stalls = await why();
    expect(stalls.find((x) => x.reason === 'DiskDetachStuck' && x.hostname === host), JSON.stringify(stalls)).toBeDefined();
    await checkFits(ALL);
    await shot('hosts-06-stuck-detach');
    expect(await status()).toMatch(new RegExp(`HCSMachine cpaas-system/${gone.metadata.name} \\(${host}\\): .*DiskDetachStuck.*\\(DISK-9`));
    await page.click('#release-all');
    await advanceUntil(() => machines().length === 5, 'the scale-in completes once released', '30s', 40);
  }, 180_000);
});
