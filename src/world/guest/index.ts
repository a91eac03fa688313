/**
 * Simulated guests: what runs inside each HCS server once it is ACTIVE.
 *
 * A 'guest' controller keyed by server id follows the fake cloud's server
 * changes and plays cloud-init: hostname, waiting for the persistent disks
 * its mounts name, formatting a device only when it carries no filesystem,
 * mounting, write_files, then the kubeadm join with the documented checks
 * (BOOT-3 kubelet certificate chain, BOOT-4 image Kubernetes version). A
 * successful join registers the Node in the workload cluster.
 *
 * Files live on the volumes in the hypervisor, so data on a persistent disk
 * survives the server (DISK-8) while the root and data volumes go with it.
 */
import { parse as parseYaml } from 'yaml';
import type { Hypervisor, MockHcs } from '../../../mock-hcs/src/index.js';
import { secretValue, type Node, type NodeCondition, type Secret } from '../../product/api/core.js';
import { rfc3339 } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import { getShared, type KubeClient } from '../../core/kube/client.js';
import { verifyLeaf } from '../../core/pki/index.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';
import type { Controller, Result } from '../../core/runtime/manager.js';
import { META_CLUSTER, META_HOSTNAME, META_K8S_VERSION, META_NAMESPACE, META_PERSISTENT } from '../../product/api/metadata.js';
import { META_IMAGE_K8S_VERSION, META_IMAGE_NAME } from '../../product/api/metadata.js';
import { LABEL_ROLE_CONTROL_PLANE, TAINT_CONTROL_PLANE } from '../workload/pods.js';
import { GuestCloudInitError, kubeadmCommand, parseGuestCloudConfig, parseKubeadmConfig, type GuestCloudConfig } from './cloudinit.js';

/** Bytes of a virtio-blk disk's serial the guest sees (VIRTIO_BLK_ID_BYTES). */
const VIRTIO_SERIAL_BYTES = 20;

export { parseGuestCloudConfig, parseKubeadmConfig, kubeadmCommand, type GuestCloudConfig, type KubeadmNodeConfig } from './cloudinit.js';

export const GUEST_CONTROLLER = 'guest';

export type GuestPhase = 'Booting' | 'WaitingForDisks' | 'Joined' | 'JoinFailed' | 'Stopped';

export interface GuestMountInfo {
  mountPath: string;
  volumeId: string;
  persistent: boolean;
  /** Mount options as the node's cloud-init `mounts` entry gave them (DISK-5: fixed for the life of the server). */
  options?: string[];
}

export interface GuestOptions {
  hypervisor: Hypervisor;
  onServerChange: MockHcs['onServerChange'];
  /** Images with their Kubernetes version (mock-hcs config.images); otherwise the image version comes from server metadata. */
  images?: { id: string; name: string; kubernetesVersion: string }[];
  /** Time cloud-init takes from ACTIVE to the kubeadm join (default 15s virtual). */
  bootDelayMs?: number;
  /** Give up waiting for persistent disks after this long (default 10 minutes). */
  diskWaitTimeoutMs?: number;
}

interface GuestState {
  serverId: string;
  serverName: string;
  hostname: string;
  namespace?: string;
  cluster?: string;
  phase: GuestPhase;
  reason?: string;
  /** Mounted filesystems, longest mount path first; "/" is the root volume. */
  mounts: GuestMountInfo[];
  activeSince?: number;
  nodeName?: string;
  providerID?: string;
  joined: boolean;
}

const ROOT_FS = 'ext4';

function norm(p: string): string {
  return '/' + p.replace(/^\/+/, '').replace(/\/+/g, '/').replace(/\/$/, '');
}

function under(path: string, mountPath: string): boolean {
  const mp = norm(mountPath);
  return mp === '/' || path === mp || path.startsWith(mp + '/');
}

function stripV(v: string): string {
  return v.trim().replace(/^v/i, '');
}

/** The labels the kubelet registers a Node with (kubernetes.io/hostname, os, arch), plus kubeadm's control-plane role label. */
export function nodeLabels(hostname: string, controlPlane: boolean): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': hostname,
    'kubernetes.io/os': 'linux',
    ...(controlPlane ? { [LABEL_ROLE_CONTROL_PLANE]: '', 'node.kubernetes.io/exclude-from-external-load-balancers': '' } : {}),
  };
}

