/**
 * The dashboard's control calls (POST /_testbed/time/..., /_testbed/faults,
 * .../release: they pause time and inject faults) are checked before they
 * act, against cross-site request forgery and DNS rebinding (issue 24). The
 * dashboard's cookie is SameSite=Strict, but a page on another port of
 * 127.0.0.1 is the same *site*: its forms and no-cors fetches carry the
 * cookie. So a control call must
 * - name this server in `Host`: a loopback name (localhost, 127.0.0.1, ::1)
 *   or the address the request arrived on (serve --host), with any port;
 * - when it carries an `Origin` (every browser request that is cross-origin,
 *   and every browser POST), come from this very origin (scheme, host, port);
 * - send `Content-Type: application/json` (a form or a no-cors fetch can only
 *   send text/plain, urlencoded or multipart without a CORS preflight, which
 *   this server never grants).
 * The refusals are Status objects (403 Forbidden, 415 UnsupportedMediaType);
 * nothing is done. Reads (GET) are not control calls: another origin cannot
 * read the answers (no CORS headers).
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from './time-api.js';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

/** Host name of a Host header or origin ("[::1]:6443" -> "::1"), lower case; undefined when unparsable. */
function hostName(hostPort: string): string | undefined {
  try {
    return new URL(`http://${hostPort}`).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return undefined;
  }
}

export function isControlCall(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/** Throws ApiError (403 / 415) unless the control call passes the checks above. */
export function checkControlCall(req: Pick<FastifyRequest, 'headers' | 'protocol'> & { socket?: { localAddress?: string | undefined } }): void {
  const host = String(req.headers.host ?? '');
  const name = hostName(host);
  const local = req.socket?.localAddress?.replace(/^::ffff:/, '').toLowerCase();
  if (!name || !(LOOPBACK_NAMES.has(name) || name === local)) {
    throw new ApiError(403, 'Forbidden', `control calls must name this server in Host (localhost, 127.0.0.1, ::1${local ? ` or ${local}` : ''}), got ${JSON.stringify(host)}`);
  }
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const own = `${req.protocol}://${host}`.toLowerCase();
    if (String(origin).toLowerCase() !== own) throw new ApiError(403, 'Forbidden', `cross-origin control call refused: Origin ${JSON.stringify(origin)} is not ${JSON.stringify(own)}`);
  }
  const ct = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct !== 'application/json') throw new ApiError(415, 'UnsupportedMediaType', `control calls need Content-Type: application/json, got ${JSON.stringify(ct || '(none)')}`);
}
