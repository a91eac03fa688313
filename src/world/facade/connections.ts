/**
 * Connection limits of the facade's servers (issue 32.4: `hcs-testbed serve`
 * had no cap, so ~20,000 idle sockets used every file descriptor and 9 of 10
 * new clients were reset). Node and fastify give the timeouts (server
 * options: headersTimeout and requestTimeout, checked every
 * connectionsCheckingInterval; the TLS handshakeTimeout; keepAliveTimeout);
 * what no option does is here, in one small class shared by the main address
 * and the workload clusters' addresses:
 *
 * - a cap on open connections (below the process's file-descriptor limit);
 * - when the cap is reached, a new connection is not refused while an idle
 *   one can go instead: the oldest connection that never sent a request
 *   (an idle or trickling crowd), else the oldest idle keep-alive one, is
 *   closed, taken first from the client (remote address) holding more than
 *   its share of the cap. Connections with a request in flight (watches,
 *   log follows, port-forwards) are never chosen: a legit watch lives on;
 * - a connection must send its first request within firstRequestMs (Node's
 *   headersTimeout only starts with the first byte of a request, so a socket
 *   that sends nothing would stay for ever).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';

export interface ConnectionLimits {
  /** Most connections open at once over all the servers sharing the guard. */
  maxConnections: number;
  /** A client (remote address) holding more than this share of maxConnections loses its own idle connections first. */
  perClientShare: number;
  /** A connection that has not sent a complete request header by then is closed (ms): later than headersTimeout, so a client that started one gets Node's 408 first. */
  firstRequestMs: number;
  /** How often that is checked (ms). */
  sweepMs: number;
}

/** The timeouts (Node's http/https server options) of the facade's servers, in ms. */
export interface ServerTimeouts {
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
  keepAliveTimeout: number;
  handshakeTimeout: number;
}

export const SERVER_TIMEOUTS: Readonly<ServerTimeouts> = {
  /** The request's header section must arrive within this (a trickling client gets 408). Node's default: 60 s. */
  headersTimeout: 10_000,
  /** The whole request (headers and body; not the response: a watch is unaffected). Node's default: 300 s. */
  requestTimeout: 60_000,
  connectionsCheckingInterval: 1_000,
  /** Idle keep-alive connections (fastify's default). */
  keepAliveTimeout: 72_000,
  /** TLS handshake (Node's default: 120 s). */
  handshakeTimeout: 10_000,
};

/** Options of http(s).createServer for these timeouts (keepAliveTimeout is a property, set after). */
export function serverTimeoutOptions(t: ServerTimeouts): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number; handshakeTimeout: number } {
  return { headersTimeout: Math.min(t.headersTimeout, t.requestTimeout), requestTimeout: t.requestTimeout, connectionsCheckingInterval: t.connectionsCheckingInterval, handshakeTimeout: t.handshakeTimeout };
}

/**
 * The listen backlog: a crowd connecting at once waits in the kernel's queue
 * instead of having its SYNs dropped (a dropped SYN is retried after 1, 3, 7 s:
 * a new client among them waited seconds). Node's default is 511; the kernel
 * caps it at net.core.somaxconn.
 */
export const LISTEN_BACKLOG = 4096;

/** Descriptors kept free for everything else the process opens (files, the workload listeners, child processes). */
const FD_RESERVE = 256;
export const DEFAULT_MAX_CONNECTIONS = 4096;

/** The process's soft limit on open files (Linux /proc/self/limits), or undefined where unknown. */
export function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(text);
  return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
}

/** The default limits: at most 4,096 connections, and never more than the file-descriptor limit allows. */
export function defaultConnectionLimits(fdLimit: number | undefined = openFileLimit()): ConnectionLimits {
  const byFds = fdLimit === undefined ? DEFAULT_MAX_CONNECTIONS : Math.max(16, Math.floor((fdLimit - FD_RESERVE) * 0.8));
  return { maxConnections: Math.min(DEFAULT_MAX_CONNECTIONS, byFds), perClientShare: 0.5, firstRequestMs: 15_000, sweepMs: 1_000 };
}

interface Conn {
  socket: Socket;
  address: string;
  openedAt: number;
  /** Requests seen on it. */
  requests: number;
  /** Responses in flight (a watch stays in flight), or an upgrade (for good). */
  inFlight: number;
}