/** What the kubelet reports in status.nodeInfo (the image's OS: the Alauda OS images of data/os-support-matrix.yaml). */
function nodeInfo(kubeletVersion: string): NonNullable<Node['status']>['nodeInfo'] {
  return { kubeletVersion, osImage: 'Alauda OS', kernelVersion: '5.14.0', containerRuntimeVersion: 'containerd://1.7.27' };
}

export class GuestFleet implements Controller {
  readonly name = GUEST_CONTROLLER;
  private readonly states = new Map<string, GuestState>();
  /** The cloud-config each guest parsed from its user data (read-only; parsed again only if the user data differs). */
  private readonly userData = new WeakMap<GuestState, { text: string; cc: GuestCloudConfig }>();
  /** hostname -> server id of the newest server with that hostname. */
  private readonly byHost = new Map<string, string>();
  /**
   * Server ids whose state was set Stopped (a superset of the Stopped states: forget() drops the ones that are not
   * Stopped any more), so that forget() looks at these instead of every state (a rollout deletes one server per
   * replaced machine: a walk over all states each time grew as the square of the fleet).
   */
  private readonly stopped = new Set<string>();
  private readonly hv: Hypervisor;
  private readonly log: Logger;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: GuestOptions,
  ) {
    this.hv = opts.hypervisor;
    this.log = ctx.logs.logger('guest-agent', GUEST_CONTROLLER);
  }

  setup(): void {
    this.ctx.manager.register(this);
    this.opts.onServerChange((s) => this.ctx.manager.enqueue(GUEST_CONTROLLER, s.id));
    for (const s of this.hv.listServers()) this.ctx.manager.enqueue(GUEST_CONTROLLER, s.id);
  }

  // ------------------------------------------------------------------ public view

  status(hostname: string): { phase: GuestPhase; reason?: string } | undefined {
    const st = this.stateOf(hostname);
    return st ? { phase: st.phase, ...(st.reason ? { reason: st.reason } : {}) } : undefined;
  }

  /** Mounted filesystems of the running node with this hostname ([] when none runs). */
  mounts(hostname: string): GuestMountInfo[] {
    const st = this.stateOf(hostname);
    if (!st || st.phase === 'Stopped') return [];
    return st.mounts.map((m) => ({ ...m, ...(m.options ? { options: [...m.options] } : {}) }));
  }

  writeFile(hostname: string, path: string, content: string): void {
    const st = this.stateOf(hostname);
    if (!st || st.phase === 'Stopped' || st.mounts.length === 0) throw new Error(`guest: no running node with hostname "${hostname}"`);
    const r = this.route(st, path);
    this.hv.writeFile(r.volumeId, r.rel, content);
  }

  readFile(hostname: string, path: string): string | undefined {
    const st = this.stateOf(hostname);
    if (!st || st.phase === 'Stopped' || st.mounts.length === 0) return undefined;
    const r = this.route(st, path);
    return this.hv.readFile(r.volumeId, r.rel);
  }

  /** Server id currently known for a hostname. */
  serverOf(hostname: string): string | undefined {
    return this.byHost.get(hostname);
  }

  private stateOf(hostname: string): GuestState | undefined {
    const id = this.byHost.get(hostname);
    return id ? this.states.get(id) : undefined;
  }

  private route(st: GuestState, path: string): { volumeId: string; rel: string } {
    const p = norm(path);
    const m = st.mounts.find((x) => under(p, x.mountPath));
    if (!m) throw new Error(`guest ${st.hostname}: no filesystem for ${path}`);
    const mp = norm(m.mountPath);
    const rel = mp === '/' ? p : p.slice(mp.length) || '/';
    return { volumeId: m.volumeId, rel };
  }

  // ------------------------------------------------------------------ reconcile

  async reconcile(serverId: string): Promise<Result | void> {
    const s = this.hv.server(serverId);
    let st = this.states.get(serverId);
    if (!s || s.status !== 'ACTIVE') {
      if (!s && !st) return;
      if (!st) {
        st = this.newState(serverId, s!.name, s!.metadata);
        this.states.set(serverId, st);
      }
      const was = st.phase;
      if (s?.status === 'BUILD') {
        st.phase = 'Booting';
        return;
      }
      if (was === 'Stopped') return;
      st.phase = 'Stopped';
      this.stopped.add(serverId);
      st.reason = s ? `server is ${s.status}` : 'server deleted';
      st.activeSince = undefined;
      this.record('guest.stopped', `${st.hostname} (${serverId}) stopped: ${st.reason}`, st);
      if (st.joined) await this.nodeUnknown(st);
      if (!s) this.forget(st);
      return;
    }

    if (!st) {
      st = this.newState(serverId, s.name, s.metadata);
      this.states.set(serverId, st);
    }
    if (st.phase === 'Stopped' && st.joined) {
      // Powered on again: the kubelet comes back with the node's existing identity.
      st.phase = 'Joined';
      delete st.reason;
      await this.registerNode(st, s.ips, undefined);
      return;
    }
    if (st.phase === 'Joined' || st.phase === 'JoinFailed') return;

    const now = this.ctx.clock.now();
    if (st.activeSince === undefined) {
      st.activeSince = now;
      st.phase = 'Booting';
      const delay = this.opts.bootDelayMs ?? 15_000;
      if (delay > 0) return { requeueAfter: delay };
    }
    return this.boot(st, s);
  }

  private newState(serverId: string, name: string, metadata: Record<string, string>): GuestState {
    const hostname = metadata[META_HOSTNAME] ?? name;
    const st: GuestState = {
      serverId,
      serverName: name,
      hostname,
      ...(metadata[META_NAMESPACE] ? { namespace: metadata[META_NAMESPACE] } : {}),
      ...(metadata[META_CLUSTER] ? { cluster: metadata[META_CLUSTER] } : {}),
      phase: 'Booting',
      mounts: [],
      joined: false,
    };
    this.byHost.set(hostname, serverId);
    return st;
  }

  private forget(st: GuestState): void {
    // Keep the state (status() shows Stopped) until another server takes the hostname; drop older ones.
    for (const id of this.stopped) {
      const x = this.states.get(id);
      if (!x || x.phase !== 'Stopped') this.stopped.delete(id);
      else if (x !== st && this.byHost.get(x.hostname) !== id) {
        this.states.delete(id);
        this.stopped.delete(id);
      }
    }
  }

  private async boot(st: GuestState, s: NonNullable<ReturnType<Hypervisor['server']>>): Promise<Result | void> {
    const now = this.ctx.clock.now();
    let cc: GuestCloudConfig;
    try {
      const userData = s.userData; // decoded on each read (Hypervisor.server): read once
      if (!userData) throw new GuestCloudInitError('server has no user data');
      // cloud-init reads the user data once per boot; a boot waiting for its disks comes back here every 5 s.
      const seen = this.userData.get(st);
      cc = seen?.text === userData ? seen.cc : parseGuestCloudConfig(userData);
      this.userData.set(st, { text: userData, cc });
    } catch (e) {
      return this.fail(st, `cloud-init: ${errorMessage(e)}`, ['BOOT-2']);
    }
    if (cc.hostname && cc.hostname !== st.hostname) {
      st.hostname = cc.hostname;
      this.byHost.set(cc.hostname, st.serverId);
    }

    // Devices: resolve every fs_setup / mounts device to an attached volume.
    const resolve = (device: string): { volumeId: string; persistent: boolean } | undefined => this.resolveDevice(s, device);
    const missing: string[] = [];
    for (const m of cc.mounts) {
      if (!resolve(m.device) && (m.device.startsWith('/dev/disk/by-id/') || !m.options.includes('nofail'))) missing.push(`${m.device} for ${m.mountPath}`);
    }
    if (missing.length) {
      const waited = now - (st.activeSince ?? now);
      const limit = this.opts.diskWaitTimeoutMs ?? 600_000;
      if (waited >= limit) return this.fail(st, `persistent disk(s) never attached: ${missing.join(', ')}`, ['DISK-3']);
      if (st.phase !== 'WaitingForDisks') this.record('guest.waiting-for-disks', `${st.hostname}: waiting for ${missing.join(', ')}`, st, ['DISK-3']);
      st.phase = 'WaitingForDisks';
      st.reason = `waiting for ${missing.join(', ')} to be attached`;
      return { requeueAfter: 5_000 };
    }

    // Root filesystem (the image's), then disk_setup/fs_setup: format only devices without a filesystem.
    const root = s.volumes.find((v) => v.bootIndex === 0);
    if (!root) return this.fail(st, 'server has no root volume');
    if (!this.hv.volume(root.volumeId)?.fs.fsType) this.hv.format(root.volumeId, ROOT_FS, 'rootfs');
    for (const f of cc.fsSetup) {
      const r = resolve(f.device);
      if (!r) continue;
      const vol = this.hv.volume(r.volumeId);
      if (!vol) continue;
      if (!vol.fs.fsType || f.overwrite) {
        this.hv.format(r.volumeId, f.filesystem, f.label ?? '');
        this.record('guest.disk-formatted', `${st.hostname}: formatted ${f.device} (${r.volumeId}) as ${f.filesystem}${f.label ? ` label ${f.label}` : ''}`, st, r.persistent ? ['DISK-8'] : undefined, { volumeId: r.volumeId, persistent: r.persistent });
      } else {
        this.record('guest.disk-kept', `${st.hostname}: ${f.device} (${r.volumeId}) already carries ${vol.fs.fsType}${vol.fs.label ? ` label ${vol.fs.label}` : ''}; not formatted`, st, r.persistent ? ['DISK-8'] : undefined, { volumeId: r.volumeId, persistent: r.persistent, files: Object.keys(vol.fs.files).length });
      }
    }
    const mounts: GuestMountInfo[] = [{ mountPath: '/', volumeId: root.volumeId, persistent: false }];
    for (const m of cc.mounts) {
      const r = resolve(m.device);
      if (!r) continue;
      if (!this.hv.volume(r.volumeId)?.fs.fsType) this.hv.format(r.volumeId, m.fsType ?? ROOT_FS, '');
      mounts.push({ mountPath: norm(m.mountPath), volumeId: r.volumeId, persistent: r.persistent, options: [...m.options] });
    }
    st.mounts = mounts.sort((a, b) => b.mountPath.length - a.mountPath.length);
    this.record('guest.mounted', `${st.hostname}: mounted ${st.mounts.map((m) => `${m.mountPath}=${m.volumeId.slice(0, 8)}${m.persistent ? '(persistent)' : ''}`).join(', ')}`, st);

    // write_files.
    for (const f of cc.files) {
      const r = this.route(st, f.path);
      const prev = f.append ? (this.hv.readFile(r.volumeId, r.rel) ?? '') : '';
      this.hv.writeFile(r.volumeId, r.rel, prev + f.content);
    }
    return this.join(st, s, cc);
  }

  /** The attached volume a cloud-init device names (by-id, LABEL= or device path). */
  private resolveDevice(s: NonNullable<ReturnType<Hypervisor['server']>>, device: string): { volumeId: string; persistent: boolean } | undefined {
    const byId = /^\/dev\/disk\/by-id\/virtio-(.+)$/.exec(device);
    if (byId) {
      // udev names a virtio disk by its serial, and virtio-blk carries at most VIRTIO_BLK_ID_BYTES = 20 bytes of it
      // (linux include/uapi/linux/virtio_blk.h): the hypervisor passes the volume id as the serial, so the guest has
      // /dev/disk/by-id/virtio-<first 20 characters of the id> and no link named after the whole id.
      const v = s.volumes.find((x) => x.volumeId.slice(0, VIRTIO_SERIAL_BYTES) === byId[1]);
      return v ? { volumeId: v.volumeId, persistent: true } : undefined;
    }
    const label = /^LABEL=(.+)$/.exec(device);
    const v = label ? s.volumes.find((x) => this.hv.volume(x.volumeId)?.fs.label === label[1]) : s.volumes.find((x) => x.device === device);
    if (!v) return undefined;
    return { volumeId: v.volumeId, persistent: this.hv.volume(v.volumeId)?.metadata[META_PERSISTENT] === 'true' };
  }

  /**
   * Take over a node that was already running when the testbed started (a replay from a captured bundle, issue 35):
   * its server is ACTIVE (or SHUTOFF) and its Node registered. Nothing boots, nothing is formatted and no Node is
   * written: the guest reads its user data, mounts what the cloud-config names (a volume the node runs with carries a
   * file system; one the bundle did not describe gets the cloud-config's type and label), puts its write_files back
   * on the disks (the kubelet certificate the replay issued) and is Joined (Stopped when the server is off).
   * Returns why it could not (then the guest boots the usual way when the server is ACTIVE).
   */
  adopt(serverId: string, nodeName: string): string | undefined {
    const s = this.hv.server(serverId);
    if (!s || (s.status !== 'ACTIVE' && s.status !== 'SHUTOFF')) return `server ${serverId} is ${s?.status ?? 'gone'}`;
    const userData = s.userData;
    if (!userData) return `server ${serverId} has no user data`;
    let cc: GuestCloudConfig;
    try {
      cc = parseGuestCloudConfig(userData);
    } catch (e) {
      return `cloud-init: ${errorMessage(e)}`;
    }
    const st = this.newState(serverId, s.name, s.metadata);
    if (cc.hostname && cc.hostname !== st.hostname) {
      st.hostname = cc.hostname;
      this.byHost.set(cc.hostname, serverId);
    }
    const root = s.volumes.find((v) => v.bootIndex === 0);
    if (!root) return `server ${serverId} has no root volume`;
    const ensureFs = (volumeId: string, fsType: string, label: string): void => {
      if (!this.hv.volume(volumeId)?.fs.fsType) this.hv.format(volumeId, fsType, label);
    };
    ensureFs(root.volumeId, ROOT_FS, 'rootfs');
    const mounts: GuestMountInfo[] = [{ mountPath: '/', volumeId: root.volumeId, persistent: false }];
    for (const m of cc.mounts) {
      const r = this.resolveDevice(s, m.device);
      if (!r) continue;
      const f = cc.fsSetup.find((x) => this.resolveDevice(s, x.device)?.volumeId === r.volumeId);
      ensureFs(r.volumeId, f?.filesystem ?? m.fsType ?? ROOT_FS, f?.label ?? '');
      mounts.push({ mountPath: norm(m.mountPath), volumeId: r.volumeId, persistent: r.persistent, options: [...m.options] });
    }
    st.mounts = mounts.sort((a, b) => b.mountPath.length - a.mountPath.length);
    for (const f of cc.files) if (!f.append) this.writePath(st, f.path, f.content);
    this.userData.set(st, { text: userData, cc });
    st.nodeName = nodeName;
    const kubeadm = kubeadmCommand(cc.runcmd);
    const kc = kubeadm ? parseKubeadmConfig(this.readPath(st, kubeadm.configPath) ?? '') : undefined;
    const providerID = kc?.kubeletExtraArgs['provider-id'];
    if (providerID) st.providerID = providerID;
    st.joined = true;
    st.activeSince = this.ctx.clock.now();
    st.phase = s.status === 'ACTIVE' ? 'Joined' : 'Stopped';
    if (st.phase === 'Stopped') {
      st.reason = `server is ${s.status}`;
      this.stopped.add(serverId);
    }
    this.states.set(serverId, st);
    this.record('guest.adopted', `${st.hostname} (${serverId}): running before the testbed started; Node ${nodeName} taken over (${st.phase})`, st);
    return undefined;
  }

  // ------------------------------------------------------------------ kubeadm join

  private async join(st: GuestState, s: NonNullable<ReturnType<Hypervisor['server']>>, cc: GuestCloudConfig): Promise<Result | void> {
    const cmd = kubeadmCommand(cc.runcmd);
    if (!cmd) return this.fail(st, 'runcmd has no kubeadm join/init command');
    const text = this.readPath(st, cmd.configPath);
    if (text === undefined) return this.fail(st, `kubeadm: ${cmd.configPath} does not exist`);
    const kc = parseKubeadmConfig(text);
    if (!kc) return this.fail(st, `kubeadm: ${cmd.configPath} holds no JoinConfiguration/InitConfiguration`);
    const nodeName = kc.nodeName ?? st.hostname;
    const providerID = kc.kubeletExtraArgs['provider-id'];

    // BOOT-3: the kubelet patch points at the injected certificate files, which chain to the cluster CA.
    const boot3 = await this.checkKubeletCert(st, kc.patchesDirectory, nodeName);
    if (boot3) return this.fail(st, `BOOT-3: ${boot3}`, ['BOOT-3']);

    // BOOT-4: the image's Kubernetes version equals the machine's version.
    const want = s.metadata[META_K8S_VERSION];
    const have = this.imageVersion(s.metadata);
    if (want && have && stripV(want) !== stripV(have)) {
      return this.fail(
        st,
        `BOOT-4: image ${s.metadata[META_IMAGE_NAME] ?? ''} carries Kubernetes ${have} but the machine's version is ${want}; kubeadm join fails (use an image built for ${want})`.replace('image  ', 'image '),
        ['BOOT-4'],
      );
    }
    // kubeadm writes the kubelet configuration (lands on the /var/lib/kubelet data volume when there is one).
    this.writePath(st, '/var/lib/kubelet/config.yaml', `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntlsCertFile: /etc/kubernetes/pki/kubelet.crt\ntlsPrivateKeyFile: /etc/kubernetes/pki/kubelet.key\n`);
    st.nodeName = nodeName;
    if (providerID) st.providerID = providerID;
    // kubeadm's mark-control-plane phase: the control-plane role label, and its NoSchedule taint unless nodeRegistration.taints says otherwise.
    const taints = kc.taints ?? (kc.controlPlane ? [{ ...TAINT_CONTROL_PLANE }] : undefined);
    const ok = await this.registerNode(st, s.ips, have ?? want, taints, kc.controlPlane);
    if (!ok) return this.fail(st, 'no workload cluster to join: server metadata lacks hcs.io/namespace and hcs.io/cluster');
    st.phase = 'Joined';
    delete st.reason;
    st.joined = true;
    this.record('guest.joined', `${st.hostname}: kubeadm ${cmd.verb} succeeded; Node ${nodeName} Ready (providerID ${providerID ?? 'none'})`, st, ['BOOT-3', 'BOOT-4'], { node: nodeName, providerID });
    return undefined;
  }

  private async checkKubeletCert(st: GuestState, patchesDir: string | undefined, nodeName: string): Promise<string | undefined> {
    if (!patchesDir) return 'the kubeadm configuration sets no patches.directory, so the kubelet does not use the injected certificate';
    const patches = this.listFiles(st, patchesDir).filter((p) => /kubeletconfiguration/i.test(p.slice(p.lastIndexOf('/') + 1)));
    if (patches.length === 0) return `no kubeletconfiguration patch in ${patchesDir}`;
    let certPath: string | undefined;
    let keyPath: string | undefined;
    for (const p of patches) {
      const raw = this.readPath(st, p) ?? '';
      let obj: Record<string, unknown>;
      try {
        obj = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        try {
          obj = (parseYaml(raw) ?? {}) as Record<string, unknown>;
        } catch (e) {
          return `kubelet patch ${p} does not parse: ${errorMessage(e)}`;
        }
      }
      if (typeof obj.tlsCertFile === 'string') certPath = obj.tlsCertFile;
      if (typeof obj.tlsPrivateKeyFile === 'string') keyPath = obj.tlsPrivateKeyFile;
    }
    if (!certPath || !keyPath) return `the kubelet patch (${patches.join(', ')}) does not set tlsCertFile and tlsPrivateKeyFile`;
    const cert = this.readPath(st, certPath);
    const key = this.readPath(st, keyPath);
    if (cert === undefined) return `tlsCertFile ${certPath} does not exist on the node (was it injected into cloud-init? BOOT-2)`;
    if (key === undefined) return `tlsPrivateKeyFile ${keyPath} does not exist on the node (was it injected into cloud-init? BOOT-2)`;
    const ca = await this.clusterCA(st);
    if (!ca) return 'no cluster CA to verify the kubelet certificate against (neither the <cluster>-ca secret nor /etc/kubernetes/pki/ca.crt)';
    const chk = verifyLeaf(cert, key, ca, this.ctx.clock.now());
    if (!chk.ok) return `kubelet certificate ${certPath}: ${chk.reason}`;
    if (!chk.subject?.includes(`CN=system:node:${nodeName}`)) return `kubelet certificate subject "${chk.subject}" is not CN=system:node:${nodeName}`;
    return undefined;
  }

  private async clusterCA(st: GuestState): Promise<string | undefined> {
    if (st.namespace && st.cluster) {
      const s = await getShared<Secret>(this.ctx.mgmt, { kind: 'Secret', namespace: st.namespace, name: `${st.cluster}-ca` });
      const crt = s ? secretValue(s as Secret, 'tls.crt') : undefined;
      if (crt) return crt;
    }
    return this.readPath(st, '/etc/kubernetes/pki/ca.crt');
  }

  private imageVersion(meta: Record<string, string>): string | undefined {
    const name = meta[META_IMAGE_NAME] ?? meta['image_name'];
    const img = this.opts.images?.find((i) => i.name === name || i.id === meta['metering.image_id']);
    return img?.kubernetesVersion ?? meta[META_IMAGE_K8S_VERSION];
  }

  // ------------------------------------------------------------------ Node

  private workload(st: GuestState): KubeClient | undefined {
    if (!st.namespace || !st.cluster) return undefined;
    return this.ctx.workloads.client(st.namespace, st.cluster);
  }

  private async registerNode(st: GuestState, ips: string[], kubeletVersion: string | undefined, taints?: Node['spec']['taints'], controlPlane = false): Promise<boolean> {
    const wl = this.workload(st);
    const name = st.nodeName ?? st.hostname;
    if (!wl) return false;
    const now = rfc3339(this.ctx.clock.now());
    const ready: NodeCondition = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastTransitionTime: now };
    const addresses = [...ips.map((a) => ({ type: 'InternalIP', address: a })), { type: 'Hostname', address: st.hostname }];
    const cur = await wl.get<Node>({ kind: 'Node', name });
    if (!cur) {
      await wl.create<Node>({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: nodeLabels(st.hostname, controlPlane) },
        spec: { ...(st.providerID ? { providerID: st.providerID } : {}), ...(taints?.length ? { taints } : {}) },
        status: { conditions: [ready], addresses, nodeInfo: nodeInfo(kubeletVersion ?? 'unknown') },
      });
      return true;
    }
    // A Node with this name already exists (the replaced machine's, not yet deleted): the kubelet re-registers it.
    const spec = { ...cur.spec, ...(st.providerID ? { providerID: st.providerID } : {}) };
    const updated = await wl.update<Node>({ ...cur, spec });
    await wl.updateStatus<Node>({
      ...updated,
      status: { ...updated.status, conditions: [ready], addresses, nodeInfo: { ...(updated.status?.nodeInfo ?? {}), kubeletVersion: kubeletVersion ?? updated.status?.nodeInfo?.kubeletVersion ?? 'unknown' } },
    });
    return true;
  }

  private async nodeUnknown(st: GuestState): Promise<void> {
    const wl = this.workload(st);
    if (!wl || !st.nodeName) return;
    const n = await getShared<Node>(wl, { kind: 'Node', name: st.nodeName });
    // Only the Node this server registered: a replacement may already own the name.
    if (!n || (st.providerID && n.spec.providerID !== st.providerID)) return;
    const conds = (n.status?.conditions ?? []).filter((c) => c.type !== 'Ready');
    conds.push({ type: 'Ready', status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: rfc3339(this.ctx.clock.now()) });
    await wl.updateStatus<Node>({ ...n, status: { ...n.status, conditions: conds } });
    this.record('guest.node-unknown', `Node ${st.nodeName}: Ready Unknown (server ${st.serverId} gone)`, st);
  }

  // ------------------------------------------------------------------ files

  private readPath(st: GuestState, path: string): string | undefined {
    const r = this.route(st, path);
    return this.hv.readFile(r.volumeId, r.rel);
  }

  private writePath(st: GuestState, path: string, content: string): void {
    const r = this.route(st, path);
    this.hv.writeFile(r.volumeId, r.rel, content);
  }

  /** Absolute paths of the files under `dir` visible on the node (respecting mounts). */
  private listFiles(st: GuestState, dir: string): string[] {
    const d = norm(dir);
    const out = new Set<string>();
    for (const m of st.mounts) {
      const vol = this.hv.volume(m.volumeId);
      if (!vol) continue;
      const mp = norm(m.mountPath);
      for (const rel of Object.keys(vol.fs.files)) {
        const abs = norm(mp === '/' ? rel : `${mp}/${rel}`);
        if (!under(abs, d) || abs === d) continue;
        // The file is visible only if this mount is the one the path resolves to.
        if (this.route(st, abs).volumeId === m.volumeId) out.add(abs);
      }
    }
    return [...out].sort();
  }

  // ------------------------------------------------------------------ reporting

  private fail(st: GuestState, reason: string, rules?: string[]): void {
    st.phase = 'JoinFailed';
    st.reason = reason;
    this.log.error(`${st.hostname}: join failed: ${reason}`, { server: st.serverId, hostname: st.hostname, ...(rules ? { rules } : {}) });
    this.ctx.events.record({
      source: 'guest',
      type: 'guest.join-failed',
      message: `${st.hostname} (${st.serverId}): ${reason}`,
      data: { serverId: st.serverId, hostname: st.hostname },
      ...(rules ? { rules } : {}),
    });
  }

  private record(type: string, message: string, st: GuestState, rules?: string[], extra: Record<string, unknown> = {}): void {
    this.log.info(message, { server: st.serverId, hostname: st.hostname, ...extra });
    this.ctx.events.record({ source: 'guest', type, message, data: { serverId: st.serverId, hostname: st.hostname, ...extra }, ...(rules ? { rules } : {}) });
  }
}
