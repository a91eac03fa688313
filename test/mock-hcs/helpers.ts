import { EventLog, SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, defaultCloudConfig, type CloudConfig, type MockHcs } from '../../mock-hcs/src/index.js';
import { expect } from 'vitest';
import { HcsApiError, HcsClient, injectTransport, signRequest, type HttpResponse } from '../../src/product/cloud/index.js';

export interface Env {
  clock: VirtualClock;
  events: EventLog;
  hcs: MockHcs;
  config: CloudConfig;
  client: HcsClient;
  other: HcsClient;
  /** Signed raw request as project "testbed". */
  req(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse & { json: unknown }>;
}

export async function setup(opts: { seed?: number; dataFile?: string; config?: CloudConfig; clock?: VirtualClock } = {}): Promise<Env> {
  const clock = opts.clock ?? new VirtualClock();
  const events = new EventLog(clock);
  const config = opts.config ?? defaultCloudConfig();
  const hcs = await createMockHcs({ clock, rng: new SeededRng(opts.seed ?? 42), config, events, ...(opts.dataFile ? { dataFile: opts.dataFile } : {}) });
  const transport = injectTransport(hcs.app);
  const [p0, p1] = config.projects;
  const client = new HcsClient({ transport, ak: p0!.ak, sk: p0!.sk, projectId: p0!.id, clock });
  const other = new HcsClient({ transport, ak: p1!.ak, sk: p1!.sk, projectId: p1!.id, clock });
  const req: Env['req'] = async (method, path, body, headers = {}) => {
    const signed = signRequest(
      { method, path, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) },
      { ak: p0!.ak, sk: p0!.sk },
      'mock-hcs.local',
      new Date(clock.now()),
    );
    const res = await transport.send(signed);
    let json: unknown;
    try {
      json = JSON.parse(res.body);
    } catch {
      json = undefined;
    }
    return { ...res, json };
  };
  return { clock, events, hcs, config, client, other, req };
}

export function serverBody(env: Env, over: Record<string, unknown> = {}, nic: { subnet?: string; ip?: string } = {}) {
  const c = env.config;
  const subnet = c.subnets.find((s) => s.name === (nic.subnet ?? 'worker-subnet'))!;
  return {
    server: {
      name: 'worker-0',
      imageRef: c.images.find((i) => i.kubernetesVersion === 'v1.31.6')!.id,
      flavorRef: 's6.large.2',
      availability_zone: 'az1',
      vpcid: c.vpcs[0]!.id,
      nics: [{ subnet_id: subnet.id, ...(nic.ip ? { ip_address: nic.ip } : {}) }],
      root_volume: { volumetype: 'SSD', size: 40 },
      data_volumes: [{ volumetype: 'SSD', size: 50 }],
      user_data: Buffer.from('#cloud-config\nhostname: worker-0\n').toString('base64'),
      metadata: { cluster: 'demo' },
      server_tags: [{ key: 'cluster', value: 'demo' }],
      ...over,
    },
  };
}

/** Advance virtual time far enough for every pending transition (builds take up to 72s with the default jitter). */
export function settle(env: Env, ms = 120_000): void {
  env.clock.advanceBy(ms);
}

/** The HcsApiError a call is refused with (the test fails when it succeeds or throws anything else). */
export async function refused(p: Promise<unknown>): Promise<HcsApiError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(HcsApiError);
  return e as HcsApiError;
}
