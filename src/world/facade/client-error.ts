/**
 * A request Node's HTTP parser cannot read (a body longer than its
 * Content-Length, a malformed header, a header section too large) never
 * reaches a route: the server's 'clientError' handler answers it. The
 * apiserver answers these too, and every answer of the facade is a
 * metav1.Status, so this one is as well (fastify's default writes
 * `{"error":"Bad Request","message":"Client Error"}`; Node's, no body).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** The 'clientError' handler of the facade's servers (fastify's clientErrorHandler option, and the workload listeners). */
export function statusClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, reason, message] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Timeout', 'the request was not received in time']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'RequestHeaderFieldsTooLarge', 'the request headers are too large']
        : [400, 'BadRequest', `the request could not be parsed as HTTP/1.1 (${err.code ?? 'malformed'}): e.g. a body longer than its Content-Length`];
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  if (socket.writable) socket.write(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy();
}
