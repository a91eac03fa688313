/**
 * The HTML report's timelines in a real browser (Debian's chromium driven by
 * playwright-core, as test/dashboard/browser.test.ts; .ci/run installs it):
 * with the fonts chromium actually uses, step labels on a row never overlap,
 * no text is wider than the model's estimate (6.2 px per character, which
 * the model's no-overlap placement relies on), lane labels stay in their
 * column. Screenshots go to out/ci/screenshots (CI artifacts).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/harness/cli/main.js';
import { CHAR_W, LABEL_W } from '../../src/harness/report/timeline.js';
import { REPO } from '../facade/fixture.js';

// As test/dashboard/browser.test.ts (importing that file would run its suite here too).
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const SHOTS = join(REPO, 'out', 'ci', 'screenshots');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`test/report/browser: skipped, no chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`);

/** A run that times out after 30 idle minutes, one with Warning events and a violation, one with cloud faults. */
const FILES = ['test/report/fixtures/failing-rollout.yaml', 'test/library/bug-reports/report-1-maxsurge-1.yaml', 'scenarios/cloud-faults.yaml'];

interface Box {
  x: number;
  w: number;
  row: string | null;
  text: string;
  cls: string;
}

describe.skipIf(!haveChromium)('HTML report timelines in chromium (playwright-core)', () => {
  let browser: Browser;
  let out: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    out = mkdtempSync(join(tmpdir(), 'hcs-report-browser-'));
    await main(['run', ...FILES, '--jobs', '1', '--no-color', '--report', 'html,junit', '--out', out], () => {});
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('step labels never overlap, texts fit the model\'s width estimate, lane labels stay in their column (screenshots saved)', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(`file://${join(out, 'report.html')}`);
    const svgs = page.locator('svg.timeline');
    expect(await svgs.count()).toBe(FILES.length);
    for (let i = 0; i < FILES.length; i++) {
      const svg = svgs.nth(i);
      const boxes: Box[] = await svg.evaluate((el) =>
        [...el.querySelectorAll('text')].map((t) => {
          const b = (t as SVGTextElement).getBBox();
          // The text itself, without its <title> tooltip.
          const own = [...t.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('');
          return { x: b.x, w: b.width, row: t.getAttribute('data-row'), text: own, cls: t.getAttribute('class') ?? '' };
        }),
      );
      const steps = boxes.filter((b) => b.cls === 'steplbl');
      expect(steps.length).toBeGreaterThan(0);
      for (const row of ['0', '1', '2']) {
        const on = steps.filter((b) => b.row === row).sort((a, b) => a.x - b.x);
        for (let k = 1; k < on.length; k++) expect(on[k]!.x, `${FILES[i]} row ${row}: "${on[k - 1]!.text}" overlaps "${on[k]!.text}"`).toBeGreaterThanOrEqual(on[k - 1]!.x + on[k - 1]!.w);
      }
      for (const b of boxes.filter((x) => x.cls.startsWith('lbl') || x.cls === 'steplbl' || x.cls === 'seg')) expect(b.w, `"${b.text}"`).toBeLessThanOrEqual(b.text.length * CHAR_W + 0.5);
      for (const b of boxes.filter((x) => x.cls === 'lbl' && /^(machine|server|volume): /.test(x.text))) expect(b.x + b.w, b.text).toBeLessThan(LABEL_W);
      await svg.screenshot({ path: join(SHOTS, `report-timeline-${i + 1}.png`) });
    }
    // The idle 30 minutes of the first run are a visible break; the rollout before it spans most of the plot.
    const first = svgs.nth(0);
    expect(await first.locator('g.break').count()).toBeGreaterThanOrEqual(1);
    expect(await first.locator('text.brk').first().textContent()).toMatch(/^≈\d+m/);
    // Warning events are marked on the second (bug report 1: MaxSurgeTookAnotherEntry, NoFreePoolEntry).
    expect(await svgs.nth(1).locator('path.warning').count()).toBeGreaterThanOrEqual(3);
    await page.screenshot({ path: join(SHOTS, 'report-page.png'), fullPage: true });
    await page.close();
  }, 60_000);

  it('the JUnit XML is well-formed for a real XML parser (the browser\'s DOMParser), with the counts in its attributes', async () => {
    const page = await browser.newPage();
    const xml = readFileSync(join(out, 'junit.xml'), 'utf8');
    const r = await page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, 'application/xml');
      const err = doc.querySelector('parsererror');
      const suites = [...doc.querySelectorAll('testsuite')].map((s) => ({
        name: s.getAttribute('name'),
        tests: Number(s.getAttribute('tests')),
        cases: s.querySelectorAll('testcase').length,
        failures: Number(s.getAttribute('failures')),
        failed: s.querySelectorAll('testcase > failure').length,
        skipped: Number(s.getAttribute('skipped')),
        notRun: s.querySelectorAll('testcase > skipped').length,
        withFileLine: [...s.querySelectorAll('testcase')].filter((c) => c.getAttribute('file') && Number(c.getAttribute('line')) > 0).length,
        virtual: s.querySelectorAll('testcase > properties > property[name="virtualSeconds"]').length,
      }));
      return { error: err?.textContent ?? null, suites };
    }, xml);
    expect(r.error).toBeNull();
    expect(r.suites.map((s) => s.name)).toEqual(['report-fixture-failing-rollout', 'report-1-maxsurge-1', 'cloud-faults']);
    for (const s of r.suites) {
      expect(s.cases).toBe(s.tests);
      expect(s.failed).toBe(s.failures);
      expect(s.notRun).toBe(s.skipped);
      expect(s.withFileLine).toBe(s.tests);
      expect(s.virtual).toBe(s.tests);
    }
    expect(r.suites[0]).toMatchObject({ tests: 7, failures: 1, skipped: 3 });
    await page.close();
  });
});
