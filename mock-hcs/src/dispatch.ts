/**
 * In-process HTTP exchanges with the mock-hcs fastify app, without sockets
 * and without light-my-request: the request goes to `app.routing(req, res)`,
 * fastify's own entry point for every HTTP request (the one `app.listen()`
 * and `app.inject()` call too), with a minimal IncomingMessage and
 * ServerResponse. Routing, hooks (authentication, faults, durability),
 * content-type parsing, schema validation, handlers, serialization and the
 * error and not-found handlers are fastify's, unchanged.
 *
 * What light-my-request does besides, and what this does instead:
 * - the URL is normalised the same way (WHATWG URL against http://localhost:
 *   pathname + search);
 * - request header names are lower-cased, a payload gets its content-length,
 *   a missing host header becomes "localhost:80" (light-my-request also adds
 *   `user-agent: lightMyRequest`, which nothing here reads; it is left out);
 * - the body is a Readable stream of the payload (light-my-request: the same,
 *   pushed from a setImmediate);
 * - the response collects the status, the headers fastify writes (names
 *   lower-cased, values as strings) and the body as a string. The transport
 *   headers Node's http layer adds (date, connection, and transfer-encoding
 *   for a streamed body without content-length) are not produced.
 *   A HEAD request, or a 1xx, 204 or 304 status, has no body, as in Node.
 */
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { InProcessCredentials } from './auth.js';

export interface DispatchRequest {
  method: string;
  /** Path with query string, as on the request line (e.g. "/v1/{project}/cloudservers/detail?limit=25"). */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /**
   * The caller's AK/SK instead of a signature (no Authorization header):
   * authenticated with verifySignature's decisions (auth.ts verifyCredentials),
   * the date from the request's X-Sdk-Date header. Only an in-process caller
   * can send these; an HTTP request never has them.
   */
  credentials?: InProcessCredentials;
}

export interface DispatchResponse {
  status: number;
  /** Lower-cased names; a repeated header's values joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

/** The exchange ended without a response (a handler destroyed it or hijacked the reply without answering). */
export class DispatchError extends Error {
  override name = 'DispatchError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const BASE_URL = 'http://localhost';

/** The minimal socket fastify may look at (remote address, TLS flag, keep-alive tracking). */
class NullSocket extends EventEmitter {
  readonly remoteAddress = '127.0.0.1';
  readonly encrypted = false;
}

/** IncomingMessage stand-in: the fields fastify reads, and the body as a stream. */
class InProcessRequest extends Readable {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly rawHeaders: string[];
  readonly httpVersion = '1.1';
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly aborted = false;
  readonly socket = new NullSocket();
  /** DispatchRequest.credentials (http.ts `authenticate` reads them from the raw request). */
  readonly credentials: InProcessCredentials | undefined;

  constructor(r: DispatchRequest) {
    super({ autoDestroy: false, read() {} });
    this.credentials = r.credentials;
    const parsed = new URL(r.path.startsWith('//') ? BASE_URL + r.path : r.path, BASE_URL);
    this.url = parsed.pathname + parsed.search;
    this.method = r.method.toUpperCase();
    const headers: Record<string, string> = {};
    for (const name in r.headers) headers[name.toLowerCase()] = String(r.headers[name]);
    headers.host ||= parsed.port ? parsed.host : `${parsed.hostname}:80`;
    const body = r.body !== undefined && r.body !== '' ? r.body : undefined;
    if (body !== undefined && !Object.hasOwn(headers, 'content-length')) headers['content-length'] = String(Buffer.byteLength(body));
    this.headers = headers;
    const raw: string[] = [];
    for (const name in headers) raw.push(name, headers[name]!);
    this.rawHeaders = raw;
    if (body !== undefined) this.push(body, 'utf8');
    this.push(null);
  }
}

type HeaderValue = string | number | readonly string[];

/** ServerResponse stand-in: status, headers and body as fastify writes them; resolves on end(). */
class InProcessResponse extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  readonly sendDate = false;
  private readonly out = new Map<string, HeaderValue>();
  private chunks: string[] = [];
  private settled = false;

