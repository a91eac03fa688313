/**
 * The embedded testbed's cloud clients hand their AK/SK beside each request
 * instead of signing it (product/cloud inProcessTransport, mock-hcs
 * verifyCredentials; docs/performance.md). The fake cloud must decide as it
 * does on a signature (HCS-5): the same refusals with the same messages, and
 * the library's event logs byte for byte the same as with signed calls.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockHcs, defaultCloudConfig, type MockHcs } from '../../mock-hcs/src/index.js';
import { verifyCredentials, verifySignature } from '../../mock-hcs/src/auth.js';
import { EventLog, SeededRng, VirtualClock } from '../../src/core/index.js';
import { dispatchTransport, HcsApiError, HcsClient, inProcessTransport, sdkDate, signRequest } from '../../src/product/cloud/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function cloud(): Promise<{ clock: VirtualClock; events: EventLog; hcs: MockHcs }> {
  const clock = new VirtualClock();
  const events = new EventLog(clock);
  const hcs = await createMockHcs({ clock, rng: new SeededRng(3), config: defaultCloudConfig(), events });
  closers.push(() => hcs.close());
  return { clock, events, hcs };
}

/** What a call answered: the error's status, code and message, or 'ok'. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof HcsApiError) return `${e.status} ${e.code} ${e.message}`;
    throw e;
  }
}

describe('in-process credentials (HCS-5)', () => {
  it('decide as the signature check does: right keys, a wrong SK, an unknown AK, a client clock outside the skew', async () => {
    const signed = await cloud();
    const carried = await cloud();
    const p = signed.hcs.config.projects[0]!;
    const cases: { label: string; ak: string; sk: string; clientSkewMs: number }[] = [
      { label: 'right keys', ak: p.ak, sk: p.sk, clientSkewMs: 0 },
      { label: 'wrong SK', ak: p.ak, sk: `${p.sk}x`, clientSkewMs: 0 },
      { label: 'SK of the same length', ak: p.ak, sk: p.sk.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')), clientSkewMs: 0 },
      { label: 'unknown AK', ak: 'NOSUCHACCESSKEY0000', sk: p.sk, clientSkewMs: 0 },
      { label: 'client clock 20 minutes fast', ak: p.ak, sk: p.sk, clientSkewMs: 20 * 60_000 },
      { label: 'client clock 20 minutes slow', ak: p.ak, sk: p.sk, clientSkewMs: -20 * 60_000 },
    ];
    const answers: Record<string, [string, string]> = {};
    for (const c of cases) {
      const client = (side: { clock: VirtualClock; hcs: MockHcs }, transport: ReturnType<typeof dispatchTransport>): HcsClient =>
        new HcsClient({ transport, ak: c.ak, sk: c.sk, projectId: p.id, clock: { ...side.clock, now: () => side.clock.now() + c.clientSkewMs } as VirtualClock });
      const a = await outcome(client(signed, dispatchTransport(signed.hcs)).listFlavors());
      const b = await outcome(client(carried, inProcessTransport(carried.hcs)).listFlavors());
      answers[c.label] = [a, b];
    }
    for (const [label, [a, b]] of Object.entries(answers)) expect(b, label).toBe(a);
    expect(answers['right keys']![0]).toBe('ok');
    expect(answers['wrong SK']![0]).toMatch(/^401 APIGW.0301 .*verify aksk signature fail/);
    expect(answers['unknown AK']![0]).toMatch(/^401 APIGW.0301 .*access key NOSUCHACCESSKEY0000 does not exist/);
    expect(answers['client clock 20 minutes fast']![0]).toMatch(/^401 APIGW.0301 .*outside the allowed clock skew/);
    // The refusals are recorded alike (auth.rejected events, HCS-5).
    expect(carried.events.all()).toEqual(signed.events.all());
    expect(signed.events.all().filter((e) => e.type === 'auth.rejected')).toHaveLength(5);
  });

  it('verifyCredentials and verifySignature give the same reason for the same keys, date and clock', () => {
    const lookup = (ak: string): string | undefined => (ak === 'AK1' ? 'secret-one' : undefined);
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const skew = 15 * 60_000;
    const req = (sk: string, at: number) => signRequest({ method: 'GET', path: '/v1/p/cloudservers/flavors', headers: {} }, { ak: 'AK1', sk }, 'h', new Date(at));
    for (const [sk, at] of [
      ['secret-one', now],
      ['secret-two', now],
      ['secret-one', now + skew + 1000],
      ['secret-one', now - skew - 1000],
    ] as const) {
      const r = req(sk, at);
      const bySignature = verifySignature({ method: r.method, url: r.path, headers: r.headers, body: '' }, lookup, now, skew);
      expect(verifyCredentials({ ak: 'AK1', sk }, r.headers['x-sdk-date'], lookup, now, skew), `${sk} at ${at - now} ms`).toEqual(bySignature);
    }
    expect(verifyCredentials({ ak: 'AK2', sk: 'x' }, sdkDate(new Date(now)), lookup, now, skew)).toEqual({ ok: false, reason: 'access key AK2 does not exist' });
    expect(verifyCredentials({ ak: 'AK1', sk: 'secret-one' }, undefined, lookup, now, skew)).toMatchObject({ ok: false, reason: expect.stringMatching(/X-Sdk-Date/) });
  });

  it('a request over HTTP cannot carry credentials: without a signature it is refused', async () => {
    const { hcs } = await cloud();
    const p = hcs.config.projects[0]!;
    // The same request inProcessTransport sends, less the side field: dispatch answers it as the wire would.
    const res = await hcs.dispatch({ method: 'GET', path: `/v1/${p.id}/cloudservers/flavors`, headers: { 'x-sdk-date': sdkDate(new Date(0)), host: 'mock-hcs.local' } });
    expect(res.status).toBe(401);
    expect(res.body).toContain('missing or malformed Authorization header');
  });

  it('the library: every scenario gives the same event log with signed calls and with in-process credentials', { timeout: 120_000 }, async () => {
    const files = readdirSync('scenarios').filter((f) => f.endsWith('.yaml')).sort();
    expect(files.length).toBeGreaterThan(20);
    for (const f of files) {
      const path = join('scenarios', f);
      const scenario = loadScenario(path, readFileSync(path, 'utf8'));
      const viaSignature = await runScenario(scenario, embeddedTestbedFactory({ signedCloudCalls: true }));
      const viaCredentials = await runScenario(scenario, embeddedTestbedFactory({}));
      expect(viaCredentials.ok, f).toBe(viaSignature.ok);
      expect(JSON.stringify(viaCredentials.events), f).toBe(JSON.stringify(viaSignature.events));
    }
  });
});
