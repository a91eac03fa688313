/**
 * What the facade's plugins share: the clusters it serves and the state of
 * the server (its token, its CA, the streams it holds open), passed to every
 * plugin as its options (no module state), and what each request carries once
 * authenticated (request.kube, set by plugins/auth.ts and plugins/cluster.ts).
 */
import type { X509Certificate } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../core/clock.js';
import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import type { ResourceInfo } from '../../../core/kube/resources.js';
import type { ControllerLogs } from '../../../core/runtime/context.js';
import type { EmbeddedWorkloadClusters } from '../../embedded.js';
import type { Identity } from '../auth.js';

/**
 * Asked first for every request to the management cluster's address (not
 * /clusters/...): answers it (returns the reply) or leaves it to the
 * Kubernetes API (returns undefined).
 */
export interface FacadeExtension {
  handle(req: FastifyRequest, reply: FastifyReply, path: string, query: URLSearchParams): Promise<FastifyReply | undefined> | FastifyReply | undefined;
  /** Called when the facade closes (end open streams). */
  close?(): void;
}

/** Long-lived responses (watches, log follows) the facade holds open: each entry ends its stream. */
export class OpenStreams {
  private readonly ends = new Set<() => void>();
  add(end: () => void): void {
    this.ends.add(end);
  }
  delete(end: () => void): void {
    this.ends.delete(end);
  }
  get size(): number {
    return this.ends.size;
  }
  /** End every stream (the facade closes). */
  endAll(): void {
    for (const end of [...this.ends]) end();
  }
}

export interface FacadeContext {
  mgmt: EmbeddedStore;
  workloads?: EmbeddedWorkloadClusters | undefined;
  /** Controller logs served as the pods/log of the controller deployments. */
  logs?: ControllerLogs | undefined;
  clock: Clock;
  /** The bearer token clients must send. */
  token: string;
  /** TLS: the CA whose client certificates authenticate (auth.ts); undefined: plain http. */
  clientCa?: X509Certificate | undefined;
  extension?: FacadeExtension | undefined;
  streams: OpenStreams;
  /** Make sure the controller Deployments/Pods of the management cluster exist (controllers.ts). */
  ensureControllers(): Promise<void>;
  /** Make sure a workload cluster's store has its namespaces (once per store). */
  prepare(store: EmbeddedStore): Promise<void>;
}

export type Query = Record<string, string | undefined>;

/** The resource a request is about. */
export interface Target {
  store: EmbeddedStore;
  info: ResourceInfo;
  namespace?: string;
  name?: string;
  sub?: string;
}

/** What an authenticated request carries (request.kube). */
export interface KubeRequest {
  /** The request's URL (path as sent, query parsed). */
  url: URL;
  query: Query;
  /** The path on the management cluster's address, trailing slashes removed. */
  path: string;
  who: Identity | undefined;
  /** The cluster the request is for (the management cluster, or a workload cluster under /clusters/<ns>/<name>). */
  store: EmbeddedStore;
  /** '' for the management cluster, /clusters/<ns>/<name> for a workload cluster. */
  base: string;
  /** Set once the resource is known: the error handler names it in its Status. */
  target?: Target;
}

declare module 'fastify' {
  interface FastifyRequest {
    kube: KubeRequest;
  }
}

/**
 * A plugin whose hooks and decorators apply to the context it is registered
 * in (not a child context): what fastify-plugin does, by fastify's documented
 * `skip-override` symbol.
 */
export function unencapsulated<T extends (...args: never[]) => unknown>(plugin: T): T {
  (plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
  return plugin;
}
