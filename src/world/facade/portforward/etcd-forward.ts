/**
 * `pods/<name>/portforward` on a served workload cluster's address
 * (listeners.ts), with the etcd static pods' port 2379 behind it: how Cluster
 * API's KubeadmControlPlane reads and manages stacked etcd (v1.10:
 * controlplane/kubeadm/internal/etcd_client_generator.go dials
 * `kube-system/etcd-<node>` port 2379 through controlplane/kubeadm/internal/proxy/dial.go).
 * KCP's preflight checks (KCP-2 scale up/down and rollouts) need
 * EtcdMemberHealthy True on every control plane Machine
 * (workload_cluster_conditions.go updateManagedEtcdConditions: the member
 * named after the Machine's Node is listed and raises no alarm).
 *
 * The etcd CA is the cluster's `<cluster>-etcd` Secret (tls.crt, tls.key),
 * read from the management cluster by the caller's `etcdCa`; without it the
 * forward is refused on the error stream. KCP v1.10 does not verify the
 * serving certificate (controlplane/kubeadm/internal/cluster.go
 * GetWorkloadCluster: InsecureSkipVerify, the endpoint being the pod name);
 * it is signed by the etcd CA all the same, for clients that do (the Go test
 * client verifies it for `etcd-<node>`). Other pods or ports are refused the
 * way kubelet refuses a port nothing listens on. The kube-apiserver pods'
 * port (6443) is served by apiserver-forward.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { Socket } from 'node:net';
import { randomInt } from 'node:crypto';
import type { Node } from '../../../product/api/core.js';
import type { Pod } from '../../workload/pods.js';
import { SeededRng } from '../../../core/rng.js';
import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import { issueCertificateSync, type CertKeyPair } from '../../../core/pki/index.js';
import type { KubeObject } from '../../../core/kube/types.js';
import { WorkloadEtcd, type EtcdPersistence, type EtcdState } from '../etcd/members.js';
import { etcdServer, serveOn } from '../etcd/server.js';
import { acceptPortForward, checkUpgrade } from './portforward.js';
import { ApiServerEndpoints, type ClusterCaSource } from './apiserver-forward.js';

export type { ClusterCaSource };
export type EtcdCaSource = (namespace: string, cluster: string) => Promise<CertKeyPair | undefined>;

export interface PortForwardOptions {
  /** The workload cluster "ns/name" → its store (undefined: not served). */
  store: (key: string) => EmbeddedStore | undefined;
  etcdCa?: EtcdCaSource;
  /** The cluster CA (`<cluster>-ca`) that signs the kube-apiserver pods' serving certificates (apiserver-forward.ts); undefined: that forward is refused. */
  clusterCa?: ClusterCaSource;
  /** Answers HTTP on a kube-apiserver pod's forwarded port after the TLS handshake (the workload cluster's API). */
  route?: (key: string, req: IncomingMessage, res: ServerResponse) => void;
  /** Whether the upgrade request authenticates (the facade's token or client certificate). */
  authenticated: (req: IncomingMessage) => boolean;
}

const PATH = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/portforward$/;

