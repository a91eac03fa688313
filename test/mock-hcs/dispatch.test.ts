/**
 * MockHcs.dispatch (fastify's request handler with minimal req/res, the
 * testbed's transport) against app.inject(): two identical clouds (same
 * configuration, seed and virtual time) receive the same signed requests, one
 * through each path, and must give the same status, headers (less Node's
 * date and connection, which only light-my-request's http.ServerResponse
 * adds; mock-hcs never streams, so never has transfer-encoding) and body, and
 * record the same events.
 */
import Fastify from 'fastify';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockHcs, defaultCloudConfig, DispatchError, type MockHcs } from '../../mock-hcs/src/index.js';
import { dispatch } from '../../mock-hcs/src/dispatch.js';
import { dispatchTransport, HcsClient, injectTransport, signRequest, type HcsTransport, type HttpRequest, type HttpResponse } from '../../src/product/cloud/index.js';
import { EventLog, SeededRng, VirtualClock } from '../../src/core/index.js';

interface Side {
  clock: VirtualClock;
  events: EventLog;
  hcs: MockHcs;
  transport: HcsTransport;
}

interface Twin {
  a: Side;
  b: Side;
  project: { id: string; ak: string; sk: string };
  /** Send to both sides (inject, then dispatch); expect the same response; return it. */
  send(label: string, req: HttpRequest): Promise<HttpResponse & { json: unknown }>;
  /** A request signed as the first project at the current virtual time. */
  signed(method: string, path: string, body?: string, headers?: Record<string, string>): HttpRequest;
  advance(ms: number): void;
  count: number;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

const ADMIN_TOKEN = 'dispatch-test-admin-token';

async function side(transport: (hcs: MockHcs) => HcsTransport): Promise<Side> {
  const clock = new VirtualClock();
  const events = new EventLog(clock);
  const hcs = await createMockHcs({ clock, rng: new SeededRng(7), config: defaultCloudConfig(), events, adminToken: ADMIN_TOKEN });
  closers.push(() => hcs.close());
  return { clock, events, hcs, transport: transport(hcs) };
}

/** Headers both paths produce: everything but the ones Node's http layer adds (date, connection, transfer-encoding of a stream). */
function comparable(h: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (k !== 'date' && k !== 'connection' && k !== 'transfer-encoding') out[k] = v;
  return out;
}

async function twin(): Promise<Twin> {
  const a = await side((hcs) => injectTransport(hcs.app));
  const b = await side((hcs) => dispatchTransport(hcs));
  const p = a.hcs.config.projects[0]!;
  const t: Twin = {
    a,
    b,
    project: { id: p.id, ak: p.ak, sk: p.sk },
    count: 0,
    async send(label, r) {
      const req = r.path.startsWith('/_admin') ? { ...r, headers: { ...r.headers, 'x-admin-token': ADMIN_TOKEN } } : r;
      const ra = await a.transport.send(req);
      const rb = await b.transport.send(req);
      expect({ status: rb.status, body: rb.body }, label).toEqual({ status: ra.status, body: ra.body });
      expect(comparable(rb.headers), label).toEqual(comparable(ra.headers));
      expect(rb.headers.date, `${label}: no date header`).toBeUndefined();
      expect(ra.headers['transfer-encoding'], `${label}: mock-hcs does not stream`).toBeUndefined();
      t.count++;
      let json: unknown;
      try {
        json = JSON.parse(rb.body);
      } catch {
        json = undefined;
      }
      return { ...rb, json };
    },
    signed(method, path, body, headers = {}) {
      return signRequest(
        { method, path, headers: { 'content-type': 'application/json', 'x-project-id': p.id, ...headers }, ...(body !== undefined ? { body } : {}) },
        { ak: p.ak, sk: p.sk },
        'mock-hcs.local',
        new Date(a.clock.now()),
      );
    },
    advance(ms) {
      a.clock.advanceBy(ms);
      b.clock.advanceBy(ms);
    },
  };
  return t;
}

function serverBody(hcs: MockHcs, name: string, extra: Record<string, unknown> = {}): string {
  const c = hcs.config;
  return JSON.stringify({
    server: {
      name,
      imageRef: c.images.find((i) => i.kubernetesVersion === 'v1.31.6')!.id,
      flavorRef: 's6.large.2',
      availability_zone: 'az1',
      vpcid: c.vpcs[0]!.id,
      nics: [{ subnet_id: c.subnets.find((s) => s.name === 'worker-subnet')!.id }],
      root_volume: { volumetype: 'SSD', size: 40 },
      data_volumes: [{ volumetype: 'SSD', size: 50 }],
      metadata: { cluster: 'demo' },
      server_tags: [{ key: 'cluster', value: 'demo' }],
      ...extra,
    },
  });
}

type ErrJson = { error: { code: string; message: string } };

describe('MockHcs.dispatch answers exactly as app.inject()', () => {
  it('a server and volume lifecycle, lists, IAM tokens and 204s', async () => {
    const t = await twin();
    const p = t.project.id;
    const created = await t.send('CreateServers', t.signed('POST', `/v1.1/${p}/cloudservers`, serverBody(t.a.hcs, 'worker-0')));
    expect(created.status).toBe(200);
    const { job_id, serverIds } = created.json as { job_id: string; serverIds: string[] };
    await t.send('CreateServers (second)', t.signed('POST', `/v1/${p}/cloudservers`, serverBody(t.a.hcs, 'worker-10', { data_volumes: [] }), { 'x-client-token': 'tok-1' }));
    await t.send('CreateServers (same client token)', t.signed('POST', `/v1/${p}/cloudservers`, serverBody(t.a.hcs, 'worker-10', { data_volumes: [] }), { 'x-client-token': 'tok-1' }));
    expect((await t.send('ShowJob (running)', t.signed('GET', `/v1/${p}/jobs/${job_id}`))).status).toBe(200);
    t.advance(120_000);
    expect(((await t.send('ShowJob (done)', t.signed('GET', `/v1/${p}/jobs/${job_id}`))).json as { status: string }).status).toBe('SUCCESS');
    const shown = await t.send('ShowServer', t.signed('GET', `/v1/${p}/cloudservers/${serverIds[0]}`));
    expect((shown.json as { server: { status: string } }).server.status).toBe('ACTIVE');
    await t.send('HEAD ShowServer', t.signed('HEAD', `/v1/${p}/cloudservers/${serverIds[0]}`));
    for (const q of ['name=worker-0', 'name=worker-1', 'name=worker-.', 'name=w', 'name=worker-0&status=ACTIVE', 'name=nothing', 'limit=1&offset=2', 'tags=cluster%3Ddemo', 'not-tags=cluster', 'limit=abc']) {
      await t.send(`ListServers ?${q}`, t.signed('GET', `/v1/${p}/cloudservers/detail?${q}`));
    }
    await t.send('ListVolumes', t.signed('GET', `/v2/${p}/cloudvolumes/detail`));
    await t.send('ListVolumes server_id', t.signed('GET', `/v2/${p}/cloudvolumes/detail?server_id=${serverIds[0]}`));
    await t.send('ListVolumes metadata', t.signed('GET', `/v2/${p}/cloudvolumes/detail?metadata=${encodeURIComponent('{"hcs.io/cluster":"demo"}')}&limit=5&offset=0`));
    const vol = await t.send('CreateVolume', t.signed('POST', `/v2.1/${p}/cloudvolumes`, JSON.stringify({ volume: { name: 'pd-0', size: 10, volume_type: 'SSD', availability_zone: 'az1', metadata: { 'hcs.io/cluster': 'demo' } } })));
    const volumeId = (vol.json as { volume_ids: string[] }).volume_ids[0]!;
    t.advance(60_000);
    await t.send('ShowVolume', t.signed('GET', `/v2/${p}/cloudvolumes/${volumeId}`));
    await t.send('UpdateVolume', t.signed('PUT', `/v2/${p}/cloudvolumes/${volumeId}`, JSON.stringify({ volume: { description: 'd', metadata: { slot: '0' } } })));
    await t.send('AttachVolume', t.signed('POST', `/v1/${p}/cloudservers/${serverIds[0]}/attachvolume`, JSON.stringify({ volumeAttachment: { volumeId } })));
    t.advance(60_000);
    await t.send('ListServerBlockDevices', t.signed('GET', `/v1/${p}/cloudservers/${serverIds[0]}/block_device`));
    await t.send('ShowServerBlockDevice', t.signed('GET', `/v1/${p}/cloudservers/${serverIds[0]}/block_device/${volumeId}`));
    await t.send('DetachVolume (DELETE, no body)', t.signed('DELETE', `/v1/${p}/cloudservers/${serverIds[0]}/detachvolume/${volumeId}`));
    t.advance(60_000);
    await t.send('DeleteVolume', t.signed('DELETE', `/v2/${p}/cloudvolumes/${volumeId}`));
    const subnet = t.a.hcs.config.subnets.find((s) => s.name === 'worker-subnet')!;
    const port = await t.send('CreatePort', t.signed('POST', `/v1/${p}/ports`, JSON.stringify({ port: { network_id: subnet.id, name: 'vip' } })));
    const portId = (port.json as { port: { id: string } }).port.id;
    expect((await t.send('DeletePort (204)', t.signed('DELETE', `/v1/${p}/ports/${portId}`))).status).toBe(204);
    await t.send('ListFlavors', t.signed('GET', `/v1/${p}/cloudservers/flavors?availability_zone=az1`));
    await t.send('ListImages', t.signed('GET', '/v2/cloudimages?name=alauda-os-v4.1-k8s-v1.31.6'));
    await t.send('ListSubnets', t.signed('GET', `/v1/${p}/subnets`));
    const token = await t.send(
      'KeystoneCreateUserTokenByPassword (201)',
      { method: 'POST', path: '/v3/auth/tokens?nocatalog=true', headers: { 'content-type': 'application/json;charset=UTF-8' }, body: JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: 'testbed-admin', password: 'Testbed@123', domain: { name: 'testbed-account' } } } }, scope: { project: { id: p } } } }) },
    );
    expect(token.status).toBe(201);
    expect(token.headers['x-subject-token']).toBeDefined();
    await t.send('token-authenticated ListServers', { method: 'GET', path: `/v1/${p}/cloudservers/detail`, headers: { 'content-type': 'application/json', 'x-auth-token': token.headers['x-subject-token']! } });
    await t.send('KeystoneListProjects', t.signed('GET', '/v3/projects'));
    await t.send('DeleteServers', t.signed('POST', `/v1/${p}/cloudservers/delete`, JSON.stringify({ servers: serverIds.map((id) => ({ id })), delete_volume: true })));
    t.advance(120_000);
    await t.send('ListServers after delete', t.signed('GET', `/v1/${p}/cloudservers/detail`));
    await t.send('admin catalog', { method: 'GET', path: '/_admin/catalog', headers: {} });
    expect(t.b.events.all()).toEqual(t.a.events.all());
    expect(t.b.events.all().length).toBeGreaterThan(20);
  });

  it('authentication failures, faults, validation, not found and framework errors', async () => {
    const t = await twin();
    const p = t.project.id;
    const path = `/v1/${p}/cloudservers/detail`;
    // 401: bad signature (same error body), wrong key, unknown AK, no credentials, stale date.
    const good = t.signed('GET', path);
    const sig = good.headers.authorization!;
    const bad = await t.send('bad signature', { ...good, headers: { ...good.headers, authorization: sig.replace(/Signature=([0-9a-f])/, (_m, c: string) => `Signature=${c === '0' ? '1' : '0'}`) } });
    expect(bad.status).toBe(401);
    expect((bad.json as ErrJson).error).toEqual({ code: 'APIGW.0301', message: 'Incorrect IAM authentication information: verify aksk signature fail' });
    await t.send('wrong SK', signRequest({ method: 'GET', path, headers: {} }, { ak: t.project.ak, sk: 'wrong' }, 'h', new Date(t.a.clock.now())));
    await t.send('unknown AK', signRequest({ method: 'GET', path, headers: {} }, { ak: 'NOPE', sk: 'x' }, 'h', new Date(t.a.clock.now())));
    await t.send('no credentials', { method: 'GET', path, headers: {} });
    await t.send('malformed Authorization', { method: 'GET', path, headers: { authorization: 'Basic abc' } });
    await t.send('stale X-Sdk-Date', signRequest({ method: 'GET', path, headers: {} }, { ak: t.project.ak, sk: t.project.sk }, 'h', new Date(t.a.clock.now() - 3_600_000)));
    await t.send('tampered body', { ...t.signed('POST', `/v1.1/${p}/cloudservers`, serverBody(t.a.hcs, 'w')), body: serverBody(t.a.hcs, 'evil') });
    await t.send('invalid token', { method: 'GET', path, headers: { 'x-auth-token': 'not-a-token' } });
    // 403: another project in the path.
    const other = t.a.hcs.config.projects[1]!.id;
    await t.send('project of someone else', t.signed('GET', `/v1/${other}/cloudservers/detail`));
    // 404: unknown route, unknown server, unknown job, unsupported method.
    expect(((await t.send('unknown route', t.signed('GET', `/v9/${p}/nothing`))).json as ErrJson).error.code).toBe('APIGW.0101');
    expect(((await t.send('unknown server', t.signed('GET', `/v1/${p}/cloudservers/00000000-0000-4000-8000-000000000000`))).json as ErrJson).error.code).toBe('Ecs.0114');
    await t.send('unknown job', t.signed('GET', `/v1/${p}/jobs/nope`));
    await t.send('PATCH server', t.signed('PATCH', `/v1/${p}/cloudservers/x`, '{}'));
    // 400: malformed JSON, engine validation, schema validation (admin routes), bad query, oversize body, bad URL.
    for (const body of ['{', '[]', 'null', '"s"', '{"server":{}}', '\ufeff{}', '{"server":{"name":"\\ud800"}}']) {
      await t.send(`CreateServers ${body}`, t.signed('POST', `/v1.1/${p}/cloudservers`, body));
    }
    await t.send('CreateServers, IP outside the subnet', t.signed('POST', `/v1.1/${p}/cloudservers`, serverBody(t.a.hcs, 'w', { nics: [{ subnet_id: t.a.hcs.config.subnets.find((s) => s.name === 'worker-subnet')!.id, ip_address: '10.0.0.1' }] })));
    const schema = await t.send('schema: clock advance by -1', { method: 'POST', path: '/_admin/clock/advance', headers: { 'content-type': 'application/json' }, body: '{"ms":-1}' });
    expect(schema.status).toBe(400);
    expect((schema.json as ErrJson).error.message).toMatch(/^Invalid request parameter: /);
    await t.send('schema: reset with an unknown field', { method: 'POST', path: '/_admin/reset', headers: { 'content-type': 'application/json' }, body: '{"bogus":1}' });
    await t.send('schema: fault without effect', { method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: '{"service":"ecs","operation":"showServer"}' });
    await t.send('schema: fault id too long', { method: 'DELETE', path: `/_admin/faults/${'x'.repeat(65)}`, headers: {} });
    for (const v of ['-1', 'abc', '', '%', '%00', '%E0%A4%A', '(', '\\', '.*', 'a'.repeat(300), '{', '%7B%22a%22%3A1%7D', '=', ',,,']) {
      const enc = v.includes('%') ? v : encodeURIComponent(v);
      await t.send(`ListServers name=${v.slice(0, 12)}`, t.signed('GET', `${path}?name=${enc}`));
      await t.send(`ListVolumes metadata=${v.slice(0, 12)}`, t.signed('GET', `/v2/${p}/cloudvolumes/detail?metadata=${enc}&limit=${enc}`));
    }
    await t.send('oversize body (413)', t.signed('POST', `/v1.1/${p}/cloudservers`, JSON.stringify({ server: { name: 'x', pad: 'a'.repeat(1024 * 1024 + 10) } })));
    await t.send('undecodable URL', t.signed('GET', `/v1/${p}/cloudservers/%E0%A4%A`));
    await t.send('parameter too long', t.signed('GET', `/v1/${p}/cloudservers/${'a'.repeat(2000)}`));
    await t.send('URL normalised (dot segments, quote, space)', t.signed('GET', `/v1/${p}/x/../cloudservers/detail?name=it's a`));
    await t.send('GET with a body', { ...t.signed('GET', path, '{"a":1}') });
    // Faults, added through the admin API on both sides: error, partial, capacity, latency (response).
    const vid = '00000000-0000-4000-8000-0000000000aa';
    await t.send('add error fault', { method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ service: 'ecs', operation: 'listServers', effect: { type: 'error', status: 503, code: 'Ecs.0002', message: 'try later' }, count: 1 }) });
    const faulted = await t.send('fault-injected error', t.signed('GET', path));
    expect(faulted.status).toBe(503);
    expect((faulted.json as ErrJson).error).toEqual({ code: 'Ecs.0002', message: 'try later' });
    expect((await t.send('after the fault', t.signed('GET', path))).status).toBe(200);
    await t.send('add partial fault', { method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ service: 'evs', operation: 'createVolume', effect: { type: 'partial' }, count: 1 }) });
    const partial = await t.send('partial fault', t.signed('POST', `/v2.1/${p}/cloudvolumes`, JSON.stringify({ volume: { name: 'pd', size: 10, volume_type: 'SSD', availability_zone: 'az1' } })));
    expect(partial.status).toBe(500);
    await t.send('add partial fault on a list', { method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ service: 'evs', operation: 'listVolumes', effect: { type: 'partial', status: 502, code: 'EVS.5002' }, count: 1 }) });
    expect((await t.send('partial fault on a list', t.signed('GET', `/v2/${p}/cloudvolumes/detail`))).status).toBe(502);
    await t.send('add show fault', { method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ service: 'evs', operation: 'showVolume', match: { id: vid }, effect: { type: 'error', status: 500, code: 'EVS.5002' } }) });
    await t.send('fault on a show', t.signed('GET', `/v2/${p}/cloudvolumes/${vid}`));
    await t.send('add capacity fault', { method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ service: 'ecs', operation: 'createServers', effect: { type: 'capacity', flavor: 's6.large.2', az: 'az1' }, count: 1 }) });
    await t.send('capacity fault', t.signed('POST', `/v1.1/${p}/cloudservers`, serverBody(t.a.hcs, 'w')));
    await t.send('list faults', { method: 'GET', path: '/_admin/faults', headers: {} });
    // Latency (response): the answer waits for the virtual clock on either path.
    await t.send('add latency fault', { method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ service: 'vpc', operation: 'listSubnets', effect: { type: 'latency', ms: 5000 }, count: 1 }) });
    const slow = t.signed('GET', `/v1/${p}/subnets`);
    const results: HttpResponse[] = [];
    for (const s of [t.a, t.b]) {
      let done = false;
      const pending = s.transport.send(slow).then((r) => {
        done = true;
        return r;
      });
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(done).toBe(false);
      s.clock.advanceBy(5000);
      results.push(await pending);
    }
    expect(results[1]!.body).toBe(results[0]!.body);
    expect(results[1]!.status).toBe(200);
    expect(t.b.events.all()).toEqual(t.a.events.all());
    expect(t.count).toBeGreaterThan(60);
  });

  it('HcsClient over dispatchTransport: the calls of the provider, and a closed cloud rejects', async () => {
    const s = await side((hcs) => dispatchTransport(hcs));
    const p = s.hcs.config.projects[0]!;
    const client = new HcsClient({ transport: s.transport, ak: p.ak, sk: p.sk, projectId: p.id, clock: s.clock });
    const { serverIds } = await client.createServers(JSON.parse(serverBody(s.hcs, 'worker-0')) as Parameters<HcsClient['createServers']>[0]);
    s.clock.advanceBy(120_000);
    expect((await client.showServer(serverIds[0]!))?.status).toBe('ACTIVE');
    expect(await client.showServer('00000000-0000-4000-8000-000000000000')).toBeUndefined();
    expect((await client.listServers({ name: 'worker-0' })).map((x) => x.id)).toEqual(serverIds);
    expect(await client.listVolumes({ serverId: serverIds[0]! })).toHaveLength(2);
    await s.hcs.close();
    await expect(client.showServer(serverIds[0]!)).rejects.toBeInstanceOf(DispatchError);
  });
});

