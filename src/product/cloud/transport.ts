/** How the HCS client reaches the cloud: in process (a dispatch entry point, or fastify inject) or real HTTP (fetch). */
import type { FastifyInstance } from 'fastify';

export interface HttpRequest {
  method: string;
  /** Path with query string, e.g. "/v1/{project}/cloudservers/detail?limit=25". */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /**
   * The caller's AK/SK, beside the request instead of a signature: only for a
   * transport that `takesCredentials` (in process, never on the wire).
   */
  credentials?: { ak: string; sk: string };
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface HcsTransport {
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Host (and port) the transport talks to, used for the signed host header when the client has none configured. */
  readonly host?: string;
  /**
   * The endpoint authenticates `HttpRequest.credentials` (mock-hcs's dispatch):
   * HcsClient then sends its keys beside the request instead of signing it.
   */
  readonly takesCredentials?: boolean;
}

function flattenHeaders(h: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}

/** In-process transport through `app.inject()` (no sockets). */
export function injectTransport(app: FastifyInstance): HcsTransport {
  return {
    host: 'mock-hcs.local',
    async send(req) {
      const res = await app.inject({
        method: req.method as 'GET',
        url: req.path,
        headers: req.headers,
        ...(req.body !== undefined ? { payload: req.body } : {}),
      });
      return { status: res.statusCode, headers: flattenHeaders(res.headers), body: res.body };
    },
  };
}

/**
 * Something that answers one HTTP request in process, such as mock-hcs's
 * `MockHcs.dispatch` (fastify's request handler without sockets or
 * light-my-request). The request is the complete HTTP request, signed
 * headers and body included, as for the other transports.
 */
export interface InProcessEndpoint {
  dispatch(req: HttpRequest): Promise<HttpResponse>;
}

/**
 * In-process transport through an endpoint's `dispatch` (the testbed's
 * transport: same requests and responses as `injectTransport`, at a fraction
 * of its cost per call).
 */
export function dispatchTransport(endpoint: InProcessEndpoint): HcsTransport {
  return {
    host: 'mock-hcs.local',
    send: (req) => endpoint.dispatch(req),
  };
}

/**
 * `dispatchTransport` for the embedded testbed's own clients: the request is
 * the one the client would sign (same headers, X-Sdk-Date and host included)
 * but carries the keys beside it instead of an Authorization header, and the
 * endpoint checks them with the signature check's decisions and messages
 * (mock-hcs/src/auth.ts verifyCredentials). No SHA-256 or HMAC on either
 * side: a fifth of the cost of a provider's read (docs/performance.md). The
 * signer and the verifier are proven over the wire and by the SDK suites.
 */
export function inProcessTransport(endpoint: InProcessEndpoint): HcsTransport {
  return {
    host: 'mock-hcs.local',
    takesCredentials: true,
    send: (req) => endpoint.dispatch(req),
  };
}

/** Default bound on one request over real HTTP (headers and body), see fetchTransport. */
export const FETCH_TIMEOUT_MS = 120_000;

/**
 * Real HTTP through the global fetch. `endpoint` like "http://127.0.0.1:8443" (no trailing path).
 * Every request is bounded (`timeoutMs`, default FETCH_TIMEOUT_MS) by a timer that keeps the
 * process alive: on Node 20 a response whose connection dies mid-body (the server killed with
 * SIGKILL) could leave `res.text()` pending with nothing else running, and the process then exited
 * 13 ("unsettled top-level await") instead of seeing a failed call (test/mock-hcs/kill9.test.ts).
 * A request that runs out of time rejects like a connection failure: its outcome is unknown.
 */
export function fetchTransport(endpoint: string, opts: { timeoutMs?: number } = {}): HcsTransport {
  const base = endpoint.replace(/\/+$/, '');
  const timeoutMs = opts.timeoutMs ?? FETCH_TIMEOUT_MS;
  return {
    host: new URL(base).host,
    async send(req) {
      const headers = { ...req.headers };
      // fetch derives Host from the URL; it equals the signed host (see `host` above).
      delete headers['host'];
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(new Error(`${req.method} ${req.path}: no complete answer within ${timeoutMs} ms`)), timeoutMs);
      try {
        const res = await fetch(base + req.path, {
          method: req.method,
          headers,
          signal: abort.signal,
          ...(req.body !== undefined ? { body: req.body } : {}),
        });
        const out: Record<string, string> = {};
        res.headers.forEach((v, k) => {
          out[k] = v;
        });
        return { status: res.status, headers: out, body: await res.text() };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
