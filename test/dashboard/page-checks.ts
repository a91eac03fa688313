/**
 * What the dashboard's browser tests check on a page (issue 34): the owner
 * tree and its counts above the fold, no text clipped, overlapping, past the
 * right edge or under 12 px, and the screens they run at.
 */
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';

export interface Screen {
  name: string;
  viewport: { width: number; height: number };
  /** 150 % zoom of a 1440×900 window: 960×600 CSS px at device scale 1.5. */
  deviceScaleFactor: number;
}

export const SCREENS: Screen[] = [
  { name: '1280x800', viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 },
  { name: '1440x900', viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 },
  { name: 'zoom150', viewport: { width: 960, height: 600 }, deviceScaleFactor: 1.5 },
];

export async function openPages(browser: Browser, url: string): Promise<{ screen: Screen; page: Page }[]> {
  const out: { screen: Screen; page: Page }[] = [];
  for (const screen of SCREENS) {
    const page = await browser.newPage({ viewport: screen.viewport, deviceScaleFactor: screen.deviceScaleFactor, ignoreHTTPSErrors: true });
    page.setDefaultTimeout(20_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    expect((await page.goto(url))?.status()).toBe(200);
    await page.waitForFunction(() => (window as unknown as { __dashboard: { updates: number } }).__dashboard.updates > 0);
    (page as Page & { errors?: string[] }).errors = errors;
    out.push({ screen, page });
  }
  return out;
}

/** The page shows virtual time `now` (its view caught up with the server). */
export async function caughtUp(page: Page, now: number): Promise<void> {
  await page.waitForFunction((t) => Number(document.querySelector('#vtime')?.getAttribute('data-now')) === t, now);
}

/** Every row of the owner tree and every rollout line inside the viewport (no scrolling), with the counts the API has. */
export async function treeAboveFold(page: Page, label: string): Promise<{ id: string; counts: string[] }[]> {
  await page.evaluate(() => window.scrollTo(0, 0));
  const rows = await page.$$eval('#rollouts li, #tree tbody tr:not(.drill)', (els) =>
    els.map((e) => ({ id: e.getAttribute('data-id') ?? e.textContent ?? '', bottom: e.getBoundingClientRect().bottom, counts: [...e.querySelectorAll('td.n')].map((c) => c.textContent ?? '') })),
  );
  const h = await page.evaluate(() => window.innerHeight);
  expect(rows.length, `${label}: the owner tree is empty`).toBeGreaterThan(2);
  for (const r of rows) expect(r.bottom, `${label}: ${r.id} is below the fold`).toBeLessThanOrEqual(h);
  return rows.map((r) => ({ id: r.id, counts: r.counts }));
}

/** Whether an element is entirely inside the viewport (page scrolled to the top). */
export async function inViewport(page: Page, selector: string): Promise<boolean> {
  await page.evaluate(() => window.scrollTo(0, 0));
  return page.$eval(selector, (e) => {
    const r = e.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight && r.left >= 0 && r.right <= document.documentElement.clientWidth && r.height > 0;
  });
}

/**
 * Text that is cut (by an ancestor hiding overflow), runs past the right edge, overlaps other
 * text or is smaller than 12 px, in the given parts of the page; the page has no horizontal scroll.
 */
export async function layoutProblems(page: Page, selectors: string[]): Promise<string[]> {
  await page.evaluate(() => window.scrollTo(0, 0));
  return page.evaluate((sels) => {
    const problems: string[] = [];
    const vw = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth > vw + 1) problems.push(`horizontal scroll: ${document.documentElement.scrollWidth} > ${vw}`);
    const rects: { l: number; t: number; r: number; b: number; text: string; node: Node }[] = [];
    for (const sel of sels) {
      for (const root of document.querySelectorAll(sel)) {
        if (root.closest('[hidden]')) continue;
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const text = (n.textContent ?? '').trim();
          const el = n.parentElement;
          if (!text || !el) continue;
          const cs = getComputedStyle(el);
          if (cs.visibility === 'hidden' || el.closest('details:not([open]) > :not(summary)') || el.closest('select')) continue;
          const fs = parseFloat(cs.fontSize);
          if (fs === 0) continue; // shown instead by a shorter text (::before)
          if (fs < 12) problems.push(`${fs}px text: "${text.slice(0, 60)}"`);
          const range = document.createRange();
          range.selectNodeContents(n);
          for (const r of range.getClientRects()) {
            if (r.width < 0.5 || r.height < 0.5) continue;
            for (let a: HTMLElement | null = el; a && a !== document.body; a = a.parentElement) {
              const s = getComputedStyle(a);
              if (!['hidden', 'clip'].includes(s.overflowX) && !['hidden', 'clip'].includes(s.overflowY)) continue;
              const b = a.getBoundingClientRect();
              if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) problems.push(`clipped by ${a.tagName.toLowerCase()}.${a.className}: "${text.slice(0, 60)}"`);
            }
            if (r.right > vw + 1) problems.push(`past the right edge (${Math.round(r.right)} > ${vw}): "${text.slice(0, 60)}"`);
            rects.push({ l: r.left, t: r.top, r: r.right, b: r.bottom, text, node: n });
          }
        }
      }
    }
    rects.sort((a, b) => a.t - b.t);
    for (let i = 0; i < rects.length; i++) {
      const a = rects[i]!;
      for (let j = i + 1; j < rects.length && rects[j]!.t < a.b - 1; j++) {
        const b = rects[j]!;
        if (a.node === b.node) continue;
        if (Math.min(a.r, b.r) - Math.max(a.l, b.l) > 1 && Math.min(a.b, b.b) - Math.max(a.t, b.t) > 1) problems.push(`"${a.text.slice(0, 40)}" overlaps "${b.text.slice(0, 40)}"`);
      }
    }
    return [...new Set(problems)].slice(0, 30);
  }, selectors);
}

/** The parts of the page the story is told in. */
export const STORY_PARTS = ['#top', '#attention', '#tree-section', '#waiting-section', '#workload-section', '#hosts-section', '#why-section'];