export interface ConnectionStats {
  open: number;
  /** Closed to make room for a new one. */
  evicted: number;
  /** Refused: the cap was reached and every connection was busy. */
  refused: number;
  /** Closed for not sending a request within firstRequestMs. */
  timedOut: number;
}

export class ConnectionGuard {
  /** Open connections, oldest first (a Map keeps insertion order). */
  private readonly conns = new Map<Socket, Conn>();
  private readonly perAddress = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly counts = { evicted: 0, refused: 0, timedOut: 0 };

  constructor(
    readonly limits: ConnectionLimits = defaultConnectionLimits(),
    private readonly now: () => number = () => performance.now(),
  ) {
    this.timer = setInterval(() => this.sweep(), limits.sweepMs);
    this.timer.unref();
  }

  stats(): ConnectionStats {
    return { open: this.conns.size, ...this.counts };
  }

  /** Guard a server's connections (call before it listens; http or https). */
  attach(server: Server | NetServer): void {
    server.prependListener('connection', (socket: Socket) => this.admit(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.started(req.socket, res));
    // Not an 'upgrade' listener: with one, Node would hand every upgrade request to it instead of 'request'.
  }

  /** An upgraded connection (a port-forward) is in use for good: never chosen to make room. Its server's upgrade handler calls this. */
  pin(socket: Socket): void {
    const c = this.find(socket);
    if (c) c.inFlight = Infinity;
  }

  /** Stop the sweep and close every connection (the servers close: a socket still in its TLS handshake would keep them open). */
  close(): void {
    clearInterval(this.timer);
    for (const c of [...this.conns.values()]) this.drop(c);
  }

  /** The TCP connection behind a request's socket (a TLS socket wraps it: Node's TLSSocket keeps it as _parent). */
  private find(socket: Socket): Conn | undefined {
    return this.conns.get(socket) ?? this.conns.get((socket as Socket & { _parent?: Socket })._parent as Socket);
  }

  private admit(socket: Socket): void {
    if (this.conns.size >= this.limits.maxConnections) {
      const victim = this.victim(socket.remoteAddress ?? '');
      if (!victim) {
        this.counts.refused++;
        socket.destroy();
        return;
      }
      this.counts.evicted++;
      this.drop(victim);
    }
    const c: Conn = { socket, address: socket.remoteAddress ?? '', openedAt: this.now(), requests: 0, inFlight: 0 };
    this.conns.set(socket, c);
    this.perAddress.set(c.address, (this.perAddress.get(c.address) ?? 0) + 1);
    socket.once('close', () => this.forget(c));
  }

  private started(socket: Socket, res: ServerResponse): void {
    const c = this.find(socket);
    if (!c) return;
    c.requests++;
    c.inFlight++;
    let done = false;
    const finished = (): void => {
      if (done) return;
      done = true;
      c.inFlight--;
    };
    res.once('finish', finished);
    res.once('close', finished);
  }

  /** The connection to close for a newcomer from `address`: never one with a request in flight. */
  private victim(address: string): Conn | undefined {
    const share = this.limits.maxConnections * this.limits.perClientShare;
    let hog = address;
    for (const [a, n] of this.perAddress) if (n > (this.perAddress.get(hog) ?? 0)) hog = a;
    const from = (this.perAddress.get(hog) ?? 0) > share ? hog : undefined;
    return this.oldest((c) => c.requests === 0, from) ?? this.oldest(() => true, from) ?? this.oldest((c) => c.requests === 0) ?? this.oldest(() => true);
  }

  private oldest(pick: (c: Conn) => boolean, address?: string): Conn | undefined {
    for (const c of this.conns.values()) if (c.inFlight === 0 && (address === undefined || c.address === address) && pick(c)) return c;
    return undefined;
  }

  /** Close connections that have sent no request within firstRequestMs (oldest first: stop at the first young one). */
  private sweep(): void {
    const cutoff = this.now() - this.limits.firstRequestMs;
    for (const c of this.conns.values()) {
      if (c.openedAt > cutoff) break;
      if (c.requests === 0 && c.inFlight === 0) {
        this.counts.timedOut++;
        this.drop(c);
      }
    }
  }

  private drop(c: Conn): void {
    this.forget(c);
    c.socket.destroy();
  }

  private forget(c: Conn): void {
    if (this.conns.get(c.socket) !== c) return;
    this.conns.delete(c.socket);
    const n = (this.perAddress.get(c.address) ?? 1) - 1;
    if (n <= 0) this.perAddress.delete(c.address);
    else this.perAddress.set(c.address, n);
  }
}
