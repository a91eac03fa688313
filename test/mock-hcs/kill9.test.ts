/**
 * kill -9 durability (HCS-6): separate writer processes create servers and
 * volumes against a mock-hcs child process with a data file; the server is
 * killed with SIGKILL at seeded random moments, mid-request and mid-job, and
 * restarted on the same file. Afterwards no acknowledged create is lost or
 * duplicated, no create is duplicated by its retry (X-Client-Token), and every
 * acknowledged job finishes. Real processes; every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RealClock, SeededRng } from '../../src/core/index.js';
import { HcsClient, fetchTransport } from '../../src/product/cloud/index.js';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-kill9-'));
const dataFile = join(dir, 'cloud.json');
const TOKEN = 'kill9-test-admin-token';
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const CYCLES = 8;
const WRITERS = 3;
const PER_WRITER = 30;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function run(args: string[], stdin: 'ignore' | 'pipe' = 'ignore'): ChildProcess {
  const c = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: process.cwd(), stdio: [stdin, 'pipe', 'pipe'] });
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

/** Start mock-hcs on the data file; resolves once it listens (bounded). */
async function startServer(port: number): Promise<ChildProcess> {
  const c = run(['mock-hcs/src/server.ts', '--port', String(port), '--data-file', dataFile, '--seed', '1', '--speedup', '60', '--admin-token', TOKEN]);
  let out = '';
  let err = '';
  c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mock-hcs did not start within 60 s: ${err}`)), 60_000);
    c.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    c.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mock-hcs exited with ${code} before listening: ${err}`));
    });
  });
  return c;
}

async function kill9(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise<void>((r) => c.once('exit', () => r()));
  c.kill('SIGKILL');
  await Promise.race([exited, sleep(10_000)]);
}

interface Ack {
  kind: 'server' | 'volume';
  name: string;
  id?: string;
  job?: string;
  maybe?: boolean;
}

describe('mock-hcs kill -9 durability (HCS-6)', () => {
  it(`${CYCLES} kill -9 / restart cycles under ${WRITERS} writer processes: nothing acknowledged lost or duplicated, every acknowledged job finishes`, { timeout: 480_000 }, async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let server = await startServer(port);
    const acks: Ack[] = [];
    const writers = Array.from({ length: WRITERS }, (_, w) => {
      const c = run(['test/mock-hcs/kill9-writer.ts', url, String(w), String(PER_WRITER)], 'pipe');
      let buf = '';
      let err = '';
      c.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) if (l.trim()) acks.push(JSON.parse(l) as Ack);
      });
      c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      return { c, done: new Promise<{ code: number | null; err: string }>((r) => c.once('exit', (code) => r({ code, err }))) };
    });
    const rng = new SeededRng(13);
    let cycles = 0;
    let running = true;
    void Promise.all(writers.map((w) => w.done)).then(() => (running = false));
    // Kills are paced by the writers' progress, not by wall time, so every run makes all CYCLES
    // kills whatever the machine's load: the i-th comes once i/(CYCLES+1) of the expected
    // acknowledgements are in, after a seeded delay that lands it mid-request or mid-job.
    // The writers may only run a few creates past that point until the kill has happened
    // (their stdin budget), so a test process the load starves cannot find them finished.
    const expectedAcks = WRITERS * PER_WRITER;
    const allow = (n: number): void => {
      for (const w of writers) w.c.stdin!.write(`${n}\n`);
    };
    while (running && cycles < CYCLES) {
      const due = Math.floor((expectedAcks * (cycles + 1)) / (CYCLES + 1));
      allow(Math.ceil(due / WRITERS) + 2);
      const until = Date.now() + 120_000;
      while (running && acks.length < due && Date.now() < until) await sleep(10);
      if (!running) break;
      await sleep(rng.int(150));
      await kill9(server);
      cycles++;
      server = await startServer(port);
    }
    for (const w of writers) w.c.stdin!.end();
    const results = await Promise.race([Promise.all(writers.map((w) => w.done)), sleep(330_000).then(() => undefined)]);
    expect(results, 'writers finished within 330 s').toBeDefined();
    for (const r of results!) expect(r.code, r.err).toBe(0);
    expect(cycles, 'every planned kill -9 happened while the writers were running').toBe(CYCLES);

    const cfg = defaultCloudConfig();
    const p = cfg.projects[0]!;
    const client = new HcsClient({ transport: fetchTransport(url), ak: p.ak, sk: p.sk, projectId: p.id, clock: new RealClock() });
    const jobs = acks.filter((a) => a.job !== undefined).map((a) => a.job!);
    // Every acknowledged job finishes (build 60 s of cloud time = 1 s at speedup 60); bounded.
    const until = Date.now() + 90_000;
    let pending = new Set(jobs);
    while (pending.size && Date.now() < until) {
      const next = new Set<string>();
      for (const j of pending) {
        const job = await client.showJob(j);
        if (job.status !== 'SUCCESS') next.add(j);
        expect(job.status, `job ${j}`).not.toBe('FAIL');
      }
      pending = next;
      if (pending.size) await sleep(250);
    }
    expect([...pending], 'acknowledged jobs still running').toEqual([]);

    const res = await fetch(`${url}/_admin/state`, { headers: { 'x-admin-token': TOKEN } });
    const state = (await res.json()) as { data: { servers: Record<string, { name: string; status: string }>; volumes: Record<string, { name: string; status: string }>; tasks: Record<string, unknown> } };
    const byName = (recs: Record<string, { name: string }>) => {
      const m = new Map<string, string[]>();
      for (const [id, r] of Object.entries(recs)) m.set(r.name, [...(m.get(r.name) ?? []), id]);
      return m;
    };
    const servers = byName(state.data.servers);
    const volumes = byName(Object.fromEntries(Object.entries(state.data.volumes).filter(([, v]) => !v.name.includes('-volume-'))));
    // Nothing duplicated: one record per name, whoever made it.
    for (const [name, ids] of [...servers, ...volumes]) expect(ids, `${name} exists once`).toHaveLength(1);
    // Nothing acknowledged lost: each acknowledged create exists, with the acknowledged id, and is settled.
    const acked = acks.filter((a) => !a.maybe);
    for (const a of acked) {
      const ids = (a.kind === 'server' ? servers : volumes).get(a.name);
      expect(ids, `${a.kind} ${a.name} acknowledged`).toEqual([a.id]);
      const rec = a.kind === 'server' ? state.data.servers[a.id!]! : state.data.volumes[a.id!]!;
      expect(rec.status, `${a.kind} ${a.name}`).toBe(a.kind === 'server' ? 'ACTIVE' : 'available');
    }
    // Nothing invented: every server or volume is one a writer asked for.
    const asked = new Set(acks.map((a) => a.name));
    for (const name of [...servers.keys(), ...volumes.keys()]) expect(asked.has(name), name).toBe(true);
    expect(Object.keys(state.data.tasks)).toEqual([]);
    expect(acked.filter((a) => a.kind === 'server')).toHaveLength(WRITERS * (PER_WRITER / 2));
    console.log(`kill9: ${cycles} kill -9 cycles, ${acked.length} acknowledged creates (${acks.length - acked.length} unknown outcomes), ${jobs.length} jobs finished, 0 lost, 0 duplicated`);
    await kill9(server);
  });
});
