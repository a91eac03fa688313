/**
 * Cloud-init injection (BOOT-2): the HCS controller resolves the bootstrap
 * cloud-config written by the KubeadmConfig controller and adds what only the
 * infrastructure provider knows: the node's kubelet certificate and key,
 * hostname, the node name and provider-id in the kubeadm JoinConfiguration,
 * and the disk/filesystem/mount setup of the ephemeral data volumes and the
 * pool-managed persistent disks. The format is documented in docs/provider.md.
 */
import { dump, FAILSAFE_SCHEMA, load, loadAll, Type, YAMLException, type DumpOptions, type LoadOptions } from 'js-yaml';
import type { DataVolume } from '../api/hcs.js';
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

// ---------------------------------------------------------------- YAML
//
// The user data is read on the node by cloud-init, that is by PyYAML (YAML
// 1.1), and in the testbed by the guest (src/guest/cloudinit.ts) and the tests.
// Both hot paths (one injectCloudInit per server creation, one guest parse per
// boot) use js-yaml on plain JS values, several times faster than the `yaml`
// package's document model, with two schemas:
// - loading: the YAML 1.2 core schema, each plain scalar resolved exactly as
//   the `yaml` package resolves it (regular expressions of its core schema):
//   plain 0644 is the int 644, 0o14 and 0x1F are ints, 1e3 a float; "0644"
//   quoted, on, yes, 1_000, 0b101, 12:30 and timestamps stay strings; `<<` is
//   an ordinary key; a tag the schema does not know (e.g. !!binary) is an
//   error rather than a silently different value;
// - dumping: a plain, unambiguous #cloud-config: block style, keys in
//   insertion order, multi-line strings (PEM, JSON, kubeadm files) as literal
//   block scalars a person can read, and every single-line string that a
//   YAML 1.2 reader or PyYAML's YAML 1.1 resolver would take for something
//   other than a string (yes/no/on/off, 0644 octal, 1_000, 12:30, 2001-12-14,
//   <<, =, null, 1.5, ...) double-quoted, so the node reads what we meant.

const CORE_NULL = /^(?:~|[Nn]ull|NULL)?$/;
const CORE_BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const CORE_INT = /^[-+]?[0-9]+$/;
const CORE_INT_OCT = /^0o[0-7]+$/;
const CORE_INT_HEX = /^0x[0-9a-fA-F]+$/;
const CORE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;
const CORE_FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const CORE_FLOAT_SPECIAL = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;

/** The implicit resolvers of PyYAML (resolver.py, YAML 1.1): bool (with the y/n of the 1.1 spec), float, int, merge, null, timestamp, value. */
const YAML11_NON_STRING = [
  /^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/,
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/,
  /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/,
  /^(?:<<|=|~|null|Null|NULL|)$/,
  /^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$/,
];

/** The first character of every non-empty match above: most strings (paths, names, PEM) are ruled out with one test. */
const YAML11_FIRST = /^[-+.0-9<=~yYnNtTfFoO]/;

const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && !Object.is(v, -0);

// js-yaml passes a plain scalar's text to resolve/construct, or null for an empty node with an explicit tag.
const coreNull = new Type('tag:yaml.org,2002:null', {
  kind: 'scalar',
  resolve: (s: string | null) => s === null || CORE_NULL.test(s),
  construct: () => null,
  predicate: (v: unknown) => v === null,
  represent: () => 'null',
});
const coreBool = new Type('tag:yaml.org,2002:bool', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && CORE_BOOL.test(s),
  construct: (s: string) => s[0] === 't' || s[0] === 'T',
  predicate: (v: unknown) => typeof v === 'boolean',
  represent: (v: unknown) => (v ? 'true' : 'false'),
});
const coreInt = new Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && (CORE_INT.test(s) || CORE_INT_OCT.test(s) || CORE_INT_HEX.test(s)),
  construct: (s: string) => (s[1] === 'o' ? parseInt(s.slice(2), 8) : s[1] === 'x' ? parseInt(s.slice(2), 16) : parseInt(s, 10)),
  predicate: isInt,
  represent: (v: unknown) => String(v),
});
const coreFloat = new Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && (CORE_FLOAT.test(s) || CORE_FLOAT_EXP.test(s) || CORE_FLOAT_SPECIAL.test(s)),
  construct: (s: string) => (CORE_FLOAT_SPECIAL.test(s) ? (s.slice(-3).toLowerCase() === 'nan' ? NaN : s[0] === '-' ? -Infinity : Infinity) : parseFloat(s)),
  predicate: (v: unknown) => typeof v === 'number' && !isInt(v),
  represent: (v: unknown) => {
    const n = v as number;
    return Number.isNaN(n) ? '.nan' : n === Infinity ? '.inf' : n === -Infinity ? '-.inf' : Object.is(n, -0) ? '-0.0' : String(n);
  },
});
/** Never represents a value (no predicate): js-yaml's dumper quotes every string some implicit type resolves. */
const yaml11NonString = new Type('tag:yaml.org,2002:x-yaml11-non-string', {
  kind: 'scalar',
  resolve: (s: string | null) => s !== null && (s === '' || YAML11_FIRST.test(s)) && YAML11_NON_STRING.some((re) => re.test(s)),
});

const LOAD_SCHEMA = FAILSAFE_SCHEMA.extend({ implicit: [coreNull, coreBool, coreInt, coreFloat] });
const DUMP_SCHEMA = LOAD_SCHEMA.extend({ implicit: [yaml11NonString] });
const LOAD_OPTIONS: LoadOptions = { schema: LOAD_SCHEMA };
// noRefs stays false: an object the input shares through an alias is written once with an anchor (as `yaml` does),
// never expanded (an alias bomb stays small); values built here are never shared, so they get no anchors.
const DUMP_OPTIONS: DumpOptions = { schema: DUMP_SCHEMA, lineWidth: -1, quotingType: '"', skipInvalid: true };

/** One YAML document, loaded with the schema above. Throws on invalid YAML (see yamlErrorMessage). */
export function loadYaml(text: string): unknown {
  return load(text, LOAD_OPTIONS);
}

/** Every document of a YAML stream, loaded with the schema above. */
export function loadAllYaml(text: string): unknown[] {
  return loadAll(text, null, LOAD_OPTIONS);
}

/** A value as a block-style YAML document (no `---`), unambiguous to YAML 1.1 and 1.2 readers. */
export function dumpYaml(value: unknown): string {
  return dump(value, DUMP_OPTIONS);
}

/** The reason of a YAML error and where it is, on one line. */
export function yamlErrorMessage(e: unknown): string {
  if (e instanceof YAMLException) return e.mark ? `${e.reason} at line ${e.mark.line + 1}, column ${e.mark.column + 1}` : e.reason;
  return e instanceof Error ? e.message : String(e);
}

/** Parse a `#cloud-config` document. Throws CloudInitError for anything else. */
export function parseCloudConfig(text: string): CloudConfigDoc {
  const trimmed = text.replace(/^\uFEFF/, '');
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
