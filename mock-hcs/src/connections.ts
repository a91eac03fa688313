/**
 * Connection limits of a listening mock-hcs that no crowd of clients can turn into a lock-out (issue 32).
 *
 * Node's `server.maxConnections` refuses the newcomer once the cap is reached: 1,024 idle or
 * trickling (slowloris) sockets then lock every new client out until they time out (12 of 13 new
 * clients got ECONNRESET for 120 s; 1,100 slowloris connections, ~35 s per wave). Node has no option
 * that sheds the old idle connections instead, so this is the small piece of code that does:
 *
 * - at most `max` open connections, at most `perClient` of them from one remote address;
 * - a newcomer over either bound closes the oldest *evictable* connection — one with no request
 *   being answered: idle, still in the TLS handshake, or with its headers or body still arriving —
 *   of its own address when that address is at its share, else of the address holding the most
 *   connections. Only when every candidate has a request being answered is the newcomer closed;
 * - a connection that sends nothing for `silentMs` while no request of it is being answered is
 *   closed (node's socket timeout, `server.timeout`, with a 'timeout' listener that spares the
 *   connections whose request is in the handler): a socket that never sends a byte, or stops
 *   halfway through its headers, goes after a few seconds instead of holding a slot until
 *   headersTimeout (or for ever: node's headersTimeout only starts at the first byte).
 *
 * The TLS handshake bound is node's `handshakeTimeout` (index.ts). A real server does the same:
 * nginx's `limit_conn` per `$binary_remote_addr`, and its `client_header_timeout` / `reset_timedout_connection`.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Open client connections at most. */
  max: number;
  /** Open connections from one remote address at most (<= max). */
  perClient: number;
  /** A connection silent this long without a request being answered is closed. */
  silentMs: number;
}

interface Entry {
  /** The accepted TCP socket, and over HTTPS the TLS socket on top of it. */
  sockets: Socket[];
  addr: string;
  /** "address:port" of the peer. */
  key: string;
  /** Requests of this connection the server is answering (or still receiving). */
  requests: Set<IncomingMessage>;
  gone: boolean;
}

/** The remote address a share is counted for (an IPv4-mapped IPv6 address is its IPv4 address). */
function clientOf(socket: Socket): string | undefined {
  const a = socket.remoteAddress;
  return a?.startsWith('::ffff:') ? a.slice(7) : a;
}

/** A request is being answered once it arrived whole; one whose headers or body still arrive is not. */
function evictable(e: Entry): boolean {
  for (const r of e.requests) if (r.complete) return false;
  return true;
}

/**
 * Enforce `limits` on `server` (an http.Server or https.Server, before it listens). Sets
 * `server.timeout` and a `maxConnections` backstop of twice `max` (sockets being closed still count
 * there until their close event).
 */
export function guardConnections(server: HttpServer | HttpsServer, limits: ConnectionLimits): void {
  const perClient = Math.min(limits.perClient, limits.max);
  const byAddr = new Map<string, Set<Entry>>();
  const bySocket = new WeakMap<Socket, Entry>();
  /** Open connections by "address:port", to find the TCP connection of a TLS socket. */
  const byPeer = new Map<string, Entry>();
  let open = 0;
  const peerKey = (s: Socket) => `${s.remoteAddress}:${s.remotePort}`;

  const remove = (e: Entry) => {
    if (e.gone) return;
    e.gone = true;
    open--;
    const set = byAddr.get(e.addr);
    set?.delete(e);
    if (set?.size === 0) byAddr.delete(e.addr);
    if (byPeer.get(e.key) === e) byPeer.delete(e.key);
  };
  const close = (e: Entry) => {
    remove(e);
    for (const s of e.sockets) s.destroy();
  };
  /** The oldest evictable connection of `set` (a Set keeps insertion order: oldest first). */
  const oldestIn = (set: Set<Entry> | undefined): Entry | undefined => {
    for (const e of set ?? []) if (evictable(e)) return e;
    return undefined;
  };
  const victimFor = (addr: string): Entry | undefined => {
    const own = byAddr.get(addr);
    if ((own?.size ?? 0) >= perClient) return oldestIn(own);
    if (open < limits.max) return undefined;
    const heaviest = [...byAddr.values()].sort((a, b) => b.size - a.size);
    for (const set of heaviest) {
      const v = oldestIn(set);
      if (v) return v;
    }
    return undefined;
  };

  server.maxConnections = limits.max * 2;
  server.on('connection', (socket: Socket) => {
    const addr = clientOf(socket);
    if (addr === undefined || socket.destroyed) return void socket.destroy();
    const own = byAddr.get(addr)?.size ?? 0;
    if (own >= perClient || open >= limits.max) {
      const victim = victimFor(addr);
      if (!victim) return void socket.destroy();
      close(victim);
    }
    const key = peerKey(socket);
    const e: Entry = { sockets: [socket], addr, key, requests: new Set(), gone: false };
    let set = byAddr.get(addr);
    if (!set) byAddr.set(addr, (set = new Set()));
    set.add(e);
    bySocket.set(socket, e);
    byPeer.set(key, e);
    open++;
    socket.once('close', () => remove(e));
  });
  // HTTPS: the TLS socket made over an accepted TCP socket serves its requests.
  server.on('secureConnection', (tls: Socket) => {
    const e = byPeer.get(peerKey(tls));
    if (!e) return;
    e.sockets.push(tls);
    bySocket.set(tls, e);
    tls.once('close', () => remove(e));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const e = bySocket.get(req.socket);
    if (!e) return;
    e.requests.add(req);
    res.once('close', () => e.requests.delete(req));
  });
  // Node's socket timeout (inactivity): with a listener here node no longer destroys the socket itself.
  server.timeout = limits.silentMs;
  server.on('timeout', (socket: Socket) => {
    const e = bySocket.get(socket);
    if (e && !evictable(e)) return; // a request is in the handler: requestTimeout bounds it
    if (e) close(e);
    else socket.destroy();
  });
}
