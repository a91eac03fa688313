/**
 * An etcd v3 endpoint on a forwarded connection (portforward.ts): TLS (ALPN
 * h2, a serving certificate for `etcd-<node>` signed by the cluster's etcd
 * CA, a client certificate required and checked against that CA in our code,
 * auth.ts signedBy), then gRPC over HTTP/2 with the RPCs Cluster API's KCP
 * v1.10 calls (controlplane/kubeadm/internal/etcd/etcd.go): Maintenance.Status
 * (newEtcdClient: leader and errors), Cluster.MemberList (Members),
 * Maintenance.Alarm GET (Alarms), Cluster.MemberRemove (RemoveMember),
 * Maintenance.MoveLeader (MoveLeader). Anything else is UNIMPLEMENTED (12).
 * Without quorum (the testbed's etcd faults, KCP-5: etcd-members.ts) Status
 * answers with leader 0 and errors ["etcdserver: no leader"], and a
 * linearizable MemberList, Alarm and MemberRemove fail with UNAVAILABLE
 * "etcdserver: request timed out", as etcd v3.5's members do.
 *
 * Messages: etcd api/etcdserverpb/rpc.proto (go.etcd.io/etcd/api/v3 v3.5):
 * ResponseHeader {1 cluster_id, 2 member_id, 3 revision, 4 raft_term};
 * StatusResponse {1 header, 2 version, 3 dbSize, 4 leader, 5 raftIndex,
 * 6 raftTerm, 7 raftAppliedIndex, 8 errors, 9 dbSizeInUse, 10 isLearner};
 * Member {1 ID, 2 name, 3 peerURLs, 4 clientURLs, 5 isLearner};
 * MemberListResponse / MemberRemoveResponse {1 header, 2 members};
 * MemberRemoveRequest {1 ID}; AlarmRequest {1 action (GET 0), 2 memberID,
 * 3 alarm}; AlarmResponse {1 header, 2 alarms}; MoveLeaderRequest {1 targetID};
 * MoveLeaderResponse {1 header}. gRPC framing: each message is a 1-byte
 * compressed flag (0) and a 4-byte big-endian length (grpc PROTOCOL-HTTP2.md).
 */
import { X509Certificate } from 'node:crypto';
import { createSecureServer, type Http2SecureServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { signedBy } from '../auth.js';
import { EtcdError, type EtcdMember, type WorkloadEtcd } from './members.js';
import { fields } from '../protobuf/decode.js';
import { ProtoWriter } from '../protobuf/encode.js';

/** The member a forwarded connection reached. */
export interface EtcdEndpoint {
  etcd: WorkloadEtcd;
  /** The Node whose etcd pod was forwarded to. */
  node: string;
  /** etcd server version, e.g. "3.5.15" (from the pod's image tag). */
  version: string;
}

export interface EtcdTls {
  /** PEM of the serving certificate (signed by the etcd CA) and its key. */
  certPem: string;
  keyPem: string;
  /** The etcd CA (client certificates must be signed by it). */
  caPem: string;
}

const MAX_MESSAGE = 4 << 20;

function header(etcd: WorkloadEtcd, member: EtcdMember): ProtoWriter {
  return new ProtoWriter().uint(1, etcd.clusterId).uint(2, member.id).uint(3, 1).uint(4, etcd.raftTerm());
}

function memberMessage(m: EtcdMember): ProtoWriter {
  return new ProtoWriter().uint(1, m.id).string(2, m.name).strings(3, m.peerURLs).strings(4, m.clientURLs);
}

function uintField(body: Buffer, no: number): bigint {
  let v = 0n;
  for (const f of fields(body)) {
    if (f.no === no && f.wire === 0) v = f.r.varint();
    else f.r.skip(f.wire);
  }
  return v;
}

/** Answer one unary RPC of the member on `ep.node`; the reply message or an EtcdError. */
export function etcdCall(ep: EtcdEndpoint, method: string, body: Buffer): Buffer {
  const self = ep.etcd.memberOn(ep.node);
  if (!self || !self.reachable) throw new EtcdError(14, `etcdserver: no member on ${ep.node}`);
  const e = ep.etcd;
  switch (method) {
    case '/etcdserverpb.Maintenance/Status':
      return new ProtoWriter().message(1, header(e, self)).string(2, ep.version).uint(3, 1 << 20).uint(4, e.leader()).uint(5, 1).uint(6, e.raftTerm()).uint(7, 1).strings(8, e.statusErrors()).uint(9, 1 << 19).finish();
    case '/etcdserverpb.Cluster/MemberList': {
      // MemberListRequest {1 linearizable}: clientv3 v3.5 asks for a linearizable list, which needs quorum.
      if (uintField(body, 1) !== 0n) e.requireQuorum();
      const w = new ProtoWriter().message(1, header(e, self));
      for (const m of e.members()) w.message(2, memberMessage(m));
      return w.finish();
    }
    case '/etcdserverpb.Maintenance/Alarm': {
      const action = uintField(body, 1);
      if (action !== 0n) throw new EtcdError(12, 'this testbed etcd only lists alarms (AlarmRequest action GET)');
      e.requireQuorum(); // alarms are read through raft
      return new ProtoWriter().message(1, header(e, self)).finish(); // no alarms raised
    }
    case '/etcdserverpb.Cluster/MemberRemove': {
      const left = e.remove(uintField(body, 1));
      const w = new ProtoWriter().message(1, header(e, self));
      for (const m of left) w.message(2, memberMessage(m));
      return w.finish();
    }
    case '/etcdserverpb.Maintenance/MoveLeader':
      e.moveLeader(self.id, uintField(body, 1));
      return new ProtoWriter().message(1, header(e, self)).finish();
    default:
      throw new EtcdError(12, `unknown method ${method}`);
  }
}

function grpcError(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed || stream.headersSent) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': encodeURIComponent(message) }, { endStream: true });
}

function onStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ep: EtcdEndpoint): void {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_MESSAGE + 5) grpcError(stream, 8, 'message larger than 4 MiB');
    else chunks.push(c);
  });
  stream.on('error', () => undefined);
  stream.on('end', () => {
    if (stream.headersSent) return;
    const path = String(headers[':path'] ?? '');
    if (String(headers['content-type'] ?? '').split(';')[0] !== 'application/grpc' && !String(headers['content-type'] ?? '').startsWith('application/grpc+')) {
      stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    const all = Buffer.concat(chunks);
    if (all.length < 5 || all[0] !== 0 || all.readUInt32BE(1) !== all.length - 5) {
      grpcError(stream, 13, 'expected one uncompressed gRPC message');
      return;
    }
    let reply: Buffer;
    try {
      reply = etcdCall(ep, path, all.subarray(5));
    } catch (e) {
      if (e instanceof EtcdError) grpcError(stream, e.code, e.message);
      else grpcError(stream, 13, (e as Error).message);
      return;
    }
    const framed = Buffer.alloc(5 + reply.length);
    framed.writeUInt32BE(reply.length, 1);
    reply.copy(framed, 5);
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(framed);
  });
}

/**
 * Serve etcd on `conn` (the data stream of a port-forward). The server (one per
 * serving certificate) is kept by the caller; `serverFor` makes one.
 */
export function etcdServer(tls: EtcdTls, endpoint: () => EtcdEndpoint | undefined): Http2SecureServer {
  const ca = new X509Certificate(tls.caPem);
  const server = createSecureServer({ cert: tls.certPem, key: tls.keyPem, ALPNProtocols: ['h2'], requestCert: true, rejectUnauthorized: false, allowHTTP1: false });
  server.on('secureConnection', (sock: TLSSocket) => {
    // etcd with --client-cert-auth refuses a client without a certificate of its CA (in the handshake).
    const peer = sock.getPeerX509Certificate();
    if (!peer || !signedBy(peer, ca)) sock.destroy();
  });
  server.on('stream', (stream, headers) => {
    const ep = endpoint();
    if (!ep) grpcError(stream, 14, 'etcd is gone');
    else onStream(stream, headers, ep);
  });
  server.on('sessionError', () => undefined);
  server.on('tlsClientError', () => undefined);
  return server;
}

/** Hand a forwarded connection to `server` (it runs TLS and HTTP/2 on it). */
export function serveOn(server: Http2SecureServer, conn: Duplex): void {
  server.emit('connection', conn);
}
