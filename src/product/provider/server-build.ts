/**
 * Building an HCSMachine's server: the template checks before anything is
 * created (image TPL-6, flavor and availability zone TPL-2), the NICs from
 * the pool entry's networks (NET-1..NET-7) and the CreateServers call with
 * cloud-init carrying the kubelet certificate (BOOT-2) and the persistent
 * disks (DISK-3), protected by an X-Client-Token derived from the HCSMachine
 * uid so that a retried or restarted create never makes a second server.
 * Every refusal stops the reconcile with a Wait (machine-wait.ts).
 */
import { secretValue, tlsPairOf, type Secret } from '../api/core.js';
import type { HCSCluster, PersistentDisk, PoolConfig, PoolNetwork } from '../api/hcs.js';
import { issueCertificate } from '../../core/pki/index.js';
import type { ControllerContext } from '../../core/runtime/context.js';
import { asCloudError, isTransientCloudError, type CloudApi, type CloudImage, type CloudServer, type CloudSubnet } from './cloud-api.js';
import { cloudErrorReason, ruleForCloudError } from './cloud-errors.js';
import { CloudInitError, injectCloudInit } from './cloudinit.js';
import { META_CLUSTER, META_IMAGE_K8S_VERSION, META_IMAGE_NAME, META_HOSTNAME, META_K8S_VERSION, META_MACHINE, META_MACHINE_UID, META_NAMESPACE, META_PERSISTENT_VOLUMES, META_POOL } from '../api/metadata.js';
import { COND_INSTANCE, POLL, POLL_FAST, POLL_SLOW, azOf, wait, type Run } from './machine-wait.js';
import { ipInCidr, type Reporter } from './util.js';

/** Image metadata key with the image's Kubernetes version, for the guest (BOOT-4). */

export function clientTokenFor(uid: string): string {
  return `hcsm-${uid}`;
}

export interface ServerBuildDeps {
  ctx: ControllerContext;
  cloud: CloudApi;
  rep: Reporter;
}

