/**
 * mock-hcs throughput over real HTTP on loopback (keep-alive, global fetch):
 *
 * - signed ShowServer against mock-hcs vs. a bare fastify route returning the same JSON body
 *   (target: mock-hcs >= 0.5 x bare);
 * - CreateServers + ShowJob pairs, in memory and with a data file (every acknowledged
 *   create is on disk before its response).
 *
 * Loops are bounded by count and by time. Run alone: `npx tsx bench/mock-hcs.ts [seconds]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import { createMockHcs, defaultCloudConfig, type CloudConfig } from '../mock-hcs/src/index.js';
import { signRequest } from '../src/cloud/index.js';
import { SeededRng, VirtualClock } from '../src/core/index.js';

export interface BenchResult {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

const CONCURRENCY = 16;

function benchConfig(): CloudConfig {
  const c = defaultCloudConfig();
  // Room for tens of thousands of servers.
  c.subnets[1]!.cidr = '192.168.0.0/16';
  c.subnets[1]!.gateway_ip = '192.168.0.1';
  return c;
}

/** Run `op` from CONCURRENCY workers until `maxOps` operations or `ms` elapsed; ops per second. */
async function loop(ms: number, maxOps: number, op: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  let done = 0;
  const start = performance.now();
  const deadline = start + ms;
  const worker = async () => {
    while (next < maxOps && performance.now() < deadline) {
      const i = next++;
      await op(i);
      done++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return done / ((performance.now() - start) / 1000);
}

async function expectOk(res: Response, what: string): Promise<string> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return text;
}

/** A CreateServers body: one server with a root and a data volume on the worker subnet. */
function serverBody(config: CloudConfig, name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    server: {
      name,
      imageRef: config.images[1]!.id,
      flavorRef: 's6.large.2',
      availability_zone: 'az1',
      vpcid: config.vpcs[0]!.id,
      nics: [{ subnet_id: config.subnets[1]!.id }],
      root_volume: { volumetype: 'SSD', size: 40 },
      data_volumes: [{ volumetype: 'SSD', size: 50 }],
      metadata: { cluster: 'bench' },
      ...extra,
    },
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function createPairs(dataFile: string | undefined, ms: number, maxOps: number): Promise<number> {
  const clock = new VirtualClock();
  const config = benchConfig();
  const mock = await createMockHcs({ clock, rng: new SeededRng(1), config, ...(dataFile ? { dataFile } : {}) });
  try {
    const base = await mock.app.listen({ port: 0, host: '127.0.0.1' });
    const host = new URL(base).host;
    const p = config.projects[0]!;
    const signed = (method: string, path: string, body?: string) =>
      signRequest({ method, path, headers: { 'content-type': 'application/json' }, ...(body !== undefined ? { body } : {}) }, { ak: p.ak, sk: p.sk }, host, new Date(clock.now()));
    const body = (i: number) => serverBody(config, `bench-${i}`);
    const op = async (i: number) => {
      const b = body(i);
      const c = signed('POST', `/v1.1/${p.id}/cloudservers`, b);
      const { host: _h, ...headers } = c.headers;
      const created = JSON.parse(await expectOk(await fetch(base + c.path, { method: 'POST', headers, body: b }), 'CreateServers')) as { job_id: string };
      const j = signed('GET', `/v1/${p.id}/jobs/${created.job_id}`);
      const { host: _h2, ...jh } = j.headers;
      await expectOk(await fetch(base + j.path, { headers: jh }), 'ShowJob');
    };
    await loop(60_000, 50, (i) => op(1_000_000 + i)); // warm-up
    return await loop(ms, maxOps, op);
  } finally {
    await mock.close();
  }
}

export async function benchMockHcs(opts: { seconds?: number } = {}): Promise<BenchResult[]> {
  const seconds = opts.seconds ?? 2;
  const phaseMs = (seconds * 1000) / 3;
  const clock = new VirtualClock();
  const config = benchConfig();
  const mock = await createMockHcs({ clock, rng: new SeededRng(1), config });
  const bare = Fastify({ logger: false });
  const results: BenchResult[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'bench-mock-hcs-'));
  try {
    const base = await mock.app.listen({ port: 0, host: '127.0.0.1' });
    const host = new URL(base).host;
    const p = config.projects[0]!;
    const sign = (method: string, path: string, body?: string) => {
      const r = signRequest({ method, path, headers: { 'content-type': 'application/json' }, ...(body !== undefined ? { body } : {}) }, { ak: p.ak, sk: p.sk }, host, new Date(clock.now()));
      const { host: _h, ...headers } = r.headers;
      return { path: r.path, headers };
    };
    // One ACTIVE server with a data disk to show.
    const b = serverBody(config, 'shown', { server_tags: [{ key: 'cluster', value: 'bench' }] });
    const c = sign('POST', `/v1.1/${p.id}/cloudservers`, b);
    const id = (JSON.parse(await expectOk(await fetch(base + c.path, { method: 'POST', headers: c.headers, body: b }), 'create')) as { serverIds: string[] }).serverIds[0]!;
    clock.advanceBy(120_000);
    // Signed once: the virtual clock does not move, so the X-Sdk-Date stays valid; the server verifies every request.
    const show = sign('GET', `/v1/${p.id}/cloudservers/${id}`);
    const shownBody = await expectOk(await fetch(base + show.path, { headers: show.headers }), 'ShowServer');
    const shown = JSON.parse(shownBody) as unknown;

    bare.get('/v1/:project_id/cloudservers/:server_id', async () => shown);
    const bareBase = await bare.listen({ port: 0, host: '127.0.0.1' });

    const showOp = async () => {
      await expectOk(await fetch(base + show.path, { headers: show.headers }), 'ShowServer');
    };
    const bareOp = async () => {
      await expectOk(await fetch(bareBase + show.path, { headers: show.headers }), 'bare');
    };
    await loop(60_000, 500, showOp);
    await loop(60_000, 500, bareOp);
    const mockRates: number[] = [];
    const bareRates: number[] = [];
    // Alternate so that both see the same machine conditions.
    for (let round = 0; round < 3; round++) {
      mockRates.push(await loop(phaseMs / 3, 200_000, showOp));
      bareRates.push(await loop(phaseMs / 3, 200_000, bareOp));
    }
    const m = median(mockRates);
    const bm = median(bareRates);
    results.push({ name: 'mock-hcs ShowServer (signed, verified)', value: Math.round(m), unit: 'req/s', note: `${CONCURRENCY} concurrent keep-alive fetches, ${shownBody.length} B body` });
    results.push({ name: 'bare fastify route, same JSON body', value: Math.round(bm), unit: 'req/s' });
    results.push({ name: 'ShowServer / bare route', value: Math.round((m / bm) * 100) / 100, unit: 'ratio', note: 'target >= 0.5' });

    const mem = await createPairs(undefined, phaseMs, 20_000);
    results.push({ name: 'CreateServers + ShowJob (in memory)', value: Math.round(mem), unit: 'pairs/s', note: 'each create: 1 server, root + data volume' });
    const disk = await createPairs(join(dir, 'bench-state.json'), phaseMs, 20_000);
    results.push({ name: 'CreateServers + ShowJob (data file, durable)', value: Math.round(disk), unit: 'pairs/s', note: 'each create on disk before its response; concurrent creates share a write' });
    results.push({ name: 'durable / in-memory create throughput', value: Math.round((disk / mem) * 100) / 100, unit: 'ratio' });
  } finally {
    await mock.close();
    await bare.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const seconds = process.argv[2] ? Number(process.argv[2]) : undefined;
  benchMockHcs(seconds !== undefined ? { seconds } : {}).then(
    (rs) => {
      for (const r of rs) console.log(`${r.name.padEnd(48)} ${String(r.value).padStart(9)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
