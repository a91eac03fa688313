/**
 * The shared HTTP layer: raw-body capture (for signature checks), AK/SK or
 * X-Auth-Token authentication and project scoping (HCS-5), seeded
 * x-request-id, and the `{"error":{"code","message"}}` error shape for every
 * failure.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { holdOn } from '../../src/core/clock.js';
import { verifyCredentials, verifySignature, type InProcessCredentials } from './auth.js';
import type { CloudBinding } from './binding.js';
import type { CallEffects, CloudEngine } from './cloud.js';
import { CloudError, Codes, errorBody, quotaCode } from './errors.js';
import { JOB_OPERATIONS, TIMEOUT_DEFAULTS, type FaultService } from './faults.js';
import { operationOf, resourceOf } from './routes/operation.js';
import type { HcsOperation, HcsService } from '../../src/core/hcs/index.js';

export interface HcsRequestContext {
  requestId: string;
  rawBody: string;
  /** Parsed JSON body; undefined when the body is empty. */
  json: unknown;
  parseError?: string;
  /** Project of the credentials ('' for a domain-scoped token and unauthenticated routes). */
  projectId: string;
  /** Domain (account) of the credentials ('' on unauthenticated routes). */
  domainId: string;
  /** How the request was authenticated. */
  authMode: 'aksk' | 'token' | 'none';
  /** Fault effects for the engine call of this request (latency 'job', stuck, jobFail). */
  effects?: CallEffects;
  /** Fault `partial`: carry the call out, then answer with this error. */
  partial?: { status: number; code: string; message: string };
  /** Fault `listLag`: servers created less than this long ago are left out of lists. */
  listLagMs?: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    hcs: HcsRequestContext;
  }
  interface FastifyContextConfig {
    /** Operation name for fault matching (see faults.ts); set by routes/operation.ts `route`. */
    op?: string;
    /** Admin route: no AK/SK signature, no faults. */
    admin?: boolean;
    /** `none`: no AK/SK or token needed (IAM token issue: the password authenticates). */
    auth?: 'none';
  }
}

export type Service = HcsService;

