/**
 * Issue 32: every refused mock-hcs call changes nothing. UpdateServerMetadata answered 400 and still
 * stored the keys before the bad one; a real cloud validates a request whole before it acts on it.
 *
 * For every route that changes state (ECS, EVS, VPC, IAM token issue, /_admin), a valid request is
 * made wrong at one field at a time (a wrong type, a bad value, missing, a bad element after the valid
 * ones: mutate.ts) — and at its path ids. Whenever the answer is an error, the state is compared
 * before and after, byte for byte: in memory (`dumpState()`, the revision counter) and on disk (the
 * data file). Hidden in-memory state (indexes, id and random streams) is checked with a twin: a second
 * cloud, built the same way, gets only the calls that succeeded; after the same follow-up calls on
 * both, their dumps and data files must be identical. Calls that succeed are undone on both (restoreState).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fieldCases, type FieldCase } from './mutate.js';
import { serverBody, settle, setup, type Env } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-aon-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface World {
  p: string;
  subnetId: string;
  /** ACTIVE servers, each with a data volume attached. */
  s1: string;
  s2: string;
  /** SHUTOFF servers. */
  s3: string;
  s4: string;
  /** Data volumes attached to s1 and s2. */
  d1: string;
  d2: string;
  /** Available volumes. */
  v1: string;
  v2: string;
  port: string;
  privateIp: string;
  fault: string;
}

interface Side {
  env: Env;
  file: string;
}

let sides = 0;
async function side(): Promise<{ side: Side; world: World }> {
  const file = join(dir, `state-${++sides}.json`);
  const env = await setup({ dataFile: file });
  const p = env.client.projectId;
  const subnetId = env.config.subnets.find((s) => s.name === 'worker-subnet')!.id;
  const ids: string[] = [];
  for (const name of ['s1', 's2', 's3', 's4']) ids.push((await env.client.createServers(serverBody(env, { name }))).serverIds[0]!);
  const [s1, s2, s3, s4] = ids as [string, string, string, string];
  const vols: string[] = [];
  for (const name of ['v1', 'v2']) vols.push((await env.client.createVolume({ volume: { name, size: 10, volume_type: 'SSD', availability_zone: 'az1' } })).volume_ids[0]!);
  settle(env);
  await env.client.stopServers([s3, s4]);
  settle(env);
  const dataOf = async (s: string) => (await env.client.listServerBlockDevices(s))!.find((b) => b.bootIndex !== 0)!.volumeId;
  const port = (await env.client.createPort({ port: { network_id: subnetId, name: 'p1' } })).id;
  const privateIp = (await env.client.createPrivateIps([{ subnetId }]))[0]!.id;
  const fault = env.hcs.faults.add({ service: 'ecs', operation: 'showServer', match: { id: 'nothing-matches-this' }, effect: { type: 'error', status: 500, code: 'Ecs.0002' } });
  await env.hcs.flush();
  return { side: { env, file }, world: { p, subnetId, s1, s2, s3, s4, d1: await dataOf(s1), d2: await dataOf(s2), v1: vols[0]!, v2: vols[1]!, port, privateIp, fault } };
}

type Via = 'signed' | 'admin' | 'iam';

interface Op {
  label: string;
  method: 'POST' | 'PUT' | 'DELETE';
  via: Via;
  path(w: World): string;
  /** A body the call succeeds with; the cases make it wrong one field at a time. */
  body?(w: World, env: Env): unknown;
  /** Paths naming something that is not there, or not in the state the call needs. */
  badPaths?(w: World): string[];
  headers?: Record<string, string>;
  /** Requests wrong as a whole rather than at one field (an id of something in the wrong state, over quota, ...). */
  extra?(w: World, env: Env): { label: string; body: unknown }[];
  /** Only these field cases (for very large bodies). */
  keep?(c: FieldCase): boolean;
  maxDepth?: number;
}