describe('dispatch() on other fastify replies', () => {
  it('streams, buffers, array headers, hooks on finish and status without body match inject', async () => {
    const app = Fastify({ logger: false });
    let finished = 0;
    app.addHook('onResponse', async () => {
      finished++;
    });
    app.get('/stream', async (_req, reply) => reply.type('text/plain').send(Readable.from(['a', 'b', 'ć'])));
    app.get('/buffer', async (_req, reply) => reply.type('application/octet-stream').send(Buffer.from('xyz')));
    app.get('/multi', async (_req, reply) => reply.header('set-cookie', ['a=1', 'b=2']).header('x-n', 3).send({ ok: true }));
    app.get('/empty', async (_req, reply) => reply.code(204).send());
    app.post('/echo', async (req) => ({ body: req.body, length: req.headers['content-length'] ?? null }));
    await app.ready();
    try {
      const cases: { method: string; path: string; headers: Record<string, string>; body?: string }[] = [
        { method: 'GET', path: '/stream', headers: {} },
        { method: 'GET', path: '/buffer', headers: {} },
        { method: 'GET', path: '/multi', headers: {} },
        { method: 'GET', path: '/empty', headers: {} },
        { method: 'HEAD', path: '/multi', headers: {} },
        { method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, body: '{"x":"ü"}' },
        { method: 'POST', path: '/echo', headers: { 'Content-Type': 'application/json' } },
        { method: 'GET', path: '/missing', headers: {} },
      ];
      for (const c of cases) {
        const inj = await app.inject({ method: c.method as 'GET', url: c.path, headers: c.headers, ...(c.body !== undefined ? { payload: c.body } : {}) });
        const injHeaders: Record<string, string> = {};
        for (const [k, v] of Object.entries(inj.headers)) if (v !== undefined) injHeaders[k] = Array.isArray(v) ? v.join(', ') : String(v);
        const d = await dispatch(app, c);
        expect({ status: d.status, body: d.body }, `${c.method} ${c.path}`).toEqual({ status: inj.statusCode, body: inj.body });
        expect(comparable(d.headers), `${c.method} ${c.path}`).toEqual(comparable(injHeaders));
      }
      expect(finished).toBe(2 * 8);
    } finally {
      await app.close();
    }
  });

  it('rejects with DispatchError when the response is destroyed before it ends', async () => {
    const app = Fastify({ logger: false });
    app.get('/drop', (_req, reply) => {
      reply.hijack();
      reply.raw.destroy();
    });
    await app.ready();
    try {
      const e = await dispatch(app, { method: 'GET', path: '/drop', headers: {} }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(DispatchError);
      expect((e as DispatchError).code).toBe('ECONNRESET');
    } finally {
      await app.close();
    }
  });
});
