/**
 * A minimal SPDY/3.1 port-forward client for app-level tests (the real clients are
 * client-go's, in test/facade/etcd-go): upgrades `pods/<pod>/portforward` on a served
 * workload cluster, opens the error stream (closed at once, as KCP's
 * controlplane/kubeadm/internal/proxy/dial.go does) and the data stream for `port`, then
 * runs a TLS handshake without verification over the data stream and returns the peer
 * certificate, or what the error stream said.
 */
import { request } from 'node:https';
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import type { Facade } from '../../src/world/facade/index.js';
import { FLAG_FIN, FrameReader, FrameWriter } from '../../src/world/facade/portforward/spdy-frames.js';

export interface ForwardResult {
  /** The HTTP status when the upgrade was refused. */
  status?: number;
  /** The error stream's message when the port was refused. */
  refused?: string;
  /** The peer certificate of the TLS handshake (PEM). */
  certificatePem?: string;
}

export function forward(base: string, facade: Facade, pod: string, port: number): Promise<ForwardResult> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/api/v1/namespaces/kube-system/pods/${pod}/portforward`, {
      method: 'POST',
      ca: facade.caPem,
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'portforward.k8s.io', ...facade.authHeaders() },
    });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on('error', reject);
    req.on('upgrade', (_res, socket: Socket, head: Buffer) => {
      const w = new FrameWriter();
      const r = new FrameReader();
      let errorText = '';
      let errorDone = false;
      const data = new Duplex({
        read() {},
        write(chunk: Buffer, _enc, cb) {
          for (const b of w.data(3, chunk)) socket.write(b);
          cb();
        },
        final(cb) {
          for (const b of w.data(3, Buffer.alloc(0), true)) socket.write(b);
          cb();
        },
      });
      const onBytes = (chunk: Buffer): void => {
        for (const f of r.push(chunk)) {
          if (f.kind === 'data' && f.streamId === 1) {
            errorText += f.data.toString('utf8');
            if (f.flags & FLAG_FIN) errorDone = true;
          } else if (f.kind === 'data' && f.streamId === 3) {
            if (f.data.length) data.push(f.data);
            if (f.flags & FLAG_FIN) data.push(null);
          } else if (f.kind === 'rst_stream' && f.streamId === 3) data.push(null);
        }
      };
      socket.on('data', onBytes);
      socket.on('error', () => undefined);
      if (head.length) onBytes(head);
      const headers = (type: string): Record<string, string[]> => ({ streamtype: [type], port: [String(port)], requestid: ['0'] });
      socket.write(w.synStream(1, headers('error'), FLAG_FIN));
      socket.write(w.synStream(3, headers('data')));
      const tls = tlsConnect({ socket: data as unknown as Socket, rejectUnauthorized: false });
      const finish = (out: ForwardResult): void => {
        tls.destroy();
        socket.destroy();
        resolve(out);
      };
      tls.once('secureConnect', () => finish({ certificatePem: tls.getPeerX509Certificate()!.toString() }));
      tls.once('error', () => {
        // The server writes the error stream before it ends the data stream; wait for its FIN (bounded by the frames already read).
        const settle = (): void => (errorDone || socket.destroyed ? finish({ refused: errorText }) : void setImmediate(settle));
        settle();
      });
    });
    req.end();
  });
}
