/**
 * KubeadmControlPlane's certificate expiry, modelled on cluster-api v1.10
 * controlplane/kubeadm/internal/controllers/controller.go
 * reconcileCertificateExpiries (read, not copied): the last step of a
 * reconcile that found the control plane steady (no rollout, no scale up or
 * down). For every control plane Machine that is not being deleted, has a
 * Node, and whose KubeadmConfig has no `machine.cluster.x-k8s.io/certificates-expiry`
 * annotation yet, KCP reads the kube-apiserver serving certificate's
 * NotAfter on that Node (workload_cluster.go GetAPIServerCertificateExpiry)
 * and writes it, RFC 3339, into the annotation; the Machine controller then
 * copies it to Machine.status.certificatesExpiryDate (machine.ts). The
 * model computes the NotAfter kubeadm gave that certificate
 * (src/world/workload/kubeadm-apiserver-cert.ts: the Node's creation +
 * certificateValidityPeriod, 8760 h), the same value the facade's served
 * certificate carries for the real KCP (src/world/facade/portforward/apiserver-forward.ts).
 * As upstream, a Machine whose apiserver cannot be reached (here: its Node
 * is gone) ends the step; the next reconcile retries. No Event and no
 * testbed event: upstream only logs it (V(2) "Setting certificate expiry").
 * Not modelled: spec.rolloutBefore.certificatesExpiryDays.
 */
import { ANNOTATION_CERTIFICATES_EXPIRY, type KubeadmConfig, type Machine } from '../../product/api/capi.js';
import type { Node } from '../../product/api/core.js';
import { rfc3339 } from '../../core/clock.js';
import { getShared, type KubeClient } from '../../core/kube/client.js';
import { isDeleting, type KubeObject } from '../../core/kube/types.js';
import { apiServerCertificateValidity, kubeadmClusterConfiguration, type ClusterConfiguration } from '../workload/kubeadm-apiserver-cert.js';

/** Annotate the KubeadmConfigs of `machines` that have no certificate expiry yet (see the module comment). */
export async function reconcileCertificateExpiries(mgmt: KubeClient, wl: KubeClient, machines: readonly Machine[]): Promise<void> {
  let cc: ClusterConfiguration | undefined;
  for (const m of machines) {
    const ref = m.spec.bootstrap.configRef;
    if (isDeleting(m) || !m.status?.nodeRef || !ref || ref.kind !== 'KubeadmConfig') continue;
    const cfgRef = { kind: 'KubeadmConfig', namespace: ref.namespace ?? m.metadata.namespace ?? 'default', name: ref.name };
    const cfg = await getShared<KubeadmConfig>(mgmt, cfgRef);
    if (!cfg || cfg.metadata.annotations?.[ANNOTATION_CERTIFICATES_EXPIRY] !== undefined) continue;
    const node = await getShared<Node>(wl, { kind: 'Node', name: m.status.nodeRef.name });
    if (!node) return;
    cc ??= kubeadmClusterConfiguration(await getShared<KubeObject & { data?: Record<string, string> }>(wl, { kind: 'ConfigMap', namespace: 'kube-system', name: 'kubeadm-config' }));
    const v = apiServerCertificateValidity(node, cc);
    if (!v) return;
    await mgmt.patch(cfgRef, 'merge', { metadata: { annotations: { [ANNOTATION_CERTIFICATES_EXPIRY]: rfc3339(v.notAfter) } } });
  }
}
