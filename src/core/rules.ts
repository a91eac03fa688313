/**
 * The behaviour catalogue: every rule of the two HCS procedure documents
 * (test/docs-verbatim/seeds/) with an ID (NET-1, DISK-3, OVN-4, ...) and its
 * text. Errors, tests, scenarios and reports cite these IDs; this file is the
 * one place they are defined. docs/rules.md is generated from it
 * (`hcs-testbed rules --markdown > docs/rules.md`; test/core/rules.test.ts
 * fails when the two differ).
 */
export interface SpecRule {
  id: string;
  area: string;
  text: string;
}

export const SPEC_RULES: readonly SpecRule[] = [
  { id: "NET-1", area: "NET", text: "Each `configs[].networks[]` entry selects a subnet by exactly one of `subnetName` or `subnetId` in new manifests; both set → reject." },
  { id: "NET-2", area: "NET", text: "Legacy field `subenetName` (sic) is accepted. If `subnetName` is also set, the two must be identical; otherwise reject." },
  { id: "NET-3", area: "NET", text: "No conflicting selector values among `subenetName`, `subnetName`, `subnetId` (e.g. a name and an id that resolve to different subnets) → reject." },
  { id: "NET-4", area: "NET", text: "A `subnetName` used by a worker must be listed in the parent `HCSCluster.spec.network.subnets` before the pool is created or scaled; otherwise the machine cannot be provisioned and the reason is reported." },
  { id: "NET-5", area: "NET", text: "On an existing Ready cluster, new subnets are appended to `HCSCluster.spec.network.subnets` as full objects (including the subnet ID); a name-only entry is rejected or reported, never silently used." },
  { id: "NET-6", area: "NET", text: "Several `networks[]` entries = several NICs, each one subnet selector plus one static IP. Per-NIC roles, default gateway choice, static routes, route metrics and per-NIC DNS are not supported: such fields are rejected." },
  { id: "NET-7", area: "NET", text: "Static IPs come from the pool entry; an IP outside the subnet CIDR or already used by another port → reject / report the conflict." },
  { id: "POOL-1", area: "POOL", text: "`HCSMachineConfigPool.spec.configs[]` holds one entry per machine: hostname, networks, optional persistentDisks." },
  { id: "POOL-2", area: "POOL", text: "A machine is created only when the pool has a free entry; with none, the HCSMachine waits and reports \"no free config pool entry\" (a documented cause of \"node cannot join\" / stuck provisioning)." },
  { id: "POOL-3", area: "POOL", text: "Scale-up procedure: first add entries to the pool, then raise `replicas`. Existing entries and their accepted persistentDisks stay as they are while editing." },
  { id: "POOL-4", area: "POOL", text: "An entry is bound to at most one live machine at a time; a replacement machine re-uses the entry (same hostname, same IPs) of the machine it replaces once that one is gone." },
  { id: "POOL-5", area: "POOL", text: "Pool status shows runtime state of every entry and of its persistent disks (`kubectl get hcsmachineconfigpool ... -o yaml`)." },
  { id: "DISK-1", area: "DISK", text: "`persistentDisks[]` entries need slot, size, type, mountPath, format (mountOptions optional); a missing field → reject." },
  { id: "DISK-2", area: "DISK", text: "Per hostname, slots are unique and contiguous from 0; otherwise reject." },
  { id: "DISK-3", area: "DISK", text: "Identity of a persistent disk is (hostname, slot). The provider creates or claims the EVS volume for that identity and re-attaches the same volume to every replacement machine with that hostname." },
  { id: "DISK-4", area: "DISK", text: "After the provider accepted an entry, slot, size, type, format and mountPath are immutable: a change → reject." },
  { id: "DISK-5", area: "DISK", text: "mountOptions may change; the change takes effect only after the machine is replaced." },
  { id: "DISK-6", area: "DISK", text: "Appending a new entry: the provider creates/claims the EVS volume but does not hot-attach it to a running ECS; it is formatted and mounted only on the next replacement (trigger with a rolling replacement, maxSurge 0)." },
  { id: "DISK-7", area: "DISK", text: "A persistent disk's mountPath must not also appear in the template's `dataVolumes[]` → reject." },
  { id: "DISK-8", area: "DISK", text: "Data written to a persistent disk survives replacement, upgrade and rollback; data on dataVolumes and the root volume does not." },
  { id: "DISK-9", area: "DISK", text: "A persistent disk is never attached to two servers at once, and is never deleted when a machine is deleted or replaced." },
  { id: "TPL-1", area: "TPL", text: "Spec: imageName, flavorName, availabilityZone, rootVolume{type,size}, configPoolRef, dataVolumes[]{size,type,mountPath,format}." },
  { id: "TPL-2", area: "TPL", text: "flavorName and availabilityZone are provider API values, not the names shown in the tenant UI; an unknown value → provisioning fails with a clear reason (and the fake cloud can list the valid values)." },
  { id: "TPL-3", area: "TPL", text: "dataVolumes are ephemeral: created with each ECS, deleted with it. Fields are required when dataVolumes is given." },
  { id: "TPL-4", area: "TPL", text: "Runtime identity fields `providerID` and `serverId` must be empty in a template → reject. The provider sets them on the HCSMachine: `providerID = hcs://<cluster-name>/<machine-name>`, `serverId` = ECS id." },
  { id: "TPL-5", area: "TPL", text: "Upgrades create a NEW template (copy, new metadata.name, drop server-generated metadata and status); templates are not edited in place." },
  { id: "TPL-6", area: "TPL", text: "The image named by imageName must exist in HCS when the template is used; a missing image → the upgrade fails with a clear reason." },
  { id: "BOOT-1", area: "BOOT", text: "KubeadmConfigTemplate carries files (kubelet configuration patch), postKubeadmCommands and joinConfiguration (patches directory, kubeletExtraArgs) exactly as in the documents." },
  { id: "BOOT-2", area: "BOOT", text: "When the HCS controller resolves worker cloud-init data it injects `/etc/kubernetes/pki/kubelet.crt` and `/etc/kubernetes/pki/kubelet.key` (a real key pair and a certificate for the node, signed by the cluster CA)." },
  { id: "BOOT-3", area: "BOOT", text: "The simulated guest only joins when the kubelet patch points at these files and they form a valid chain to the cluster CA." },
  { id: "BOOT-4", area: "BOOT", text: "A machine whose image Kubernetes version differs from the machine's `version` fails to join (documented \"node cannot join\" cause)." },
  { id: "MD-1", area: "MD", text: "Rolling updates follow Cluster API semantics for maxSurge and maxUnavailable (numbers and percentages, rounding, both-zero rule)." },
  { id: "MD-2", area: "MD", text: "With maxSurge 0 an old machine is deleted before its replacement is created, so the replacement can re-use the same pool entry and disks." },
  { id: "MD-3", area: "MD", text: "With pool-managed persistent disks and maxSurge > 0 the surge machine cannot take the old machine's entry/disks: the testbed shows what happens (waits for a free entry, or takes another entry and therefore other disks) and flags it." },
  { id: "MD-4", area: "MD", text: "Scale down: drain (nodeDrainTimeout), delete the ECS, delete the Machine (nodeDeletionTimeout); ephemeral volumes go, persistent disks stay." },
  { id: "MD-5", area: "MD", text: "Template change (infrastructureRef) or version change → rolling replacement of every machine." },
  { id: "KCP-1", area: "KCP", text: "KubeadmControlPlane with pool-managed persistent disks keeps `rolloutStrategy.rollingUpdate.maxSurge: 0`: remove first, then replace on the same hostname and disks." },
  { id: "KCP-2", area: "KCP", text: "Changing machineTemplate.infrastructureRef rolls the control plane." },
  { id: "KCP-3", area: "KCP", text: "A Kubernetes version upgrade updates, in one edit, spec.version, clusterConfiguration.dns.imageTag, clusterConfiguration.etcd.local.imageTag and machineTemplate.infrastructureRef.name to one OS Support Matrix row. Updating only spec.version leaves CoreDNS/etcd mismatched: the testbed detects and reports the mismatch." },
  { id: "KCP-4", area: "KCP", text: "Workers inherit container image versions from their VM template; a MachineDeployment has no dns/etcd tags." },
  { id: "KCP-5", area: "KCP", text: "If the new control plane never reached etcd quorum, KCP refuses to roll back (preflight checks block on unhealthy etcd) until quorum is restored by an operator action." },
  { id: "UPG-1", area: "UPG", text: "Order: management-side controllers first (ready), then the workload cluster distribution version, then control plane version, then workers." },
  { id: "UPG-2", area: "UPG", text: "Prerequisites are checked: control plane reachable, all nodes Ready, target image present in HCS with the name from the matrix row." },
  { id: "UPG-3", area: "UPG", text: "Skipping Kubernetes minor versions needs the intermediate images; a multi-minor jump in one step is refused by version-skew rules." },
  { id: "UPG-4", area: "UPG", text: "The OS Support Matrix (ACP version → Alauda OS image, Kubernetes, CoreDNS, etcd, Kube-OVN chart) is data the testbed loads and uses to check manifests." },
  { id: "OVN-1", area: "OVN", text: "The provider creates the `cni-kube-ovn` AppRelease (namespace cpaas-system of the workload cluster, releaseName `cpaas-kube-ovn`, chart name `acp/chart-cpaas-kube-ovn`) when the cluster is first built." },
  { id: "OVN-2", area: "OVN", text: "Afterwards the provider reconciles only `spec.values` (cluster name, CIDR, registry, control plane node list) and never writes `spec.source.charts[0].targetRevision` of an existing AppRelease." },
  { id: "OVN-3", area: "OVN", text: "Changing the Cluster annotation `cpaas.io/kube-ovn-version` alone does not move the chart; the annotation does not follow spec.version." },
  { id: "OVN-4", area: "OVN", text: "Patching targetRevision on the workload cluster's AppRelease drives the upgrade: phases Upgrading (Sync Unknown/Syncing, installedRevision old) → HealthChecking (Sync True/Synced, installedRevision new) → Success (Validate, Sync, Health all True), about a minute on a small cluster." },
  { id: "OVN-5", area: "OVN", text: "Also modelled: Downloading, Installing, Syncing (transient) and DownloadFailed, DeployFailed, NotReady (need intervention; conditions carry messages shown by describe)." },
  { id: "OVN-6", area: "OVN", text: "\"Done\" only when phase is Success AND installedRevision equals the target; a check that trusts installedRevision alone is flagged." },
  { id: "RB-1", area: "RB", text: "Rolling back = restoring the previous template reference and version fields; Cluster API treats it as new drift and replaces machines one by one." },
  { id: "RB-2", area: "RB", text: "Old VMs are gone; rollback builds new machines from the old template." },
  { id: "RB-3", area: "RB", text: "The old HCSMachineTemplate must still exist; if it was deleted the rollback stalls and says so until it is re-created." },
  { id: "RB-4", area: "RB", text: "Only pool-managed persistent disks keep node-local state across the rollback (DISK-8)." },
  { id: "RB-5", area: "RB", text: "Control plane rollback restores infrastructureRef, version, dns and etcd image tags; workers restore infrastructureRef and version; Kube-OVN is rolled back with the same two steps as the upgrade." },
  { id: "OPS-1", area: "OPS", text: "The documented kubectl commands work against the testbed as written (get/patch/annotate/apply/edit/describe/logs on the resources above)." },
  { id: "OPS-2", area: "OPS", text: "Status and events explain every stuck state the documents list: image/version mismatch, network, no free pool entry, HCS capacity, credentials/permissions, errors in controller logs." },
  { id: "OPS-3", area: "OPS", text: "`kubectl logs deployment/hcs-controller-manager` equivalent: the provider's structured log is available per run." },
  { id: "HCS-1", area: "HCS", text: "ECS: create (async job), show, list, delete; states BUILD → ACTIVE, SHUTOFF, ERROR, DELETED; flavors and availability zones; user_data." },
  { id: "HCS-2", area: "HCS", text: "EVS: create/show/list/delete volumes; attach/detach with states (available, attaching, in-use, detaching, deleting, error); no multi-attach." },
  { id: "HCS-3", area: "HCS", text: "VPC: subnets and ports/fixed IPs; IP conflicts." },
  { id: "HCS-4", area: "HCS", text: "IMS: images by name (with the Kubernetes version they carry)." },
  { id: "HCS-5", area: "HCS", text: "Auth: requests are authenticated (AK/SK signing or token) and scoped to a project; wrong credentials → 401/403 with the cloud's error shape." },
  { id: "HCS-6", area: "HCS", text: "Faults can be injected per operation (errors, latency, capacity, quota, stuck detach) to reproduce bugs; state can be reset, dumped and restored; state persists across restarts of the fake cloud." },
];

