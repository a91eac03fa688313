/**
 * `POST /api/v1/namespaces/<ns>/pods/<name>/portforward` as a kube-apiserver
 * with its kubelet serves it over SPDY/3.1 (protocol `portforward.k8s.io`):
 * the client (client-go transport/spdy, e.g. Cluster API's KCP
 * controlplane/kubeadm/internal/proxy/dial.go) asks for an upgrade, then opens
 * per forwarded connection two streams carrying the headers `streamtype`
 * (`error` or `data`), `port` and `requestid`; the server answers each with
 * SYN_REPLY. Bytes of the data stream are the forwarded TCP connection; the
 * error stream carries a message when the port cannot be reached (kubelet's
 * pkg/kubelet/cri/streaming/portforward/httpstream.go behaviour: the message,
 * then the stream closes).
 *
 * What is to be found behind a port is the caller's `connect` (the etcd of a
 * workload cluster, etcd-server.ts). Flow control: SPDY/3.1 windows are not
 * enforced either way (moby/spdystream does not implement them; incoming
 * WINDOW_UPDATE frames are ignored). PING is answered, GOAWAY closes.
 */
import type { IncomingMessage } from 'node:http';
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { FLAG_FIN, FrameReader, FrameWriter, GOAWAY, RST, SpdyProtocolError, type Frame, type Headers } from './spdy-frames.js';

export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';

/** What serves a forwarded port: handle `conn` (the data stream), or return why it cannot (written to the error stream). */
export type PortConnector = (port: number, conn: Duplex) => Promise<string | undefined> | string | undefined;

/** The bytes of one SPDY data stream as a Duplex. */
class StreamDuplex extends Duplex {
  constructor(
    private readonly send: (data: Buffer, fin: boolean) => void,
    private readonly reset: () => void,
  ) {
    super({ allowHalfOpen: true });
  }
  override _read(): void {}
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.send(chunk, false);
    cb();
  }
  override _final(cb: (err?: Error | null) => void): void {
    this.send(Buffer.alloc(0), true);
    cb();
  }
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.reset();
    cb(err);
  }
}

interface StreamState {
  id: number;
  type: string;
  port: number;
  requestId: string;
  remoteClosed: boolean;
  localClosed: boolean;
  duplex?: StreamDuplex;
}

const first = (h: Headers, name: string): string | undefined => h[name]?.[0];

