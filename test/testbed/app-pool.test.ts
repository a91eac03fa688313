/**
 * mock-hcs's app pool (mock-hcs/src/binding.ts; issue 36, plan 8): a closed
 * mock's fastify app serves the next mock. A pooled app must answer exactly as
 * a freshly built one (the next mock's servers, volumes, fault rules, admin
 * token, request ids), must not go back to the pool while a request of its
 * mock is in flight, and the library's event logs must be byte for byte those
 * of testbeds that each build their own app.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockHcs, defaultCloudConfig, MockHcsAppPool, type MockHcs } from '../../mock-hcs/src/index.js';
import { EventLog, SeededRng, VirtualClock } from '../../src/core/index.js';
import { HcsClient, inProcessTransport } from '../../src/product/cloud/index.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { runScenario } from '../../src/harness/scenario/runner.js';
import { createTestbed, embeddedTestbedFactory } from '../../src/harness/testbed/index.js';

const pools: MockHcsAppPool[] = [];
afterEach(async () => {
  while (pools.length) await pools.pop()!.close();
});

async function mock(seed: number, appPool?: MockHcsAppPool): Promise<{ hcs: MockHcs; clock: VirtualClock; events: EventLog }> {
  const clock = new VirtualClock();
  const events = new EventLog(clock);
  const hcs = await createMockHcs({ clock, rng: new SeededRng(seed), config: defaultCloudConfig(), events, adminToken: `admin-token-of-mock-${seed}`, ...(appPool ? { appPool } : {}) });
  return { hcs, clock, events };
}

/** A sequence of calls that reads and changes the cloud; what each answered (status, x-request-id, body). */
async function session(m: { hcs: MockHcs; clock: VirtualClock }): Promise<string[]> {
  const p = m.hcs.config.projects[0]!;
  const out: string[] = [];
  const raw = async (method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<void> => {
    const r = await m.hcs.dispatch({ method, path, headers, ...(body !== undefined ? { body } : {}) });
    out.push(`${method} ${path} -> ${r.status} ${r.headers['x-request-id']} ${r.body}`);
  };
  const client = new HcsClient({ transport: inProcessTransport(m.hcs), ak: p.ak, sk: p.sk, projectId: p.id, clock: m.clock });
  const first = await client.listServers({});
  out.push(`servers at start: ${JSON.stringify(first)}`);
  await raw('POST', '/_admin/faults', { 'x-admin-token': 'admin-token-of-mock-7', 'content-type': 'application/json' }, JSON.stringify({ service: 'evs', operation: 'createVolume', effect: { type: 'error', status: 500, code: 'EVS.9999', message: 'planted' }, count: 1 }));
  await raw('GET', '/_admin/faults', { 'x-admin-token': 'admin-token-of-mock-8' });
  const vol = await client.createVolume({ volume: { name: 'pv-0', size: 10, volume_type: 'SSD', availability_zone: m.hcs.config.availabilityZones[0]! } }).then(
    (v) => `created ${JSON.stringify(v)}`,
    (e: Error) => `refused ${e.message}`,
  );
  out.push(vol);
  out.push(`volumes: ${JSON.stringify(await client.listVolumes({}))}`);
  out.push(await client.listFlavors().then((f) => `flavors ${f.length}`, (e: Error) => `flavors refused ${e.message}`));
  await raw('GET', `/v1/${p.id}/cloudservers/detail`);
  return out;
}

describe('mock-hcs app pool', () => {
  it('a pooled app answers as a fresh one: the next mock state, fault rules, admin token and request ids', async () => {
    const pool = new MockHcsAppPool();
    pools.push(pool);
    // Mock 7 leaves things behind in its app's mock: a fault rule, a volume.
    const a = await mock(7, pool);
    const left = await session(a);
    expect(left.some((l) => l.includes('"code":"EVS.9999"') || l.includes('planted')), left.join('\n')).toBe(true);
    a.hcs.faults.add({ service: 'ecs', operation: 'listFlavors', effect: { type: 'error', status: 503, code: 'Ecs.0001', message: 'left by mock 7' }, description: 'a rule mock 7 never fired' });
    await a.hcs.close();
    expect(pool.size()).toBe(1);
    // Mock 8 takes that app; a fresh mock 8 builds its own.
    const pooled = await mock(8, pool);
    expect(pool.reused).toBe(1);
    expect(pooled.hcs.app).toBe(a.hcs.app);
    const fresh = await mock(8);
    const viaPool = await session(pooled);
    const viaFresh = await session(fresh);
    expect(viaPool).toEqual(viaFresh);
    // Mock 7's token no longer opens the admin API (the faults call of the session was refused), mock 8's does.
    expect(viaPool.find((l) => l.startsWith('POST /_admin/faults'))).toMatch(/-> 401 /);
    expect(viaPool.find((l) => l.startsWith('GET /_admin/faults'))).toMatch(/-> 200 .*"faults":\[\]/);
    expect(pooled.events.all()).toEqual(fresh.events.all());
    // The closed mock is closed for good, whoever holds its app now.
    await expect(a.hcs.dispatch({ method: 'GET', path: '/_admin/seed', headers: {} })).rejects.toThrow(/closed/);
    await pooled.hcs.close();
    await fresh.hcs.close();
  });

  it('an app with a request of its mock still in flight is not pooled (the handler would resume on the next mock)', async () => {
    const pool = new MockHcsAppPool();
    pools.push(pool);
    const m = await mock(3, pool);
    const p = m.hcs.config.projects[0]!;
    m.hcs.faults.add({ service: 'ecs', operation: 'listFlavors', effect: { type: 'latency', ms: 60_000, mode: 'response' }, description: 'a slow answer' });
    const client = new HcsClient({ transport: inProcessTransport(m.hcs), ak: p.ak, sk: p.sk, projectId: p.id, clock: m.clock });
    const pending = client.listFlavors().catch(() => 'never answered');
    await new Promise((r) => setImmediate(r));
    await m.hcs.close();
    expect(pool.size()).toBe(0);
    void pending;
    // Closed instead: the next mock builds its own app.
    const next = await mock(4, pool);
    expect(pool.reused).toBe(0);
    expect(next.hcs.app).not.toBe(m.hcs.app);
    await next.hcs.close();
    expect(pool.size()).toBe(1);
  });

  it('the library: every scenario gives the same event log with one pool for all its testbeds as with an app per testbed', { timeout: 180_000 }, async () => {
    const files = readdirSync('scenarios').filter((f) => f.endsWith('.yaml')).sort();
    expect(files.length).toBeGreaterThan(20);
    const pool = new MockHcsAppPool();
    pools.push(pool);
    const pooled = embeddedTestbedFactory({ appPool: pool });
    for (const f of files) {
      const path = join('scenarios', f);
      const scenario = loadScenario(path, readFileSync(path, 'utf8'));
      const own = await runScenario(scenario, (seed) => createTestbed({ seed }));
      const shared = await runScenario(scenario, pooled);
      expect(shared.ok, f).toBe(own.ok);
      expect(JSON.stringify(shared.events), f).toBe(JSON.stringify(own.events));
    }
    // The pool was used: every testbed after the first took the app of one before it.
    expect(pool.reused).toBeGreaterThanOrEqual(files.length - 1);
  });
});
