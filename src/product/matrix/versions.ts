/**
 * Version consistency checks against the OS Support Matrix (KCP-3, KCP-4,
 * UPG-4). Pure functions: callers (the provider's workload controller, tests,
 * scenario checks) pass the objects in.
 *
 * KCP-3: spec.version, clusterConfiguration.dns.imageTag,
 * clusterConfiguration.etcd.local.imageTag and the image of
 * machineTemplate.infrastructureRef must come from one matrix row. Updating
 * only spec.version leaves CoreDNS / etcd on the old row.
 * KCP-4: a MachineDeployment has no dns/etcd tags; its workers take their
 * container images from the VM image of their HCSMachineTemplate, so the
 * template's image row must carry the MachineDeployment's version.
 */
import type { KubeadmControlPlane, MachineDeployment } from '../api/capi.js';
import type { HCSMachineTemplate } from '../api/hcs.js';
import type { MatrixRow, OsSupportMatrix } from './matrix.js';

export interface VersionProblem {
  rule: string;
  /** "KubeadmControlPlane ns/name" etc. */
  object: string;
  field: string;
  message: string;
}

/** What the workload cluster actually runs (the KCP controller's ConfigMap kube-system/testbed-control-plane). */
export interface DeployedControlPlane {
  kubernetesVersion?: string;
  dnsImageTag?: string;
  /** etcd members with their image tag and the Kubernetes version of their Machine. */
  etcdMembers?: { name: string; imageTag: string; version: string }[];
}

function normV(v: string | undefined): string | undefined {
  return v ? (v.startsWith('v') ? v : `v${v}`) : undefined;
}

function rowText(r: MatrixRow): string {
  return `ACP ${r.acpVersion}: image ${r.alaudaOSImage}, Kubernetes ${r.kubernetesVersion}, CoreDNS ${r.coredns}, etcd ${r.etcd}`;
}

/** KCP-3 on the KubeadmControlPlane spec (and its template's image, when given). */
export function checkControlPlaneSpec(kcp: KubeadmControlPlane, template: HCSMachineTemplate | undefined, matrix: OsSupportMatrix): VersionProblem[] {
  const obj = `KubeadmControlPlane ${kcp.metadata.namespace ?? 'default'}/${kcp.metadata.name}`;
  const out: VersionProblem[] = [];
  const version = normV(kcp.spec.version);
  const row = matrix.byKubernetesVersion(version);
  if (!row) {
    out.push({ rule: 'UPG-4', object: obj, field: 'spec.version', message: `spec.version ${kcp.spec.version} is not a Kubernetes version of the OS Support Matrix (known: ${matrix.rows.map((r) => r.kubernetesVersion).join(', ')})` });
    return out;
  }
  const cc = kcp.spec.kubeadmConfigSpec?.clusterConfiguration;
  const dns = cc?.dns?.imageTag;
  const etcd = cc?.etcd?.local?.imageTag;
  const hint = `update spec.version, dns.imageTag, etcd.local.imageTag and machineTemplate.infrastructureRef.name together from one matrix row (${rowText(row)})`;
  const tags = [
    { name: 'CoreDNS', tag: dns, column: 'coredns', field: 'spec.kubeadmConfigSpec.clusterConfiguration.dns.imageTag' },
    { name: 'etcd', tag: etcd, column: 'etcd', field: 'spec.kubeadmConfigSpec.clusterConfiguration.etcd.local.imageTag' },
  ] as const;
  for (const { name, tag, column, field } of tags) {
    if (!tag || tag === row[column]) continue;
    const from = matrix.rows.find((r) => r[column] === tag && r !== row);
    out.push({
      rule: 'KCP-3',
      object: obj,
      field,
      message: `${name} image tag ${tag}${from ? ` (row of ${from.kubernetesVersion})` : ''} does not match spec.version ${version}, which needs ${row[column]}; ${hint}`,
    });
  }
  if (template) {
    const img = template.spec.template.spec.imageName;
    const irow = matrix.byImage(img);
    if (!irow) {
      out.push({ rule: 'UPG-4', object: obj, field: 'spec.machineTemplate.infrastructureRef.name', message: `HCSMachineTemplate ${template.metadata.name} uses image ${img}, which is not in the OS Support Matrix; use ${row.alaudaOSImage} for ${version}` });
    } else if (irow.kubernetesVersion !== version) {
      out.push({
        rule: 'KCP-3',
        object: obj,
        field: 'spec.machineTemplate.infrastructureRef.name',
        message: `HCSMachineTemplate ${template.metadata.name} uses image ${img} (Kubernetes ${irow.kubernetesVersion}) but spec.version is ${version}, which needs image ${row.alaudaOSImage}; ${hint}`,
      });
    }
  }
  return out;
}