export async function createServer(
  deps: ServerBuildDeps,
  run: Pick<Run, 'key' | 'hm'>,
  p: {
    ns: string;
    clusterName: string;
    hc: HCSCluster;
    pool: string;
    hostname: string;
    config: PoolConfig;
    dataSecretName: string;
    version: string | undefined;
    providerID: string;
    disks: { d: PersistentDisk; volumeId: string }[];
    image: CloudImage;
  },
): Promise<CloudServer> {
  const image = p.image;
  const { hm } = run;
  const spec = hm.spec;
  const now = deps.ctx.clock.now();
  const secret = await deps.ctx.mgmt.get<Secret>({ kind: 'Secret', namespace: p.ns, name: p.dataSecretName });
  const bootstrap = secret ? secretValue(secret, 'value') : undefined;
  if (!bootstrap) wait({ condition: COND_INSTANCE, reason: 'WaitingForBootstrapData', message: `bootstrap data secret ${p.dataSecretName} not found or empty`, requeueAfter: POLL });
  const caSecret = await deps.ctx.mgmt.get<Secret>({ kind: 'Secret', namespace: p.ns, name: `${p.clusterName}-ca` });
  const ca = tlsPairOf(caSecret);
  if (!ca) {
    wait({ condition: COND_INSTANCE, reason: 'WaitingForClusterCA', message: `cluster CA secret ${p.clusterName}-ca (tls.crt, tls.key) not found; the kubelet certificate cannot be issued`, requeueAfter: POLL, rules: ['BOOT-2'] });
  }

  const nics = resolveNics(p.hc, p.config, await deps.cloud.listSubnets());

  // Cloud-init with the kubelet certificate (BOOT-2).
  const ips = p.config.networks.map((n) => n.ipAddress);
  const cert = await issueCertificate(
    ca!,
    { commonName: `system:node:${p.hostname}`, organization: 'system:nodes', dnsNames: [p.hostname], ips },
    deps.ctx.rng,
    now,
  );
  let userData: string;
  try {
    userData = injectCloudInit(bootstrap!, {
      hostname: p.hostname,
      providerID: p.providerID,
      kubeletCertPem: cert.certPem,
      kubeletKeyPem: cert.keyPem,
      dataVolumes: spec.dataVolumes ?? [],
      persistentDisks: p.disks.map(({ d, volumeId }) => ({
        slot: d.slot,
        volumeId,
        mountPath: d.mountPath,
        format: d.format,
        ...(d.mountOptions ? { mountOptions: d.mountOptions } : {}),
      })),
    });
  } catch (e) {
    if (!(e instanceof CloudInitError)) throw e;
    wait({ condition: COND_INSTANCE, reason: 'InvalidBootstrapData', message: `BOOT-2: ${e.message}`, rules: ['BOOT-2'], requeueAfter: POLL_SLOW, warn: true });
  }
  const metadata: Record<string, string> = {
    [META_CLUSTER]: p.clusterName,
    [META_NAMESPACE]: p.ns,
    [META_MACHINE]: hm.metadata.name,
    [META_MACHINE_UID]: hm.metadata.uid ?? '',
    [META_HOSTNAME]: p.hostname,
    [META_POOL]: p.pool,
    [META_PERSISTENT_VOLUMES]: p.disks.map((x) => x.volumeId).join(','),
    [META_IMAGE_NAME]: image.name,
    ...(image.__support_kubernetes_version ? { [META_IMAGE_K8S_VERSION]: image.__support_kubernetes_version } : {}),
    ...(p.version ? { [META_K8S_VERSION]: p.version } : {}),
  };
  const token = clientTokenFor(hm.metadata.uid ?? hm.metadata.name);
  let res: { job_id: string; serverIds: string[] };
  try {
    res = await deps.cloud.createServers(
      {
        server: {
          name: hm.metadata.name,
          imageRef: image.id,
          flavorRef: spec.flavorName,
          availability_zone: azOf(run),
          vpcid: nics[0]!.vpcId,
          nics: nics.map((n) => ({ subnet_id: n.subnetId, ip_address: n.ip })),
          root_volume: { volumetype: spec.rootVolume?.type ?? 'SSD', size: spec.rootVolume?.size ?? 40 },
          ...(spec.dataVolumes?.length ? { data_volumes: spec.dataVolumes.map((d) => ({ volumetype: d.type, size: d.size })) } : {}),
          user_data: Buffer.from(userData!, 'utf8').toString('base64'),
          metadata,
        },
      },
      token,
    );
  } catch (e) {
    const ce = asCloudError(e);
    if (!ce || isTransientCloudError(ce)) throw e;
    const rules = ruleForCloudError(ce.code);
    const why = cloudErrorReason(ce.code, ce.status);
    wait({
      condition: COND_INSTANCE,
      reason: why?.reason ?? 'InstanceCreateFailed',
      message: `${rules.length ? `${rules.join(', ')}: ` : ''}HCS refused to create server ${hm.metadata.name}: ${ce.code} ${ce.message}${why ? `; ${why.hint}` : ''}`,
      rules,
      requeueAfter: 60_000,
      warn: true,
    });
  }
  deps.rep.info(
    'hcsmachine.server-created',
    `HCSMachine ${run.key}: requested server ${hm.metadata.name} (image ${image.name}, flavor ${spec.flavorName}, az ${azOf(run)}, ips ${ips.join(',')}, persistent disks ${p.disks.map((x) => `pd${x.d.slot}=${x.volumeId}`).join(',') || 'none'}), job ${res!.job_id}`,
    { machine: run.key, job: res!.job_id, serverIds: res!.serverIds, clientToken: token },
    ['BOOT-2', 'TPL-3'],
  );
  const id = res!.serverIds[0];
  const s = id ? await deps.cloud.showServer(id) : undefined;
  if (!s) {
    // The job has not published the server id yet: the next reconcile finds the server by name.
    wait({ condition: COND_INSTANCE, reason: 'InstanceProvisioning', message: `create job ${res!.job_id} running`, requeueAfter: POLL_FAST });
  }
  return s!;
}

