/**
 * mock-hcs as a project grows (issue 13): ListServers `?limit=100` and
 * CreateServers (one server per call) with 1,000 and with 20,000 servers in
 * the project, and the ratio 20,000 / 1,000 of each (target >= 0.8: a page
 * costs O(limit), a create does not slow down as the project grows).
 *
 * In process through MockHcs.dispatch (the testbed's path: signed, verified,
 * routed, rendered), in memory; the project is filled with batch creates
 * (count 500). Loops are bounded by count and time; figures only, no
 * assertions. Run alone: `npx tsx bench/mock-hcs-growth.ts [seconds-per-figure]`.
 */
import { pathToFileURL } from 'node:url';
import { createMockHcs, defaultCloudConfig, type CloudConfig, type MockHcs } from '../mock-hcs/src/index.js';
import { dispatchTransport, signRequest, type HcsTransport } from '../src/product/cloud/index.js';
import { SeededRng, VirtualClock } from '../src/core/index.js';
import type { BenchResult } from './mock-hcs.js';

function growthConfig(): CloudConfig {
  const c = defaultCloudConfig();
  c.subnets[1]!.cidr = '192.168.0.0/16';
  c.subnets[1]!.gateway_ip = '192.168.0.1';
  return c;
}

function body(c: CloudConfig, name: string, count = 1): string {
  return JSON.stringify({
    server: {
      name,
      count,
      imageRef: c.images[1]!.id,
      flavorRef: 's6.large.2',
      availability_zone: 'az1',
      vpcid: c.vpcs[0]!.id,
      nics: [{ subnet_id: c.subnets[1]!.id }],
      root_volume: { volumetype: 'SSD', size: 40 },
    },
  });
}

interface Side {
  hcs: MockHcs;
  t: HcsTransport;
  send(method: string, path: string, b?: string): Promise<string>;
}

async function side(): Promise<Side> {
  const clock = new VirtualClock();
  const config = growthConfig();
  const hcs = await createMockHcs({ clock, rng: new SeededRng(5), config });
  const t = dispatchTransport(hcs);
  const p = config.projects[0]!;
  const send = async (method: string, path: string, b?: string) => {
    const req = signRequest({ method, path, headers: { 'content-type': 'application/json' }, ...(b !== undefined ? { body: b } : {}) }, p, t.host ?? 'localhost', new Date(clock.now()));
    const res = await t.send(req);
    if (res.status !== 200) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.body.slice(0, 200)}`);
    return res.body;
  };
  return { hcs, t, send };
}

async function rate(ms: number, max: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  let n = 0;
  while (n < max && performance.now() - t0 < ms) await op(n++);
  return n / ((performance.now() - t0) / 1000);
}

async function fill(s: Side, n: number, from: number): Promise<void> {
  const c = s.hcs.config;
  for (let done = from; done < n; ) {
    const k = Math.min(500, n - done);
    await s.send('POST', `/v1/${c.projects[0]!.id}/cloudservers`, body(c, `fill-${done}`, k));
    done += k;
  }
}

export async function benchMockHcsGrowth(o: { secondsPerFigure?: number } = {}): Promise<BenchResult[]> {
  const ms = (o.secondsPerFigure ?? 2) * 1000;
  const s = await side();
  const p = s.hcs.config.projects[0]!.id;
  const out: BenchResult[] = [];
  const figures: Record<number, { list: number; create: number }> = {};
  let have = 0;
  for (const n of [1000, 20_000]) {
    await fill(s, n, have);
    have = n;
    const list = await rate(ms, 2000, () => s.send('GET', `/v1/${p}/cloudservers/detail?limit=100`));
    // Creates add servers: measured in a bounded burst (<= 300) so the project stays near n.
    const create = await rate(ms, 300, (i) => s.send('POST', `/v1/${p}/cloudservers`, body(s.hcs.config, `c${n}-${i}`)));
    have += 300;
    figures[n] = { list, create };
    out.push({ name: `ListServers limit=100, ${n} servers in the project`, value: Math.round(list), unit: 'req/s' });
    out.push({ name: `CreateServers (1 server), ${n} servers in the project`, value: Math.round(create), unit: 'req/s' });
  }
  out.push({ name: 'ListServers 20,000 / 1,000 (target >= 0.8)', value: Number((figures[20_000]!.list / figures[1000]!.list).toFixed(2)), unit: 'x' });
  out.push({ name: 'CreateServers 20,000 / 1,000 (target >= 0.8)', value: Number((figures[20_000]!.create / figures[1000]!.create).toFixed(2)), unit: 'x' });
  await s.hcs.close();
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secs = Number(process.argv[2] ?? 2);
  for (const r of await benchMockHcsGrowth({ secondsPerFigure: secs })) console.log(`${r.name}: ${r.value} ${r.unit}`);
}