/** One upgraded connection speaking SPDY/3.1 port-forward. */
export class PortForwardSession {
  private readonly reader = new FrameReader();
  private readonly writer = new FrameWriter();
  private readonly streams = new Map<number, StreamState>();
  private lastStreamId = 0;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly connect: PortConnector,
  ) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('close', () => this.teardown());
    socket.on('error', () => this.teardown());
  }

  receive(chunk: Buffer): void {
    if (this.closed) return;
    let frames: Frame[];
    try {
      frames = this.reader.push(chunk);
    } catch (e) {
      this.fail(e instanceof SpdyProtocolError ? e.message : String(e));
      return;
    }
    for (const f of frames) this.onFrame(f);
  }

  private write(bufs: Buffer | Buffer[]): void {
    if (this.closed || this.socket.destroyed) return;
    for (const b of Array.isArray(bufs) ? bufs : [bufs]) this.socket.write(b);
  }

  private fail(_why: string): void {
    this.write(this.writer.goaway(this.lastStreamId, GOAWAY.PROTOCOL_ERROR));
    this.socket.end();
    this.teardown();
  }

  private teardown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.duplex?.destroy();
    this.streams.clear();
    if (!this.socket.destroyed) this.socket.destroy();
  }

  private onFrame(f: Frame): void {
    switch (f.kind) {
      case 'syn_stream':
        return this.onSynStream(f);
      case 'data': {
        const s = this.streams.get(f.streamId);
        if (!s) {
          this.write(this.writer.rstStream(f.streamId, RST.INVALID_STREAM));
          return;
        }
        if (f.data.length > 0) s.duplex?.push(f.data);
        if (f.flags & FLAG_FIN) this.remoteClose(s);
        return;
      }
      case 'rst_stream': {
        const s = this.streams.get(f.streamId);
        if (s) {
          this.streams.delete(f.streamId);
          s.duplex?.destroy();
        }
        return;
      }
      case 'ping':
        this.write(this.writer.ping(f.id));
        return;
      case 'goaway':
        this.socket.end();
        this.teardown();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE, HEADERS, unknown types: nothing to do for a port-forward server
    }
  }

  private onSynStream(f: Extract<Frame, { kind: 'syn_stream' }>): void {
    if (f.streamId % 2 !== 1 || f.streamId <= this.lastStreamId) {
      this.write(this.writer.rstStream(f.streamId, RST.PROTOCOL_ERROR));
      return;
    }
    this.lastStreamId = f.streamId;
    const type = first(f.headers, 'streamtype') ?? '';
    const portText = first(f.headers, 'port') ?? '';
    const requestId = first(f.headers, 'requestid') ?? '';
    const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
    if ((type !== 'error' && type !== 'data') || !(port > 0 && port < 65536)) {
      this.write(this.writer.rstStream(f.streamId, RST.PROTOCOL_ERROR));
      return;
    }
    const s: StreamState = { id: f.streamId, type, port, requestId, remoteClosed: false, localClosed: false };
    this.streams.set(f.streamId, s);
    this.write(this.writer.synReply(f.streamId, {}));
    if (f.flags & FLAG_FIN) s.remoteClosed = true;
    s.duplex = new StreamDuplex(
      (data, fin) => {
        if (s.localClosed) return;
        if (fin) s.localClosed = true;
        this.write(this.writer.data(s.id, data, fin));
        this.maybeForget(s);
      },
      () => {
        if (!this.streams.has(s.id)) return;
        this.streams.delete(s.id);
        if (!s.localClosed || !s.remoteClosed) this.write(this.writer.rstStream(s.id, RST.CANCEL));
      },
    );
    if (s.remoteClosed) s.duplex.push(null);
    if (type === 'data') this.forward(s);
  }

  /** A data stream arrived: its error stream (same requestid) reports what `connect` refuses. */
  private forward(data: StreamState): void {
    const conn = data.duplex!;
    const refuse = (why: string): void => {
      const err = [...this.streams.values()].find((s) => s.type === 'error' && s.requestId === data.requestId);
      if (err?.duplex && !err.localClosed) err.duplex.end(Buffer.from(why));
      conn.end();
    };
    Promise.resolve()
      .then(() => this.connect(data.port, conn))
      .then(
        (why) => (why === undefined ? undefined : refuse(why)),
        (e: unknown) => refuse(`error forwarding port ${data.port}: ${(e as Error).message}`),
      );
  }

  private remoteClose(s: StreamState): void {
    if (s.remoteClosed) return;
    s.remoteClosed = true;
    s.duplex?.push(null);
    this.maybeForget(s);
  }

  private maybeForget(s: StreamState): void {
    if (s.localClosed && s.remoteClosed) this.streams.delete(s.id);
  }
}

/** Whether an upgrade request asks for SPDY/3.1 port-forward (else: the error to answer). */
export function checkUpgrade(req: IncomingMessage): string | undefined {
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  if (upgrade !== 'spdy/3.1') return `unsupported upgrade ${JSON.stringify(req.headers.upgrade ?? '')}: this server speaks SPDY/3.1`;
  const protos = String(req.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((p) => p.trim());
  if (!protos.includes(PORT_FORWARD_PROTOCOL)) return `X-Stream-Protocol-Version must offer ${PORT_FORWARD_PROTOCOL}`;
  return undefined;
}

/** Answer 101 and start the SPDY session on `socket` (`head`: bytes that came with the request). */
export function acceptPortForward(socket: Socket, head: Buffer, connect: PortConnector): PortForwardSession {
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${PORT_FORWARD_PROTOCOL}\r\n\r\n`);
  const session = new PortForwardSession(socket, connect);
  if (head.length > 0) session.receive(head);
  return session;
}
