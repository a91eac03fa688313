/**
 * The REST resources of one cluster's scope: list, create, get, update
 * (PUT), patch (json, merge; strategic for built-in kinds only; server-side
 * apply), delete, the status subresource, /scale (scale.ts) and pods/eviction
 * (eviction.ts). Lists and single objects are served as Tables when kubectl
 * asks (tables.ts). Watches (GET a list with watch=true) are plugins/watch.ts,
 * pods/log plugins/subresources.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KubeApiError } from '../../../core/kube/errors.js';
import { BUILTIN_GROUPS } from '../../../core/kube/resources.js';
import type { KubeObject } from '../../../core/kube/types.js';
import { serveEviction } from '../eviction.js';
import { contentType, hasBody, parseBody } from '../http/body.js';
import type { FacadeContext, Target } from '../http/context.js';
import { methodNotAllowed, notFound, status } from '../http/status.js';
import { requireFieldManager } from '../managed-fields.js';
import { deleteObject } from '../resources/delete.js';
import { RESOURCE_ROUTES, targetOf, type ResourceParams } from '../resources/target.js';
import { checkBody, checkConditionalUpdate, namespaceAdmits, previewPatch, serverSideApply, unsupportedMedia, writeOptions } from '../resources/write.js';
import { SCALE_KINDS, serveScale } from '../scale.js';
import { toTable, type IncludeObject } from '../tables.js';
import { checkCreate, checkWrite } from '../validate.js';

type Req = FastifyRequest<{ Params: ResourceParams }>;

export function wantsTable(req: FastifyRequest): boolean {
  return /as=Table/.test(String(req.headers.accept ?? ''));
}

/** Sends a result with the Warning headers the write collected (kubectl prints them). */
class Answer {
  readonly warnings: string[] = [];
  constructor(private readonly reply: FastifyReply) {}
  send(code: number, body: unknown): FastifyReply {
    for (const w of this.warnings) void this.reply.header('Warning', `299 - ${JSON.stringify(w)}`);
    return this.reply.code(code).type('application/json').send(body);
  }
}

/** The request's target (a 404 Status when the path names no resource), recorded for the error handler. */
export async function requestTarget(ctx: FacadeContext, req: FastifyRequest, params: ResourceParams = req.params as ResourceParams): Promise<Target> {
  const target = targetOf(req.kube.store, params);
  if (!target) throw notFound();
  req.kube.target = target;
  if ((target.info.kind === 'Deployment' || target.info.kind === 'Pod') && target.store === ctx.mgmt) await ctx.ensureControllers();
  return target;
}

/** Which subresources a kind serves here: status (when its CRD has it), pods' log and eviction, /scale of the SCALE_KINDS. */
function servesSub(t: Target): boolean {
  const { info, sub } = t;
  if (!sub) return true;
  return (sub === 'status' && !!info.statusSubresource) || ((sub === 'log' || sub === 'eviction') && info.kind === 'Pod') || (sub === 'scale' && SCALE_KINDS.has(info.kind));
}

async function serveSubresource(req: Req, t: Target & { name: string }, out: Answer): Promise<FastifyReply | undefined> {
  const { store, info, namespace, name, sub } = t;
  const q = req.kube.query;
  if (sub === 'eviction') {
    // policy/v1 Eviction (eviction.ts): what kubectl drain posts.
    if (req.method !== 'POST') throw methodNotAllowed();
    const s = await serveEviction(store, namespace ?? 'default', name, parseBody(req), q.dryRun);
    return out.send(s.code, s);
  }
  if (sub === 'scale') {
    const ct = contentType(req);
    const patchType = ct === 'application/json-patch+json' ? 'json' : ct === 'application/merge-patch+json' || ct === 'application/strategic-merge-patch+json' ? 'merge' : undefined;
    const ref = { kind: info.kind, ...(namespace ? { namespace } : {}), name };
    return out.send(200, await serveScale(store, ref, info.plural, req.method, () => parseBody(req), patchType, writeOptions(q, req.kube.url.searchParams, req.method === 'PATCH' ? 'Patch' : 'Update', out.warnings)));
  }
  return undefined;
}

/** GET a list, POST a new object. */
async function serveCollection(ctx: FacadeContext, req: Req, t: Target, out: Answer): Promise<FastifyReply> {
  const { store, info, namespace } = t;
  const q = req.kube.query;
  if (req.method === 'GET') {
    const listOpts = { ...(namespace ? { namespace } : {}), ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}), ...(q.fieldSelector ? { fieldSelector: q.fieldSelector } : {}) };
    const { items, resourceVersion } = store.listWithVersion(info.kind, listOpts);
    if (wantsTable(req)) return out.send(200, toTable(info.kind, items, ctx.clock.now(), { resourceVersion, includeObject: (q.includeObject as IncludeObject | undefined) ?? 'Metadata' }));
    return out.send(200, { kind: `${info.kind}List`, apiVersion: info.group ? `${info.group}/${info.version}` : info.version, metadata: { resourceVersion }, items });
  }
  if (req.method !== 'POST') throw methodNotAllowed();
  const body = parseBody(req) as KubeObject;
  checkBody(body, info, namespace);
  checkCreate(body);
  checkWrite(body, info);
  const wo = writeOptions(q, req.kube.url.searchParams, 'Create', out.warnings);
  const ns = info.namespaced ? namespace ?? body.metadata.namespace ?? 'default' : undefined;
  if (ns !== undefined) namespaceAdmits(store, ns);
  return out.send(201, await store.create({ ...body, metadata: { ...body.metadata, ...(ns !== undefined ? { namespace: ns } : {}) } }, wo));
}

