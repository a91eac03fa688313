/**
 * Issue 32.4 and the shutdown, with the real CLI: `hcs-testbed serve` under a
 * file-descriptor limit of 1,024 (prlimit). Before the connection cap
 * (src/world/facade/connections.ts) 1,500 idle sockets used every descriptor
 * and new clients were reset (libuv accepts and closes when out of
 * descriptors). Now the cap stays below the limit and the oldest idle
 * connections make room: new clients are served. SIGTERM stops serve (exit 0).
 * Figures (latencies, 20,000 sockets): npm run bench -- facade-load.
 */
import { connect, type Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeChild, timedGet, type ServeChild } from './serve-child.js';

const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

describe.skipIf(!PRLIMIT)('issue 32.4: serve under a crowd of idle sockets (the real CLI, 1,024 file descriptors)', () => {
  let s: ServeChild;
  const crowd: Socket[] = [];
  beforeAll(async () => {
    s = await startServeChild(['--speed', '0'], { prefix: [PRLIMIT!, '--nofile=1024:1024'] });
  }, 120_000);
  afterAll(async () => {
    for (const c of crowd) c.destroy();
    await s?.stop();
  }, 30_000);

  it('1,500 idle sockets: new clients are still served', async () => {
    const u = new URL(s.url);
    let connected = 0;
    await Promise.all(
      Array.from({ length: 1500 }, () => new Promise<void>((resolve) => {
        const c = connect(Number(u.port), u.hostname, () => {
          connected++;
          resolve();
        });
        c.on('error', () => resolve());
        c.on('close', () => resolve());
        crowd.push(c);
      })),
    );
    expect(connected).toBeGreaterThan(1000);
    for (let i = 0; i < 5; i++) expect((await timedGet(s.url, '/healthz', s.ca, 10_000)).code).toBe(200);
  }, 60_000);

  it('SIGTERM stops it (exit 0)', async () => {
    const r = await s.stop();
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
  }, 30_000);
});
