/**
 * Issue 32: a crowd of idle or trickling (slowloris) connections must not lock new clients out of
 * a listening mock-hcs. Before, node's server.maxConnections refused every newcomer once 1,024
 * sockets were open (12 of 13 new clients got ECONNRESET for 120 s; 1,100 slowloris connections,
 * ~35 s per wave). Now (mock-hcs/src/connections.ts) a newcomer over the cap, or over its address's
 * share, closes the oldest connection that has no request being answered; a connection silent for
 * `silentMs` is closed, and so is a TLS handshake not done in that time.
 *
 * Real sockets on loopback, the crowd from 127.0.0.1 and other clients from 127.0.0.2/127.0.0.3
 * (the whole of 127/8 is loopback on Linux). Every wait is bounded; the load figures (20,000 idle
 * sockets, 1,100 slowloris) are in `npm run bench -- servers`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, type MockHcs, type MockHcsOptions } from '../../mock-hcs/src/index.js';
import { prepareTls } from '../../mock-hcs/src/tls.js';

const TOKEN = 'connection-crowd-admin-token-0123';
const LONG = { requestMs: 60_000, headersMs: 30_000, keepAliveMs: 30_000, checkIntervalMs: 10_000, silentMs: 60_000 };

interface Running {
  m: MockHcs;
  port: number;
  clock: VirtualClock;
  ca?: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function start(opts: Partial<MockHcsOptions> & { tls?: boolean } = {}): Promise<Running> {
  const clock = new VirtualClock();
  let ca: string | undefined;
  let https: MockHcsOptions['https'];
  if (opts.tls) {
    const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-crowd-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const t = prepareTls(dir, Date.now());
    ca = readFileSync(t.caFile, 'utf8');
    https = { cert: t.cert, key: t.key };
  }
  const { tls: _tls, ...rest } = opts;
  const m = await createMockHcs({ clock, rng: new SeededRng(1), adminToken: TOKEN, timeouts: LONG, ...(https ? { https } : {}), ...rest });
  await m.app.listen({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => m.close());
  return { m, clock, port: (m.app.server.address() as { port: number }).port, ...(ca ? { ca } : {}) };
}

interface Conn {
  sock: Socket;
  /** Everything the server sent. */
  out(): string;
  closed(): boolean;
  /** Resolves true once the server closed the connection, false after `ms`. */
  waitClosed(ms: number): Promise<boolean>;
}

/** A connection from `from`, resolved once connected (TLS: once the handshake is done, or the TCP connection alone with `raw`). */
function open(r: Running, from = '127.0.0.1', raw = false): Promise<Conn> {
  return new Promise((resolve, reject) => {
    let out = '';
    let isClosed = false;
    const waiters: (() => void)[] = [];
    const timer = setTimeout(() => reject(new Error(`no connection from ${from} within 5 s`)), 5000);
    const onConnect = () => {
      clearTimeout(timer);
      resolve(conn);
    };
    const sock: Socket =
      r.ca && !raw
        ? tlsConnect({ socket: netConnect({ host: '127.0.0.1', port: r.port, localAddress: from }), ca: r.ca, servername: 'localhost' }, onConnect)
        : netConnect({ host: '127.0.0.1', port: r.port, localAddress: from }, onConnect);
    cleanups.push(() => void sock.destroy());
    sock.on('data', (d: Buffer) => (out += d.toString()));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      isClosed = true;
      clearTimeout(timer);
      reject(new Error(`closed before connecting from ${from}`));
      for (const w of waiters.splice(0)) w();
    });
    const conn: Conn = {
      sock,
      out: () => out,
      closed: () => isClosed,
      waitClosed: (ms) =>
        isClosed
          ? Promise.resolve(true)
          : new Promise((res) => {
              const t = setTimeout(() => res(false), ms);
              waiters.push(() => {
                clearTimeout(t);
                res(true);
              });
            }),
    };
  });
}

/** Resolves once the server counts `n` open connections (bounded). */
async function serverHolds(r: Running, n: number): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const have = await new Promise<number>((res) => r.m.app.server.getConnections((_e, c) => res(c)));
    if (have === n) return;
    if (Date.now() - t0 > 5000) throw new Error(`the server holds ${have} connections, not ${n}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

/** A new client from `from`: GET /_admin/seed on a fresh connection; its status line (bounded). */
async function newClient(r: Running, from: string): Promise<string> {
  const c = await open(r, from);
  c.sock.write(`GET /_admin/seed HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Admin-Token: ${TOKEN}\r\nConnection: close\r\n\r\n`);
  await c.waitClosed(5000);
  return c.out().split('\r\n')[0]!;
}

/** POST /v3/auth/tokens (a valid password body) on `c`: held in the handler by a latency fault until the clock moves. */
function slowRequest(c: Conn): void {
  const body = JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: 'testbed-admin', password: 'Testbed@123', domain: { name: 'testbed-account' } } } } } });
  c.sock.write(`POST /v3/auth/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

async function crowd(r: Running, n: number, from = '127.0.0.1'): Promise<Conn[]> {
  const out: Conn[] = [];
  for (let i = 0; i < n; i += 50) out.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => open(r, from)))));
  return out;
}

