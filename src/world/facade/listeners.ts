/**
 * One address per workload cluster, as real clusters have: each workload
 * cluster's API is served on its own port (https://127.0.0.1:<port>, no path),
 * besides the management cluster's address. A request arriving there is
 * handed to the facade's router as `/clusters/<ns>/<name>` + its path, so the
 * same handler answers it; the prefixed form keeps working on the management
 * address for raw HTTP clients.
 *
 * Why not only the path prefix: kubectl's `--raw` (`kubectl get --raw`,
 * `kubectl create --raw`) drops the path of the kubeconfig's server URL and
 * sends the absolute path to its host, so with a prefixed server it reached
 * the management cluster and answered for the wrong cluster (found while
 * posting Evictions to the workload cluster with `kubectl create --raw`, OPS-1).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { statusClientError } from './client-error.js';
import { LISTEN_BACKLOG, serverTimeoutOptions, type ConnectionGuard, type ServerTimeouts } from './connections.js';
import type { AddressInfo, Socket } from 'node:net';
import type { TlsOptions } from 'node:tls';

export interface WorkloadListenerOptions {
  host: string;
  /** TLS options of the facade (certificate, key, client-certificate settings); undefined: plain http. */
  tls?: TlsOptions;
  /** The connection limits the facade's servers share (connections.ts); undefined: none. */
  connections?: ConnectionGuard;
  /** The facade's timeouts (connections.ts SERVER_TIMEOUTS). */
  timeouts?: ServerTimeouts;
  /** The facade's router (fastify's `routing`). */
  route: (req: IncomingMessage, res: ServerResponse) => void;
  /** Requests asking for a protocol upgrade (pods/portforward over SPDY, etcd-forward.ts), with the cluster's key; path without the prefix. */
  upgrade?: (key: string, req: IncomingMessage, socket: Socket, head: Buffer) => void;
}

/** Hand a request made to workload cluster "ns/name"'s own address to the facade's router, as `/clusters/<ns>/<name>` + its path. */
export function routeToWorkload(key: string, route: (req: IncomingMessage, res: ServerResponse) => void, req: IncomingMessage, res: ServerResponse): void {
  const [ns, name] = key.split('/') as [string, string];
  const prefix = `/clusters/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  req.url = `${prefix}${req.url?.startsWith('/') ? '' : '/'}${req.url ?? ''}`;
  route(req, res);
}

export class WorkloadListeners {
  private readonly urls = new Map<string, string>();
  private readonly pending = new Map<string, Promise<string>>();
  private readonly servers = new Set<Server>();
  private closed = false;

  constructor(private readonly opts: WorkloadListenerOptions) {}

  /** The address of workload cluster "ns/name" once it listens. */
  url(key: string): string | undefined {
    return this.urls.get(key);
  }

  /** Listen for workload cluster "ns/name" (once); resolves to its address. */
  ensure(key: string): Promise<string> {
    const known = this.pending.get(key);
    if (known) return known;
    const handler = (req: IncomingMessage, res: ServerResponse): void => routeToWorkload(key, this.opts.route, req, res);
    const timeouts = this.opts.timeouts ? serverTimeoutOptions(this.opts.timeouts) : {};
    const server = this.opts.tls ? createHttpsServer({ ...this.opts.tls, ...timeouts }, handler) : createHttpServer(timeouts, handler);
    if (this.opts.timeouts) server.keepAliveTimeout = this.opts.timeouts.keepAliveTimeout;
    this.opts.connections?.attach(server);
    this.servers.add(server);
    const upgrade = this.opts.upgrade;
    server.on('clientError', statusClientError);
    if (upgrade) {
      server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
        this.opts.connections?.pin(socket);
        upgrade(key, req, socket, head);
      });
    }
    const p = new Promise<string>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: 0, host: this.opts.host, backlog: LISTEN_BACKLOG }, () => {
        const port = (server.address() as AddressInfo).port;
        const host = this.opts.host === '0.0.0.0' || this.opts.host === '::' ? '127.0.0.1' : this.opts.host;
        const url = `${this.opts.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
        if (this.closed) {
          server.close();
          reject(new Error('the facade is closed'));
          return;
        }
        this.urls.set(key, url);
        resolve(url);
      });
    });
    this.pending.set(key, p);
    return p;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.servers].map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections();
            s.close(() => resolve());
          }),
      ),
    );
  }
}