/** The request carries the admin token (constant-time comparison). */
export function adminAuthorized(headers: Record<string, string | string[] | undefined>, token: string | undefined): boolean {
  if (token === undefined || token.length === 0) return false;
  const h = headers['x-admin-token'];
  const auth = headers.authorization;
  const given = typeof h === 'string' ? h : typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function isAdminUrl(url: string): boolean {
  return url === '/_admin' || url.startsWith('/_admin/') || url.startsWith('/_admin?');
}

export function serviceOf(url: string): Service {
  if (url.startsWith('/v2/cloudimages')) return 'ims';
  if (/^\/v3\/[^/]+\/ports(\/|\?|$)/.test(url)) return 'vpc';
  if (url === '/v3' || url.startsWith('/v3/') || url.startsWith('/v3?')) return 'iam';
  if (url.includes('/cloudvolumes')) return 'evs';
  if (/^\/v1\/[^/]+\/(subnets|ports|privateips)(\/|\?|$)/.test(url)) return 'vpc';
  return 'ecs';
}

const BAD_REQUEST: Record<Service, string> = { ecs: Codes.ecsBadRequest, evs: Codes.evsBadRequest, vpc: Codes.vpcBadRequest, ims: Codes.imsBadRequest, iam: Codes.iamBadBody };

/**
 * The hooks, parsers and handlers every route shares. They read the mock they
 * serve from `o` at each request (binding.ts: a pooled app serves one mock
 * after another); `admin`: the app has the /_admin routes.
 */
export function installHttpLayer(app: FastifyInstance, o: CloudBinding, admin: boolean): void {
  app.decorateRequest('hcs', null as unknown as HcsRequestContext);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    req.hcs.rawBody = text;
    if (text.trim().length > 0) {
      try {
        req.hcs.json = JSON.parse(text);
      } catch (e) {
        req.hcs.parseError = e instanceof Error ? e.message : String(e);
      }
    }
    done(null, req.hcs.json);
  });

  app.addHook('onRequest', async (req, reply) => {
    const requestId = o.requestIds.hex(32);
    req.hcs = { requestId, rawBody: '', json: undefined, projectId: '', domainId: '', authMode: 'none' };
    void reply.header('x-request-id', requestId);
    if (admin && isAdminUrl(req.url) && !adminAuthorized(req.headers, o.adminToken)) {
      throw new CloudError(401, Codes.adminUnauthorized, 'The admin API needs the admin token of this mock-hcs: send X-Admin-Token: <token> (printed at start; set with --admin-token or MOCK_HCS_ADMIN_TOKEN)');
    }
  });

  app.addHook('preHandler', async (req) => {
    if (admin && isAdminUrl(req.url)) {
      if (req.hcs.parseError !== undefined) throw new CloudError(400, Codes.adminBadRequest, `Malformed JSON request body: ${req.hcs.parseError}`);
      return;
    }
    if ((req.method === 'GET' || req.method === 'HEAD') && hasBody(req)) {
      // Fastify does not parse GET bodies; the SDK may still send (and sign) one.
      req.hcs.rawBody = await readStream(req);
    }
    if (req.routeOptions.config.auth !== 'none') authenticate(req, o);
    if (req.hcs.parseError !== undefined) {
      throw new CloudError(400, serviceOf(req.url) === 'ecs' ? Codes.ecsMalformed : BAD_REQUEST[serviceOf(req.url)], `Malformed JSON request body: ${req.hcs.parseError}`);
    }
    // The route's catalogued operation (routes/operation.ts); the body picks one where several share a path.
    const op = operationOf(req.routeOptions.config, req.hcs.json);
    if (op !== undefined && o.faults.size > 0) await applyFaults(req, op, o);
  });

  // Acknowledged mutations are on disk before the response leaves (kill -9 safe); then fault `partial`.
  app.addHook('preSerialization', async (req, reply, payload) => {
    // Only on success: a failed write becomes a 500 through the error handler, which must not wait again.
    if (reply.statusCode < 400 && req.method !== 'GET' && req.method !== 'HEAD' && o.engine.storeRef.dirty) await o.engine.storeRef.sync();
    const p = req.hcs?.partial;
    if (p && reply.statusCode < 300) {
      void reply.code(p.status);
      return errorBody(p.code, p.message);
    }
    return payload;
  });

  app.setNotFoundHandler((req, reply) => {
    void reply.status(404).send(errorBody(Codes.apiNotFound, `The API does not exist or has not been published in the environment: ${req.method} ${req.url.split('?')[0]}`));
  });

  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof CloudError) {
      if (req.method !== 'GET' && err.status !== 401) {
        o.engine.record('api.rejected', `${req.method} ${req.url.split('?')[0]}: ${err.status} ${err.code} ${err.message}`, { method: req.method, status: err.status, code: err.code }, err.rules);
      }
      return reply.status(err.status).send(errorBody(err.code, err.message));
    }
    const e = err as { statusCode?: number; message?: string; code?: string };
    const status = typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500 ? e.statusCode : 500;
    if (status === 500) {
      return reply.status(500).send(errorBody(Codes.internal, `A system exception occurred: ${e.message ?? String(err)}`));
    }
    const code = admin && isAdminUrl(req.url) ? Codes.adminBadRequest : BAD_REQUEST[serviceOf(req.url)];
    const validation = (err as { validation?: unknown }).validation !== undefined;
    return reply.status(status).send(errorBody(code, validation ? `Invalid request parameter: ${e.message ?? 'bad request'}` : (e.message ?? 'bad request')));
  });
}

/**
 * AK/SK signature (Authorization header) or, without one, an IAM token
 * (X-Auth-Token); then the project of the path / X-Project-Id header (and the
 * X-Domain-Id header) must be the credentials' own (HCS-5).
 */
