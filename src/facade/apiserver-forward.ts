/**
 * The kube-apiserver static pods' serving port behind
 * `pods/kube-apiserver-<node>/portforward` (portforward.ts, etcd-forward.ts):
 * how Cluster API's KubeadmControlPlane v1.10 reads the apiserver
 * certificate's expiry. KCP's reconcileCertificateExpiries
 * (controlplane/kubeadm/internal/controllers/controller.go) looks, for every
 * control plane Machine that is not being deleted, has a Node and whose
 * KubeadmConfig has no `machine.cluster.x-k8s.io/certificates-expiry`
 * annotation yet, at the apiserver of that Node: GetAPIServerCertificateExpiry
 * (controlplane/kubeadm/internal/workload_cluster.go) dials
 * `kube-system/kube-apiserver-<node>` on the apiserver's bind port (the
 * KubeadmConfig's localAPIEndpoint.bindPort, default 6443) through the SPDY
 * port-forward (controlplane/kubeadm/internal/proxy/dial.go), runs a TLS
 * handshake without verifying the peer, takes the NotAfter of the peer
 * certificate with CN `kube-apiserver` and writes it, RFC 3339, into that
 * annotation (the Machine controller then copies it to
 * Machine.status.certificatesExpiryDate,
 * internal/controllers/machine/machine_controller_phases.go). An error ends
 * that reconcile ("failed to reconcile certificate expiry for Machine/…").
 *
 * The certificate served is shaped as kubeadm issues `apiserver.crt`
 * (k8s.io/kubernetes v1.33 cmd/kubeadm/app/phases/certs/certlist.go
 * KubeadmCertAPIServer, cmd/kubeadm/app/util/pkiutil/pki_helpers.go
 * GetAPIServerAltNames and NewSignedCert): CN kube-apiserver, signed by the
 * cluster CA (Cluster API's `<cluster>-ca` Secret, read from the management
 * cluster by the caller's `clusterCa`; without it the forward is refused on
 * the error stream); DNS SANs the node name, kubernetes, kubernetes.default,
 * kubernetes.default.svc, kubernetes.default.svc.<dnsDomain>; IP SANs the
 * first address of the service subnet and the node's advertise address;
 * then the controlPlaneEndpoint host and apiServer.certSANs of the
 * ClusterConfiguration (the workload cluster's `kube-system/kubeadm-config`,
 * kubeadm's defaults when absent). Validity: kubeadm issues it when it runs
 * (`kubeadm init` / `kubeadm join`), NotBefore 5 min before
 * (CertificateBackdate), NotAfter one certificateValidityPeriod later
 * (8760 h by default). The testbed takes the Node's creationTimestamp as
 * that moment (the kubelet registers the Node during the same kubeadm run),
 * so the expiry is a function of the scenario: the Node's creation + 1 year.
 * A re-created Node (a replacement Machine with the same hostname: a new
 * kubeadm join) gets a new certificate. Deviation: the key is ECDSA P-256
 * (src/pki), where kubeadm v1beta4 defaults to RSA-2048; the extended key
 * usages are serverAuth and clientAuth (kubeadm: serverAuth).
 *
 * After the handshake the endpoint answers HTTP as the apiserver would: the
 * workload cluster's API, the same handler as on the cluster's address
 * (listeners.ts), authenticated the same way (the facade's bearer token, or
 * a client certificate of the facade's CA; the request for one is optional,
 * as kube-apiserver's). KCP itself closes the connection after reading the
 * certificate. Only the pod `kube-apiserver-<node>` of a Node that exists,
 * on that Node, and the port the pod's advertise-address annotation names
 * (6443) are served; other pods and ports are refused as today.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { isIPv4, isIPv6 } from 'node:net';
import type { Duplex } from 'node:stream';
import { randomInt } from 'node:crypto';
import { parse } from 'yaml';
import type { Node } from '../api/core.js';
import { SeededRng } from '../core/rng.js';
import type { EmbeddedStore } from '../kube/embedded-store.js';
import type { KubeObject } from '../kube/types.js';
import { issueCertificateSync, type CertKeyPair, type LeafRequest } from '../pki/index.js';
import type { Pod } from '../workload/pods.js';

export type ClusterCaSource = (namespace: string, cluster: string) => Promise<CertKeyPair | undefined>;

/** kubeadm's constants (cmd/kubeadm/app/constants/constants.go). */
export const KUBEADM_APISERVER = {
  commonName: 'kube-apiserver',
  bindPort: 6443,
  backdateMs: 5 * 60_000,
  validityMs: 8760 * 3_600_000,
  serviceSubnet: '10.96.0.0/12',
  dnsDomain: 'cluster.local',
} as const;