describe('issue 32: an idle or trickling crowd does not lock new clients out of mock-hcs', () => {
  it('200 idle sockets from one address (share 50, cap 100): new clients from that address and another are served', { timeout: 30_000 }, async () => {
    const r = await start({ maxConnections: 100, maxConnectionsPerClient: 50 });
    const idle = await crowd(r, 200);
    await serverHolds(r, 50);
    // The oldest were closed to make room for the newer ones: only the last 50 are left.
    await Promise.all(idle.slice(0, 150).map((c) => c.waitClosed(5000)));
    expect(idle.slice(0, 150).every((c) => c.closed())).toBe(true);
    expect(idle.slice(150).some((c) => c.closed())).toBe(false);
    expect(await newClient(r, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
    expect(await newClient(r, '127.0.0.2')).toBe('HTTP/1.1 200 OK');
  });

  it('at the cap, a newcomer from another address closes the oldest idle connection of the address holding the most', { timeout: 20_000 }, async () => {
    const r = await start({ maxConnections: 10, maxConnectionsPerClient: 8 });
    const a = await crowd(r, 8, '127.0.0.1');
    const b = await crowd(r, 2, '127.0.0.2');
    await serverHolds(r, 10);
    const c = await open(r, '127.0.0.3');
    expect(await a[0]!.waitClosed(5000)).toBe(true);
    expect(a.slice(1).some((x) => x.closed())).toBe(false);
    expect(b.some((x) => x.closed())).toBe(false);
    expect(c.closed()).toBe(false);
  });

  it('connections trickling their headers (slowloris) give way to a new client', { timeout: 20_000 }, async () => {
    const r = await start({ maxConnections: 10, maxConnectionsPerClient: 3 });
    const slow = await crowd(r, 3);
    for (const c of slow) c.sock.write('GET /_admin/seed HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle-0: x\r\n');
    await serverHolds(r, 3);
    expect(await newClient(r, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
    expect(await slow[0]!.waitClosed(5000)).toBe(true);
  });

  it('a connection whose request is being answered is never closed for a newcomer; with every slot busy, the newcomer is', { timeout: 20_000 }, async () => {
    const r = await start({ maxConnections: 2, maxConnectionsPerClient: 2 });
    r.m.faults.add({ service: 'iam', operation: 'createToken', effect: { type: 'latency', ms: 60_000 } });
    const busy = await crowd(r, 2);
    for (const c of busy) slowRequest(c);
    await serverHolds(r, 2);
    // Both requests are in the handler (held by the fault until the clock moves).
    await new Promise((res) => setTimeout(res, 200));
    const late = await open(r, '127.0.0.1').catch(() => undefined);
    expect(late === undefined || (await late.waitClosed(5000))).toBe(true);
    expect(busy.some((c) => c.closed())).toBe(false);
    r.clock.advanceBy(60_000);
    for (const c of busy) {
      const t0 = Date.now();
      while (!c.out().includes('\r\n\r\n') && Date.now() - t0 < 5000) await new Promise((res) => setTimeout(res, 10));
      expect(c.out()).toMatch(/^HTTP\/1\.1 201/);
    }
  });

  it('a silent connection is closed after silentMs; one whose request is in the handler longer is answered', { timeout: 20_000 }, async () => {
    const r = await start({ timeouts: { ...LONG, silentMs: 300 } });
    r.m.faults.add({ service: 'iam', operation: 'createToken', effect: { type: 'latency', ms: 60_000 } });
    const t0 = Date.now();
    const idle = await open(r);
    const busy = await open(r);
    slowRequest(busy);
    expect(await idle.waitClosed(12_000)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(12_000); // headersTimeout is 30 s here: only silentMs can close it this early
    await new Promise((res) => setTimeout(res, 700)); // busy has been silent for more than twice silentMs
    expect(busy.closed()).toBe(false);
    r.clock.advanceBy(60_000);
    const t1 = Date.now();
    while (!busy.out().includes('\r\n\r\n') && Date.now() - t1 < 5000) await new Promise((res) => setTimeout(res, 10));
    expect(busy.out()).toMatch(/^HTTP\/1\.1 201/);
  });

  it('HTTPS: a TCP connection that never starts the TLS handshake is closed after silentMs (node: 120 s)', { timeout: 20_000 }, async () => {
    const r = await start({ tls: true, timeouts: { ...LONG, silentMs: 300 } });
    const t0 = Date.now();
    const raw = await open(r, '127.0.0.1', true);
    expect(await raw.waitClosed(12_000)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(12_000); // the https server's headersTimeout is 30 s here, node's handshakeTimeout 120 s
  });

  it('HTTPS: idle TLS connections over the share give way to a new client; one being answered does not', { timeout: 20_000 }, async () => {
    const r = await start({ tls: true, maxConnections: 10, maxConnectionsPerClient: 3 });
    r.m.faults.add({ service: 'iam', operation: 'createToken', effect: { type: 'latency', ms: 60_000 } });
    const [busy, ...idle] = await crowd(r, 3);
    slowRequest(busy!);
    await serverHolds(r, 3);
    await new Promise((res) => setTimeout(res, 200));
    expect(await newClient(r, '127.0.0.1')).toBe('HTTP/1.1 200 OK');
    expect(await idle[0]!.waitClosed(5000)).toBe(true);
    expect(busy!.closed()).toBe(false);
    r.clock.advanceBy(60_000);
    const t0 = Date.now();
    while (!busy!.out().includes('\r\n\r\n') && Date.now() - t0 < 5000) await new Promise((res) => setTimeout(res, 10));
    expect(busy!.out()).toMatch(/^HTTP\/1\.1 201/);
  });
});
