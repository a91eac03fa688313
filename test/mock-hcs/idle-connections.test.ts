import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT, type MockHcs } from '../../mock-hcs/src/index.js';
import { prepareTls } from '../../mock-hcs/src/tls.js';
import { exchangeUntilClose, type Exchange } from '../support/socket-exchange.js';

// Issue 24: mock-hcs kept idle connections open without limit (1,000 sockets, none closed after 130 s).
// Over HTTPS the timeouts were not applied at all (fastify sets them only on a server it creates), and
// nothing bounded the number of open sockets. Real sockets on loopback; every wait is bounded.
const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-idle-'));
let m: MockHcs;
let port = 0;
let ca = '';

beforeAll(async () => {
  const tls = prepareTls(dir, Date.now());
  ca = readFileSync(tls.caFile, 'utf8');
  m = await createMockHcs({
    clock: new VirtualClock(),
    rng: new SeededRng(1),
    https: { cert: tls.cert, key: tls.key },
    timeouts: { requestMs: 600, headersMs: 400, keepAliveMs: 300, checkIntervalMs: 100 },
    maxConnections: 3,
  });
  await m.app.listen({ port: 0, host: '127.0.0.1' });
  port = (m.app.server.address() as { port: number }).port;
}, 30_000);

afterAll(async () => {
  await m?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A TLS connection that sends `text` (or nothing) and reports whether the server closed it within `boundMs`. */
function tlsIdle(text: string | undefined, boundMs = 5000): Promise<Exchange> {
  return exchangeUntilClose((onConnect) => tlsConnect({ port, host: '127.0.0.1', ca, servername: 'localhost' }, onConnect), text, boundMs);
}

describe('idle connections are closed and open sockets bounded (HTTPS)', () => {
  it('an idle keep-alive TLS connection after a response is closed once keepAliveTimeout passed', { timeout: 15_000 }, async () => {
    const r = await tlsIdle('GET /v3/projects HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(r.out).toMatch(/^HTTP\/1\.1 401/);
    expect(r.closedByServer).toBe(true);
    expect(r.ms).toBeLessThan(4000);
  });

  it('a TLS connection that never sends a request is closed once headersTimeout passed', { timeout: 15_000 }, async () => {
    const r = await tlsIdle(undefined);
    expect(r.closedByServer).toBe(true);
    expect(r.ms).toBeLessThan(4000);
  });

  it('a connection beyond maxConnections closes the oldest idle one at once (issue 32); the default bound is 1024', { timeout: 15_000 }, async () => {
    expect(DEFAULT_MAX_CONNECTIONS).toBe(1024);
    expect(DEFAULT_MAX_CONNECTIONS_PER_CLIENT).toBe(512);
    // Its own server with the default (5 s and more) timeouts: a close within the bound below can only be maxConnections.
    // Issue 24 closed the newcomer; issue 32: that locked new clients out while idle sockets held every slot.
    const b = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(1), maxConnections: 3 });
    await b.app.listen({ port: 0, host: '127.0.0.1' });
    const bport = (b.app.server.address() as { port: number }).port;
    const open = (): Promise<{ sock: ReturnType<typeof netConnect>; closed: Promise<number> }> =>
      new Promise((resolve) => {
        const t0 = Date.now();
        const sock = netConnect(bport, '127.0.0.1');
        const closed = new Promise<number>((r) => sock.on('close', () => r(Date.now() - t0)));
        sock.on('error', () => undefined);
        sock.on('connect', () => resolve({ sock, closed }));
      });
    const held: { sock: ReturnType<typeof netConnect>; closed: Promise<number> }[] = [];
    const holds = async (n: number) => {
      for (let i = 0; i < 500 && (await new Promise<number>((r) => b.app.server.getConnections((_e, c) => r(c)))) !== n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    try {
      for (let i = 0; i < 3; i++) {
        held.push(await open());
        await holds(i + 1); // the server saw them in this order
      }
      const extra = await open();
      held.push(extra);
      const ms = await Promise.race([held[0]!.closed, new Promise<number>((r) => setTimeout(() => r(-1), 4000))]);
      expect(ms).toBeGreaterThanOrEqual(0); // the oldest was closed by the server, before any timeout
      expect(held.slice(1).every((h) => !h.sock.destroyed)).toBe(true);
    } finally {
      for (const h of held) h.sock.destroy();
      await b.close();
    }
  });
});