/** The annotation kubeadm puts on the kube-apiserver static pod (its advertise address and bind port). */
const ADVERTISE_ANNOTATION = 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint';

interface ClusterConfiguration {
  controlPlaneEndpoint?: string;
  certificateValidityPeriod?: string;
  networking?: { serviceSubnet?: string; dnsDomain?: string };
  apiServer?: { certSANs?: string[] };
}

/** A Go duration as kubeadm's YAML carries it ("8760h0m0s"); undefined when it is not one. */
export function parseGoDuration(text: string | undefined): number | undefined {
  if (!text || !/^(\d+(\.\d+)?(h|m|s|ms))+$/.test(text)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let ms = 0;
  for (const [, n, u] of text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) ms += Number(n) * unit[u!]!;
  return ms;
}

/** The first address of a CIDR (kubeadm GetAPIServerVirtualIP: the `kubernetes` Service's ClusterIP); the first CIDR of a dual-stack list. */
export function firstServiceIp(subnets: string): string | undefined {
  const [addr, bitsText] = (subnets.split(',')[0] ?? '').trim().split('/');
  const bits = Number(bitsText);
  if (!addr || !Number.isInteger(bits)) return undefined;
  if (isIPv4(addr) && bits >= 0 && bits <= 31) {
    const n = addr.split('.').reduce((a, o) => a * 256 + Number(o), 0);
    const net = bits === 0 ? 0 : Math.floor(n / 2 ** (32 - bits)) * 2 ** (32 - bits);
    const ip = net + 1;
    return [24, 16, 8, 0].map((s) => Math.floor(ip / 2 ** s) % 256).join('.');
  }
  if (isIPv6(addr) && bits >= 0 && bits <= 127) {
    const halves = addr.split('::');
    const words = (h: string | undefined): number[] => (h ? h.split(':').map((w) => parseInt(w, 16)) : []);
    const head = words(halves[0]);
    const tail = words(halves[1]);
    const all = halves.length === 2 ? [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail] : head;
    let v = all.reduce((a, w) => (a << 16n) | BigInt(w), 0n);
    v = ((v >> BigInt(128 - bits)) << BigInt(128 - bits)) + 1n;
    const out: string[] = [];
    for (let i = 7; i >= 0; i--) out.push(((v >> BigInt(i * 16)) & 0xffffn).toString(16));
    return out.join(':'); // uncompressed: the SAN carries the 16 octets either way
  }
  return undefined;
}

function clusterConfiguration(store: EmbeddedStore): ClusterConfiguration {
  const cm = store.getSync<KubeObject & { data?: Record<string, string> }>({ kind: 'ConfigMap', namespace: 'kube-system', name: 'kubeadm-config' });
  try {
    const cc = parse(cm?.data?.ClusterConfiguration ?? '') as unknown;
    return typeof cc === 'object' && cc !== null ? (cc as ClusterConfiguration) : {};
  } catch {
    return {};
  }
}

/** The node's advertise address: the pod's kubeadm annotation, else the Node's InternalIP. */
function advertise(pod: Pod, node: Node): { ip?: string; port: number } {
  const ann = pod.metadata.annotations?.[ADVERTISE_ANNOTATION];
  const m = ann ? /^\[?([^\]]+?)\]?:(\d+)$/.exec(ann) : null;
  const ip = m?.[1] ?? node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  return { ...(ip ? { ip } : {}), port: m ? Number(m[2]) : KUBEADM_APISERVER.bindPort };
}

export interface ApiServerCertificatePlan {
  request: LeafRequest;
  /** When kubeadm issued it (the Node's creation), ms. */
  issuedAt: number;
  notBefore: number;
  notAfter: number;
}

