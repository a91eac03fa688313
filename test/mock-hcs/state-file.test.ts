/**
 * A data file that is not this cloud's state is refused at start, naming
 * the file and the reason, and left untouched: never a silent reset (HCS-6).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, DataFileError, defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { serverBody, settle, setup } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-statefile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A valid document: one ACTIVE server with its volumes, one private IP. */
let good: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a JSON document edited by each case
let serverId: string;

beforeAll(async () => {
  const dataFile = join(dir, 'good.json');
  const env = await setup({ dataFile });
  serverId = (await env.client.createServers(serverBody(env, {}, { ip: '192.168.10.40' }))).serverIds[0]!;
  await env.client.createPrivateIps([{ subnetId: env.config.subnets.find((s) => s.name === 'worker-subnet')!.id }]);
  settle(env);
  await env.hcs.close();
  good = JSON.parse(readFileSync(dataFile, 'utf8'));
});

let n = 0;
/** Write `text` as a data file, start a cloud on it: the refusal's message; the file must be unchanged. */
async function refusal(text: string): Promise<{ message: string; file: string }> {
  const file = join(dir, `case-${++n}.json`);
  writeFileSync(file, text);
  const err = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(1), config: defaultCloudConfig(), dataFile: file }).then(
    async (m) => {
      await m.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err, `started on ${text.slice(0, 60)}`).toBeInstanceOf(DataFileError);
  expect(readFileSync(file, 'utf8')).toBe(text);
  const message = (err as Error).message;
  expect(message).toContain(file);
  return { message, file };
}

const edit = (fn: (d: typeof good) => void): string => {
  const d = structuredClone(good);
  fn(d);
  return JSON.stringify(d);
};

describe('mock-hcs data file validation (HCS-6)', () => {
  it.each(['null', 'false', '0', '""', '[]', '', '   \n'])('refuses %j instead of starting empty', async (text) => {
    const { message } = await refusal(text);
    expect(message).toMatch(/not a mock-hcs state document|is empty/);
  });

  it('refuses a directory as data file with its name', async () => {
    const d = join(dir, 'a-directory');
    mkdirSync(d);
    const err = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(1), dataFile: d }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataFileError);
    expect((err as Error).message).toContain(d);
    expect((err as Error).message).toContain('is a directory');
  });

  it('refuses invalid JSON and unknown versions', async () => {
    expect((await refusal('{"version":1,')).message).toContain('not valid JSON');
    expect((await refusal(edit((d) => (d.version = 2)))).message).toContain('unsupported data file version 2');
  });

  it('refuses semantically corrupt documents, naming the record and the reason', async () => {
    const cases: [string, (d: typeof good) => void, RegExp][] = [
      ['unknown server status', (d) => (d.servers[serverId].status = 'RUNNING'), /servers\.[^ ]+\.status "RUNNING" is not a known status/],
      ['unknown volume status', (d) => (Object.values(d.volumes)[0] as { status: string }).status = 'mounted', /volumes\.[^ ]+\.status "mounted" is not a known status/],
      ['unknown job status', (d) => (Object.values(d.jobs)[0] as { status: string }).status = 'DONE', /jobs\.[^ ]+\.status "DONE"/],
      [
        'two servers on one IP',
        (d) => {
          const twin = structuredClone(d.servers[serverId]);
          twin.id = 'a0000000-0000-4000-8000-000000000001';
          twin.volumes = [];
          twin.nics[0].portId = 'a0000000-0000-4000-8000-000000000002';
          d.servers[twin.id] = twin;
        },
        /holds IP 192\.168\.10\.40 .*already held by servers\./,
      ],
      ['IP outside its subnet', (d) => (d.servers[serverId].nics[0].ip = '10.9.9.9'), /has IP 10\.9\.9\.9, which is not a usable address of subnet/],
      ['private IP outside its subnet', (d) => ((Object.values(d.ports)[0] as { ip: string }).ip = '172.31.0.5'), /ports\.[^ ]+ has IP 172\.31\.0\.5/],
      ['unknown subnet', (d) => (d.servers[serverId].nics[0].subnetId = 'no-such-subnet'), /subnet no-such-subnet, which is not a subnet/],
      [
        'attachment to a missing server',
        (d) => {
          const v = Object.values(d.volumes).find((x) => (x as { attachment?: unknown }).attachment) as { attachment: { serverId: string } };
          v.attachment.serverId = 'b0000000-0000-4000-8000-000000000009';
        },
        /attachment names server b0000000-0000-4000-8000-000000000009, which does not exist/,
      ],
      ['unknown project', (d) => (d.servers[serverId].projectId = 'p-unknown'), /project p-unknown is not a project of this cloud's configuration/],
      [
        'task for a missing server',
        (d) => {
          d.taskSeq += 1;
          d.tasks[String(d.taskSeq)] = { seq: d.taskSeq, kind: 'server.build', due: 0, target: 'c0000000-0000-4000-8000-000000000000' };
        },
        /tasks\.\d+ \(server\.build\) acts on server c0000000-0000-4000-8000-000000000000, which does not exist/,
      ],
      ['server volume that does not exist', (d) => (d.servers[serverId].volumes[0].volumeId = 'gone-volume'), /names volume gone-volume, which does not exist/],
    ];
    for (const [what, fn, re] of cases) {
      const { message } = await refusal(edit(fn));
      expect(message, what).toMatch(re);
    }
  });

  it('starts on the untouched good document (the edits above are what is refused)', async () => {
    const file = join(dir, 'good-again.json');
    writeFileSync(file, JSON.stringify(good));
    const m = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(1), dataFile: file });
    try {
      expect(m.hypervisor.server(serverId)?.status).toBe('ACTIVE');
    } finally {
      await m.close();
    }
  });

  it('PUT /_admin/state refuses the same inconsistencies (restoreState), changing nothing', async () => {
    const env = await setup();
    try {
      const bad = structuredClone(good);
      bad.servers[serverId].nics[0].ip = '10.9.9.9';
      await expect(env.hcs.restoreState(bad)).rejects.toThrow(/not a usable address/);
      expect(env.hcs.hypervisor.listServers()).toHaveLength(0);
    } finally {
      await env.hcs.close();
    }
  });
});
