/**
 * How a route is declared: by its catalogued operation (src/core/hcs), which
 * gives the method, the path (and its aliases) and the service; the route adds
 * its handler and, for fault matching (HCS-6), what the call touches. Every
 * route of routes/*.ts goes through `route`, so the catalogue is the one list
 * of operations: the fault rules' operation names (faults.ts) and the HTTP
 * layer's choice of operation (http.ts) read it from here
 * (test/mock-hcs/operations.test.ts checks that every catalogued operation is served).
 */
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { pathsOf, type HcsOperation } from '../../../src/core/hcs/index.js';
import type { CloudEngine } from '../cloud.js';
import type { ResourceInfo } from '../faults.js';
import { setOwn } from '../validate.js';

/** Adds what a call touches (ids, names, tags, flavor, AZ) to `r`; the body may be invalid (the engine rejects it later). */
export type ResourceOf = (r: Touched, req: FastifyRequest, engine: CloudEngine) => void;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The catalogued operations the route serves (several when the request body picks one: ECS POST .../cloudservers/action). */
    operations?: readonly HcsOperation[];
    /** What a call touches, for fault rules that match by resource. */
    resource?: ResourceOf;
  }
}

export interface RouteOptions {
  /**
   * The fault operation name when the body picks none of `operations` (it
   * defaults to the single operation's name); such a call matches only "*" rules.
   */
  name?: string;
  /** `none`: no AK/SK or token needed (IAM token issue: the password authenticates). */
  auth?: 'none';
  resource?: ResourceOf;
}

/** ":name" for "{name}": the catalogue's path template as a fastify route path. */
export function fastifyPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

/** Register `handler` for the operation(s) on every path of theirs. */
export function route(app: FastifyInstance, op: HcsOperation | readonly HcsOperation[], o: RouteOptions, handler: RouteHandlerMethod): void {
  const operations: readonly HcsOperation[] = Array.isArray(op) ? op : [op as HcsOperation];
  const first = operations[0]!;
  for (const x of operations) {
    if (x.method !== first.method || x.path !== first.path) throw new Error(`route: ${x.name} and ${first.name} do not share a method and path`);
  }
  const config = {
    op: o.name ?? first.name,
    operations,
    ...(o.auth ? { auth: o.auth } : {}),
    ...(o.resource ? { resource: o.resource } : {}),
  };
  for (const path of pathsOf(first)) app.route({ method: first.method, url: fastifyPath(path), config, handler });
}

/** The operation of a request: the one its body's top-level key picks among several, else the route's. */
export function operationOf(config: { op?: string; operations?: readonly HcsOperation[] }, json: unknown): { name: string; operation?: HcsOperation } | undefined {
  const ops = config.operations;
  if (config.op === undefined || !ops) return undefined;
  if (ops.length === 1) return { name: ops[0]!.name, operation: ops[0]! };
  const body = obj(json);
  const picked = body && ops.find((x) => x.bodyKey !== undefined && body[x.bodyKey] !== undefined);
  return picked ? { name: picked.name, operation: picked } : { name: config.op };
}

/** What the request touches, as its route declares it (nothing when it declares nothing). */
export function resourceOf(config: { resource?: ResourceOf }, req: FastifyRequest, engine: CloudEngine, operation?: HcsOperation): ResourceInfo {
  const r = new Touched(req, engine, operation);
  config.resource?.(r, req, engine);
  return r.info;
}

/** Collects what a call touches; servers and volumes add their names, tags and metadata, AZ and flavor too. */
export class Touched {
  readonly info: ResourceInfo = { ids: [], names: [], tags: [] };

  constructor(
    private readonly req: FastifyRequest,
    private readonly engine: CloudEngine,
    /** The operation the request was taken for (undefined when its body picked none of its route's). */
    readonly operation?: HcsOperation,
  ) {}

  /** The parsed JSON body as an object (undefined when it is not one). */
  get body(): Record<string, unknown> | undefined {
    return obj(this.req.hcs.json);
  }

  /** A path parameter. */
  param(name: string): string | undefined {
    return ((this.req.params ?? {}) as Record<string, string | undefined>)[name];
  }

  ids(...vs: unknown[]): this {
    this.info.ids.push(...strs(...vs));
    return this;
  }

  names(...vs: unknown[]): this {
    this.info.names.push(...strs(...vs));
    return this;
  }

  tags(t: Record<string, string>): this {
    this.info.tags.push(t);
    return this;
  }

  server(id: string | undefined): this {
    if (!id) return this;
    this.info.ids.push(id);
    const s = this.engine.serverRec(this.req.hcs.projectId, id);
    if (!s) return this;
    this.info.names.push(s.name);
    this.info.tags.push({ ...s.metadata }, Object.fromEntries(s.tags.map((t) => [t.key, t.value])));
    this.info.flavor ??= s.flavorId;
    this.info.az ??= s.az;
    return this;
  }

  volume(id: string | undefined): this {
    if (!id) return this;
    this.info.ids.push(id);
    const v = this.engine.volumeRec(this.req.hcs.projectId, id);
    if (!v) return this;
    this.info.names.push(v.name);
    this.info.tags.push({ ...v.metadata });
    this.info.az ??= v.az;
    return this;
  }
}

export function obj(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** The strings among `vs`. */
export function strs(...vs: unknown[]): string[] {
  return vs.filter((v): v is string => typeof v === 'string');
}

/** The string values of an object, as a fresh map. */
export function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(obj(v) ?? {})) if (typeof x === 'string') setOwn(out, k, x);
  return out;
}

/** Ids of the `servers: [{id}]` list of a body part (DeleteServers, the server actions). */
export function serverIdsIn(list: unknown): (string | undefined)[] {
  return (Array.isArray(list) ? list : []).map((e) => strs(obj(e)?.id)[0]);
}
