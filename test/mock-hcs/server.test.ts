/**
 * The standalone server as a child process (the only mock-hcs test with
 * wall-clock waits; every wait is bounded).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { fetchTransport, HcsClient } from '../../src/product/cloud/index.js';
import { RealClock } from '../../src/core/index.js';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-server-'));
const children = new Set<ChildProcess>();
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Started {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

function spawnServer(args: string[]): ChildProcess {
  const child = spawn(process.execPath, [join(root, 'mock-hcs/bin/mock-hcs.mjs'), ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  return child;
}

function start(args: string[], timeoutMs = 20_000): Promise<Started> {
  const child = spawnServer(['--port', '0', ...args]);
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within ${timeoutMs}ms; stderr: ${err}`)), timeoutMs);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m && out.includes('admin ')) {
        clearTimeout(timer);
        resolvePromise({ child, url: m[1]!, stderr: () => err });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening; stderr: ${err}`));
    });
  });
}

function exited(child: ChildProcess, timeoutMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error('child did not exit in time')), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(t);
      res({ code, signal });
    });
  });
}

function client(url: string): HcsClient {
  const p = defaultCloudConfig().projects[0]!;
  return new HcsClient({ transport: fetchTransport(url), ak: p.ak, sk: p.sk, projectId: p.id, clock: new RealClock() });
}

function body() {
  const c = defaultCloudConfig();
  return {
    server: {
      name: 'survivor',
      imageRef: c.images[1]!.id,
      flavorRef: 's6.large.2',
      availability_zone: 'az1',
      vpcid: c.vpcs[0]!.id,
      nics: [{ subnet_id: c.subnets[1]!.id }],
      root_volume: { volumetype: 'SSD', size: 40 },
    },
  };
}

describe('mock-hcs standalone server', () => {
  it('keeps acknowledged state across kill -9, and a pending BUILD completes after the restart', async () => {
    const dataFile = join(dir, 'state.json');
    // Builds take 48-72 s of cloud time; at speedup 40 that is 1.2-1.8 s of wall time.
    const a = await start(['--data-file', dataFile, '--speedup', '40', '--seed', '5']);
    const c1 = client(a.url);
    const created = await c1.createServers(body());
    const id = created.serverIds[0]!;
    expect((await c1.showServer(id))?.status).toBe('BUILD');
    a.child.kill('SIGKILL');
    expect((await exited(a.child)).signal).toBe('SIGKILL');
    // The acknowledged create is in the file although the process never shut down.
    expect(JSON.parse(readFileSync(dataFile, 'utf8')).servers[id].status).toBe('BUILD');

    const b = await start(['--data-file', dataFile, '--speedup', '40', '--seed', '5']);
    const c2 = client(b.url);
    expect((await c2.showServer(id))?.name).toBe('survivor');
    const deadline = Date.now() + 15_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await c2.showServer(id))?.status ?? 'gone';
      if (status === 'ACTIVE') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('ACTIVE');
    expect((await c2.showJob(created.job_id)).status).toBe('SUCCESS');
    // A second server gets a fresh id (the seeded id stream skips ids in use).
    const second = await c2.createServers({ server: { ...body().server, name: 'second' } });
    expect(second.serverIds[0]).not.toBe(id);
    b.child.kill('SIGTERM');
    expect((await exited(b.child)).code).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(dataFile, 'utf8')).servers).sort()).toEqual([id, second.serverIds[0]!].sort());
  });

  it('refuses to start on a corrupt data file (non-zero exit, clear message)', async () => {
    const dataFile = join(dir, 'corrupt.json');
    writeFileSync(dataFile, '{"version":1,"servers":{');
    const child = spawnServer(['--port', '0', '--data-file', dataFile]);
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const { code } = await exited(child);
    expect(code).toBe(1);
    expect(err).toContain('is not valid JSON');
    expect(err).toContain(dataFile);
    // The file was left alone.
    expect(readFileSync(dataFile, 'utf8')).toBe('{"version":1,"servers":{');
  });

  it('--help and bad arguments', async () => {
    const help = spawnServer(['--help']);
    let out = '';
    help.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    expect((await exited(help)).code).toBe(0);
    expect(out).toContain('--data-file');
    const bad = spawnServer(['--speedup', '0']);
    expect((await exited(bad)).code).toBe(2);
  });
});