/** What kubeadm would put into `apiserver.crt` on `node` (see the module comment). */
export function apiServerCertificatePlan(node: Node, pod: Pod, cc: ClusterConfiguration): ApiServerCertificatePlan | undefined {
  const issuedAt = Date.parse(node.metadata.creationTimestamp ?? '');
  if (!Number.isFinite(issuedAt)) return undefined;
  const name = node.metadata.name;
  const domain = cc.networking?.dnsDomain || KUBEADM_APISERVER.dnsDomain;
  const dns = [name, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${domain}`];
  const ips: string[] = [];
  const svc = firstServiceIp(cc.networking?.serviceSubnet || KUBEADM_APISERVER.serviceSubnet);
  if (svc) ips.push(svc);
  const adv = advertise(pod, node).ip;
  if (adv) ips.push(adv);
  const extra = [...(cc.controlPlaneEndpoint ? [cc.controlPlaneEndpoint.replace(/^\[?([^\]]*?)\]?(:\d+)?$/, '$1')] : []), ...(cc.apiServer?.certSANs ?? [])];
  for (const san of extra) {
    if (!san) continue;
    const list = isIPv4(san) || isIPv6(san) ? ips : dns;
    if (!list.includes(san)) list.push(san);
  }
  const validityMs = parseGoDuration(cc.certificateValidityPeriod) ?? KUBEADM_APISERVER.validityMs;
  // src/pki counts validity from `now` in days and backdates NotBefore by backdateMs.
  const days = validityMs / 86_400_000;
  return {
    request: { commonName: KUBEADM_APISERVER.commonName, dnsNames: dns, ips, days, backdateMs: KUBEADM_APISERVER.backdateMs },
    issuedAt,
    notBefore: issuedAt - KUBEADM_APISERVER.backdateMs,
    notAfter: issuedAt + validityMs,
  };
}

export interface ApiServerForwardOptions {
  clusterCa?: ClusterCaSource;
  /** Answers an HTTP request to workload cluster `key` (the handler of its own address). */
  route?: (key: string, req: IncomingMessage, res: ServerResponse) => void;
}

/** The apiserver endpoints of the served workload clusters, one TLS server per serving certificate. */
export class ApiServerEndpoints {
  private readonly servers = new Map<string, Server>();

  constructor(private readonly opts: ApiServerForwardOptions) {}

  /** Whether `pod` is the kube-apiserver static pod of its Node (the only pods this endpoint serves). */
  static isApiServerPod(namespace: string, pod: Pod): boolean {
    const node = pod.spec?.nodeName;
    return namespace === 'kube-system' && !!node && pod.metadata.name === `kube-apiserver-${node}`;
  }

  /**
   * Serve the forwarded connection `conn` to `port` of the kube-apiserver pod
   * `pod` of workload cluster `key`; returns why not (written to the error
   * stream by portforward.ts, prefixed by the kubelet-style `refused`).
   */
  async connect(key: string, store: EmbeddedStore, pod: Pod, port: number, conn: Duplex, refused: string): Promise<string | undefined> {
    const nodeName = pod.spec.nodeName ?? '';
    const node = store.getSync<Node>({ kind: 'Node', name: nodeName });
    if (!node) return refused;
    if (port !== advertise(pod, node).port) return refused;
    const [ns, cluster] = key.split('/') as [string, string];
    const ca = await this.opts.clusterCa?.(ns, cluster);
    if (!ca) return `${refused} (the testbed has no cluster CA: Secret ${ns}/${cluster}-ca)`;
    const plan = apiServerCertificatePlan(node, pod, clusterConfiguration(store));
    if (!plan) return refused;
    const skey = JSON.stringify([key, nodeName, node.metadata.uid ?? '', plan.request, plan.issuedAt, ca.certPem]);
    let server = this.servers.get(skey);
    if (!server) {
      // Serial and key are random, as kubeadm's; the validity comes from the plan (the Node's creation), not the wall clock.
      const cert = issueCertificateSync(ca, plan.request, new SeededRng(randomInt(2 ** 31 - 1)), plan.issuedAt);
      const route = this.opts.route;
      server = createServer({ cert: cert.certPem, key: cert.keyPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
        if (route) route(key, req, res);
        else res.writeHead(503).end();
      });
      server.on('tlsClientError', () => undefined);
      server.on('clientError', (_e, sock) => sock.destroy());
      this.servers.set(skey, server);
    }
    server.emit('connection', conn);
    return undefined;
  }

  close(): void {
    for (const s of this.servers.values()) s.close(() => undefined);
    this.servers.clear();
  }
}
