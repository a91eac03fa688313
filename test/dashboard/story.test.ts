/**
 * Issue 34 must-show, in a real browser (Debian's chromium through
 * playwright-core) at 1280×800, 1440×900 and 150 % zoom (960×600 CSS px at
 * device scale 1.5), all three pages open on the same served testbed:
 * - both documents through the guided demo (`runDemo`, --auto) on `serve
 *   --preset cluster`: at each checkpoint the owner tree and its counts are
 *   above the fold and agree with the API, no text is clipped, overlapping,
 *   past the right edge or under 12 px; the worker upgrade's preflight stall
 *   pinned on top with its fix (UPG-1); a healthy control plane rollout never
 *   listed as a fault (no KCP-5); the Kube-OVN phases and the workload
 *   cluster's nodes on the page; the end: every node at the new version,
 *   nothing waiting;
 * - a stuck detach on its hostname's row (DISK-9, HCS-6);
 * - maxSurge 1 on a full pool with persistent disks: the surge machine in its
 *   own lane with the maxSurge 0 advice and the reason (MD-3), never "add an
 *   entry";
 * - a pool of 100 workers mid-rollout: the tree collapsed to counts above the
 *   fold, the pool's summary row, the "not Ready" filter and search, and the
 *   size of an update (< 50 KB) — printed with the page's render time.
 * Screenshots: out/ci/screenshots/story-*.png. Virtual time moves only
 * through serve's time API; every wait is bounded.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeadmControlPlane, Machine, MachineDeployment } from '../../src/product/api/capi.js';
import { runDemo } from '../../src/harness/cli/demo.js';
import { statusMain } from '../../src/harness/cli/status.js';
import { parseServeArgs, startServe, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { REPO } from '../facade/fixture.js';
import { raw } from '../facade/http.js';
import { haveKubectl, KubectlRunner } from '../facade/kubectl.js';
import { haveChromium, launchChromium } from './chromium.js';
import { bigClusterManifests, startSurgeRollout } from './fixtures.js';
import { caughtUp, inViewport, layoutProblems, openPages, STORY_PARTS, treeAboveFold, type Screen } from './page-checks.js';

const SHOTS = join(REPO, 'out', 'ci', 'screenshots');
const NS = 'cpaas-system';
if (!haveChromium) console.warn('test/dashboard/story: skipped, no chromium (.ci/run installs Debian\'s chromium)');

interface Served2 {
  s: Served;
  pages: { screen: Screen; page: Page }[];
}

async function serve(browser: Browser, args: string[]): Promise<Served2> {
  const o: ServeOptions = { ...(parseServeArgs([...args, '--speed', '0', '--port', '0']) as ServeOptions), kubeconfigDir: mkdtempSync(join(tmpdir(), 'story-kc-')), tickMs: 0 };
  const s = await startServe(o);
  return { s, pages: await openPages(browser, s.facade.dashboardUrl) };
}

const advance = async (s: Served, duration: string) => {
  const r = await raw(s.facade, 'POST', '/_testbed/time/advance', { body: JSON.stringify({ duration }) });
  expect(r.code, r.text).toBe(200);
};
const machines = (s: Served) => s.tb.env.mgmt.listSync<Machine>('Machine', { namespace: NS });

/** On every page: caught up, the tree and its counts (as the API has them) above the fold, no layout problem; a screenshot each. */
async function checkAll(x: Served2, shot: string): Promise<void> {
  const now = x.s.tb.clock.now();
  const mgmt = x.s.tb.env.mgmt;
  for (const { screen, page } of x.pages) {
    await caughtUp(page, now);
    await page.screenshot({ path: join(SHOTS, `story-${shot}-${screen.name}.png`) });
    const label = `${shot} at ${screen.name}`;
    const rows = await treeAboveFold(page, label);
    for (const md of mgmt.listSync<MachineDeployment>('MachineDeployment')) {
      const row = rows.find((r) => r.id === `MachineDeployment/${NS}/${md.metadata.name}`);
      expect(row?.counts, `${label}: ${md.metadata.name}'s counts`).toEqual([md.spec.replicas, md.status?.replicas, md.status?.updatedReplicas, md.status?.readyReplicas].map((n) => String(n ?? 0)));
    }
    for (const k of mgmt.listSync<KubeadmControlPlane>('KubeadmControlPlane')) {
      const row = rows.find((r) => r.id === `KubeadmControlPlane/${NS}/${k.metadata.name}`);
      expect(row?.counts, `${label}: ${k.metadata.name}'s counts`).toEqual([k.spec.replicas, k.status?.replicas, k.status?.updatedReplicas, k.status?.readyReplicas].map((n) => String(n ?? 0)));
    }
    expect(await layoutProblems(page, STORY_PARTS), label).toEqual([]);
    expect((page as Page & { errors?: string[] }).errors, label).toEqual([]);
  }
}

