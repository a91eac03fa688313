/**
 * Generated bad input against every route: malformed JSON, wrong types,
 * missing fields, oversize bodies, bad query values and path parameters.
 * Every answer must be < 500 and, when >= 400, carry the error shape; the
 * cloud must keep serving afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverBody, settle, setup, type Env } from './helpers.js';
import { setAt } from './mutate.js';

let env: Env;
let serverId: string;
let volumeId: string;
let jobId: string;
let subnetId: string;
beforeAll(async () => {
  env = await setup();
  subnetId = env.config.subnets.find((s) => s.name === 'worker-subnet')!.id;
  const c = await env.client.createServers(serverBody(env, { name: 'keeper' }));
  serverId = c.serverIds[0]!;
  jobId = c.job_id;
  volumeId = (await env.client.createVolume({ volume: { name: 'keeper-pd', size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).volume_ids[0]!;
  settle(env);
});
afterAll(async () => {
  await env?.hcs.close();
});

interface Outcome {
  label: string;
  status: number;
  body: string;
}

const stats = { total: 0, client: 0 };

function check(o: Outcome): void {
  stats.total++;
  expect(o.status, `${o.label}: ${o.body.slice(0, 300)}`).toBeLessThan(500);
  if (o.status >= 400) {
    stats.client++;
    let json: unknown;
    try {
      json = JSON.parse(o.body);
    } catch {
      json = undefined;
    }
    const err = (json as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    expect(typeof err?.code, `${o.label}: error.code in ${o.body.slice(0, 200)}`).toBe('string');
    expect(typeof err?.message, `${o.label}: error.message`).toBe('string');
  }
}

async function signed(label: string, method: string, path: string, body?: string): Promise<Outcome> {
  const r = await env.req(method, path, body);
  return { label, status: r.status, body: r.body };
}

async function unsigned(label: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: string): Promise<Outcome> {
  const token = url.startsWith('/_admin') ? { 'x-admin-token': env.hcs.adminToken ?? '' } : {};
  const r = await env.hcs.app.inject({ method, url, headers: { ...token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { payload: body } : {}) });
  return { label, status: r.statusCode, body: r.body };
}

const WRONG: unknown[] = [null, 0, -1, 1.5, 1e308, '', 'x', '../../etc', 'a'.repeat(5000), true, [], [1, 'a'], {}, { $gt: 1 }];

/** Every (path, mutated document) pair: each leaf and object replaced by wrong values, and each key removed. */
function mutations(doc: unknown, maxDepth = 8): { path: string; doc: unknown }[] {
  const out: { path: string; doc: unknown }[] = [];
  const walk = (node: unknown, path: (string | number)[]) => {
    if (path.length > maxDepth) return;
    if (path.length > 0) {
      for (const w of WRONG) out.push({ path: `${path.join('.')}=${JSON.stringify(w).slice(0, 20)}`, doc: setAt(doc, path, w) });
      out.push({ path: `${path.join('.')} removed`, doc: setAt(doc, path, undefined) });
    }
    if (Array.isArray(node)) node.forEach((x, i) => walk(x, [...path, i]));
    else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(doc, []);
  return out;
}

const MALFORMED = ['{', '{"server": ', '[', 'nul', '"just a string"', '123', 'true', 'null', '[]', '{}', '\u0000', '{"a":1,}', "{'a':1}", '[[[[[[[[[[', `${'['.repeat(5000)}${']'.repeat(5000)}`, '\ufeff{}', '{"server":{"name":"\\ud800"}}'];

describe('mock-hcs generated bad input', () => {
  it('POST bodies: malformed JSON, wrong types and missing fields on every mutating route', async () => {
    const p = env.client.projectId;
    const devices = (await env.req('GET', `/v1/${p}/cloudservers/${serverId}/block_device`)).json as { volumeAttachments: { volumeId: string; bootIndex: number }[] };
    const keeperData = devices.volumeAttachments.find((v) => v.bootIndex !== 0)!.volumeId;
    const routes: { label: string; method: string; path: string; valid: () => unknown }[] = [
      { label: 'CreateServers v1.1', method: 'POST', path: `/v1.1/${p}/cloudservers`, valid: () => serverBody(env, { name: 'gen' }) },
      { label: 'CreateServers v1', method: 'POST', path: `/v1/${p}/cloudservers`, valid: () => serverBody(env, { name: 'gen', data_volumes: [] }) },
      { label: 'DeleteServers', method: 'POST', path: `/v1/${p}/cloudservers/delete`, valid: () => ({ servers: [{ id: '00000000-0000-4000-8000-000000000000' }], delete_volume: false }) },
      { label: 'UpdateServerBlockDevice', method: 'PUT', path: `/v1/${p}/cloudservers/${serverId}/block_device/${keeperData}`, valid: () => ({ block_device: { delete_on_termination: false } }) },
      { label: 'AttachVolume', method: 'POST', path: `/v1/${p}/cloudservers/${serverId}/attachvolume`, valid: () => ({ volumeAttachment: { volumeId: '00000000-0000-4000-8000-000000000000', device: '/dev/vdz' } }) },
      { label: 'CreateVolume v2.1', method: 'POST', path: `/v2.1/${p}/cloudvolumes`, valid: () => ({ volume: { name: 'gen', size: 10, volume_type: 'SSD', availability_zone: 'az1', metadata: { a: 'b' }, count: 1 } }) },
      { label: 'CreateVolume v2', method: 'POST', path: `/v2/${p}/cloudvolumes`, valid: () => ({ volume: { size: 10, volume_type: 'SSD', availability_zone: 'az2' } }) },
      { label: 'ServerAction stop', method: 'POST', path: `/v1/${p}/cloudservers/action`, valid: () => ({ 'os-stop': { servers: [{ id: '00000000-0000-4000-8000-000000000000' }], type: 'SOFT' } }) },
      { label: 'ServerAction reboot', method: 'POST', path: `/v1/${p}/cloudservers/action`, valid: () => ({ reboot: { servers: [{ id: '00000000-0000-4000-8000-000000000000' }], type: 'HARD' } }) },
      { label: 'CreatePort', method: 'POST', path: `/v1/${p}/ports`, valid: () => ({ port: { network_id: subnetId, name: 'gen', device_owner: '', admin_state_up: true, security_groups: ['sg'], fixed_ips: [{ subnet_id: subnetId, ip_address: '192.168.10.222' }] } }) },
      { label: 'CreatePrivateip', method: 'POST', path: `/v1/${p}/privateips`, valid: () => ({ privateips: [{ subnet_id: subnetId, ip_address: '192.168.10.223' }] }) },
      {
        label: 'KeystoneCreateUserTokenByPassword',
        method: 'POST',
        path: '/v3/auth/tokens',
        valid: () => ({ auth: { identity: { methods: ['password'], password: { user: { name: 'testbed-admin', password: 'Testbed@123', domain: { name: 'testbed-account' } } } }, scope: { project: { name: 'testbed' } } } }),
      },
    ];
    for (const r of routes) {
      for (const m of MALFORMED) check(await signed(`${r.label} malformed ${JSON.stringify(m).slice(0, 20)}`, r.method, r.path, m));
      for (const m of mutations(r.valid())) check(await signed(`${r.label} ${m.path}`, r.method, r.path, JSON.stringify(m.doc)));
    }
    expect(stats.client).toBeGreaterThan(400);
  });

  it('oversize bodies are 413 with the error shape', async () => {
    const p = env.client.projectId;
    const big = JSON.stringify({ server: { name: 'x', pad: 'a'.repeat(1024 * 1024 + 10) } });
    const r = await signed('oversize create', 'POST', `/v1.1/${p}/cloudservers`, big);
    expect(r.status).toBe(413);
    check(r);
    const a = await unsigned('oversize admin', 'PUT', '/_admin/state', big);
    expect(a.status).toBe(413);
    check(a);
  });

  it('bad query values on every list route', async () => {
    const p = env.client.projectId;
    const values = ['-1', 'abc', '0', '1.5', '1e3', '99999999999999999999', '', '%', '%00', '%E0%A4%A', '(', '[', '\\', '.*', '*', 'a'.repeat(3000), '{', '[]', 'null', '{"a":{"b":1}}', '%7B%22a%22%3A1%7D', '=', ',,,'];
    const routes: [string, string[]][] = [
      [`/v1/${p}/cloudservers/detail`, ['limit', 'offset', 'name', 'status', 'tags', 'not-tags', 'flavor', 'ip', 'ip_eq', 'server_id']],
      [`/v1/${p}/cloudservers/flavors`, ['availability_zone']],
      [`/v2/${p}/cloudvolumes/detail`, ['limit', 'offset', 'name', 'status', 'availability_zone', 'metadata']],
      [`/v1/${p}/subnets`, ['vpc_id']],
      ['/v2/cloudimages', ['name', 'status', 'id']],
      [`/v1/${p}/cloudservers/flavors`, ['flavor_id', 'limit', 'marker']],
      [`/v1/${p}/ports`, ['name', 'id', 'limit', 'marker', 'network_id', 'mac_address', 'device_id', 'device_owner', 'status', 'admin_state_up', 'fixed_ips', 'security_groups']],
      [`/v1/${p}/subnets/${subnetId}/privateips`, ['limit', 'marker']],
      [`/v1/${p}/subnets`, ['limit', 'marker']],
      ['/v3/projects', ['name', 'domain_id', 'enabled', 'parent_id', 'is_domain', 'page', 'per_page']],
      ['/v3/auth/domains', ['x']],
    ];
    for (const [path, params] of routes) {
      for (const k of params) {
        for (const v of values) {
          // Some values are deliberately not valid percent-encoding: send them raw.
          const enc = v.includes('%') ? v : encodeURIComponent(v);
          check(await signed(`GET ${path}?${k}=${v.slice(0, 20)}`, 'GET', `${path}?${k}=${enc}`));
        }
        check(await signed(`GET ${path} repeated ${k}`, 'GET', `${path}?${k}=1&${k}=2`));
      }
    }
  });

  it('bad path parameters on every route with an id, and unknown methods', async () => {
    const p = env.client.projectId;
    const ids = ['x', 'a'.repeat(2000), '%2F', '%00', '..', '%E2%98%83', '00000000-0000-4000-8000-000000000000', "'%20OR%201=1"];
    for (const id of ids) {
      const short = id.slice(0, 12);
      check(await signed(`ShowServer ${short}`, 'GET', `/v1/${p}/cloudservers/${id}`));
      check(await signed(`ShowJob ${short}`, 'GET', `/v1/${p}/jobs/${id}`));
      check(await signed(`ShowVolume ${short}`, 'GET', `/v2/${p}/cloudvolumes/${id}`));
      check(await signed(`DeleteVolume ${short}`, 'DELETE', `/v2/${p}/cloudvolumes/${id}`));
      check(await signed(`ShowSubnet ${short}`, 'GET', `/v1/${p}/subnets/${id}`));
      check(await signed(`Attach ${short}`, 'POST', `/v1/${p}/cloudservers/${id}/attachvolume`, JSON.stringify({ volumeAttachment: { volumeId } })));
      check(await signed(`Detach server ${short}`, 'DELETE', `/v1/${p}/cloudservers/${id}/detachvolume/${volumeId}`));
      check(await signed(`Detach volume ${short}`, 'DELETE', `/v1/${p}/cloudservers/${serverId}/detachvolume/${id}`));
      check(await signed(`project ${short}`, 'GET', `/v1/${id}/cloudservers/detail`));
      check(await signed(`ShowPort ${short}`, 'GET', `/v1/${p}/ports/${id}`));
      check(await signed(`DeletePort ${short}`, 'DELETE', `/v1/${p}/ports/${id}`));
      check(await signed(`ShowPrivateip ${short}`, 'GET', `/v1/${p}/privateips/${id}`));
      check(await signed(`DeletePrivateip ${short}`, 'DELETE', `/v1/${p}/privateips/${id}`));
      check(await signed(`ListPrivateips ${short}`, 'GET', `/v1/${p}/subnets/${id}/privateips`));
      check(await signed(`BlockDevices ${short}`, 'GET', `/v1/${p}/cloudservers/${id}/block_device`));
      check(await signed(`BlockDevice ${short}`, 'GET', `/v1/${p}/cloudservers/${serverId}/block_device/${id}`));
      const r = await env.hcs.app.inject({ method: 'GET', url: `/v1/${p}/cloudservers/detail`, headers: { 'x-auth-token': decodeURIComponent(id.replace(/%(?![0-9A-F]{2})/g, '')).replace(/[^\x20-\x7e]/g, '') } });
      check({ label: `X-Auth-Token ${short}`, status: r.statusCode, body: r.body });
      check(await unsigned(`admin fault ${short}`, 'DELETE', `/_admin/faults/${id}`));
    }
    for (const m of ['PATCH', 'PUT', 'OPTIONS']) check(await signed(`${m} server`, m, `/v1/${p}/cloudservers/${serverId}`, '{}'));
    check(await unsigned('unsigned ECS', 'GET', `/v1/${p}/cloudservers/${serverId}`));
    check(await signed('job of nothing', 'GET', `/v1/${p}/jobs/${jobId}x`));
  });

  it('admin routes: bad bodies for state, faults, clock and reset', async () => {
    const dump = env.hcs.dumpState();
    for (const m of MALFORMED) {
      for (const [method, url] of [
        ['PUT', '/_admin/state'],
        ['POST', '/_admin/faults'],
        ['POST', '/_admin/clock/advance'],
        ['POST', '/_admin/faults/release'],
      ] as const) {
        const o = await unsigned(`${method} ${url} malformed ${JSON.stringify(m).slice(0, 20)}`, method, url, m);
        check(o);
      }
    }
    const rule = { service: 'ecs', operation: 'showServer', match: { id: 'nothing-matches-this' }, effect: { type: 'error', status: 500, code: 'Ecs.0002' }, count: 1, after: 0, probability: 1, atMs: 0 };
    for (const m of mutations(rule)) check(await unsigned(`POST fault ${m.path}`, 'POST', '/_admin/faults', JSON.stringify(m.doc)));
    for (const m of mutations({ ms: 1 })) check(await unsigned(`clock ${m.path}`, 'POST', '/_admin/clock/advance', JSON.stringify(m.doc)));
    env.hcs.faults.clear();
    // The state document: mutate every field of one record of each kind (restores that happen to be valid are fine,
    // but the cloud must then still answer every read without a 5xx).
    const data = dump.data as Record<string, Record<string, unknown>>;
    const firstOf = (k: string) => Object.fromEntries(Object.entries(data[k]!).slice(0, 1));
    const small = {
      format: 'mock-hcs-state',
      version: 1,
      data: { ...data, servers: firstOf('servers'), volumes: firstOf('volumes'), jobs: firstOf('jobs'), tasks: firstOf('tasks') },
    };
    const p = env.client.projectId;
    for (const m of mutations(small, 5)) {
      const o = await unsigned(`PUT state ${m.path.slice(0, 80)}`, 'PUT', '/_admin/state', JSON.stringify(m.doc));
      check(o);
      if (o.status === 200) {
        for (const path of [`/v1/${p}/cloudservers/detail`, `/v2/${p}/cloudvolumes/detail`, `/v1/${p}/jobs/${jobId}`]) {
          check(await signed(`after PUT state ${m.path.slice(0, 60)}: GET ${path}`, 'GET', path));
        }
      }
    }
    env.hcs.faults.clear();
    // Put the original state back and make sure the cloud still works.
    expect((await unsigned('restore', 'PUT', '/_admin/state', JSON.stringify(dump))).status).toBe(200);
    env.hcs.faults.clear();
    expect((await env.client.showServer(serverId))?.status).toBe('ACTIVE');
    expect(stats.total).toBeGreaterThan(1000);
  });
});
