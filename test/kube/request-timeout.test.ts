/**
 * kubeRequest's client-side bound: a server that accepts the request and
 * never answers must not hang the caller. The tests use a per-call bound of
 * a few hundred ms, the only wall time they spend.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClientNodeKube, DEFAULT_REQUEST_TIMEOUT_MS, KubeRequestTimeoutError, kubeRequest } from '../../src/core/kube/client-node.js';

let server: http.Server;
let seen: string[];
let base: string;

function kubeconfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'hung', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'c', cluster: 'hung', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

beforeEach(async () => {
  seen = [];
  // Accepts every request, reads it, never writes a byte back.
  server = http.createServer((req) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('kubeRequest client-side timeout', () => {
  it('defaults to 120 s, above the apiserver\'s own 60 s request timeout', () => {
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(120_000);
  });

  it('rejects a call to a server that never answers with a KubeRequestTimeoutError naming the method, URL and bound', async () => {
    const url = new URL(`${base}/api/v1/namespaces/default/configmaps`);
    const t0 = Date.now();
    const err = await kubeRequest(kubeconfigFor(base), 'POST', url, { kind: 'ConfigMap' }, 'application/json', { timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KubeRequestTimeoutError);
    const e = err as KubeRequestTimeoutError;
    expect(e.method).toBe('POST');
    expect(e.url).toBe(url.href);
    expect(e.timeoutMs).toBe(300);
    expect(e.message).toBe(`POST ${url.href}: no complete response from the apiserver within 300 ms (client-side timeout; the request was aborted)`);
    // The bound is a lower bound on the wait (timers never fire early) and the request really reached the server.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(seen).toEqual(['POST /api/v1/namespaces/default/configmaps']);
  });

  it('aborts a response whose body never ends', async () => {
    server.removeAllListeners('request');
    server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"kind":');
    });
    const url = new URL(`${base}/api/v1/nodes`);
    await expect(kubeRequest(kubeconfigFor(base), 'GET', url, undefined, 'application/json', { timeoutMs: 200 })).rejects.toThrow(KubeRequestTimeoutError);
  });

  it('ClientNodeKube passes its requestTimeoutMs to every REST call', async () => {
    const client = new ClientNodeKube(kubeconfigFor(base), { requestTimeoutMs: 200 });
    try {
      await expect(client.get({ kind: 'ConfigMap', namespace: 'default', name: 'x' })).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/default\/configmaps\/x: no complete response from the apiserver within 200 ms/);
    } finally {
      client.close();
    }
  });

  it('refuses a bound that is not a positive number', async () => {
    await expect(kubeRequest(kubeconfigFor(base), 'GET', new URL(`${base}/`), undefined, 'application/json', { timeoutMs: 0 })).rejects.toThrow(RangeError);
    expect(seen).toEqual([]);
  });
});