const BAD_ID = '00000000-0000-4000-8000-000000000000';
const passwordBody = (project: string) => ({
  auth: { identity: { methods: ['password'], password: { user: { name: 'testbed-admin', password: 'Testbed@123', domain: { name: 'testbed-account' } } } }, scope: { project: { name: project } } },
});

const OPS: Op[] = [
  {
    label: 'CreateServers v1.1 (count 2, X-Client-Token)',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1.1/${w.p}/cloudservers`,
    headers: { 'x-client-token': 'aon-token-1' },
    body: (_w, env) =>
      serverBody(env, {
        name: 'aon',
        count: 2,
        metadata: { a: '1', b: '2' },
        server_tags: [
          { key: 'k1', value: 'v1' },
          { key: 'k2', value: 'v2' },
        ],
        data_volumes: [
          { volumetype: 'SSD', size: 10, metadata: { x: 'y' } },
          { volumetype: 'SAS', size: 20 },
        ],
      }),
    extra: (_w, env) => [{ label: 'count over the instance quota', body: serverBody(env, { name: 'aon', count: 500, metadata: { a: '1' } }) }],
  },
  {
    label: 'CreateServers v1 (fixed IP)',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers`,
    body: (_w, env) => serverBody(env, { name: 'aon-ip', data_volumes: [] }, { ip: '192.168.10.200' }),
  },
  ...(['os-stop', 'os-start', 'reboot'] as const).map(
    (action): Op => ({
      label: `ServerAction ${action}`,
      method: 'POST',
      via: 'signed',
      path: (w) => `/v1/${w.p}/cloudservers/action`,
      body: (w) => ({ [action]: { servers: action === 'os-start' ? [{ id: w.s3 }, { id: w.s4 }] : [{ id: w.s1 }, { id: w.s2 }], type: action === 'os-start' ? undefined : 'SOFT' } }),
      // A server in the wrong state, or not there, after one the action could be done to.
      extra: (w) =>
        [w.s3, w.s1, BAD_ID].map((second) => ({
          label: `servers[1].id=${second === BAD_ID ? 'unknown' : second === w.s3 ? 's3 (SHUTOFF)' : 's1 (ACTIVE)'}`,
          body: { [action]: { servers: [{ id: action === 'os-start' ? w.s3 : w.s1 }, { id: second }], ...(action === 'os-start' ? {} : { type: 'SOFT' }) } },
        })),
    }),
  ),
  {
    label: 'DeleteServers',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/delete`,
    body: (w) => ({ servers: [{ id: w.s1 }, { id: w.s2 }], delete_volume: true, delete_publicip: false }),
    extra: (w) => [{ label: 'servers[1].id unknown', body: { servers: [{ id: w.s1 }, { id: BAD_ID }], delete_volume: true } }],
  },
  {
    label: 'AttachVolume',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/${w.s1}/attachvolume`,
    body: (w) => ({ volumeAttachment: { volumeId: w.v1, device: '/dev/vdc' } }),
    extra: (w) => [
      { label: 'volumeId of a volume in use', body: { volumeAttachment: { volumeId: w.d2, device: '/dev/vdc' } } },
      { label: 'device already used', body: { volumeAttachment: { volumeId: w.v1, device: '/dev/vdb' } } },
    ],
    badPaths: (w) => [`/v1/${w.p}/cloudservers/${BAD_ID}/attachvolume`, `/v1/${w.p}/cloudservers/x/attachvolume`],
  },
  {
    label: 'DetachVolume',
    method: 'DELETE',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/${w.s1}/detachvolume/${w.d1}`,
    badPaths: (w) => [
      `/v1/${w.p}/cloudservers/${BAD_ID}/detachvolume/${w.d1}`,
      `/v1/${w.p}/cloudservers/${w.s1}/detachvolume/${BAD_ID}`,
      `/v1/${w.p}/cloudservers/${w.s1}/detachvolume/${w.d2}`,
      `/v1/${w.p}/cloudservers/${w.s1}/detachvolume/${w.v1}`,
    ],
  },
  {
    label: 'BatchCreateServerTags',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/${w.s1}/tags/action`,
    body: () => ({
      action: 'create',
      tags: [
        { key: 't1', value: 'a' },
        { key: 't2', value: 'b' },
      ],
    }),
    badPaths: (w) => [`/v1/${w.p}/cloudservers/${BAD_ID}/tags/action`],
  },
  {
    label: 'BatchDeleteServerTags',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/${w.s1}/tags/action`,
    body: () => ({ action: 'delete', tags: [{ key: 'cluster', value: 'demo' }, { key: 'other' }] }),
  },
  {
    label: 'UpdateServerMetadata',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/${w.s1}/metadata`,
    body: () => ({ metadata: { m1: 'a', m2: 'b', m3: 'c' } }),
    badPaths: (w) => [`/v1/${w.p}/cloudservers/${BAD_ID}/metadata`],
  },
  {
    label: 'DeleteServerMetadata',
    method: 'DELETE',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/${w.s1}/metadata/cluster`,
    badPaths: (w) => [`/v1/${w.p}/cloudservers/${BAD_ID}/metadata/cluster`, `/v1/${w.p}/cloudservers/${w.s1}/metadata/`, `/v1/${w.p}/cloudservers/${w.s1}/metadata/${'k'.repeat(300)}`],
  },
  {
    label: 'UpdateServerBlockDevice',
    method: 'PUT',
    via: 'signed',
    path: (w) => `/v1/${w.p}/cloudservers/${w.s1}/block_device/${w.d1}`,
    body: () => ({ block_device: { delete_on_termination: true } }),
    badPaths: (w) => [`/v1/${w.p}/cloudservers/${w.s1}/block_device/${w.d2}`, `/v1/${w.p}/cloudservers/${BAD_ID}/block_device/${w.d1}`],
  },
  {
    label: 'CreateVolume v2.1 (count 2)',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v2.1/${w.p}/cloudvolumes`,
    body: () => ({ volume: { name: 'aon-v', size: 10, volume_type: 'SSD', availability_zone: 'az1', description: 'd', metadata: { a: 'b', c: 'd' }, count: 2 } }),
  },
  {
    label: 'CreateVolume v2',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v2/${w.p}/cloudvolumes`,
    body: () => ({ volume: { name: 'aon-v2', size: 20, volume_type: 'SAS', availability_zone: 'az2', metadata: { a: 'b' } } }),
  },
  {
    label: 'UpdateVolume',
    method: 'PUT',
    via: 'signed',
    path: (w) => `/v2/${w.p}/cloudvolumes/${w.v1}`,
    body: () => ({ volume: { name: 'renamed', description: 'desc', metadata: { a: 'b', c: null } } }),
    badPaths: (w) => [`/v2/${w.p}/cloudvolumes/${BAD_ID}`],
  },
  {
    label: 'DeleteVolume',
    method: 'DELETE',
    via: 'signed',
    path: (w) => `/v2/${w.p}/cloudvolumes/${w.v2}`,
    badPaths: (w) => [`/v2/${w.p}/cloudvolumes/${BAD_ID}`, `/v2/${w.p}/cloudvolumes/${w.d1}`],
  },
  {
    label: 'CreatePort',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/ports`,
    body: (w) => ({ port: { network_id: w.subnetId, name: 'aon-port', device_owner: '', admin_state_up: true, security_groups: ['sg1', 'sg2'], fixed_ips: [{ ip_address: '192.168.10.222' }] } }),
  },
  {
    label: 'DeletePort',
    method: 'DELETE',
    via: 'signed',
    path: (w) => `/v1/${w.p}/ports/${w.port}`,
    badPaths: (w) => [`/v1/${w.p}/ports/${BAD_ID}`, `/v1/${w.p}/ports/${w.privateIp}`],
  },
  {
    label: 'CreatePrivateip (two)',
    method: 'POST',
    via: 'signed',
    path: (w) => `/v1/${w.p}/privateips`,
    body: (w) => ({
      privateips: [
        { subnet_id: w.subnetId, ip_address: '192.168.10.223' },
        { subnet_id: w.subnetId, ip_address: '192.168.10.224' },
      ],
    }),
  },
  {
    label: 'DeletePrivateip',
    method: 'DELETE',
    via: 'signed',
    path: (w) => `/v1/${w.p}/privateips/${w.privateIp}`,
    badPaths: (w) => [`/v1/${w.p}/privateips/${BAD_ID}`, `/v1/${w.p}/privateips/${w.port}`],
  },
  { label: 'KeystoneCreateUserTokenByPassword', method: 'POST', via: 'iam', path: () => '/v3/auth/tokens', body: () => passwordBody('testbed') },
  {
    label: 'PUT /_admin/state',
    method: 'PUT',
    via: 'admin',
    path: () => '/_admin/state',
    body: (_w, env) => env.hcs.dumpState(),
    maxDepth: 4,
    // The whole document, and every field of the first record of each kind (the others are alike).
    keep: (c) => {
      const path = c.label.split(/[= ]/)[0]!.split('.');
      return path.length < 4 || path[2] === FIRST_RECORD.get(`${path[0]}.${path[1]}`);
    },
  },
  { label: 'POST /_admin/reset', method: 'POST', via: 'admin', path: () => '/_admin/reset', body: () => ({ keepFaults: true }) },
  { label: 'POST /_admin/clock/advance', method: 'POST', via: 'admin', path: () => '/_admin/clock/advance', body: () => ({ ms: 1000 }) },
  {
    label: 'PUT /_admin/quotas/{project}',
    method: 'PUT',
    via: 'admin',
    path: (w) => `/_admin/quotas/${w.p}`,
    body: () => ({ instances: 50, cores: 200, ram: 409600, volumes: 100, gigabytes: 10000 }),
    badPaths: () => [`/_admin/quotas/${BAD_ID}`],
  },
  {
    label: 'POST /_admin/faults',
    method: 'POST',
    via: 'admin',
    path: () => '/_admin/faults',
    body: () => ({ service: 'ecs', operation: 'showServer', match: { id: 'x', name: 'y' }, effect: { type: 'error', status: 500, code: 'Ecs.0002', message: 'm' }, count: 1, after: 0, probability: 1 }),
  },
  { label: 'DELETE /_admin/faults/{id}', method: 'DELETE', via: 'admin', path: (w) => `/_admin/faults/${w.fault}`, badPaths: () => ['/_admin/faults/fault-999'] },
  { label: 'POST /_admin/faults/release', method: 'POST', via: 'admin', path: () => '/_admin/faults/release', body: (w) => ({ target: w.s1 }) },
];

