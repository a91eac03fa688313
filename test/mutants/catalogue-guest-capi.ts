/**
 * Mutants of the guest (src/world/guest: what the node image does at boot) and of
 * the Cluster API model (src/world/capi): one realistic slip each. Same rules as
 * catalogue-provider.ts.
 */
import type { Mutant } from './types.js';

const G = 'src/world/guest/index.ts';
const KCP = 'src/world/capi/kcp.ts';
const FD = 'src/world/capi/failure-domains.ts';
const RP = 'src/world/capi/rollout-planner.ts';
const DP = 'src/world/capi/delete-policy.ts';
const MACH = 'src/world/capi/machine.ts';
const MS = 'src/world/capi/machineset.ts';

export const guestMutants: Mutant[] = [
  {
    id: 'guest/format-inverted-overwrite',
    part: 'guest',
    bug: 'the image\'s disk setup reads fs_setup\'s overwrite flag inverted: a disk that already carries a filesystem is formatted',
    rules: ['DISK-8'],
    patches: [{ file: G, from: 'if (!vol.fs.fsType || f.overwrite) {', to: 'if (!vol.fs.fsType || !f.overwrite) {' }],
    scenario: 'scenarios/worker-infra-upgrade.yaml',
  },
  {
    id: 'guest/no-wait-for-nofail-disks',
    part: 'guest',
    bug: 'the image does not wait for a persistent disk whose mount says nofail: whether the disk is there at boot is a race',
    rules: ['DISK-3', 'DISK-8'],
    patches: [{ file: G, from: "if (!resolve(m.device) && (m.device.startsWith('/dev/disk/by-id/') || !m.options.includes('nofail'))) missing.push", to: "if (!resolve(m.device) && !m.options.includes('nofail')) missing.push" }],
    scenario: 'scenarios/worker-infra-upgrade.yaml',
  },
  {
    id: 'guest/boot-race-short-disk-wait',
    part: 'guest',
    bug: 'the image gives up waiting for its persistent disks after 20 s instead of 10 min: slow attaches fail the boot',
    rules: ['DISK-3'],
    patches: [{ file: G, from: 'const limit = this.opts.diskWaitTimeoutMs ?? 600_000;', to: 'const limit = this.opts.diskWaitTimeoutMs ?? 20_000;' }],
    scenario: 'scenarios/cloud-faults.yaml',
  },
  {
    id: 'guest/hostname-from-server-name',
    part: 'guest',
    bug: 'the image names the node after the server (the HCSMachine name) and ignores cloud-init\'s hostname',
    rules: ['POOL-4', 'DISK-8'],
    patches: [
      { file: G, from: 'const hostname = metadata[META_HOSTNAME] ?? name;', to: 'const hostname = name;' },
      { file: G, from: "return this.fail(st, `cloud-init: ${errorMessage(e)}`, ['BOOT-2']);\n    }\n    if (cc.hostname && cc.hostname !== st.hostname) {", to: "return this.fail(st, `cloud-init: ${errorMessage(e)}`, ['BOOT-2']);\n    }\n    if (false) {" },
    ],
    scenario: 'scenarios/worker-infra-upgrade.yaml',
  },
  {
    id: 'guest/join-ignores-image-version',
    part: 'guest',
    bug: 'kubeadm join on the image does not compare the image\'s Kubernetes version with the machine\'s (BOOT-4)',
    rules: ['BOOT-4'],
    patches: [{ file: G, from: 'if (want && have && stripV(want) !== stripV(have)) {', to: 'if (want && have && stripV(want) !== stripV(have) && false) {' }],
    scenario: 'scenarios/worker-k8s-upgrade.yaml',
  },
  {
    id: 'guest/mount-options-ignored',
    part: 'guest',
    bug: 'the image mounts every disk with "defaults", ignoring the options in cloud-init\'s mounts',
    rules: ['DISK-5'],
    patches: [{ file: G, from: "this.hv.format(r.volumeId, m.fsType ?? ROOT_FS, '');\n      mounts.push({ mountPath: norm(m.mountPath), volumeId: r.volumeId, persistent: r.persistent, options: [...m.options] });", to: "this.hv.format(r.volumeId, m.fsType ?? ROOT_FS, '');\n      mounts.push({ mountPath: norm(m.mountPath), volumeId: r.volumeId, persistent: r.persistent, options: ['defaults'] });" }],
    scenario: 'scenarios/persistent-disk-edits.yaml',
  },
  {
    id: 'guest/node-without-ips',
    part: 'guest',
    bug: 'the kubelet registers its Node without InternalIP addresses (node-ip not passed)',
    rules: ['NET-7'],
    patches: [{ file: G, from: "const addresses = [...ips.map((a) => ({ type: 'InternalIP', address: a })), { type: 'Hostname', address: st.hostname }];", to: "const addresses = [{ type: 'Hostname', address: st.hostname }];" }],
    scenario: 'scenarios/network.yaml',
  },
];

