/**
 * A raw HTTPS client for the facade (Node's fetch cannot be given a CA):
 * trusts the facade's CA, sends its bearer token unless told not to. A body
 * goes with its Content-Length: Node frames no body of a DELETE, OPTIONS or
 * TRACE by itself (no chunked encoding for them), and the server would take
 * the bytes for the next request.
 */
import { request } from 'node:https';
import type { Facade } from '../../src/world/facade/index.js';

export interface RawResponse {
  code: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown>;
}

export function raw(facade: Facade, method: string, path: string, opts: { body?: string; contentType?: string; headers?: Record<string, string>; anonymous?: boolean; servername?: string } = {}): Promise<RawResponse> {
  const url = new URL(facade.url);
  const headers: Record<string, string> = { ...(opts.anonymous ? {} : facade.authHeaders()), ...(opts.body !== undefined ? { 'Content-Type': opts.contentType ?? 'application/json', 'Content-Length': String(Buffer.byteLength(opts.body)) } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers, ...(facade.caPem ? { ca: facade.caPem } : {}), ...(opts.servername ? { servername: opts.servername } : {}), timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          /* not JSON */
        }
        resolve({ code: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${method} ${path} within 30 s`)));
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}