function authenticate(req: FastifyRequest, o: CloudBinding): void {
  function reject(reason: string): never {
    o.engine.record('auth.rejected', `${req.method} ${req.url}: 401 ${reason}`, { method: req.method, path: req.url.split('?')[0], reason }, ['HCS-5']);
    throw new CloudError(401, Codes.authFailed, `Incorrect IAM authentication information: ${reason}`, ['HCS-5']);
  }
  const tokenHeader = req.headers['x-auth-token'];
  let who: string;
  if (req.headers.authorization === undefined && tokenHeader !== undefined) {
    const token = Array.isArray(tokenHeader) ? tokenHeader[0]! : tokenHeader;
    const check = o.iam.verify(token);
    if (!check.ok) reject(check.reason);
    const rec = check.rec;
    req.hcs.authMode = 'token';
    req.hcs.projectId = rec.projectId ?? '';
    req.hcs.domainId = rec.domainId;
    who = `the token of user ${rec.userName}`;
    if (!rec.projectId && serviceOf(req.url) !== 'iam') {
      o.engine.record('auth.forbidden', `${req.method} ${req.url}: 403 token of ${rec.userName} is not scoped to a project`, { method: req.method }, ['HCS-5']);
      throw new CloudError(403, Codes.ecsForbidden, 'You do not have permission to perform this operation: the token is not scoped to a project (get one with auth.scope.project)', ['HCS-5']);
    }
  } else {
    const lookupSk = (ak: string): string | undefined => o.engine.projectsByAk.get(ak)?.sk;
    const now = o.authNow ? o.authNow() : o.clock.now();
    // An in-process caller (dispatch.ts) may hand its keys beside the request instead of signing it.
    const creds = req.headers.authorization === undefined ? (req.raw as { credentials?: InProcessCredentials }).credentials : undefined;
    const dateHeader = req.headers['x-sdk-date'];
    const result = creds
      ? verifyCredentials(creds, typeof dateHeader === 'string' ? dateHeader : undefined, lookupSk, now, o.signatureSkewMs)
      : verifySignature({ method: req.method, url: req.raw.url ?? req.url, headers: req.headers, body: req.hcs.rawBody }, lookupSk, now, o.signatureSkewMs);
    if (!result.ok) reject(result.reason);
    req.hcs.authMode = 'aksk';
    req.hcs.projectId = o.engine.projectsByAk.get(result.ak)!.id;
    req.hcs.domainId = o.iam.domain.id;
    who = `access key ${result.ak}`;
  }
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  const headerProject = req.headers['x-project-id'];
  const headerDomain = req.headers['x-domain-id'];
  for (const [where, value, own] of [
    ['path', params.project_id, req.hcs.projectId],
    ['X-Project-Id header', typeof headerProject === 'string' ? headerProject : undefined, req.hcs.projectId],
    ['X-Domain-Id header', typeof headerDomain === 'string' ? headerDomain : undefined, req.hcs.domainId],
  ] as const) {
    if (value !== undefined && value !== own) {
      const what = where === 'X-Domain-Id header' ? 'domain' : 'project';
      o.engine.record('auth.forbidden', `${req.method} ${req.url}: 403 ${what} ${value} (${where}) is not the ${what} of ${who}`, { method: req.method, [what]: value }, ['HCS-5']);
      throw new CloudError(403, Codes.ecsForbidden, `You do not have permission to perform this operation: ${what} ${value} (${where}) does not belong to the credentials used`, ['HCS-5']);
    }
  }
}

/**
 * Errors fastify raises before routing (URL that cannot be decoded, path
 * parameter over maxParamLength): same error shape, 400. Hooks did not run,
 * so there is no request id.
 */
/**
 * Errors Node's HTTP parser raises before a request exists (oversized
 * headers 431, malformed framing 400, a request not complete in time 408):
 * answered in the cloud's error shape, with an x-request-id, and the
 * connection closed (fastify's clientErrorHandler).
 */
