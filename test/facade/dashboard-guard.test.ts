/**
 * Issue 24: the dashboard's control calls (time, faults) check Host and
 * Origin and take JSON only (src/harness/dashboard/control-guard.ts). A page on
 * another port of 127.0.0.1 (same site: the SameSite=Strict cookie goes
 * along) or a DNS-rebound name must not pause time or inject faults; a
 * text/plain body (what a form or a no-cors fetch sends) is refused. Nothing
 * changes on a refusal; the same call from the dashboard's own origin works,
 * and so does the CLI (hcs-testbed time, no Origin).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeArgs, startServe, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { timeMain } from '../../src/harness/cli/time.js';
import { raw } from './http.js';

describe('issue 24: dashboard control calls: same origin, loopback Host, application/json', () => {
  let s: Served;
  let origin: string;
  beforeAll(async () => {
    const o = { ...(parseServeArgs(['--speed', '0', '--port', '0']) as ServeOptions), kubeconfigDir: mkdtempSync(join(tmpdir(), 'dash-guard-')), tickMs: 0 };
    s = await startServe(o);
    origin = s.facade.url; // https://127.0.0.1:<port>
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  }, 30_000);

  const faults = (): number => s.tb.cloud.faults.list().length;
  const port = (): string => new URL(origin).port;

  it('refused: another origin (same site, other port), a rebound Host, text/plain, no content type; nothing changes', async () => {
    expect(s.time.status().paused).toBe(true);
    const preset = JSON.stringify({ preset: Object.keys((await raw(s.facade, 'GET', '/_testbed/faults/presets')).json)[0] });
    const refused: [string, string, Record<string, string>, string | undefined, string | undefined, number][] = [
      ['/_testbed/time/resume', 'other port', { Origin: `https://127.0.0.1:${Number(port()) + 1}` }, '{}', 'application/json', 403],
      ['/_testbed/time/resume', 'other scheme', { Origin: `http://127.0.0.1:${port()}` }, '{}', 'application/json', 403],
      ['/_testbed/time/resume', 'rebound host', { Host: `evil.example:${port()}`, Origin: `https://evil.example:${port()}` }, '{}', 'application/json', 403],
      ['/_testbed/time/resume', 'text/plain', { Origin: origin }, '{}', 'text/plain', 415],
      ['/_testbed/time/resume', 'form', {}, 'a=b', 'application/x-www-form-urlencoded', 415],
      ['/_testbed/faults', 'other port', { Origin: `https://127.0.0.1:${Number(port()) + 1}` }, preset, 'application/json', 403],
      ['/_testbed/faults', 'text/plain', {}, preset, 'text/plain', 415],
    ];
    for (const [path, what, headers, body, contentType, code] of refused) {
      // (A rebound name reaches the same address; TLS is checked against the certificate's own name.)
      const r = await raw(s.facade, 'POST', path, { headers, servername: 'localhost', ...(body !== undefined ? { body } : {}), ...(contentType ? { contentType } : {}) });
      expect(r.code, `${path} ${what}: ${r.text}`).toBe(code);
      expect(r.json.kind).toBe('Status');
    }
    // No content type at all (a bodiless no-cors POST).
    const bare = await raw(s.facade, 'POST', '/_testbed/time/resume', { headers: { Origin: origin } });
    expect(bare.code).toBe(415);
    expect(s.time.status().paused).toBe(true);
    expect(faults()).toBe(0);
  }, 60_000);

  it('accepted: the dashboard\'s own origin with JSON (localhost too), and the CLI without an Origin', async () => {
    const ok = await raw(s.facade, 'POST', '/_testbed/time/resume', { headers: { Origin: origin }, body: '{}' });
    expect(ok.code, ok.text).toBe(200);
    expect(s.time.status().paused).toBe(false);
    const local = await raw(s.facade, 'POST', '/_testbed/time/pause', { headers: { Host: `localhost:${port()}`, Origin: `https://localhost:${port()}` }, servername: 'localhost', body: '{}' });
    expect(local.code, local.text).toBe(200);
    expect(s.time.status().paused).toBe(true);
    const out: string[] = [];
    expect(await timeMain(['resume', '--kubeconfig', s.facade.kubeconfigPaths.combined], (t) => out.push(t))).toBe(0);
    expect(s.time.status().paused).toBe(false);
    expect(await timeMain(['pause', '--kubeconfig', s.facade.kubeconfigPaths.combined], (t) => out.push(t))).toBe(0);
    // Reads are not control calls.
    expect((await raw(s.facade, 'GET', '/_testbed/time', { headers: { Origin: 'https://evil.example' } })).code).toBe(200);
  }, 60_000);
});
