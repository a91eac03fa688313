/**
 * Errors of the HTTP layer (431 oversized headers, 400 malformed framing,
 * 408 / closed connections on timeouts, 413, 415) over a real socket: the
 * cloud's error shape with an x-request-id, and no connection left open.
 * Timeouts are configured short here; every wait is bounded.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, type MockHcs } from '../../mock-hcs/src/index.js';
import { exchangeUntilClose, type Exchange } from '../support/socket-exchange.js';

let m: MockHcs;
let port: number;
beforeAll(async () => {
  m = await createMockHcs({ clock: new VirtualClock(), rng: new SeededRng(1), bodyLimit: 1000, timeouts: { requestMs: 600, headersMs: 400, keepAliveMs: 300, checkIntervalMs: 100 } });
  port = Number(new URL(await m.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
afterAll(async () => {
  await m.close();
});

/** Write `text`, collect everything until the server closes; bounded. */
function exchange(text: string, boundMs = 5000): Promise<Exchange> {
  return exchangeUntilClose((onConnect) => connect(port, '127.0.0.1', onConnect), text, boundMs);
}

function parse(out: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, body] = out.split('\r\n\r\n', 2) as [string, string];
  const [line, ...hs] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const h of hs) headers[h.slice(0, h.indexOf(':')).toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
  return { status: Number(line!.split(' ')[1]), headers, body: JSON.parse(body) };
}

const cloudShape = { error: { code: expect.stringMatching(/^[A-Za-z]+\.\d{4}$/), message: expect.any(String) } };

describe('HCS-5: mock-hcs HTTP layer errors in the cloud\'s error shape', () => {
  it('431 for oversized headers, in the cloud error shape with a request id, connection closed', async () => {
    const r = await exchange(`GET /v1/p/cloudservers/detail HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const p = parse(r.out);
    expect(p.status).toBe(431);
    expect(p.body).toEqual({ error: { code: 'APIGW.0431', message: expect.stringContaining('too large') } });
    expect(p.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
    expect(r.closedByServer).toBe(true);
  });

  it('400 for malformed framing (bad Content-Length, garbage request line)', async () => {
    for (const text of ['GET / HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n', 'NOT HTTP AT ALL\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']) {
      const r = await exchange(text);
      const p = parse(r.out);
      expect(p.status, text).toBe(400);
      expect(p.body).toEqual({ error: { code: 'APIGW.0400', message: expect.stringContaining('Malformed HTTP request') } });
      expect(p.headers['x-request-id']).toBeDefined();
    }
  });

  it('413 and 415 keep the shape and the request id', async () => {
    const big = await exchange(`POST /v2/p/cloudvolumes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000\r\nConnection: close\r\n\r\n${'{'.padEnd(2000, ' ')}`);
    const b = parse(big.out);
    expect(b.status).toBe(413);
    expect(b.body).toEqual(cloudShape);
    expect(b.headers['x-request-id']).toBeDefined();
    const xml = await exchange(`POST /v2/p/cloudvolumes HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab`);
    const x = parse(xml.out);
    expect([401, 415]).toContain(x.status);
    expect(x.body).toEqual(cloudShape);
  });

  it('a request whose body never arrives is answered 408 and closed once requestTimeout passed', async () => {
    const r = await exchange(`POST /v2/p/cloudvolumes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"vol`);
    expect(r.closedByServer).toBe(true);
    expect(r.ms).toBeLessThan(4000);
    if (r.out) {
      const p = parse(r.out);
      expect(p.status).toBe(408);
      expect(p.body).toEqual({ error: { code: 'APIGW.0408', message: expect.any(String) } });
    }
  });

  it('headers that never end, and an idle keep-alive connection, are closed by the server', async () => {
    const slow = await exchange('GET /v1/p/cloudservers/detail HTTP/1.1\r\nHost: x\r\n');
    expect(slow.closedByServer).toBe(true);
    expect(slow.ms).toBeLessThan(4000);
    const idle = await exchange(`GET /v3/projects HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(parse(idle.out.split('\r\n\r\n').slice(0, 2).join('\r\n\r\n')).status).toBe(401);
    expect(idle.closedByServer).toBe(true);
    expect(idle.ms).toBeLessThan(4000);
  });

  it('the defaults close any connection well before 130 s', async () => {
    const { DEFAULT_HTTP_TIMEOUTS: t } = await import('../../mock-hcs/src/index.js');
    expect(t.requestMs + t.checkIntervalMs).toBeLessThan(130_000);
    expect(t.keepAliveMs + t.checkIntervalMs).toBeLessThan(130_000);
  });
});