describe.skipIf(!haveChromium || !haveKubectl)('issue 34: the rollout as a story an audience follows, at 1280×800, 1440×900 and 150 % zoom', () => {
  let browser: Browser;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => browser?.close());

  describe('both documents, guided (serve --preset cluster)', () => {
    let x: Served2;
    beforeAll(async () => (x = await serve(browser, ['--preset', 'cluster'])), 120_000);
    afterAll(async () => x?.s.close());
    const kcp5 = async () => {
      for (const { page } of x.pages) expect(await page.$$eval('#why li.stall', (ls) => ls.map((l) => `${l.getAttribute('data-reason')} ${l.textContent}`).filter((t) => /KCP-5|EtcdCluster|PreflightChecksFailed/.test(t)))).toEqual([]);
    };

    it('start: the owner tree with its counts on one screen, nothing waiting, the workload cluster\'s nodes', async () => {
      await checkAll(x, '01-start');
      for (const { page } of x.pages) {
        expect(await page.textContent('#attention')).toContain('Nothing is waiting');
        expect(await page.textContent('#stall-badge')).toBe('nothing is waiting');
        expect(await page.$$eval('#workloads tr[data-node]', (t) => t.map((r) => r.textContent))).toHaveLength(6);
      }
    }, 60_000);

    it('the worker document: scale out, scale in, infrastructure upgrade mid-rollout, then the Kubernetes upgrade held by the preflight checks — pinned on top with its fix (UPG-1)', async () => {
      let printed = '';
      const results = await runDemo({
        doc: 'worker-nodes',
        kubeconfig: x.s.facade.kubeconfigPaths.combined,
        io: { write: (t) => (printed += t) },
        afterStep: async (id) => {
          if (id === 'scale-out-watch') await checkAll(x, '02-scaled-out');
          if (id === 'infra-patch') {
            const before = machines(x.s).map((m) => m.metadata.name);
            for (let i = 0; i < 60 && !machines(x.s).some((m) => m.metadata.deletionTimestamp || !before.includes(m.metadata.name)); i++) await advance(x.s, '10s');
            await advance(x.s, '1m');
            await checkAll(x, '03-mid-rollout');
            for (const { page } of x.pages) expect(await page.textContent('#rollouts')).toMatch(/worker rollout demo-md-0: \d\/3 updated, .*maxSurge 0, maxUnavailable 1 — rolling/);
          }
          if (id === 'k8s-patch') {
            await checkAll(x, '04-preflight-stall');
            for (const { screen, page } of x.pages) {
              const group = page.locator('#attention li.stallgroup[data-reason="PreflightCheckFailed"]');
              expect(await group.textContent(), screen.name).toMatch(/KubernetesVersionSkew.*UPG-1.*Fix: upgrade the control plane first/);
              expect(await inViewport(page, '#attention li.stallgroup[data-reason="PreflightCheckFailed"] .advice'), screen.name).toBe(true);
              expect(await page.textContent('#rollouts'), screen.name).toMatch(/worker rollout demo-md-0: 0\/3 updated.*held by the MachineSet preflight checks/);
            }
            let out = '';
            expect(await statusMain(['--kubeconfig', x.s.facade.kubeconfigPaths.combined], (t) => (out += t))).toBe(0);
            expect(out).toMatch(/PreflightCheckFailed \[KubernetesVersionSkew, KubeadmVersionSkew\] \(UPG-1 UPG-3\)\n {4}→ Fix: upgrade the control plane first/);
          }
        },
      });
      expect(results.filter((r) => r.code !== 0).map((r) => `${r.id}: ${r.out}`)).toEqual([]);
      expect(results.find((r) => r.id === 'k8s-patch')?.waited).toBe('stalled');
      expect(printed).toMatch(/not progressing: every worker at v1\.32\.3\. Why is it waiting\?[^]*KubernetesVersionSkew/);
    }, 400_000);

    it('the upgrade document: the control plane rollout is never a fault (no KCP-5), the Kube-OVN phases on the page, and it ends only when every node is at v1.32.3 (KCP-3, OVN-4, OVN-6, UPG-1)', async () => {
      const results = await runDemo({
        doc: 'cluster-upgrade',
        kubeconfig: x.s.facade.kubeconfigPaths.combined,
        io: { write: () => undefined },
        afterStep: async (id) => {
          if (id === 'k8s-edit') {
            // Through the whole control plane rollout, member by member: never a KCP-5 stall.
            const old = machines(x.s).filter((m) => m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined).map((m) => m.metadata.name);
            let shot = false;
            for (let i = 0; i < 80 && machines(x.s).some((m) => old.includes(m.metadata.name)); i++) {
              await advance(x.s, '15s');
              for (const { page } of x.pages) await caughtUp(page, x.s.tb.clock.now());
              await kcp5();
              if (!shot && machines(x.s).some((m) => m.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined && !old.includes(m.metadata.name))) {
                await checkAll(x, '05-cp-rollout');
                for (const { page } of x.pages) expect(await page.textContent('#rollouts')).toMatch(/control plane rollout demo-control-plane: \d\/3 updated.* — rolling to demo-cp-template-\S+ \(v1\.32\.3\)/);
                shot = true;
              }
            }
            expect(shot).toBe(true);
          }
          if (id === 'ovn-phases') {
            await checkAll(x, '06-kube-ovn');
            for (const { screen, page } of x.pages) {
              const phases = await page.$$eval('#workloads .ovn[data-apprelease="cni-kube-ovn"] .phases li', (ls) => ls.map((l) => l.textContent));
              expect(phases.slice(-4), screen.name).toEqual(['Success v4.1.6', 'Upgrading v4.1.6', 'HealthChecking v4.2.4', 'Success v4.2.4']);
              expect(await page.textContent('#workloads .ovn'), screen.name).toMatch(/target v4\.2\.4 · installed v4\.2\.4 · phase Success · done/);
              const ovn = page.locator('#workloads .ovn .phases');
              await ovn.scrollIntoViewIfNeeded();
              expect(await ovn.isVisible()).toBe(true);
              if (screen.name !== 'zoom150') expect(await inViewport(page, '#workloads .ovn .phases'), `${screen.name}: Kube-OVN's phases above the fold`).toBe(true);
            }
          }
        },
      });
      expect(results.filter((r) => r.code !== 0).map((r) => `${r.id}: ${r.out}`)).toEqual([]);
      expect(results.filter((r) => r.waited === 'stalled').map((r) => r.id)).toEqual([]);
      // The demo ended only once the document's check holds: the held workers finished, every node at the new version.
      expect(results.at(-1)!.out).not.toMatch(/v1\.31\.6/);
      expect(results.at(-1)!.look).toMatch(/all 6 Ready; every node at v1\.32\.3/);
      await checkAll(x, '07-end');
      for (const { page } of x.pages) {
        expect(await page.textContent('#attention')).toContain('Nothing is waiting');
        expect(await page.textContent('#stall-badge')).toBe('nothing is waiting');
        expect(await page.$$eval('#workloads tr[data-node]', (t) => t.map((r) => r.children[2]!.textContent))).toEqual(Array(6).fill('v1.32.3'));
      }
    }, 400_000);

    it('a stuck detach injected from the page shows on its hostname\'s row, readable without hovering, and DiskDetachStuck in the panel (HCS-6, DISK-9)', async () => {
      const page = x.pages[1]!.page;
      await page.click('#fault-menu > summary');
      await page.selectOption('#fault-preset', 'stuck-detach');
      await page.click('#inject');
      await page.waitForSelector('#faults .fault');
      await new KubectlRunner(x.s.facade.kubeconfigPaths.combined).ok('kubectl scale machinedeployment demo-md-0 -n cpaas-system --replicas=2');
      for (let i = 0; i < 30 && !machines(x.s).some((m) => m.metadata.deletionTimestamp); i++) await advance(x.s, '10s');
      await advance(x.s, '7m');
      await checkAll(x, '08-stuck-detach');
      const row = page.locator('#hosts .hrow[data-disk-state="detaching"]');
      expect(await row.count()).toBe(1);
      expect(await row.locator('.chip').textContent()).toBe('pd0 detaching');
      const host = await row.getAttribute('data-hostname');
      expect(await page.locator(`#why li[data-reason="DiskDetachStuck"][data-hostname="${host}"]`).count()).toBe(1);
      await page.click('#release-all');
      for (let i = 0; i < 40 && machines(x.s).length !== 5; i++) await advance(x.s, '30s');
      expect(machines(x.s)).toHaveLength(5);
    }, 180_000);
  });

  describe('maxSurge 1 on a full pool with persistent disks (serve --preset worker-cluster)', () => {
    let x: Served2;
    beforeAll(async () => (x = await serve(browser, ['--preset', 'worker-cluster'])), 120_000);
    afterAll(async () => x?.s.close());

    it('the surge machine has no hostname, so its own lane shows it, with the fix maxSurge 0 and why (MD-3); "add an entry" is not offered', async () => {
      await startSurgeRollout(x.s.tb.env.mgmt);
      await advance(x.s, '10m');
      await checkAll(x, '09-surge-stall');
      const surge = machines(x.s).find((m) => !x.s.tb.env.mgmt.getSync<{ status?: { hostname?: string } } & Machine>({ kind: 'HCSMachine', namespace: NS, name: m.metadata.name })?.status?.hostname)!;
      expect(surge).toBeDefined();
      for (const { screen, page } of x.pages) {
        const lane = `#waiting li[data-name="${surge.metadata.name}"]`;
        expect(await page.textContent(lane), screen.name).toMatch(/MachineDeployment demo-md-0 · pool demo-worker-pool · NoFreePoolEntry.*MD-3/);
        expect(await page.textContent(`${lane} .advice b`), screen.name).toBe('Fix: set maxSurge 0 on MachineDeployment demo-md-0');
        expect(await page.textContent(`${lane} .advice .cmd`), screen.name).toBe(`kubectl patch machinedeployment demo-md-0 -n cpaas-system --type merge -p '{"spec":{"strategy":{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1}}}}'`);
        expect(await page.textContent(`${lane} .advice .because`), screen.name).toMatch(/^Why: demo-worker-pool keeps persistent disks per hostname\..*\(MD-3\).*Do not add an entry\.$/);
        expect(await inViewport(page, lane), `${screen.name}: the waiting surge machine above the fold`).toBe(true);
        // Pinned on top, counted, pointing at the lane (the fix is said once, in the lane).
        expect(await page.textContent('#attention li.stallgroup[data-reason="NoFreePoolEntry"]'), screen.name).toMatch(/a surge machine waits for a free pool entry; maxSurge must be 0 with persistent disks \(MD-3\).* — its fix: in "Waiting for a pool entry" below/);
        expect(await inViewport(page, '#attention li.stallgroup[data-reason="NoFreePoolEntry"]'), screen.name).toBe(true);
        expect(await page.$$eval('.advice b', (bs) => bs.map((b) => b.textContent)), screen.name).not.toContainEqual(expect.stringMatching(/add an entry/));
        expect(await page.textContent('#rollouts'), screen.name).toMatch(/maxSurge 1, maxUnavailable 0 — held: a machine waits for a free pool entry/);
      }
      // Drill-down in place: the surge machine's HCSMachine, its conditions, events and YAML under its lane entry.
      const page = x.pages[1]!.page;
      await page.click(`#waiting li[data-name="${surge.metadata.name}"] .link`);
      const box = page.locator('#waiting .drill');
      await box.locator('pre.yaml').waitFor();
      expect(await box.locator('table.conds').textContent()).toMatch(/PoolEntryBound\s*False\s*NoFreePoolEntry/);
      expect(await box.locator('table.evs').textContent()).toMatch(/MD-3|NoFreePoolEntry/);
      expect(await box.locator('pre.yaml').textContent()).toContain(`name: ${surge.metadata.name}`);
      await page.screenshot({ path: join(SHOTS, 'story-10-drill-down-1440x900.png') });
    }, 180_000);
  });

  describe('a pool of 100 workers', () => {
    let x: Served2;
    beforeAll(async () => (x = await serve(browser, ['--apply', bigClusterManifests(100)])), 300_000);
    afterAll(async () => x?.s.close());

    it('mid-rollout: the tree collapsed to counts above the fold, the pool summary row, the "not Ready" filter and search; an update under 50 KB', async () => {
      expect(machines(x.s).filter((m) => m.status?.phase === 'Running')).toHaveLength(103);
      const mgmt = x.s.tb.env.mgmt;
      const t = mgmt.getSync<Machine & { spec: { template: { spec: Record<string, unknown> } } }>({ kind: 'HCSMachineTemplate', namespace: NS, name: 'demo-worker-template' })!;
      await mgmt.create({ apiVersion: t.apiVersion, kind: 'HCSMachineTemplate', metadata: { name: 'demo-worker-template-2', namespace: NS }, spec: { template: { spec: { ...t.spec.template.spec, flavorName: 's6.xlarge.2' } } } });
      await mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' }, 'merge', { spec: { template: { spec: { infrastructureRef: { name: 'demo-worker-template-2' } } } } });
      // Mid-rollout: some workers already on the new template and Running, most still old.
      const fresh = () => machines(x.s).filter((m) => m.status?.phase === 'Running' && mgmt.getSync<{ spec: { flavorName: string } } & Machine>({ kind: 'HCSMachine', namespace: NS, name: m.metadata.name })?.spec.flavorName === 's6.xlarge.2').length;
      for (let i = 0; i < 60 && fresh() < 15; i++) await advance(x.s, '30s');
      expect(fresh()).toBeGreaterThanOrEqual(15);
      expect(fresh()).toBeLessThan(100);
      await checkAll(x, '11-100-machines');
      const sizes: string[] = [];
      for (const { screen, page } of x.pages) {
        expect(await page.textContent('#hosts .pool[data-pool="demo-worker-pool"] .phead'), screen.name).toMatch(/workers · 100 entries: \d+ serving, \d+ Running/);
        expect(await inViewport(page, '#tree tr.k-more')).toBe(true);
        // A big pool shows the entries that need attention; "show all" and search find any.
        const attention = await page.locator('#hosts .pool[data-pool="demo-worker-pool"] .hrow:not(.axisrow)').count();
        expect(attention).toBeLessThan(100);
        await page.fill('#f-search', 'demo-worker-57');
        expect(await page.$$eval('#hosts .pool[data-pool="demo-worker-pool"] .hrow[data-hostname]', (r) => r.map((x) => x.getAttribute('data-hostname')))).toEqual(['demo-worker-57']);
        await page.fill('#f-search', '');
        await page.check('#f-notready');
        const notReady = await page.$$eval('#hosts .hrow[data-hostname]', (r) => r.map((x) => `${x.getAttribute('data-status')} ${x.getAttribute('data-phase')} ${x.getAttribute('data-disk-state')}`));
        expect(notReady.length).toBeGreaterThan(0);
        expect(notReady.filter((r) => r === 'serving Running in-use'), `${screen.name}: "not Ready only" shows a ready row`).toEqual([]);
        await page.uncheck('#f-notready');
        // One update of the rollout: what the page received and how long it took to draw it.
        const before = await page.evaluate(() => (window as unknown as { __dashboard: { updates: number } }).__dashboard.updates);
        await advance(x.s, '20s');
        await caughtUp(page, x.s.tb.clock.now());
        const d = await page.evaluate(() => (window as unknown as { __dashboard: { updates: number; lastBytes: number; lastRenderMs: number } }).__dashboard);
        expect(d.updates).toBeGreaterThan(before);
        expect(d.lastBytes, `${screen.name}: an update at 100 machines`).toBeLessThan(50_000);
        sizes.push(`${screen.name}: ${d.lastBytes} bytes, drawn in ${d.lastRenderMs.toFixed(1)} ms`);
      }
      console.log(`dashboard update at 100 machines (a rollout step of 20 s): ${sizes.join('; ')}`);
    }, 400_000);
  });
});