export const SPEC_RULE_IDS: ReadonlySet<string> = new Set(SPEC_RULES.map((r) => r.id));

const AREA_TITLES: Record<string, string> = {
  NET: 'Network and subnets (NET)',
  POOL: 'Machine config pool (POOL)',
  DISK: 'Persistent disks (DISK)',
  TPL: 'Machine template (TPL)',
  BOOT: 'Bootstrap and kubelet certificates (BOOT)',
  MD: 'MachineDeployment (MD)',
  KCP: 'Control plane (KCP)',
  UPG: 'Upgrade order and prerequisites (UPG)',
  OVN: 'Kube-OVN (OVN)',
  RB: 'Rollback (RB)',
  OPS: 'Operations (OPS)',
  HCS: 'The fake cloud (HCS)',
};

/** The catalogue as Markdown: docs/rules.md. */
export function rulesMarkdown(): string {
  const out: string[] = [
    '# The rule catalogue',
    '',
    'Every rule of the two HCS procedure documents (copies in `test/docs-verbatim/seeds/`), with the ID that',
    'errors, tests, scenarios and reports cite. Generated from `src/core/rules.ts` by',
    '`hcs-testbed rules --markdown > docs/rules.md`; do not edit by hand (test/core/rules.test.ts compares).',
    '',
  ];
  let area = '';
  for (const r of SPEC_RULES) {
    if (r.area !== area) {
      area = r.area;
      out.push(`## ${AREA_TITLES[area] ?? area}`, '', '| ID | rule |', '| --- | --- |');
    }
    out.push(`| <a id="${r.id.toLowerCase()}"></a>${r.id} | ${r.text.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
    const next = SPEC_RULES[SPEC_RULES.indexOf(r) + 1];
    if (!next || next.area !== area) out.push('');
  }
  return out.join('\n');
}
