/**
 * mock-hcs cost per call in process (the testbed's path: HcsClient, signed,
 * through app.inject and through MockHcs.dispatch; `npx tsx bench/mock-hcs.ts
 * --in-process [servers]` runs only this part), and throughput over real HTTP
 * on loopback (keep-alive, global fetch):
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
import { verifySignature } from '../mock-hcs/src/auth.js';
import { createMockHcs, defaultCloudConfig, type CloudConfig } from '../mock-hcs/src/index.js';
import { dispatchTransport, HcsClient, injectTransport, signRequest, type HcsTransport } from '../src/product/cloud/index.js';
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

/** Transports measured in process, by name. */
const IN_PROCESS_TRANSPORTS: Record<string, (mock: Awaited<ReturnType<typeof createMockHcs>>) => HcsTransport> = {
  inject: (mock) => injectTransport(mock.app),
  dispatch: (mock) => dispatchTransport(mock),
};

/** Microseconds per call of `op`, one call at a time, `count` calls. */
async function timeCalls(count: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await op(i);
  return ((performance.now() - t0) * 1000) / count;
}

/**
 * Cost per signed call through HcsClient in process (sign, transport, mock-hcs
 * authentication, routing, handler, serialization, client parse), one call at a
 * time as the controllers make them, for every in-process transport against the
 * same cloud, alternating transports round by round so that they share the
 * machine's conditions (median of the rounds): ShowServer, ShowVolume, an
 * unknown server (404), ListServers by exact name, ListVolumes of every volume
 * (per volume) and CreateServers (root + data volume). Also signRequest and
 * mock-hcs's verifySignature alone.
 */
export async function benchInProcess(opts: { servers?: number; rounds?: number } = {}): Promise<BenchResult[]> {
  const servers = opts.servers ?? 1000;
  const rounds = opts.rounds ?? 5;
  const clock = new VirtualClock();
  const config = benchConfig();
  const mock = await createMockHcs({ clock, rng: new SeededRng(1), config });
  const results: BenchResult[] = [];
  try {
    const p = config.projects[0]!;
    const sides = Object.entries(IN_PROCESS_TRANSPORTS).map(([name, t]) => ({ name, client: new HcsClient({ transport: t(mock), ak: p.ak, sk: p.sk, projectId: p.id, clock }) }));
    const samples = new Map<string, number[]>();
    const sample = (key: string, v: number) => samples.set(key, [...(samples.get(key) ?? []), v]);
    const body = (i: number) => JSON.parse(serverBody(config, `bench-${String(i).padStart(5, '0')}`)) as Parameters<HcsClient['createServers']>[0];
    const ids: string[] = [];
    // CreateServers in alternating batches (the first batch of each side warms it up and is not counted).
    const batch = Math.max(1, Math.floor(servers / (sides.length * (rounds + 1))));
    for (let r = 0; ids.length < servers; r++) {
      for (const s of sides) {
        const n = Math.min(batch, servers - ids.length);
        if (n === 0) break;
        const us = await timeCalls(n, async () => {
          ids.push((await s.client.createServers(body(ids.length))).serverIds[0]!);
        });
        if (r > 0) sample(`${s.name}: CreateServers`, us);
      }
    }
    clock.advanceBy(120_000);
    const volumeIds = (await sides[0]!.client.listVolumes()).map((v) => v.id);
    const ops: [string, number, (c: HcsClient, i: number) => Promise<unknown>, number][] = [
      ['ShowServer', 2000, (c, i) => c.showServer(ids[(i * 7919) % ids.length]!), 1],
      ['ShowVolume', 2000, (c, i) => c.showVolume(volumeIds[(i * 7919) % volumeIds.length]!), 1],
      ['ShowServer of an unknown id (404)', 2000, (c) => c.showServer('00000000-0000-0000-0000-000000000000'), 1],
      ['ListServers by exact name', 500, (c, i) => c.listServers({ name: `bench-${String((i * 7919) % servers).padStart(5, '0')}`, limit: 1 }), 1],
      ['ListVolumes, per volume', 4, (c) => c.listVolumes(), volumeIds.length],
    ];
    for (let r = 0; r <= rounds; r++) {
      for (const [op, count, call, per] of ops) {
        for (const s of sides) {
          const us = await timeCalls(count, (i) => call(s.client, i));
          if (r > 0) sample(`${s.name}: ${op}`, us / per); // round 0 warms up
        }
      }
    }
    // Signing and verification alone.
    const show = { method: 'GET', path: `/v1/${p.id}/cloudservers/${ids[0]}`, headers: { 'content-type': 'application/json', 'x-project-id': p.id } };
    const create = { ...show, method: 'POST', path: `/v1.1/${p.id}/cloudservers`, body: serverBody(config, 'bench-sign') };
    const now = new Date(clock.now());
    const lookup = (ak: string) => (ak === p.ak ? p.sk : undefined);
    for (const [name, req] of [['GET', show] as const, ['POST', create] as const]) {
      const signed = signRequest(req, { ak: p.ak, sk: p.sk }, 'mock-hcs.local', now);
      for (let r = 0; r <= rounds; r++) {
        const tSign = await timeCalls(20_000, async () => signRequest(req, { ak: p.ak, sk: p.sk }, 'mock-hcs.local', now));
        const tVerify = await timeCalls(20_000, async () => {
          const v = verifySignature({ method: signed.method, url: signed.path, headers: signed.headers, body: signed.body ?? '' }, lookup, now.getTime(), 60_000);
          if (!v.ok) throw new Error(`bench: signature not verified: ${v.reason}`);
        });
        if (r > 0) {
          sample(`signRequest (${name})`, tSign);
          sample(`verifySignature (${name})`, tVerify);
        }
      }
    }
    const note = `${servers} servers, ${volumeIds.length} volumes; median of ${rounds} alternating rounds`;
    let first = true;
    for (const [key, xs] of samples) {
      const per = key.endsWith('per volume');
      results.push({ name: `in-process ${key}`, value: per || key.startsWith('sign') || key.startsWith('verify') ? Math.round(median(xs) * 100) / 100 : Math.round(median(xs)), unit: per ? 'µs/volume' : 'µs/call', ...(first ? { note } : {}) });
      first = false;
    }
  } finally {
    await mock.close();
  }
  return results;
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
  // In process first (the testbed's path), on a smaller cloud to keep the group short.
  const results: BenchResult[] = await benchInProcess({ servers: 500, rounds: 3 });
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
  const inProcess = process.argv[2] === '--in-process';
  const arg = inProcess ? process.argv[3] : process.argv[2];
  const n = arg ? Number(arg) : undefined;
  (inProcess ? benchInProcess(n !== undefined ? { servers: n } : {}) : benchMockHcs(n !== undefined ? { seconds: n } : {})).then(
    (rs) => {
      for (const r of rs) console.log(`${r.name.padEnd(48)} ${String(r.value).padStart(9)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