/** data.<kind> -> the id of its first record (filled from the world's dump). */
const FIRST_RECORD = new Map<string, string>();

interface Answer {
  status: number;
  body: string;
}

async function call(s: Side, op: Op, path: string, body: unknown): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  if (op.via === 'signed') {
    const r = await s.env.req(op.method, path, text, op.headers ?? {});
    return { status: r.status, body: r.body };
  }
  const headers: Record<string, string> = {
    ...(op.via === 'admin' ? { 'x-admin-token': s.env.hcs.adminToken! } : {}),
    ...(text !== undefined ? { 'content-type': 'application/json' } : {}),
  };
  const r = await s.env.hcs.app.inject({ method: op.method, url: path, headers, ...(text !== undefined ? { payload: text } : {}) });
  return { status: r.statusCode, body: r.body };
}

interface Snapshot {
  state: string;
  revision: number;
  file: string;
}

async function snapshot(s: Side): Promise<Snapshot> {
  await s.env.hcs.flush();
  return { state: JSON.stringify(s.env.hcs.dumpState()), revision: s.env.hcs.revision(), file: readFileSync(s.file, 'utf8') };
}

/** Where two texts first differ, with some context; undefined when they are equal. */
function firstDifference(a: string, b: string): string | undefined {
  if (a === b) return undefined;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at ${i}: …${a.slice(Math.max(0, i - 120), i + 80)}… vs …${b.slice(Math.max(0, i - 120), i + 80)}…`;
}

/** The same calls on both sides, so that their hidden state (ids, indexes) is exercised. */
async function followUp(s: Side): Promise<void> {
  const env = s.env;
  await env.client.createServers(serverBody(env, { name: 'after' }));
  await env.client.createVolume({ volume: { name: 'after-v', size: 10, volume_type: 'SSD', availability_zone: 'az1' } });
  await env.client.createPort({ port: { network_id: env.config.subnets.find((x) => x.name === 'worker-subnet')!.id, name: 'after-p' } });
  settle(env);
  await env.hcs.flush();
}

describe('issue 32: every refused mock-hcs write changes nothing (HCS-6)', () => {
  for (const op of OPS) {
    it(`${op.label}: refused at any field or path id, the state is byte-identical`, { timeout: 120_000 }, async () => {
      const { side: a, world: w } = await side();
      const { side: b } = await side();
      const dump = a.env.hcs.dumpState().data as Record<string, Record<string, unknown>>;
      for (const kind of Object.keys(dump)) {
        const first = Object.keys(dump[kind] ?? {})[0];
        if (first !== undefined && typeof dump[kind] === 'object') FIRST_RECORD.set(`data.${kind}`, first);
      }
      const valid = op.body?.(w, a.env);
      const cases: { label: string; path: string; body: unknown }[] = [
        ...(valid === undefined ? [] : fieldCases(valid, op.maxDepth).filter((c) => !op.keep || op.keep(c)).map((c) => ({ label: c.label, path: op.path(w), body: c.doc }))),
        ...(op.badPaths?.(w) ?? []).map((path) => ({ label: `path ${path}`, path, body: valid })),
        ...(op.extra?.(w, a.env) ?? []).map((e) => ({ label: e.label, path: op.path(w), body: e.body })),
      ];
      expect(cases.length).toBeGreaterThan(0);
      let refused = 0;
      let before = await snapshot(a);
      const partial: string[] = [];
      for (const c of cases) {
        const r = await call(a, op, c.path, c.body);
        expect(r.status, `${op.label} ${c.label}: ${r.body.slice(0, 200)}`).toBeLessThan(500);
        if (r.status >= 400) {
          refused++;
          const after = await snapshot(a);
          if (after.state !== before.state || after.file !== before.file || after.revision !== before.revision) {
            partial.push(`${c.label} -> ${r.status} ${r.body.slice(0, 160)}`);
            // Carry on from the changed state on both sides, so the twin comparison still holds.
            await a.env.hcs.restoreState(JSON.parse(before.state));
            await b.env.hcs.restoreState(JSON.parse((await snapshot(b)).state));
            before = await snapshot(a);
          }
        } else {
          // A valid variant (an optional field left out, say): the twin does it too, then both are put back.
          const rb = await call(b, op, c.path, c.body);
          expect(rb.status, `twin: ${op.label} ${c.label}`).toBe(r.status);
          await a.env.hcs.restoreState(JSON.parse(before.state));
          await b.env.hcs.restoreState(JSON.parse(before.state));
          before = await snapshot(a);
        }
      }
      expect(partial, `${op.label}: refused calls that changed the state`).toEqual([]);
      expect(refused).toBeGreaterThan(0);
      // The valid call itself succeeds (so each case was refused for its one wrong field).
      const ok = await call(a, op, op.path(w), valid);
      expect(ok.status, `${op.label} valid: ${ok.body.slice(0, 300)}`).toBeLessThan(300);
      expect((await call(b, op, op.path(w), valid)).status).toBe(ok.status);
      await followUp(a);
      await followUp(b);
      const [sa, sb] = [await snapshot(a), await snapshot(b)];
      expect(firstDifference(sa.state, sb.state), 'in-memory state of the cloud that got the refused calls vs its twin').toBeUndefined();
      expect(firstDifference(sa.file, sb.file), 'data file vs the twin').toBeUndefined();
      await a.env.hcs.close();
      await b.env.hcs.close();
    });
  }
});
