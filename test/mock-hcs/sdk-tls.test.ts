/**
 * mock-hcs over HTTPS (--tls-dir, issue 13): the CA and serving certificate
 * are written out, a client that trusts only that CA completes the TLS
 * handshake for 127.0.0.1 and localhost and gets the cloud's answers; a
 * restart with the same directory keeps the CA. The Go and Python SDK suites
 * (test/sdk-go, test/sdk-python, driven by test/sdk/run.sh) run entirely over
 * this TLS endpoint.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { parseServerArgs, startServer, type RunningServer } from '../../mock-hcs/src/server.js';

const dir = mkdtempSync(join(tmpdir(), 'mock-hcs-tls-'));
const running: RunningServer[] = [];

afterAll(async () => {
  for (const r of running) await r.stop();
  rmSync(dir, { recursive: true, force: true });
});

function get(url: string, ca: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, timeout: 5000, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

describe('HCS-5: mock-hcs --tls-dir', () => {
  it('serves HTTPS with a certificate for 127.0.0.1 and localhost signed by the CA it writes out; the CA survives a restart', async () => {
    const lines: string[] = [];
    const first = await startServer(parseServerArgs(['--port', '0', '--tls-dir', dir]), (l) => lines.push(l));
    running.push(first);
    expect(first.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(lines[1]).toBe(`  tls: ca=${join(dir, 'ca.crt')} cert=${join(dir, 'server.crt')} key=${join(dir, 'server.key')}`);
    const ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
    const leaf = new X509Certificate(readFileSync(join(dir, 'server.crt'), 'utf8'));
    expect(leaf.verify(new X509Certificate(ca).publicKey)).toBe(true);
    expect(leaf.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    const port = new URL(first.url).port;
    for (const host of ['127.0.0.1', 'localhost']) {
      const r = await get(`https://${host}:${port}/_admin/seed`, ca, { 'x-admin-token': first.mock.adminToken! });
      expect([r.status, r.body]).toEqual([200, '{"seed":1}']);
    }
    // Unsigned cloud call: the cloud's 401 over TLS.
    const denied = await get(`https://127.0.0.1:${port}/v3/projects`, ca);
    expect(denied.status).toBe(401);
    expect(JSON.parse(denied.body)).toMatchObject({ error: { code: 'APIGW.0301' } });
    // A client that does not trust the CA fails the handshake.
    await expect(get(`https://127.0.0.1:${port}/_admin/seed`, '')).rejects.toThrow();
    await first.stop();
    running.pop();

    const second = await startServer(parseServerArgs(['--port', '0', '--tls-dir', dir]), () => {});
    running.push(second);
    expect(readFileSync(join(dir, 'ca.crt'), 'utf8')).toBe(ca);
    expect((await get(`${second.url}/_admin/seed`, ca, { 'x-admin-token': second.mock.adminToken! })).status).toBe(200);
  });

  it('--tls-dir without a directory is a usage error', () => {
    expect(() => parseServerArgs(['--tls-dir'])).toThrow(/--tls-dir/);
  });
});
