/**
 * Issue 32.4, in process: the facade's connection limits and timeouts
 * (src/world/facade/connections.ts), shortened so the test runs in seconds:
 * - a crowd of idle sockets past the cap: the oldest idle ones make room, a
 *   new client is served, and every idle socket is closed (it never sent a
 *   request within firstRequestMs);
 * - trickling headers (slowloris) get 408 after headersTimeout;
 * - a watch outlives requestTimeout, firstRequestMs and the crowd: it has a
 *   request in flight, so it is never the one closed.
 * The real CLI under a file-descriptor limit: serve-limits.test.ts.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import { SeededRng } from '../../src/core/rng.js';
import { ConnectionGuard, defaultConnectionLimits, openFileLimit } from '../../src/world/facade/connections.js';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import { raw } from './http.js';

const until = async (cond: () => boolean, ms: number, what: string): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('connection limits (unit)', () => {
  it('the cap stays below the file-descriptor limit; at most 4,096', () => {
    expect(openFileLimit('Limit   Soft Limit   Hard Limit   Units\nMax open files            1024                 4096                 files\n')).toBe(1024);
    expect(openFileLimit('Max open files            unlimited            unlimited            files\n')).toBeUndefined();
    expect(defaultConnectionLimits(1024).maxConnections).toBe(614);
    expect(defaultConnectionLimits(1_048_576).maxConnections).toBe(4096);
    expect(defaultConnectionLimits(undefined).maxConnections).toBe(4096);
    const g = new ConnectionGuard(defaultConnectionLimits(20_000));
    expect(g.stats()).toEqual({ open: 0, evicted: 0, refused: 0, timedOut: 0 });
    g.close();
  });
});

describe('issue 32.4: idle and trickling crowds do not lock out a client, and do not end a watch', () => {
  let facade: Facade;
  let store: EmbeddedStore;
  const crowd: Socket[] = [];
  beforeAll(async () => {
    const clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
    store = new EmbeddedStore({ clock, rng: new SeededRng(32), clusterName: 'm' });
    facade = await startFacade({
      mgmt: store,
      clock,
      limits: { connections: { maxConnections: 40, firstRequestMs: 1500, sweepMs: 100 }, timeouts: { headersTimeout: 600, requestTimeout: 1000, connectionsCheckingInterval: 100, handshakeTimeout: 600 } },
    });
  });
  afterAll(async () => {
    for (const s of crowd) s.destroy();
    await facade?.close();
  });

  it('100 idle sockets past a cap of 40: a new client is served, the watch lives on, every idle socket is closed', async () => {
    const u = new URL(facade.url);
    // A watch first: it must outlive everything below.
    const events: string[] = [];
    const watch = request({ host: u.hostname, port: u.port, path: '/api/v1/namespaces/default/configmaps?watch=true', headers: facade.authHeaders(), ca: facade.caPem, agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (d: string) => events.push(...d.trim().split('\n').filter(Boolean)));
    });
    watch.end();
    await until(() => facade.openWatches() === 1, 10_000, 'the watch is open');
    let closed = 0;
    for (let i = 0; i < 100; i++) {
      const s = tcpConnect(Number(u.port), u.hostname);
      s.on('error', () => undefined);
      s.on('close', () => closed++);
      crowd.push(s);
    }
    await until(() => facade.connections().evicted > 0, 10_000, 'the crowd reached the cap');
    const r = await raw(facade, 'GET', '/version');
    expect(r.code).toBe(200);
    // Sent nothing within firstRequestMs: every idle socket is closed by the server.
    await until(() => closed === 100, 10_000, 'every idle socket closed');
    // Past requestTimeout and firstRequestMs, the watch still delivers.
    await new Promise((r2) => setTimeout(r2, 1200));
    await store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-the-crowd', namespace: 'default' } });
    await until(() => events.some((e) => e.includes('after-the-crowd')), 5_000, 'the watch saw the new ConfigMap');
    expect(facade.openWatches()).toBe(1);
    watch.destroy();
  }, 60_000);

  it('trickling headers (slowloris) get 408 once headersTimeout is past; a new client is served meanwhile', async () => {
    const u = new URL(facade.url);
    const answers: string[] = [];
    const trickles = Array.from({ length: 20 }, () => {
      let t: NodeJS.Timeout | undefined;
      const s = tlsConnect({ host: u.hostname, port: Number(u.port), ca: facade.caPem!, servername: 'localhost' }, () => {
        s.write('GET /version HTTP/1.1\r\nHost: x\r\n');
        t = setInterval(() => s.writable && s.write('X-Slow: 1\r\n'), 100);
      });
      s.on('data', (d: Buffer) => answers.push(d.toString('utf8')));
      s.on('error', () => undefined);
      s.on('close', () => clearInterval(t));
      return s;
    });
    expect((await raw(facade, 'GET', '/version')).code).toBe(200);
    await until(() => answers.length === 20, 10_000, 'every trickle answered');
    expect(new Set(answers.map((a) => a.split('\r\n')[0]))).toEqual(new Set(['HTTP/1.1 408 Request Timeout']));
    for (const s of trickles) s.destroy();
  }, 30_000);

  it('issue 32.3: an unauthenticated request is answered 401 before its body is read (15 MiB announced, none sent)', async () => {
    const u = new URL(facade.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const s = tlsConnect({ host: u.hostname, port: Number(u.port), ca: facade.caPem!, servername: 'localhost' }, () => {
        s.write(`POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${15 * 1024 * 1024}\r\n\r\n{"kind":`);
      });
      let got = '';
      const timer = setTimeout(() => reject(new Error(`no answer within 5 s (the body was awaited): ${got}`)), 5_000);
      s.on('data', (d: Buffer) => {
        got += d.toString('utf8');
        if (got.includes('\r\n\r\n')) {
          clearTimeout(timer);
          s.destroy();
          resolve(got);
        }
      });
      s.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized');
  }, 30_000);

  it('an upgrade request on the main address is answered as a request (the guard adds no upgrade listener there)', async () => {
    const u = new URL(facade.url);
    const first = await new Promise<string>((resolve, reject) => {
      const s = tlsConnect({ host: u.hostname, port: Number(u.port), ca: facade.caPem!, servername: 'localhost' }, () => {
        s.write(`GET /version HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`);
      });
      let got = '';
      const timer = setTimeout(() => reject(new Error(`no answer within 5 s: ${got}`)), 5_000);
      s.on('data', (d: Buffer) => {
        got += d.toString('utf8');
        clearTimeout(timer);
        s.destroy();
        resolve(got.split('\r\n')[0]!);
      });
      s.on('error', reject);
    });
    expect(first).toBe('HTTP/1.1 200 OK');
  }, 30_000);
});