/** Image (TPL-6), flavor and availability zone (TPL-2): checked before anything is created for the machine. */
export async function validateTemplate(cloud: CloudApi, run: Pick<Run, 'hm' | 'az'>): Promise<CloudImage> {
  const spec = run.hm.spec;
  const images = (await cloud.listImages({ name: spec.imageName })).filter((i) => i.name === spec.imageName);
  if (images.length === 0) {
    wait({
      condition: COND_INSTANCE,
      reason: 'ImageNotFound',
      message: `TPL-6: image "${spec.imageName}" (spec.imageName) does not exist in HCS; import it or point the template at an existing image`,
      rules: ['TPL-6'],
      requeueAfter: 60_000,
      warn: true,
    });
  }
  const image = images[0]!;
  let flavorOk = false;
  let flavorList: string[] = [];
  try {
    flavorList = (await cloud.listFlavors(azOf(run))).map((f) => f.id);
    flavorOk = flavorList.includes(spec.flavorName) || flavorList.length === 0;
  } catch (e) {
    const ce = asCloudError(e);
    if (!ce || isTransientCloudError(ce)) throw e;
    wait({
      condition: COND_INSTANCE,
      reason: 'InvalidAvailabilityZone',
      message: `TPL-2: ${run.az ? 'Machine spec.failureDomain' : 'spec.availabilityZone'} "${azOf(run)}" is not a provider API value: ${ce.message}`,
      rules: ['TPL-2'],
      failure: 'InvalidConfiguration',
      warn: true,
    });
  }
  if (!flavorOk) {
    wait({
      condition: COND_INSTANCE,
      reason: 'InvalidFlavor',
      message: `TPL-2: spec.flavorName "${spec.flavorName}" is not offered in availability zone ${azOf(run)} (valid API values: ${flavorList.join(', ')}); UI display names are not accepted`,
      rules: ['TPL-2'],
      failure: 'InvalidConfiguration',
      warn: true,
    });
  }
  return image;
}

export function resolveNics(hc: HCSCluster, cfg: PoolConfig, cloudSubnets: CloudSubnet[]): { subnetId: string; vpcId: string; ip: string }[] {
  const listed = hc.spec.network?.subnets ?? [];
  const resolved = hc.status?.network?.subnets ?? [];
  if (cfg.networks.length === 0) {
    wait({ condition: COND_INSTANCE, reason: 'InvalidPoolEntry', message: `pool entry ${cfg.hostname} has no networks[]`, rules: ['POOL-1'], requeueAfter: POLL_SLOW, warn: true });
  }
  return cfg.networks.map((n: PoolNetwork, i) => {
    const field = `pool entry ${cfg.hostname} networks[${i}]`;
    const fail = (rule: string, message: string): never =>
      wait({ condition: COND_INSTANCE, reason: 'SubnetNotResolved', message: `${rule}: ${field}: ${message}`, rules: [rule], requeueAfter: POLL_SLOW, warn: true });
    if (n.subnetName && n.subnetId) fail('NET-1', 'set subnetName or subnetId, not both');
    if (n.subenetName && n.subnetName && n.subenetName !== n.subnetName) fail('NET-2', `legacy subenetName "${n.subenetName}" differs from subnetName "${n.subnetName}"`);
    const name = n.subnetName ?? n.subenetName;
    let sub: CloudSubnet | undefined;
    if (n.subnetId) {
      sub = cloudSubnets.find((s) => s.id === n.subnetId || s.neutron_subnet_id === n.subnetId);
      if (!sub) fail('NET-4', `subnetId ${n.subnetId} does not exist in HCS`);
      if (name && sub!.name !== name) fail('NET-3', `subenetName "${name}" and subnetId ${n.subnetId} select different subnets`);
    } else if (name) {
      if (!listed.some((s) => s.name === name) && !resolved.some((s) => s.name === name)) {
        fail('NET-4', `subnet "${name}" is not listed in HCSCluster ${hc.metadata.name} spec.network.subnets; add it (as a full object with its id on a Ready cluster, NET-5) before creating or scaling the pool`);
      }
      const r = resolved.find((s) => s.name === name);
      if (!r?.id) fail('NET-5', `subnet "${name}" is listed in HCSCluster ${hc.metadata.name} but not resolved (see its NetworkReady condition)`);
      sub = cloudSubnets.find((s) => s.id === r!.id);
      if (!sub) fail('NET-4', `subnet "${name}" (${r!.id}) does not exist in HCS`);
    } else {
      fail('NET-1', 'needs a subnet selector (subnetName or subnetId)');
    }
    const inside = ipInCidr(n.ipAddress, sub!.cidr);
    if (inside === false) fail('NET-7', `ipAddress ${n.ipAddress} is outside subnet ${sub!.name} (${sub!.cidr})`);
    return { subnetId: sub!.id, vpcId: sub!.vpc_id, ip: n.ipAddress };
  });
}
