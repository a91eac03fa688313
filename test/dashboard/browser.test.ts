/**
 * The live dashboard in a real browser (Debian's chromium driven by
 * playwright-core; .ci/run installs it): the page loads from the served
 * address, a machine added with the real kubectl appears on it, Pause stops
 * virtual time and Advance moves it, and a fault injected from the page
 * (a stuck detach, HCS-6) shows on the volume lane of the timeline (DISK-9).
 * Screenshots go to out/ci/screenshots (CI artifacts).
 *
 * The live clock's wall time is injected: the test moves it and ticks the
 * clock by hand, so nothing here waits on wall-clock time except the bounded
 * waits for the page to show what the server pushed.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Machine } from '../../src/product/api/capi.js';
import { parseServeArgs, startServe, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { REPO } from '../facade/fixture.js';
import { raw } from '../facade/http.js';
import { haveKubectl, KubectlRunner } from '../facade/kubectl.js';
import { CHROMIUM, haveChromium, launchChromium } from './chromium.js';

const SHOTS = join(REPO, 'out', 'ci', 'screenshots');
if (!haveChromium) console.warn(`test/dashboard/browser: skipped, no chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`);

describe.skipIf(!haveChromium || !haveKubectl)('dashboard in chromium (playwright-core)', () => {
  let s: Served;
  let browser: Browser;
  let page: Page;
  let k: KubectlRunner;
  let wall = 1_000_000;
  const NS = 'cpaas-system';
  /** Let `ms` of wall time pass for the live clock and tick it once. */
  const wallTick = async (ms: number) => {
    wall += ms;
    await s.time.tick();
  };
  const machines = () => s.tb.env.mgmt.listSync<Machine>('Machine', { namespace: NS });
  const shot = async (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const pageNow = async () => Number(await page.getAttribute('#vtime', 'data-now'));

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const o: ServeOptions = { ...(parseServeArgs(['--preset', 'worker-cluster', '--speed', '10', '--port', '0']) as ServeOptions), kubeconfigDir: mkdtempSync(join(tmpdir(), 'dash-kc-')), tickMs: 0, wallNow: () => wall };
    s = await startServe(o);
    k = new KubectlRunner(s.facade.kubeconfigPaths.combined);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1500, height: 1100 }, ignoreHTTPSErrors: true });
    page.setDefaultTimeout(20_000);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('the page loads at the served address (a browser gets HTML; API clients still get the root paths)', async () => {
    // Without the token: 401; the printed dashboard address sets the cookie and lands on the page.
    expect((await page.goto(`${s.facade.url}/`))?.status()).toBe(401);
    const res = await page.goto(s.facade.dashboardUrl);
    expect(res?.status()).toBe(200);
    expect(page.url()).toBe(`${s.facade.url}/`);
    expect(res?.headers()['content-type']).toMatch(/text\/html/);
    await page.waitForFunction(() => document.querySelectorAll('#machines tbody tr').length === 3);
    await expect.poll(() => page.textContent('#vstate')).toBe('running ×10');
    expect(await page.textContent('#mds tbody')).toMatch(/demo-md-0.*3\/3/);
    expect(await page.locator('#hosts .hrow[data-hostname]').count()).toBe(3);
    expect(await page.textContent('#hosts')).toContain('192.168.10.11');
    expect(await page.locator('#servers tbody tr').count()).toBe(3);
    expect(await page.textContent('#volumes tbody')).toMatch(/demo-demo-worker-1-pd0in-usedemo-md-0-\S+yes/);
    // The report's timeline (one lane per machine, server, volume) is drawn on demand: when its section is opened.
    await page.click('#detail > summary');
    await page.waitForSelector('#timeline svg rect[data-lane="machine"]');
    expect(await page.locator('#timeline svg rect[data-lane="machine"]').count()).toBeGreaterThanOrEqual(3);
    const api = await raw(s.facade, 'GET', '/', { headers: { Accept: 'application/json' } });
    expect((api.json as { paths: string[] }).paths).toContain('/apis');
    await shot('01-loaded');
  });

  it('after kubectl patch ... replicas the new machine appears on the page', async () => {
    const before = new Set(machines().map((m) => m.metadata.name));
    // The document's order: a fourth pool entry first (POOL-2), then the replicas.
    await k.ok(`kubectl apply -f ${join(REPO, 'scenarios/manifests/scale-out/worker-pool-4.yaml')}`);
    await k.ok(`kubectl patch machinedeployment demo-md-0 -n cpaas-system --type='json' -p='[{"op": "replace", "path": "/spec/replicas", "value": 4}]'`);
    await wallTick(1000); // 10 s of virtual time at speed 10: the MachineSet creates the machine
    const added = machines().find((m) => !before.has(m.metadata.name));
    expect(added).toBeDefined();
    await page.waitForSelector(`#machines tbody tr[data-name="${added!.metadata.name}"]`);
    for (let i = 0; i < 60 && machines().filter((m) => m.status?.phase === 'Running').length < 4; i++) await wallTick(6000);
    await page.waitForFunction((name) => document.querySelector(`#machines tbody tr[data-name="${name}"]`)?.textContent?.includes('Running') ?? false, added!.metadata.name);
    expect(await page.textContent('#mds tbody')).toMatch(/4\/4/);
    await shot('02-scaled-out');
  });

  it('Pause stops virtual time; Advance moves it by the duration; Resume runs it again', async () => {
    await page.click('#pause');
    await expect.poll(() => page.textContent('#vstate')).toBe('paused');
    const t = s.tb.clock.now();
    await wallTick(30_000);
    expect(s.tb.clock.now()).toBe(t);
    expect(await pageNow()).toBe(t);
    await page.fill('#advance-duration', '5m');
    await page.click('#advance');
    await expect.poll(pageNow).toBe(t + 300_000);
    expect(s.tb.clock.now()).toBe(t + 300_000);
    await page.fill('#advance-duration', 'five minutes');
    await page.click('#advance');
    await expect.poll(() => page.textContent('#message')).toMatch(/invalid duration "five minutes"/);
    expect(s.tb.clock.now()).toBe(t + 300_000);
    await page.click('#resume');
    await expect.poll(() => page.textContent('#vstate')).toBe('running ×10');
    await wallTick(1000);
    expect(s.tb.clock.now()).toBe(t + 310_000);
    await shot('03-time-controls');
  });

  it('a stuck detach injected from the page shows on the volume lane; released, the disk detaches', async () => {
    await page.click('#fault-menu > summary');
    await page.selectOption('#fault-preset', 'stuck-detach');
    await page.click('#inject');
    await page.waitForSelector('#faults .fault');
    expect(s.tb.cloud.faults.list().map((f) => f.operation)).toEqual(['detachVolume']);
    await page.click('#pause');
    await k.ok('kubectl scale machinedeployment demo-md-0 -n cpaas-system --replicas=3');
    await page.fill('#advance-duration', '3m');
    await page.click('#advance');
    await page.waitForSelector('#timeline svg rect[data-lane="volume"][data-state="detaching"]');
    await page.waitForSelector('#timeline svg circle.fault[data-lane="volume"]');
    expect(await page.textContent('#volumes tbody')).toContain('detaching');
    await shot('04-stuck-detach');
    await page.click('#faults .fault button.release');
    await page.waitForFunction(() => document.querySelectorAll('#faults .fault').length === 0);
    await page.click('#advance');
    await page.waitForFunction(() => !document.querySelector('#volumes tbody')?.textContent?.includes('detaching'));
    await shot('05-released');
  });

  it('HCS-6, DISK-9: a detach that times out (bug report 2): DiskDetachFailed shows in the events, and the next detach completes the scale-in', async () => {
    await page.selectOption('#fault-preset', 'detach-timeout');
    await page.click('#inject');
    await page.waitForSelector('#faults .fault');
    await k.ok('kubectl scale machinedeployment demo-md-0 -n cpaas-system --replicas=2');
    await page.fill('#advance-duration', '5m');
    await page.click('#advance');
    await page.waitForSelector('#timeline svg rect[data-lane="volume"][data-state="detaching"]');
    await page.fill('#advance-duration', '10m');
    await page.click('#advance');
    await expect.poll(() => page.textContent('#events'), { timeout: 20_000 }).toMatch(/DiskDetachFailed/);
    await shot('06-detach-timeout');
    await page.click('#advance');
    await page.waitForFunction(() => !document.querySelector('#volumes tbody')?.textContent?.includes('detaching'));
    await expect.poll(() => machines().length, { timeout: 20_000 }).toBe(2);
    // The fault fired once (count 1): the retry was a plain detach.
    expect(s.tb.cloud.faults.list().map((f) => [f.operation, f.fired])).toEqual([['detachVolume', 1]]);
  });
});
