/**
 * Cloud-init injection (BOOT-2): the HCS controller resolves the bootstrap
 * cloud-config written by the KubeadmConfig controller and adds what only the
 * infrastructure provider knows: the node's kubelet certificate and key,
 * hostname, the node name and provider-id in the kubeadm JoinConfiguration,
 * and the disk/filesystem/mount setup of the ephemeral data volumes and the
 * pool-managed persistent disks. The format is documented in docs/provider.md.
 */
import type { DataVolume } from '../api/hcs.js';
import { dumpYaml, loadAllYaml, loadYaml, yamlErrorMessage } from '../../core/yaml.js';
import {
  dataVolumeDevicePath,
  dataVolumeLabel,
  persistentDiskLabel,
  volumeDevicePath,
} from './labels.js';

export const JOIN_CONFIG_PATH = '/run/kubeadm/kubeadm-join-config.yaml';
/** CAPBK's `kubeadm init` file of the first control plane machine (ClusterConfiguration + InitConfiguration). */
export const INIT_CONFIG_PATH = '/run/kubeadm/kubeadm.yaml';
export const KUBELET_CERT_PATH = '/etc/kubernetes/pki/kubelet.crt';
export const KUBELET_KEY_PATH = '/etc/kubernetes/pki/kubelet.key';

export interface WriteFile {
  path: string;
  content?: string;
  owner?: string;
  permissions?: string;
  encoding?: string;
  append?: boolean;
}

export interface FsSetupEntry {
  label?: string;
  filesystem: string;
  device: string;
  overwrite?: boolean;
  partition?: string;
}

/** The cloud-config keys the testbed reads; everything else is carried through unchanged. */
export interface CloudConfigDoc {
  hostname?: string;
  fqdn?: string;
  write_files?: WriteFile[];
  runcmd?: (string | string[])[];
  disk_setup?: Record<string, { table_type?: string; layout?: boolean; overwrite?: boolean }>;
  fs_setup?: FsSetupEntry[];
  /** cloud-init mounts: [device, mountPath, fstype, options, dump, pass]. */
  mounts?: string[][];
  [k: string]: unknown;
}

export interface PersistentDiskMount {
  slot: number;
  volumeId: string;
  mountPath: string;
  format: string;
  mountOptions?: string[];
}

export interface Injection {
  hostname: string;
  providerID: string;
  kubeletCertPem: string;
  kubeletKeyPem: string;
  dataVolumes: DataVolume[];
  persistentDisks: PersistentDiskMount[];
}

export class CloudInitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CloudInitError';
  }
}

/**
 * Parse a `#cloud-config` document. Throws CloudInitError for anything else.
 * Upstream CABPK's cloud-init starts with `## template: jinja` before
 * `#cloud-config` (cluster-api bootstrap/kubeadm/internal/cloudinit/cloudinit.go,
 * cloudConfigHeader); cloud-init reads that line as a template marker, so it
 * is accepted here too.
 */
