/**
 * The facade's fastify application, as plugins (fastify's own style, as
 * mock-hcs/src): plugins/auth.ts (credentials, before any body is read),
 * the extension beside the API (the dashboard of `hcs-testbed serve`),
 * plugins/subresources.ts (port-forward) and plugins/listeners.ts (the
 * workload clusters' addresses), then one cluster's API (plugins/listeners.ts
 * kubeApi: discovery, reviews, watch, logs, resources) at / for the
 * management cluster and under /clusters/<ns>/<name> for each workload
 * cluster. Every error is a metav1.Status (http/status.ts).
 *
 * buildFacadeApp does not listen: startFacade (server.ts) does, and tests
 * drive the app with app.inject().
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TlsOptions } from 'node:tls';
import { KubeApiError } from '../../core/kube/errors.js';
import { statusClientError } from './client-error.js';
import { ConnectionGuard, SERVER_TIMEOUTS, serverTimeoutOptions, type ServerTimeouts } from './connections.js';
import { BODY_LIMIT_BYTES } from './http/body.js';
import { unencapsulated, type FacadeContext } from './http/context.js';
import { frameworkStatus, HttpStatus, notFound, sendStatus, status, toStatus } from './http/status.js';
import { authPlugin } from './plugins/auth.js';
import { CLUSTER_PREFIX, clusterScope, kubeApi, listenersPlugin } from './plugins/listeners.js';
import { portForwardPlugin, type PortForwardOptions } from './plugins/subresources.js';
import { WATCH_CONSTRAINT } from './plugins/watch.js';
import { PROTOBUF_CONTENT_TYPE } from './protobuf/decode.js';

export interface FacadeAppOptions {
  ctx: FacadeContext;
  /** Serve HTTPS with these options (certificate, key, client-certificate settings); undefined: plain http. */
  https?: TlsOptions | undefined;
  /** The address the workload clusters' listeners use. */
  host: string;
  etcdCa?: PortForwardOptions['etcdCa'];
  clusterCa?: PortForwardOptions['clusterCa'];
  /** Connection limits shared by the main address and the workload addresses (default: connections.ts defaults). */
  connections?: ConnectionGuard | undefined;
  /** Default: SERVER_TIMEOUTS. */
  timeouts?: ServerTimeouts | undefined;
}

/** Errors raised by a handler (HttpStatus, KubeApiError, anything else: 500) or by fastify itself (its statusCode). */
function errorHandler(err: Error & { statusCode?: number }, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const code = err.statusCode;
  if (err instanceof HttpStatus || err instanceof KubeApiError || !(code !== undefined && code >= 400 && code < 600)) {
    const t = req.kube?.target;
    return sendStatus(reply, toStatus(err, t?.info, t?.name));
  }
  return sendStatus(reply, frameworkStatus(code, code === 413 ? `the request body is larger than the ${BODY_LIMIT_BYTES / 1024 / 1024} MiB limit` : err.message || 'error'));
}

/** No route: a workload cluster that does not exist, or a path no cluster serves. */
function notFoundHandler(ctx: FacadeContext) {
  return (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const m = /^\/clusters\/([^/]+)\/([^/]+)(?:\/|$)/.exec(req.kube?.path ?? '');
    if (m) {
      const key = `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`;
      if (!ctx.workloads?.names().includes(key)) return sendStatus(reply, status(404, 'NotFound', `workload cluster "${key}" not found`).status);
    }
    return sendStatus(reply, notFound().status);
  };
}

/** The extension (FacadeExtension) is asked first for every request to the management cluster's address. */
const extensionPlugin = unencapsulated(async function extension(app: FastifyInstance, o: { ctx: FacadeContext }): Promise<void> {
  const ext = o.ctx.extension;
  if (!ext) return;
  app.addHook('preHandler', async (req, reply) => {
    if (req.kube.path.startsWith('/clusters/')) return undefined;
    const handled = await ext.handle(req, reply, req.kube.path, req.kube.url.searchParams);
    return handled ?? undefined;
  });
  app.addHook('onClose', async () => ext.close?.());
});

export async function buildFacadeApp(o: FacadeAppOptions): Promise<FastifyInstance> {
  const { ctx } = o;
  const timeouts = o.timeouts ?? SERVER_TIMEOUTS;
  const connections = o.connections ?? new ConnectionGuard();
  const serverOptions = serverTimeoutOptions(timeouts);
  // (Fastify's types differ for an https server; the routes are the same.)
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    // Timeouts (connections.ts): fastify sets these two on the server it creates, http or https; the others are creation options.
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    http: serverOptions,
    clientErrorHandler: statusClientError,
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { ignoreTrailingSlash: true, constraints: { watch: WATCH_CONSTRAINT } },
    // A URL fastify cannot route (bad percent-encoding, ...) is a Status too.
    frameworkErrors: (err: Error, _req: FastifyRequest, reply: FastifyReply) => {
      void sendStatus(reply, frameworkStatus(400, `the request could not be understood: ${err.message}`));
    },
    ...(o.https ? { https: { ...o.https, ...serverOptions } } : {}),
  } as Parameters<typeof Fastify>[0]) as unknown as FastifyInstance;
  connections.attach(app.server);
  // Before the servers close: connections the http server does not track yet (TLS handshakes) would hold close() up.
  app.addHook('preClose', async () => connections.close());
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(PROTOBUF_CONTENT_TYPE, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler(ctx));
  await app.register(authPlugin, { ctx, tls: !!o.https });
  await app.register(extensionPlugin, { ctx });
  await app.register(portForwardPlugin, { ctx, etcdCa: o.etcdCa, clusterCa: o.clusterCa });
  await app.register(listenersPlugin, { host: o.host, tls: o.https, connections, timeouts });
  await app.register(kubeApi, { ctx });
  await app.register(clusterScope, { ctx, prefix: CLUSTER_PREFIX });
  return app;
}