/** KCP-3 on what the control plane actually runs. */
export function checkDeployedControlPlane(kcpName: string, deployed: DeployedControlPlane, matrix: OsSupportMatrix): VersionProblem[] {
  const obj = `control plane ${kcpName} (workload cluster)`;
  const out: VersionProblem[] = [];
  const row = matrix.byKubernetesVersion(deployed.kubernetesVersion);
  if (row && deployed.dnsImageTag && deployed.dnsImageTag !== row.coredns) {
    out.push({ rule: 'KCP-3', object: obj, field: 'coredns', message: `CoreDNS runs ${deployed.dnsImageTag} next to Kubernetes ${deployed.kubernetesVersion}, which needs ${row.coredns}` });
  }
  for (const m of deployed.etcdMembers ?? []) {
    const r = matrix.byKubernetesVersion(m.version);
    if (r && m.imageTag && m.imageTag !== r.etcd) {
      out.push({ rule: 'KCP-3', object: obj, field: `etcd member ${m.name}`, message: `etcd member ${m.name} runs ${m.imageTag} on a ${m.version} control plane machine, which needs ${r.etcd}` });
    }
  }
  return out;
}

/** KCP-4: a worker's container images come from its VM template's image row. */
export function checkWorkerVersions(md: MachineDeployment, template: HCSMachineTemplate | undefined, matrix: OsSupportMatrix): VersionProblem[] {
  const obj = `MachineDeployment ${md.metadata.namespace ?? 'default'}/${md.metadata.name}`;
  if (!template) return [];
  const version = normV(md.spec.template.spec.version);
  const img = template.spec.template.spec.imageName;
  const irow = matrix.byImage(img);
  if (!irow) {
    const want = matrix.byKubernetesVersion(version);
    return [{ rule: 'UPG-4', object: obj, field: 'spec.template.spec.infrastructureRef.name', message: `HCSMachineTemplate ${template.metadata.name} uses image ${img}, which is not in the OS Support Matrix${want ? `; use ${want.alaudaOSImage} for ${version}` : ''}` }];
  }
  if (version && irow.kubernetesVersion !== version) {
    const want = matrix.byKubernetesVersion(version);
    return [
      {
        rule: 'KCP-4',
        object: obj,
        field: 'spec.template.spec.version',
        message: `workers inherit their container images from the VM template: HCSMachineTemplate ${template.metadata.name} has image ${img} (Kubernetes ${irow.kubernetesVersion}) but spec.template.spec.version is ${version}${want ? `; use image ${want.alaudaOSImage}` : ''} (the kubelet will not join, BOOT-4)`,
      },
    ];
  }
  return [];
}

/** The container images a worker built from `imageName` runs (KCP-4): those of its matrix row. */
export function workerImagesFor(imageName: string, matrix: OsSupportMatrix): { kubernetesVersion: string; images: string[] } | undefined {
  const r = matrix.byImage(imageName);
  if (!r) return undefined;
  return { kubernetesVersion: r.kubernetesVersion, images: [`kube-proxy:${r.kubernetesVersion}`] };
}