export function parseCloudConfig(text: string): CloudConfigDoc {
  const trimmed = text.replace(/^\uFEFF/, '').replace(/^## template: jinja\r?\n/, '');
  if (!/^#cloud-config\s*(\n|$)/.test(trimmed)) {
    throw new CloudInitError('bootstrap data is not a "#cloud-config" document (only cloud-config bootstrap format is supported)');
  }
  let doc: unknown;
  try {
    doc = loadYaml(trimmed);
  } catch (e) {
    throw new CloudInitError(`bootstrap cloud-config does not parse as YAML: ${yamlErrorMessage(e)}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new CloudInitError('bootstrap cloud-config must be a YAML mapping');
  return doc as CloudConfigDoc;
}

export function renderCloudConfig(doc: CloudConfigDoc): string {
  return `#cloud-config\n${dumpYaml(doc)}`;
}

/** Content of a write_files entry as text (plain or base64). */
export function fileContent(f: WriteFile): string {
  const c = f.content ?? '';
  if (f.encoding === 'base64' || f.encoding === 'b64') return Buffer.from(c, 'base64').toString('utf8');
  return c;
}

/**
 * Set nodeRegistration.name and kubeletExtraArgs["provider-id"] in the
 * JoinConfiguration document(s) of a kubeadm config file. Handles the map
 * form (v1beta3) and the list form (v1beta4) of kubeletExtraArgs.
 */
export function patchJoinConfiguration(text: string, hostname: string, providerID: string): string {
  return patchNodeRegistration(text, 'JoinConfiguration', JOIN_CONFIG_PATH, hostname, providerID);
}

/**
 * The same for the InitConfiguration of the first control plane machine
 * (`kubeadm init --config /run/kubeadm/kubeadm.yaml`); the ClusterConfiguration
 * document next to it is left untouched.
 */
export function patchInitConfiguration(text: string, hostname: string, providerID: string): string {
  return patchNodeRegistration(text, 'InitConfiguration', INIT_CONFIG_PATH, hostname, providerID);
}

/** A `---` line: at the start of a line and followed by a space or the line end it can only be a document marker (the spec forbids it inside any scalar). */
const DOC_START = /^---(?=[ \t\r\n]|$)/gm;
/** Only directives, comments and blank lines. */
const PREAMBLE = /^(?:(?:%[^\n]*|[ \t]*#[^\n]*|[ \t\r]*)(?:\n|$))*$/;
/** What opens a document and is kept when its body is re-rendered: directives, comments, blank lines and a bare `---` line. */
const DOC_HEAD = /^(?:(?:%[^\n]*|[ \t]*#[^\n]*|[ \t\r]*)\n)*(?:---[ \t]*(?:#[^\n]*)?(?:\n|$))?/;

/** The source text of each document of a YAML stream, cut at its `---` markers; concatenated they give the text back. */
function splitDocuments(text: string): string[] {
  const cuts = Array.from(text.matchAll(DOC_START), (m) => m.index);
  if (cuts.length === 0) return [text];
  if (cuts[0] !== 0 && !PREAMBLE.test(text.slice(0, cuts[0]))) cuts.unshift(0);
  else cuts[0] = 0;
  return cuts.map((c, i) => text.slice(c, cuts[i + 1] ?? text.length));
}

function setNodeRegistration(doc: Record<string, unknown>, where: string, hostname: string, providerID: string): void {
  const nr = doc.nodeRegistration ?? (doc.nodeRegistration = {});
  if (typeof nr !== 'object' || Array.isArray(nr)) throw new CloudInitError(`${where}: nodeRegistration is not a mapping`);
  const reg = nr as Record<string, unknown>;
  reg.name = hostname;
  const args = reg.kubeletExtraArgs;
  if (args === undefined || args === null) {
    reg.kubeletExtraArgs = { 'provider-id': providerID };
  } else if (Array.isArray(args)) {
    const entry = args.find((a): a is Record<string, unknown> => typeof a === 'object' && a !== null && (a as { name?: unknown }).name === 'provider-id');
    if (entry) entry.value = providerID;
    else args.push({ name: 'provider-id', value: providerID });
  } else if (typeof args === 'object') {
    (args as Record<string, unknown>)['provider-id'] = providerID;
  } else {
    throw new CloudInitError(`${where}: nodeRegistration.kubeletExtraArgs is neither a map nor a list`);
  }
}

/**
 * Patch the `kind` documents of a kubeadm config file. Each document is
 * loaded on its own; only the patched ones are re-rendered (after their
 * directives/comments/`---` line), every other document is kept byte for
 * byte. A stream the `---` cut does not separate (a bare document after
 * `...`) is loaded whole and re-rendered whole.
 */
function patchNodeRegistration(text: string, kind: 'JoinConfiguration' | 'InitConfiguration', path: string, hostname: string, providerID: string): string {
  let segments: string[] | undefined = splitDocuments(text);
  let docs: unknown[];
  try {
    docs = segments.map(loadYaml);
  } catch {
    segments = undefined;
    try {
      docs = loadAllYaml(text);
    } catch (e) {
      throw new CloudInitError(`${path} does not parse as YAML: ${yamlErrorMessage(e)}`);
    }
  }
  let found = false;
  const out = docs.map((obj, i) => {
    const src = segments?.[i];
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj) || (obj as { kind?: unknown }).kind !== kind) return src ?? `---\n${dumpYaml(obj)}`;
    found = true;
    setNodeRegistration(obj as Record<string, unknown>, `the ${kind} in ${path}`, hostname, providerID);
    if (src === undefined) return `---\n${dumpYaml(obj)}`;
    const head = DOC_HEAD.exec(src)![0];
    // A marker carrying content on its line (`--- {kind: ...}`) is not part of the kept head: write a bare one.
    const marker = src.startsWith('---', head.length) ? '---\n' : '';
    return `${head}${marker}${dumpYaml(obj)}`;
  });
  if (!found) throw new CloudInitError(`${path} holds no ${kind} document`);
  return out.join('');
}

/**
 * Inject the provider's additions into the bootstrap cloud-config (BOOT-2).
 * User files are kept byte for byte; only the kubeadm configuration the node
 * runs is rewritten (node name, provider-id): the JoinConfiguration of a
 * worker or control plane join, or the InitConfiguration of the first
 * control plane machine (`kubeadm init`).
 */
export function injectCloudInit(original: string, inj: Injection): string {
  const doc = parseCloudConfig(original);
  const files = Array.isArray(doc.write_files) ? [...doc.write_files] : [];
  const joinIdx = files.findIndex((f) => f.path === JOIN_CONFIG_PATH);
  const initIdx = files.findIndex((f) => f.path === INIT_CONFIG_PATH);
  if (joinIdx < 0 && initIdx < 0) throw new CloudInitError(`bootstrap cloud-config has neither ${JOIN_CONFIG_PATH} (join) nor ${INIT_CONFIG_PATH} (init)`);
  if (joinIdx >= 0 && initIdx >= 0) throw new CloudInitError(`bootstrap cloud-config has both ${JOIN_CONFIG_PATH} and ${INIT_CONFIG_PATH}; a node either joins or initializes the cluster`);
  const idx = joinIdx >= 0 ? joinIdx : initIdx;
  const kubeadmFile = files[idx]!;
  const { encoding: _encoding, ...rest } = kubeadmFile;
  const patch = joinIdx >= 0 ? patchJoinConfiguration : patchInitConfiguration;
  files[idx] = { ...rest, content: patch(fileContent(kubeadmFile), inj.hostname, inj.providerID) };
  const withoutOurs = files.filter((f) => f.path !== KUBELET_CERT_PATH && f.path !== KUBELET_KEY_PATH);
  withoutOurs.push(
    { path: KUBELET_CERT_PATH, owner: 'root:root', permissions: '0644', content: inj.kubeletCertPem },
    { path: KUBELET_KEY_PATH, owner: 'root:root', permissions: '0600', content: inj.kubeletKeyPem },
  );
  doc.write_files = withoutOurs;
  doc.hostname = inj.hostname;
  doc.fqdn = inj.hostname;

  const diskSetup = { ...(doc.disk_setup ?? {}) };
  const fsSetup = [...(doc.fs_setup ?? [])];
  const mounts = [...(doc.mounts ?? [])];
  inj.dataVolumes.forEach((dv, i) => {
    const device = dataVolumeDevicePath(i);
    diskSetup[device] = { table_type: 'gpt', layout: false, overwrite: false };
    fsSetup.push({ label: dataVolumeLabel(i), filesystem: dv.format, device, overwrite: false });
    mounts.push([device, dv.mountPath, dv.format, 'defaults,nofail', '0', '2']);
  });
  for (const pd of [...inj.persistentDisks].sort((a, b) => a.slot - b.slot)) {
    const device = volumeDevicePath(pd.volumeId);
    diskSetup[device] = { table_type: 'gpt', layout: false, overwrite: false };
    // overwrite: false — a persistent disk is formatted only when it carries no filesystem yet (DISK-8).
    fsSetup.push({ label: persistentDiskLabel(pd.slot), filesystem: pd.format, device, overwrite: false });
    const opts = pd.mountOptions?.length ? pd.mountOptions.join(',') : 'defaults';
    mounts.push([device, pd.mountPath, pd.format, `${opts},nofail`, '0', '2']);
  }
  if (Object.keys(diskSetup).length) doc.disk_setup = diskSetup;
  if (fsSetup.length) doc.fs_setup = fsSetup;
  if (mounts.length) doc.mounts = mounts;
  return renderCloudConfig(doc);
}
