/**
 * Debian's chromium for the dashboard's browser tests (playwright-core; .ci/run installs it):
 * headless, no GPU, no network of its own (no QUIC, no background fetches, no component
 * updates or sync), a fresh profile per launch (playwright's launch() gives chromium a new
 * temporary --user-data-dir each time and removes it on close).
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const haveChromium = existsSync(CHROMIUM);

/** Launch chromium (a fresh temporary profile). */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
}