  constructor(
    private readonly req: InProcessRequest,
    private readonly resolve: (r: DispatchResponse) => void,
    private readonly reject: (e: Error) => void,
  ) {
    super();
  }

  setHeader(name: string, value: HeaderValue): this {
    if (this.headersSent) throw new DispatchError(`Cannot set header ${name} after the headers were sent`, 'ERR_HTTP_HEADERS_SENT');
    this.out.set(name.toLowerCase(), value);
    return this;
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.out.get(name.toLowerCase());
  }

  getHeaders(): Record<string, HeaderValue> {
    return Object.fromEntries(this.out);
  }

  getHeaderNames(): string[] {
    return [...this.out.keys()];
  }

  hasHeader(name: string): boolean {
    return this.out.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    if (this.headersSent) throw new DispatchError(`Cannot remove header ${name} after the headers were sent`, 'ERR_HTTP_HEADERS_SENT');
    this.out.delete(name.toLowerCase());
  }

  writeHead(statusCode: number, a?: string | Record<string, HeaderValue | undefined>, b?: Record<string, HeaderValue | undefined>): this {
    if (this.headersSent) throw new DispatchError('Cannot write headers after they are sent to the client', 'ERR_HTTP_HEADERS_SENT');
    this.statusCode = statusCode;
    if (typeof a === 'string') this.statusMessage = a;
    const headers = typeof a === 'string' ? b : a;
    if (headers) {
      for (const name in headers) {
        const v = headers[name];
        if (v !== undefined) this.out.set(name.toLowerCase(), v);
      }
    }
    this.headersSent = true;
    return this;
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | null | ((e?: Error | null) => void), cb?: (e?: Error | null) => void): boolean {
    if (!this.headersSent) this.writeHead(this.statusCode);
    if (chunk !== null && chunk !== undefined) this.chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString(typeof encoding === 'string' ? encoding : 'utf8'));
    const done = typeof encoding === 'function' ? encoding : cb;
    if (done) queueMicrotask(() => done());
    return true;
  }

  end(chunk?: string | Uint8Array | null | (() => void), encoding?: BufferEncoding | null | (() => void), cb?: (() => void) | null): this {
    if (typeof chunk === 'function') {
      cb = chunk;
      chunk = undefined;
    } else if (typeof encoding === 'function') {
      cb = encoding;
      encoding = undefined;
    }
    if (this.writableEnded) return this;
    if (chunk !== null && chunk !== undefined) this.write(chunk, encoding ?? null);
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.writableEnded = true;
    this.writableFinished = true;
    this.finish();
    this.emit('finish');
    if (cb) queueMicrotask(cb);
    return this;
  }

  destroy(error?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    if (!this.settled) {
      this.settled = true;
      this.reject(error ?? new DispatchError('response destroyed before completion', 'ECONNRESET'));
    }
    queueMicrotask(() => this.emit('close'));
    return this;
  }

  private finish(): void {
    if (this.settled) return;
    this.settled = true;
    const status = this.statusCode;
    const noBody = this.req.method === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 304;
    const headers: Record<string, string> = {};
    for (const [name, v] of this.out) headers[name] = Array.isArray(v) ? v.join(', ') : String(v);
    this.resolve({ status, headers, body: noBody ? '' : this.chunks.length === 1 ? this.chunks[0]! : this.chunks.join('') });
  }
}

/**
 * Send one request through `app.routing` (the app must be ready) and resolve
 * with its response once fastify has ended it.
 */
export function dispatch(app: FastifyInstance, request: DispatchRequest): Promise<DispatchResponse> {
  return new Promise<DispatchResponse>((resolve, reject) => {
    const req = new InProcessRequest(request);
    const res = new InProcessResponse(req, resolve, reject);
    // fastify's request handler takes Node's IncomingMessage/ServerResponse; these implement what it uses of them.
    app.routing(req as never, res as never);
  });
}
