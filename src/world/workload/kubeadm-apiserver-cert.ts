/**
 * What kubeadm puts into the kube-apiserver's serving certificate
 * (`/etc/kubernetes/pki/apiserver.crt`), for the testbed's workload clusters:
 * k8s.io/kubernetes v1.33 cmd/kubeadm/app/phases/certs/certlist.go
 * (KubeadmCertAPIServer: CN kube-apiserver, signed by the cluster CA, usage
 * serverAuth; GetConfig: NotBefore = kubeadm's start − CertificateBackdate
 * (5 min), NotAfter = start + ClusterConfiguration.certificateValidityPeriod,
 * 8760 h by default) and cmd/kubeadm/app/util/pkiutil/pki_helpers.go
 * (GetAPIServerAltNames: DNS the node name, kubernetes, kubernetes.default,
 * kubernetes.default.svc, kubernetes.default.svc.<dnsDomain>; IPs the first
 * address of the service subnet and the advertise address; then the
 * controlPlaneEndpoint host and apiServer.certSANs). kubeadm's start is taken
 * as the Node's creationTimestamp: the kubelet registers the Node during the
 * same `kubeadm init`/`join`. Used by the facade's served apiserver endpoint
 * (src/world/facade/portforward/apiserver-forward.ts) and by the model's KCP
 * (src/world/capi/kcp-certificates.ts), so both Cluster APIs see the same expiry.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { parse } from 'yaml';
import type { Node } from '../../product/api/core.js';
import { parseDuration } from '../../core/clock.js';
import type { KubeObject } from '../../core/kube/types.js';
import type { LeafRequest } from '../../core/pki/index.js';
import type { Pod } from './pods.js';

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

export interface ClusterConfiguration {
  controlPlaneEndpoint?: string;
  certificateValidityPeriod?: string;
  networking?: { serviceSubnet?: string; dnsDomain?: string };
  apiServer?: { certSANs?: string[] };
}

/** A Go duration as kubeadm's YAML carries it ("8760h0m0s"); undefined when it is not one (or not positive). */
export function parseGoDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  try {
    const ms = parseDuration(text);
    return ms > 0 ? ms : undefined;
  } catch {
    return undefined;
  }
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

/** The ClusterConfiguration of a `kube-system/kubeadm-config` ConfigMap ({} when absent or unreadable: kubeadm's defaults apply). */
export function kubeadmClusterConfiguration(cm: (KubeObject & { data?: Record<string, string> }) | undefined): ClusterConfiguration {
  try {
    const cc = parse(cm?.data?.ClusterConfiguration ?? '') as unknown;
    return typeof cc === 'object' && cc !== null ? (cc as ClusterConfiguration) : {};
  } catch {
    return {};
  }
}

/** The node's advertise address: the pod's kubeadm annotation, else the Node's InternalIP. */
export function advertisedEndpoint(pod: Pod | undefined, node: Node): { ip?: string; port: number } {
  const ann = pod?.metadata.annotations?.[ADVERTISE_ANNOTATION];
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

/**
 * The validity kubeadm gives `apiserver.crt` on `node`: issued at the Node's
 * creation (the testbed's moment of `kubeadm init`/`join`), NotBefore 5 min
 * earlier, NotAfter one certificateValidityPeriod later; undefined without a
 * creationTimestamp.
 */
export function apiServerCertificateValidity(node: Node, cc: ClusterConfiguration): { issuedAt: number; notBefore: number; notAfter: number; validityMs: number } | undefined {
  const issuedAt = Date.parse(node.metadata.creationTimestamp ?? '');
  if (!Number.isFinite(issuedAt)) return undefined;
  const validityMs = parseGoDuration(cc.certificateValidityPeriod) ?? KUBEADM_APISERVER.validityMs;
  return { issuedAt, notBefore: issuedAt - KUBEADM_APISERVER.backdateMs, notAfter: issuedAt + validityMs, validityMs };
}

/** What kubeadm would put into `apiserver.crt` on `node` (see the module comment). */
export function apiServerCertificatePlan(node: Node, pod: Pod | undefined, cc: ClusterConfiguration): ApiServerCertificatePlan | undefined {
  const v = apiServerCertificateValidity(node, cc);
  if (!v) return undefined;
  const { issuedAt, validityMs } = v;
  const name = node.metadata.name;
  const domain = cc.networking?.dnsDomain || KUBEADM_APISERVER.dnsDomain;
  const dns = [name, 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', `kubernetes.default.svc.${domain}`];
  const ips: string[] = [];
  const svc = firstServiceIp(cc.networking?.serviceSubnet || KUBEADM_APISERVER.serviceSubnet);
  if (svc) ips.push(svc);
  const adv = advertisedEndpoint(pod, node).ip;
  if (adv) ips.push(adv);
  const extra = [...(cc.controlPlaneEndpoint ? [cc.controlPlaneEndpoint.replace(/^\[?([^\]]*?)\]?(:\d+)?$/, '$1')] : []), ...(cc.apiServer?.certSANs ?? [])];
  for (const san of extra) {
    if (!san) continue;
    const list = isIPv4(san) || isIPv6(san) ? ips : dns;
    if (!list.includes(san)) list.push(san);
  }
  // src/core/pki counts validity from `now` in days and backdates NotBefore by backdateMs.
  const days = validityMs / 86_400_000;
  return {
    request: { commonName: KUBEADM_APISERVER.commonName, dnsNames: dns, ips, days, backdateMs: KUBEADM_APISERVER.backdateMs },
    issuedAt,
    notBefore: v.notBefore,
    notAfter: v.notAfter,
  };
}
