/**
 * Watches: GET of a list with ?watch=true (or 1), streamed as JSON lines of
 * watch events (ADDED/MODIFIED/DELETED/ERROR), as Table rows when kubectl
 * asks (kubectl get -w). From resourceVersion 0 or none: the current objects
 * as ADDED first; from a given one: what changed since (410 Expired when it
 * is too old). A watch ends after ?timeoutSeconds (default 1800), when the
 * client goes away or when the facade closes.
 *
 * Routing: the list routes again, constrained to requests whose query has
 * watch=true|1 (WATCH_CONSTRAINT, a find-my-way constraint strategy given to
 * fastify); every other request on those paths goes to plugins/resources.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { WatchEvent } from '../../../core/kube/types.js';
import type { FacadeContext, Target } from '../http/context.js';
import { toStatus } from '../http/status.js';
import { LIST_ROUTES, type ResourceParams } from '../resources/target.js';
import { toTable, type IncludeObject } from '../tables.js';
import { requestTarget, serveResource, wantsTable } from './resources.js';

/** Whether the query asks for a watch: its (last) watch value is true or 1, as the facade reads queries. */
export function asksWatch(url: string): boolean {
  const i = url.indexOf('?');
  if (i < 0 || !url.includes('watch', i)) return false;
  const v = new URLSearchParams(url.slice(i + 1)).getAll('watch').at(-1);
  return v === 'true' || v === '1';
}

/** The constraint strategy routing watch requests (Fastify's `constraints` option). */
export const WATCH_CONSTRAINT = {
  name: 'watch',
  storage() {
    const handlers = new Map<string, unknown>();
    return {
      get: (value: string) => handlers.get(value) ?? null,
      set: (value: string, store: unknown) => void handlers.set(value, store),
    };
  },
  deriveConstraint: (req: IncomingMessage): string | undefined => (asksWatch(req.url ?? '') ? 'true' : undefined),
  mustMatchWhenDerived: false,
  validate(value: unknown): void {
    if (value !== 'true') throw new Error('the watch constraint is "true"');
  },
};

/** Stream watch events of `t` (a list) until the client goes, the timeout, or the facade closes. */
export function streamWatch(ctx: FacadeContext, req: FastifyRequest, reply: FastifyReply, t: Target): FastifyReply {
  const { store, info, namespace } = t;
  const q = req.kube.query;
  const listOpts = { ...(namespace ? { namespace } : {}), ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}), ...(q.fieldSelector ? { fieldSelector: q.fieldSelector } : {}) };
  const asTable = wantsTable(req);
  const includeObject = (q.includeObject as IncludeObject | undefined) ?? 'Metadata';
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  let first = true;
  let closed = false;
  const write = (e: { type: string; object: unknown }): void => {
    if (!closed) res.write(JSON.stringify(e) + '\n');
  };
  const sendEvent = (e: WatchEvent): void => {
    const object = asTable ? toTable(info.kind, [e.object], ctx.clock.now(), { includeObject, noHeaders: !first }) : e.object;
    first = false;
    write({ type: e.type, object });
  };
  let unsub: (() => void) | undefined;
  const end = (): void => {
    if (closed) return;
    closed = true;
    unsub?.();
    ctx.streams.delete(end);
    clearTimeout(timer);
    res.end();
  };
  ctx.streams.add(end);
  const timeout = q.timeoutSeconds !== undefined ? Number(q.timeoutSeconds) : 1800;
  const timer = setTimeout(end, Math.max(1, timeout) * 1000);
  timer.unref();
  req.raw.on('close', end);
  const rv = q.resourceVersion;
  try {
    if (!rv || rv === '0') {
      for (const o of store.listSync(info.kind, listOpts)) sendEvent({ type: 'ADDED', object: o });
      unsub = store.watch(info.kind, sendEvent, listOpts);
    } else {
      unsub = store.watch(info.kind, sendEvent, { ...listOpts, resourceVersion: rv });
    }
  } catch (e) {
    write({ type: 'ERROR', object: toStatus(e, info) });
    end();
  }
  return reply;
}

export async function watchRoutes(app: FastifyInstance, o: { ctx: FacadeContext }): Promise<void> {
  for (const url of LIST_ROUTES) {
    app.get<{ Params: ResourceParams }>(url, { constraints: { watch: 'true' } }, async (req, reply) => {
      const t = await requestTarget(o.ctx, req);
      // namespaces/<name>/<sub>?watch=true names an object, not a list: served as any GET of it.
      if (t.name !== undefined) return serveResource(o.ctx, req, reply);
      return streamWatch(o.ctx, req, reply, t);
    });
  }
}
