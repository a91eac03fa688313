/**
 * Subresources streamed rather than stored:
 * - pods/log of the controller deployments (their ControllerLogs stream, the
 *   ANN_LOG_STREAM annotation of the Pod): ?tailLines, and ?follow=true for
 *   kubectl logs -f (every new line until the client goes or the facade closes);
 * - pods/portforward (SPDY/3.1) on the workload clusters' own addresses: the
 *   etcd members and kube-apiserver pods (portforward/etcd-forward.ts). An
 *   upgrade never reaches fastify: the listeners (plugins/listeners.ts) hand
 *   it to app.portForwards.
 * There is no pods/exec: the simulated Pods run nothing.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KubeApiError } from '../../../core/kube/errors.js';
import { rawAuthenticated } from '../auth.js';
import { ANN_LOG_STREAM } from '../controllers.js';
import { unencapsulated, type FacadeContext, type Query } from '../http/context.js';
import { routeToWorkload } from '../listeners.js';
import { PortForwards, type ClusterCaSource, type EtcdCaSource } from '../portforward/etcd-forward.js';
import { requestTarget } from './resources.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** pods/portforward of the workload clusters (set by portForwardPlugin). */
    portForwards: PortForwards;
  }
}

type LogReq = FastifyRequest<{ Params: { namespace: string; name: string; version: string } }>;

/** The lines of the Pod's log stream (the last ?tailLines of them). */
function logLines(ctx: FacadeContext, stream: string | undefined, q: Query): string[] {
  let lines = stream && ctx.logs ? ctx.logs.text(stream).split('\n').filter((l) => l !== '') : [];
  const tail = q.tailLines !== undefined ? Number(q.tailLines) : undefined;
  if (tail !== undefined && Number.isInteger(tail) && tail >= 0) lines = tail === 0 ? [] : lines.slice(-tail);
  return lines;
}

/** kubectl logs -f: what there is, then every new line of the stream until the client goes away. */
function followLog(ctx: FacadeContext, reply: FastifyReply, stream: string | undefined, lines: string[]): FastifyReply {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  for (const l of lines) res.write(l + '\n');
  let closed = false;
  const logs = ctx.logs;
  const unsub = stream && logs ? logs.subscribe((d, line) => {
    if (!closed && d === stream) res.write(JSON.stringify(line) + '\n');
  }) : undefined;
  const end = (): void => {
    if (closed) return;
    closed = true;
    unsub?.();
    ctx.streams.delete(end);
    res.end();
  };
  ctx.streams.add(end);
  reply.request.raw.on('close', end);
  return reply;
}

/** GET pods/<name>/log, in a cluster's scope. */
export async function logRoutes(app: FastifyInstance, o: { ctx: FacadeContext }): Promise<void> {
  app.get('/api/:version/namespaces/:namespace/pods/:name/log', async (req: LogReq, reply) => {
    const t = await requestTarget(o.ctx, req, { ...req.params, plural: 'pods', sub: 'log' });
    const pod = t.store.getSync({ kind: 'Pod', namespace: req.params.namespace, name: req.params.name });
    if (!pod) throw KubeApiError.notFound(t.info.plural, req.params.name);
    const q = req.kube.query;
    const stream = pod.metadata.annotations?.[ANN_LOG_STREAM];
    const lines = logLines(o.ctx, stream, q);
    if (q.follow !== 'true' && q.follow !== '1') return reply.code(200).type('text/plain').send(lines.map((l) => l + '\n').join(''));
    return followLog(o.ctx, reply, stream, lines);
  });
}

export interface PortForwardOptions {
  ctx: FacadeContext;
  etcdCa?: EtcdCaSource | undefined;
  clusterCa?: ClusterCaSource | undefined;
}

/** app.portForwards: the SPDY port-forwards of the workload clusters' pods (the whole server's). */
export const portForwardPlugin = unencapsulated(async function portForward(app: FastifyInstance, o: PortForwardOptions): Promise<void> {
  const { ctx } = o;
  const workloads = ctx.workloads;
  app.decorate(
    'portForwards',
    new PortForwards({
      store: (key) => (workloads?.names().includes(key) ? workloads.store(...(key.split('/') as [string, string])) : undefined),
      ...(o.etcdCa ? { etcdCa: o.etcdCa } : {}),
      ...(o.clusterCa ? { clusterCa: o.clusterCa } : {}),
      route: (key, req, res) => routeToWorkload(key, (q, r) => app.routing(q, r), req, res),
      authenticated: (req) => rawAuthenticated(req, ctx.token, ctx.clientCa),
    }),
  );
});