export const capiMutants: Mutant[] = [
  {
    id: 'capi/kcp-delete-newest',
    part: 'capi',
    bug: 'KCP scale-down removes the newest control-plane machine instead of the oldest',
    rules: ['KCP-1'],
    patches: [{ file: KCP, from: 'return [...ms].sort((a, b) => (a.created !== b.created ? a.created - b.created :', to: 'return [...ms].sort((a, b) => (a.created !== b.created ? b.created - a.created :' }],
    scenario: 'scenarios/control-plane-upgrade.yaml',
  },
  {
    id: 'capi/kcp-ignores-outdated',
    part: 'capi',
    bug: 'KCP picks the machine to remove among all machines, not among those needing rollout',
    rules: ['KCP-1', 'KCP-3'],
    patches: [{ file: KCP, from: '  else if (outdated.length > 0) candidates = outdated;\n', to: '' }],
    // Killed by control-plane-rollback-midway (a rollback while the first replacement provisions: the old template's
    // machines are up to date again and the oldest) and the KCP-2 invariant (src/harness/scenario/kcp-scale-down.ts).
    scenario: 'scenarios/control-plane-rollback-midway.yaml',
  },
  {
    id: 'capi/kcp-failure-domain-fewest',
    part: 'capi',
    bug: 'KCP removes from the failure domain with the fewest machines instead of the most',
    rules: ['KCP-1', 'KCP-2'],
    patches: [{ file: FD, from: '  return agg.sort((a, b) => b.priority - a.priority || b.all - a.all || byId(a, b))[0]?.id;', to: '  return agg.sort((a, b) => a.priority - b.priority || a.all - b.all || byId(a, b))[0]?.id;' }],
    // Killed by control-plane-failure-domains (five machines over two failure domains, scaled in) and the KCP-2
    // invariant (src/harness/scenario/kcp-scale-down.ts).
    scenario: 'scenarios/control-plane-failure-domains.yaml',
  },
  {
    id: 'capi/kcp-ignores-maxsurge',
    part: 'capi',
    bug: 'KCP always surges one machine during a rollout, whatever rolloutStrategy.rollingUpdate.maxSurge says',
    rules: ['KCP-1'],
    patches: [{ file: KCP, from: '    const max = input.replicas + input.maxSurge;\n', to: '    const max = input.replicas + 1;\n' }],
    scenario: 'scenarios/control-plane-upgrade.yaml',
  },
  {
    id: 'capi/kcp-no-preflight-on-scale-down',
    part: 'capi',
    bug: 'KCP scales down without its preflight checks (another control-plane machine unhealthy, a deletion in progress)',
    rules: ['KCP-1'],
    patches: [{ file: KCP, from: '    const pf = preflightChecks(ms, victim.name);\n', to: '    const pf = { ok: true } as ReturnType<typeof preflightChecks>;\n' }],
    scenario: 'scenarios/control-plane-upgrade.yaml',
  },
  {
    id: 'capi/md-cleanup-ignores-maxunavailable',
    part: 'capi',
    bug: 'MachineDeployment rollout removes every unhealthy old machine at once, not capped by maxUnavailable',
    rules: ['MD-1'],
    patches: [{ file: RP, from: '    const n = Math.min(maxCleanup - total, replicas - ms.availableReplicas);\n', to: '    const n = replicas - ms.availableReplicas;\n' }],
    // Killed by unhealthy-rollout (two unhealthy old machines, maxUnavailable 1) and the MD-1 check of the old
    // MachineSets' spec.replicas against upstream's rolling-update plan (src/harness/scenario/md-rollout-plan.ts).
    scenario: 'scenarios/unhealthy-rollout.yaml',
  },
  {
    id: 'capi/md-min-available-off-by-one',
    part: 'capi',
    bug: 'MachineDeployment rollout keeps one machine fewer available than replicas - maxUnavailable',
    rules: ['MD-1'],
    patches: [{ file: RP, from: '  const minAvailable = p.md.replicas - mdMaxUnavailable(p.md);\n  const available = ', to: '  const minAvailable = p.md.replicas - mdMaxUnavailable(p.md) - 1;\n  const available = ' }],
    scenario: 'scenarios/worker-infra-upgrade.yaml',
  },
  {
    id: 'capi/md-surge-from-maxunavailable',
    part: 'capi',
    bug: 'MachineDeployment rollout sizes the surge from maxUnavailable instead of maxSurge (maxSurge ignored)',
    rules: ['MD-1', 'MD-3'],
    patches: [{ file: RP, from: 'const maxTotal = md.replicas + scaledValue(md.maxSurge ?? 0, md.replicas, true);', to: 'const maxTotal = md.replicas + scaledValue(md.maxUnavailable ?? 0, md.replicas, true);' }],
    scenario: 'scenarios/maxsurge-disk-reuse.yaml',
  },
  {
    id: 'capi/ms-available-counts-unhealthy',
    part: 'capi',
    bug: 'MachineSet status counts every machine as available, unhealthy ones included',
    rules: ['MD-1'],
    patches: [{ file: MS, from: '    status.availableReplicas = available;\n', to: '    status.availableReplicas = total;\n' }],
    scenario: 'scenarios/worker-infra-upgrade.yaml',
  },
  {
    id: 'capi/ms-delete-healthy-first',
    part: 'capi',
    bug: 'MachineSet scale-down does not prefer unhealthy machines',
    rules: ['MD-4'],
    patches: [{ file: DP, from: '  if (!isMachineHealthy(m)) return BETTER_DELETE;\n', to: '' }],
    scenario: 'scenarios/unhealthy-rollout.yaml',
  },
  {
    id: 'capi/machine-finalizer-before-infra-gone',
    part: 'capi',
    bug: 'the Machine\'s finalizer is removed once the infrastructure machine is asked to go, without waiting for it to be gone',
    rules: ['MD-4', 'POOL-4'],
    patches: [{ file: MACH, from: '        if (await getShared(this.ctx.mgmt, iref)) {\n          status.conditions = markFalse(status.conditions, \'InfrastructureReady\', \'Deleting\'', to: '        if (false && (await getShared(this.ctx.mgmt, iref))) {\n          status.conditions = markFalse(status.conditions, \'InfrastructureReady\', \'Deleting\'' }],
    scenario: 'scenarios/worker-infra-upgrade.yaml',
  },
  {
    id: 'capi/machine-skips-drain',
    part: 'capi',
    bug: 'the Machine controller deletes the infrastructure without draining the Node first',
    rules: ['MD-4'],
    patches: [{ file: MACH, from: '          const drain = await drainNode(workload, nodeName);\n', to: '          const drain = { waiting: [] as string[], evicted: [] as string[], skipped: [] as string[], warnings: [] as string[] };\n' }],
    scenario: 'scenarios/control-plane-upgrade.yaml',
  },
];
