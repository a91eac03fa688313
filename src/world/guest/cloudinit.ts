/**
 * The guest side of cloud-init: what a booting HCS server reads from its
 * user data (a `#cloud-config` document). Only the modules the testbed
 * models are interpreted: hostname/fqdn, write_files, disk_setup, fs_setup,
 * mounts and runcmd.
 */
import { loadAllYaml, loadYaml, yamlErrorMessage } from '../../core/yaml.js';

export interface GuestWriteFile {
  path: string;
  content: string;
  append: boolean;
  permissions?: string;
}

export interface GuestFsSetup {
  device: string;
  filesystem: string;
  label?: string;
  overwrite: boolean;
}

export interface GuestMount {
  device: string;
  mountPath: string;
  fsType?: string;
  options: string[];
}

export interface GuestCloudConfig {
  hostname?: string;
  files: GuestWriteFile[];
  fsSetup: GuestFsSetup[];
  mounts: GuestMount[];
  runcmd: string[];
}

export class GuestCloudInitError extends Error {}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

export function parseGuestCloudConfig(text: string): GuestCloudConfig {
  if (!/^\uFEFF?#cloud-config\s*(\n|$)/.test(text)) throw new GuestCloudInitError('user data is not a #cloud-config document');
  let raw: unknown;
  try {
    raw = loadYaml(text);
  } catch (e) {
    throw new GuestCloudInitError(`user data does not parse as YAML: ${yamlErrorMessage(e)}`);
  }
  const doc = (raw ?? {}) as Record<string, unknown>;
  const files: GuestWriteFile[] = [];
  for (const f of Array.isArray(doc.write_files) ? (doc.write_files as Record<string, unknown>[]) : []) {
    const path = str(f.path);
    if (!path) continue;
    const enc = str(f.encoding);
    const c = str(f.content) ?? '';
    files.push({
      path,
      content: enc === 'b64' || enc === 'base64' ? Buffer.from(c, 'base64').toString('utf8') : c,
      append: f.append === true,
      ...(str(f.permissions) ? { permissions: str(f.permissions)! } : {}),
    });
  }
  const fsSetup: GuestFsSetup[] = [];
  for (const f of Array.isArray(doc.fs_setup) ? (doc.fs_setup as Record<string, unknown>[]) : []) {
    const device = str(f.device);
    const filesystem = str(f.filesystem);
    if (!device || !filesystem) continue;
    fsSetup.push({ device, filesystem, ...(str(f.label) ? { label: str(f.label)! } : {}), overwrite: f.overwrite === true });
  }
  const mounts: GuestMount[] = [];
  for (const m of Array.isArray(doc.mounts) ? (doc.mounts as unknown[][]) : []) {
    if (!Array.isArray(m) || m.length < 2) continue;
    const device = str(m[0]);
    const mountPath = str(m[1]);
    if (!device || !mountPath) continue;
    mounts.push({ device, mountPath, ...(str(m[2]) ? { fsType: str(m[2])! } : {}), options: (str(m[3]) ?? 'defaults').split(',') });
  }
  const runcmd = (Array.isArray(doc.runcmd) ? doc.runcmd : []).map((c) => (Array.isArray(c) ? c.map(String).join(' ') : String(c)));
  return { ...(str(doc.hostname) ? { hostname: str(doc.hostname)! } : {}), files, fsSetup, mounts, runcmd };
}

/** The kubeadm configuration a `kubeadm join|init --config <file>` command uses. */
export interface KubeadmNodeConfig {
  kind: 'JoinConfiguration' | 'InitConfiguration';
  nodeName?: string;
  kubeletExtraArgs: Record<string, string>;
  patchesDirectory?: string;
  taints?: { key: string; value?: string; effect: string }[];
  /** InitConfiguration, or a JoinConfiguration with `controlPlane` (kubeadm's mark-control-plane phase runs). */
  controlPlane: boolean;
}

/** The first JoinConfiguration/InitConfiguration of a kubeadm config file; undefined when it holds none or is not YAML (kubeadm refuses both). */
export function parseKubeadmConfig(text: string): KubeadmNodeConfig | undefined {
  let docs: unknown[];
  try {
    docs = loadAllYaml(text);
  } catch {
    return undefined;
  }
  for (const d of docs) {
    const o = d as Record<string, unknown> | null;
    if (!o || (o.kind !== 'JoinConfiguration' && o.kind !== 'InitConfiguration')) continue;
    const nr = (o.nodeRegistration ?? {}) as Record<string, unknown>;
    const argsRaw = nr.kubeletExtraArgs;
    const args: Record<string, string> = {};
    if (Array.isArray(argsRaw)) for (const a of argsRaw as { name?: unknown; value?: unknown }[]) args[String(a.name)] = String(a.value ?? '');
    else if (argsRaw && typeof argsRaw === 'object') for (const [k, v] of Object.entries(argsRaw)) args[k] = String(v);
    const patches = o.patches as { directory?: unknown } | undefined;
    return {
      kind: o.kind,
      ...(str(nr.name) ? { nodeName: str(nr.name)! } : {}),
      kubeletExtraArgs: args,
      ...(str(patches?.directory) ? { patchesDirectory: str(patches?.directory)! } : {}),
      ...(Array.isArray(nr.taints) ? { taints: nr.taints as KubeadmNodeConfig['taints'] } : {}),
      controlPlane: o.kind === 'InitConfiguration' || (typeof o.controlPlane === 'object' && o.controlPlane !== null),
    };
  }
  return undefined;
}

/** The kubeadm command of runcmd, with its --config file (default: CAPI's paths). */
export function kubeadmCommand(runcmd: string[]): { verb: 'join' | 'init'; configPath: string } | undefined {
  for (const c of runcmd) {
    const m = /\bkubeadm\s+(join|init)\b(.*)/.exec(c);
    if (!m) continue;
    const verb = m[1] as 'join' | 'init';
    const cfg = /--config[=\s]+(\S+)/.exec(m[2] ?? '');
    return { verb, configPath: cfg?.[1] ?? (verb === 'join' ? '/run/kubeadm/kubeadm-join-config.yaml' : '/run/kubeadm/kubeadm.yaml') };
  }
  return undefined;
}
