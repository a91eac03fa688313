/**
 * Per-cluster serving. The Kubernetes API of one cluster is a scope of
 * routes (kubeApi: discovery, the review APIs, watch, logs, resources):
 * registered once at / for the management cluster and once under
 * /clusters/:clusterNamespace/:clusterName for the workload clusters, whose
 * onRequest hook picks the workload cluster's store (404 for one that does
 * not exist). Each workload cluster also has its own address (listeners.ts:
 * WorkloadListeners), whose requests enter the same router with the
 * /clusters prefix; its upgrades (pods/portforward) go to app.portForwards.
 */
import type { FastifyInstance } from 'fastify';
import type { TlsOptions } from 'node:tls';
import { unencapsulated, type FacadeContext } from '../http/context.js';
import { status } from '../http/status.js';
import { WorkloadListeners } from '../listeners.js';
import type { ConnectionGuard, ServerTimeouts } from '../connections.js';
import { reviewRoutes } from './auth.js';
import { discoveryRoutes } from './discovery.js';
import { resourceRoutes } from './resources.js';
import { logRoutes } from './subresources.js';
import { watchRoutes } from './watch.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The workload clusters' own addresses (set by listenersPlugin). */
    workloadListeners: WorkloadListeners;
  }
}

/** The prefix of a workload cluster's routes on the management address. */
export const CLUSTER_PREFIX = '/clusters/:clusterNamespace/:clusterName';

/** One cluster's Kubernetes API (the cluster is request.kube.store). */
export async function kubeApi(app: FastifyInstance, o: { ctx: FacadeContext }): Promise<void> {
  // Only the context: the options a plugin was registered with include its prefix, which children must not inherit twice.
  const opts = { ctx: o.ctx };
  await app.register(discoveryRoutes, opts);
  await app.register(reviewRoutes, opts);
  await app.register(watchRoutes, opts);
  await app.register(logRoutes, opts);
  await app.register(resourceRoutes, opts);
}

/** Under CLUSTER_PREFIX: the workload cluster's API. */
export async function clusterScope(app: FastifyInstance, o: { ctx: FacadeContext }): Promise<void> {
  app.addHook('onRequest', async (req) => {
    const { clusterNamespace: ns, clusterName: name } = req.params as { clusterNamespace: string; clusterName: string };
    const key = `${ns}/${name}`;
    const workloads = o.ctx.workloads;
    if (!workloads?.names().includes(key)) throw status(404, 'NotFound', `workload cluster "${key}" not found`);
    const store = workloads.store(ns, name);
    await o.ctx.prepare(store);
    req.kube = { ...req.kube, store, base: `/clusters/${encodeURIComponent(ns)}/${encodeURIComponent(name)}` };
  });
  await app.register(kubeApi, { ctx: o.ctx });
}

export interface ListenersOptions {
  host: string;
  /** The facade's TLS options; undefined: plain http. */
  tls?: TlsOptions | undefined;
  /** The connection limits the listeners share with the main address. */
  connections: ConnectionGuard;
  timeouts: ServerTimeouts;
}

/** app.workloadListeners, closed with the app. */
export const listenersPlugin = unencapsulated(async function listeners(app: FastifyInstance, o: ListenersOptions): Promise<void> {
  const wl = new WorkloadListeners({
    host: o.host,
    ...(o.tls ? { tls: o.tls } : {}),
    connections: o.connections,
    timeouts: o.timeouts,
    route: (req, res) => app.routing(req, res),
    upgrade: (key, req, socket, head) => app.portForwards.upgrade(key, req, socket, head),
  });
  app.decorate('workloadListeners', wl);
  app.addHook('onClose', async () => wl.close());
});