export function clientErrorHandler(err: { code?: string; message?: string }, socket: import('node:stream').Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', Codes.apiHeadersTooLarge, 'Request header fields too large: the request line and headers must be at most 16 KiB']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', Codes.apiTimeout, 'Request timeout: the request (headers and body) did not arrive in time']
        : [400, 'Bad Request', Codes.apiBadRequest, `Malformed HTTP request (${err.code ?? 'parse error'})`];
  const body = JSON.stringify(errorBody(code, message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${randomBytes(16).toString('hex')}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export function frameworkErrors(admin: boolean) {
  return (err: { code?: string; message?: string }, req: FastifyRequest, reply: FastifyReply): void => {
    const url = req.raw.url ?? req.url;
    const code = admin && isAdminUrl(url) ? Codes.adminBadRequest : BAD_REQUEST[serviceOf(url)];
    const why = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : err.code === 'FST_ERR_BAD_URL' ? 'the URL cannot be decoded' : (err.message ?? 'bad request');
    void reply.status(400).send(errorBody(code, `Invalid request: ${why} (${url.split('?')[0]!.slice(0, 200)})`));
  };
}

function hasBody(req: FastifyRequest): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

async function readStream(req: FastifyRequest): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req.raw) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Every value of a query parameter (repeated keys), [] when absent. */
export function qAll(req: FastifyRequest, name: string): string[] {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/**
 * Answer 204 without a body. Empty payloads skip preSerialization, so the
 * durability wait and the `partial` fault are done here.
 */
export async function noContent(req: FastifyRequest, reply: FastifyReply, engine: CloudEngine): Promise<FastifyReply> {
  if (engine.storeRef.dirty) await engine.storeRef.sync();
  const p = req.hcs.partial;
  if (p) return reply.code(p.status).send(errorBody(p.code, p.message));
  return reply.code(204).send();
}

/** The content type fastify gives a serialised object (CONTENT_TYPE.JSON). */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Answer 200 with a JSON document already serialised: exactly what returning
 * the object would send (fastify serialises it with JSON.stringify and this
 * content type). A string body skips the preSerialization hook, so its
 * durability wait and the fault `partial` are done here, as in noContent.
 */
export async function sendJsonText(req: FastifyRequest, reply: FastifyReply, engine: CloudEngine, text: string): Promise<FastifyReply> {
  if (req.method !== 'GET' && req.method !== 'HEAD' && engine.storeRef.dirty) await engine.storeRef.sync();
  const p = req.hcs.partial;
  if (p) return reply.code(p.status).send(errorBody(p.code, p.message));
  return reply.type(JSON_CONTENT_TYPE).send(text);
}

/** Single query value (first one when repeated). */
export function q(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}

async function applyFaults(req: FastifyRequest, picked: { name: string; operation?: HcsOperation }, o: CloudBinding): Promise<void> {
  const op = picked.name;
  const service: FaultService = picked.operation?.service ?? req.routeOptions.config.operations![0]!.service;
  const fired = o.faults.evaluate(service, op, () => resourceOf(req.routeOptions.config, req, o.engine, picked.operation), o.clock.now());
  if (fired.length === 0) return;
  let reject: CloudError | undefined;
  let responseDelay = 0;
  const effects: CallEffects = {};
  for (const { rule, effect } of fired) {
    o.engine.recordFault('fault.fired', `fault ${rule.id} (${effect.type}) fired on ${service} ${op}: ${req.method} ${req.url.split('?')[0]}`, {
      ruleId: rule.id,
      effect: effect.type,
      service,
      operation: op,
      method: req.method,
      path: req.url.split('?')[0],
      fired: rule.fired,
    });
    switch (effect.type) {
      case 'error':
        reject ??= new CloudError(effect.status, effect.code, effect.message ?? `Injected fault ${rule.id}: ${effect.code}`, ['HCS-6']);
        break;
      case 'capacity':
        reject ??= new CloudError(
          400,
          Codes.ecsCapacity,
          effect.message ?? `Insufficient capacity: flavor ${effect.flavor ?? 'requested'} is sold out in availability zone ${effect.az ?? 'requested'} (injected fault ${rule.id})`,
          ['HCS-6', 'OPS-2'],
        );
        break;
      case 'quota':
        reject ??= new CloudError(
          400,
          quotaCode(op === 'createVolume' ? 'evs' : 'ecs', effect.resource),
          `Insufficient ${effect.resource} quota (injected fault ${rule.id}). Contact the administrator to increase the quota.`,
          ['HCS-6', 'OPS-2'],
        );
        break;
      case 'latency':
        if ((effect.mode ?? (JOB_OPERATIONS.has(op) ? 'job' : 'response')) === 'job') effects.extraDelayMs = (effects.extraDelayMs ?? 0) + effect.ms;
        else responseDelay += effect.ms;
        break;
      case 'jobFail':
        effects.fail ??= { code: effect.errorCode ?? Codes.internal, reason: effect.failReason ?? `injected job failure (fault ${rule.id})` };
        break;
      case 'stuck':
        effects.stuck = true;
        break;
      case 'timeout': {
        // The job runs until the timeout, then fails; the transition is undone (a detach leaves the volume in-use).
        const ms = effect.ms ?? TIMEOUT_DEFAULTS.ms;
        effects.durationMs = Math.max(effects.durationMs ?? 0, ms);
        effects.fail ??= { code: effect.errorCode ?? TIMEOUT_DEFAULTS.errorCode, reason: effect.failReason ?? `${op} timed out after ${ms / 1000}s: the job did not finish (injected fault ${rule.id})` };
        break;
      }
      case 'throttle':
        reject ??= new CloudError(429, Codes.throttled, `The throttling threshold has been reached: policy user over ratelimit,limit:${effect.perSecond},time:1 second (injected fault ${rule.id})`, ['HCS-6']);
        break;
      case 'listLag':
        req.hcs.listLagMs = Math.max(req.hcs.listLagMs ?? 0, effect.ms);
        break;
      case 'partial':
        req.hcs.partial ??= {
          status: effect.status ?? 500,
          code: effect.code ?? Codes.internal,
          message: effect.message ?? `A system exception occurred (injected fault ${rule.id}; the operation may have been carried out)`,
        };
        break;
    }
  }
  if (responseDelay > 0) await holdOn(o.clock, responseDelay, `mock-hcs fault latency ${op}`);
  if (reject) throw reject;
  if (Object.keys(effects).length > 0) req.hcs.effects = effects;
}
