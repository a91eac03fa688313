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
 * kubeadm join) gets a new certificate. What goes into it is
 * src/world/workload/kubeadm-apiserver-cert.ts (shared with the model's KCP, which
 * writes the same expiry). Deviation: the key is ECDSA P-256
 * (src/core/pki), where kubeadm v1beta4 defaults to RSA-2048; the extended key
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
import type { Duplex } from 'node:stream';
import { randomInt } from 'node:crypto';
import type { Node } from '../../../product/api/core.js';
import { SeededRng } from '../../../core/rng.js';
import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import { issueCertificateSync, type CertKeyPair } from '../../../core/pki/index.js';
import { advertisedEndpoint, apiServerCertificatePlan, kubeadmClusterConfiguration } from '../../workload/kubeadm-apiserver-cert.js';
import type { Pod } from '../../workload/pods.js';

export type ClusterCaSource = (namespace: string, cluster: string) => Promise<CertKeyPair | undefined>;

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
    if (port !== advertisedEndpoint(pod, node).port) return refused;
    const [ns, cluster] = key.split('/') as [string, string];
    const ca = await this.opts.clusterCa?.(ns, cluster);
    if (!ca) return `${refused} (the testbed has no cluster CA: Secret ${ns}/${cluster}-ca)`;
    const plan = apiServerCertificatePlan(node, pod, kubeadmClusterConfiguration(store.getSync({ kind: 'ConfigMap', namespace: 'kube-system', name: 'kubeadm-config' })));
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
}
