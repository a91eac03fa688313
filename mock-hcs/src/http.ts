/**
 * The shared HTTP layer: raw-body capture (for signature checks), AK/SK
 * authentication and project scoping (HCS-5), seeded x-request-id, and the
 * `{"error":{"code","message"}}` error shape for every failure.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock, Rng } from '../../src/core/index.js';
import { verifySignature } from './auth.js';
import type { CloudEngine } from './cloud.js';
import { CloudError, Codes, errorBody } from './errors.js';

export interface HcsRequestContext {
  requestId: string;
  rawBody: string;
  /** Parsed JSON body; undefined when the body is empty. */
  json: unknown;
  parseError?: string;
  projectId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    hcs: HcsRequestContext;
  }
}

export type Service = 'ecs' | 'evs' | 'vpc' | 'ims';

export function serviceOf(url: string): Service {
  if (url.startsWith('/v2/cloudimages')) return 'ims';
  if (url.includes('/cloudvolumes')) return 'evs';
  if (/^\/v1\/[^/]+\/subnets/.test(url)) return 'vpc';
  return 'ecs';
}

const BAD_REQUEST: Record<Service, string> = { ecs: Codes.ecsBadRequest, evs: Codes.evsBadRequest, vpc: 'VPC.0001', ims: Codes.imsBadRequest };

export interface HttpLayerOptions {
  engine: CloudEngine;
  clock: Clock;
  rng: Rng;
  signatureSkewMs: number;
}

export function installHttpLayer(app: FastifyInstance, o: HttpLayerOptions): void {
  const requestIds = o.rng.fork('mock-hcs/request-id');
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
    const requestId = requestIds.hex(32);
    req.hcs = { requestId, rawBody: '', json: undefined, projectId: '' };
    void reply.header('x-request-id', requestId);
  });

  app.addHook('preHandler', async (req) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && hasBody(req)) {
      // Fastify does not parse GET bodies; the SDK may still send (and sign) one.
      req.hcs.rawBody = await readStream(req);
    }
    const result = verifySignature(
      { method: req.method, url: req.raw.url ?? req.url, headers: req.headers, body: req.hcs.rawBody },
      (ak) => o.engine.projectsByAk.get(ak)?.sk,
      o.clock.now(),
      o.signatureSkewMs,
    );
    if (!result.ok) {
      o.engine.record('auth.rejected', `${req.method} ${req.url}: 401 ${result.reason}`, { method: req.method, path: req.url.split('?')[0], reason: result.reason }, ['HCS-5']);
      throw new CloudError(401, Codes.authFailed, `Incorrect IAM authentication information: ${result.reason}`, ['HCS-5']);
    }
    const project = o.engine.projectsByAk.get(result.ak)!;
    const params = (req.params ?? {}) as Record<string, string | undefined>;
    const pathProject = params.project_id;
    const headerProject = req.headers['x-project-id'];
    for (const [where, value] of [
      ['path', pathProject],
      ['X-Project-Id header', typeof headerProject === 'string' ? headerProject : undefined],
    ] as const) {
      if (value !== undefined && value !== project.id) {
        o.engine.record('auth.forbidden', `${req.method} ${req.url}: 403 project ${value} (${where}) is not the project of access key ${result.ak}`, { method: req.method, project: value }, ['HCS-5']);
        throw new CloudError(403, Codes.ecsForbidden, `You do not have permission to perform this operation: project ${value} (${where}) does not belong to the credentials used`, ['HCS-5']);
      }
    }
    req.hcs.projectId = project.id;
    if (req.hcs.parseError !== undefined) {
      throw new CloudError(400, serviceOf(req.url) === 'ecs' ? Codes.ecsMalformed : BAD_REQUEST[serviceOf(req.url)], `Malformed JSON request body: ${req.hcs.parseError}`);
    }
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
    return reply.status(status).send(errorBody(BAD_REQUEST[serviceOf(req.url)], e.message ?? 'bad request'));
  });
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

/** Single query value (first one when repeated). */
export function q(req: FastifyRequest, name: string): string | undefined {
  const v = (req.query as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(v) ? v[0] : v;
}