/** PATCH of an object or its status: json, merge, strategic (built-in kinds only), apply. */
async function patchObject(ctx: FacadeContext, req: Req, t: Target & { name: string }, warnings: string[]): Promise<unknown> {
  const { store, info, namespace, name, sub } = t;
  const q = req.kube.query;
  const ref = { kind: info.kind, namespace: info.namespaced ? namespace : undefined, name };
  const ct = contentType(req);
  const wo = writeOptions(q, req.kube.url.searchParams, 'Patch', warnings);
  const patchWith = async (type: 'json' | 'merge'): Promise<KubeObject> => {
    const p = parseBody(req);
    previewPatch(store, info, ref, type, p);
    return store.patch(ref, type, p, { ...(sub === 'status' ? { subresource: 'status' as const } : {}), ...wo });
  };
  if (ct === 'application/json-patch+json') return patchWith('json');
  if (ct === 'application/merge-patch+json') return patchWith('merge');
  if (ct === 'application/strategic-merge-patch+json') {
    // The apiserver has no strategic-merge metadata for custom resources.
    if (!BUILTIN_GROUPS.has(info.group)) throw unsupportedMedia();
    return patchWith('merge');
  }
  if (ct === 'application/apply-patch+yaml') return serverSideApply(store, ctx.clock, info, ref as { kind: string; namespace?: string; name: string }, parseBody(req) as KubeObject, wo, requireFieldManager(q.fieldManager));
  throw unsupportedMedia();
}

/** GET, PUT, PATCH or DELETE of one object (or its status). */
async function serveObject(ctx: FacadeContext, req: Req, t: Target & { name: string }, out: Answer): Promise<FastifyReply> {
  const { store, info, namespace, name, sub } = t;
  const q = req.kube.query;
  const ref = { kind: info.kind, namespace: info.namespaced ? namespace : undefined, name };
  switch (req.method) {
    case 'GET': {
      if (sub === 'log') throw notFound(); // pods/log is plugins/subresources.ts
      const o = store.getSync(ref);
      if (!o) throw KubeApiError.notFound(info.plural, name);
      if (wantsTable(req)) return out.send(200, toTable(info.kind, [o], ctx.clock.now(), { resourceVersion: store.resourceVersion(), includeObject: (q.includeObject as IncludeObject | undefined) ?? 'Metadata' }));
      return out.send(200, o);
    }
    case 'PUT': {
      const body = parseBody(req) as KubeObject;
      checkBody(body, info, namespace);
      if (body.metadata?.name !== name) throw status(400, 'BadRequest', `the name of the object (${body.metadata?.name ?? ''}) does not match the name on the URL (${name})`);
      checkConditionalUpdate(body, info);
      checkWrite(body, info);
      const wo = writeOptions(q, req.kube.url.searchParams, 'Update', out.warnings);
      const obj = { ...body, metadata: { ...body.metadata, ...(info.namespaced ? { namespace } : {}) } };
      return out.send(200, sub === 'status' ? await store.updateStatus(obj, wo) : await store.update(obj, wo));
    }
    case 'PATCH':
      return out.send(200, await patchObject(ctx, req, t, out.warnings));
    case 'DELETE':
      return out.send(200, await deleteObject(store, ctx.clock, info, ref as { kind: string; namespace?: string; name: string }, hasBody(req) ? parseBody(req) : undefined, req.kube.url.searchParams));
    default:
      throw methodNotAllowed();
  }
}

/** Serve a resource request in its cluster's scope. */
export async function serveResource(ctx: FacadeContext, req: Req, reply: FastifyReply): Promise<FastifyReply> {
  const t = await requestTarget(ctx, req);
  if (!servesSub(t)) throw notFound();
  const out = new Answer(reply);
  if (t.name === undefined) return serveCollection(ctx, req, t, out);
  const named = t as Target & { name: string };
  return (await serveSubresource(req, named, out)) ?? serveObject(ctx, req, named, out);
}

export async function resourceRoutes(app: FastifyInstance, o: { ctx: FacadeContext }): Promise<void> {
  for (const url of RESOURCE_ROUTES) app.all<{ Params: ResourceParams }>(url, (req, reply) => serveResource(o.ctx, req, reply));
}