function refuseHttp(socket: Socket, code: number, reason: string, message: string): void {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  const text = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed' }[code] ?? 'Error';
  socket.end(`HTTP/1.1 ${code} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

const imageVersion = (pod: Pod): string => {
  const image = pod.spec?.containers?.[0]?.image ?? '';
  const tag = /:(\d+\.\d+\.\d+)/.exec(image)?.[1];
  return tag ?? '3.5.15';
};

/** Where the served etcd keeps what it decided (removed members, leader): a ConfigMap of the workload cluster. */
export const ETCD_STATE_CONFIGMAP = { namespace: 'kube-system', name: 'testbed-etcd' };

type StateConfigMap = KubeObject & { data?: Record<string, string> };

/** EtcdPersistence in the workload cluster's own store: survives a facade started again on the same workload clusters. */
export function configMapPersistence(store: EmbeddedStore): EtcdPersistence {
  let chain: Promise<unknown> = Promise.resolve();
  const ref = { kind: 'ConfigMap', ...ETCD_STATE_CONFIGMAP };
  return {
    load: () => {
      const text = store.getSync<StateConfigMap>(ref)?.data?.state;
      if (!text) return undefined;
      try {
        return JSON.parse(text) as EtcdState;
      } catch {
        return undefined;
      }
    },
    save: (state) => {
      const data = { state: JSON.stringify(state) };
      chain = chain
        .then(async () => {
          const cur = store.getSync<StateConfigMap>(ref);
          if (!cur) await store.create<StateConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...ETCD_STATE_CONFIGMAP, labels: { 'app.kubernetes.io/managed-by': 'hcs-testbed' } }, data });
          else if (cur.data?.state !== data.state) await store.update<StateConfigMap>({ ...cur, data });
        })
        .catch(() => undefined); // the store is closing; the next decision writes the state again
    },
  };
}

export class PortForwards {
  private readonly etcds = new Map<string, WorkloadEtcd>();
  /** Per cluster, node and CA: the TLS + gRPC server of that member. */
  private readonly servers = new Map<string, Http2SecureServer>();

  private readonly apiservers: ApiServerEndpoints;

  constructor(private readonly opts: PortForwardOptions) {
    this.apiservers = new ApiServerEndpoints({ ...(opts.clusterCa ? { clusterCa: opts.clusterCa } : {}), ...(opts.route ? { route: opts.route } : {}) });
  }

  /** The etcd of workload cluster `key` (tests and the scenario checks read it). */
  etcd(key: string): WorkloadEtcd | undefined {
    const store = this.opts.store(key);
    if (!store) return undefined;
    let e = this.etcds.get(key);
    if (!e) {
      e = new WorkloadEtcd(key, () => store.listSync<Node>('Node'), configMapPersistence(store));
      this.etcds.set(key, e);
    }
    return e;
  }

  /** An upgrade request on workload cluster `key`'s address (path without the /clusters prefix). */
  upgrade(key: string, req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => undefined);
    const path = (req.url ?? '').split('?')[0]!;
    const m = PATH.exec(path);
    if (!m) return refuseHttp(socket, 404, 'NotFound', 'the server could not find the requested resource');
    if (req.method !== 'POST' && req.method !== 'GET') return refuseHttp(socket, 405, 'MethodNotAllowed', `${req.method} is not supported on pods/portforward`);
    if (!this.opts.authenticated(req)) return refuseHttp(socket, 401, 'Unauthorized', 'Unauthorized');
    const bad = checkUpgrade(req);
    if (bad) return refuseHttp(socket, 400, 'BadRequest', bad);
    const namespace = decodeURIComponent(m[1]!);
    const podName = decodeURIComponent(m[2]!);
    const store = this.opts.store(key);
    const pod = store?.listSync<Pod>('Pod', { namespace }).find((p) => p.metadata.name === podName);
    if (!store || !pod) return refuseHttp(socket, 404, 'NotFound', `pods "${podName}" not found`);
    const [ns, cluster] = key.split('/') as [string, string];
    acceptPortForward(socket, head, async (port, conn) => {
      const node = pod.spec?.nodeName ?? '';
      const refused = `error forwarding port ${port} to pod ${podName}, uid ${pod.metadata.uid ?? ''}: failed to connect to localhost:${port}: connection refused`;
      if (ApiServerEndpoints.isApiServerPod(namespace, pod)) return this.apiservers.connect(key, store, pod, port, conn, refused);
      if (namespace !== 'kube-system' || podName !== `etcd-${node}` || port !== 2379) return refused;
      const etcd = this.etcd(key)!;
      const member = etcd.memberOn(node);
      if (!member || !member.reachable) return refused;
      const ca = await this.opts.etcdCa?.(ns, cluster);
      if (!ca) return `${refused} (the testbed has no etcd CA: Secret ${ns}/${cluster}-etcd)`;
      const skey = `${key}/${node}/${ca.certPem}`;
      let server = this.servers.get(skey);
      if (!server) {
        // The member's serving certificate, as kubeadm's etcd/server (SANs: the node name, localhost, its IP).
        const ip = member.clientURLs[0]?.replace(/^https:\/\/|:\d+$/g, '');
        const rng = new SeededRng(randomInt(2 ** 31 - 1));
        const cert = issueCertificateSync(ca, { commonName: node, dnsNames: [node, `etcd-${node}`, 'localhost'], ips: ['127.0.0.1', ...(ip ? [ip] : [])], days: 365 }, rng, Date.now());
        server = etcdServer({ ...cert, caPem: ca.certPem }, () => ({ etcd, node, version: imageVersion(pod) }));
        this.servers.set(skey, server);
      }
      serveOn(server, conn);
      return undefined;
    });
  }
}
