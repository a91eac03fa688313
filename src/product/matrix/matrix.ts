/**
 * The OS Support Matrix (UPG-4): which Alauda OS image, Kubernetes, CoreDNS,
 * etcd and Kube-OVN chart versions belong together, per ACP version. Loaded
 * from data/os-support-matrix.yaml (or any text in the same shape) and
 * validated: every error names the field (`rows[1].etcd: ...`).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { repoPath } from '../../core/repo.js';

export interface MatrixRow {
  acpVersion: string;
  /** IMS image name (HCSMachineTemplate spec.imageName). */
  alaudaOSImage: string;
  /** KubeadmControlPlane spec.version / MachineDeployment spec.template.spec.version. */
  kubernetesVersion: string;
  /** clusterConfiguration.dns.imageTag. */
  coredns: string;
  /** clusterConfiguration.etcd.local.imageTag. */
  etcd: string;
  /** acp/chart-cpaas-kube-ovn chart version (Cluster annotation cpaas.io/kube-ovn-version, AppRelease targetRevision). */
  kubeOvn: string;
}

export class MatrixError extends Error {
  constructor(
    readonly source: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${source}: ${field}: ${reason} (UPG-4)`);
    this.name = 'MatrixError';
  }
}

export const KUBE_OVN_CHART = 'acp/chart-cpaas-kube-ovn';

/** Default location of the matrix, relative to this module (works from src/ with tsx and vitest). */
export const DEFAULT_MATRIX_PATH = repoPath('data', 'os-support-matrix.yaml');

const K8S_VERSION = /^v\d+\.\d+\.\d+$/;
const ACP_VERSION = /^v\d+\.\d+(\.\d+)?$/;
const CHART_VERSION = /^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$/;
/** kubeadm image tags: CoreDNS "v1.11.3", etcd "3.5.15-0". */
const COREDNS_TAG = /^v?\d+\.\d+\.\d+$/;
const ETCD_TAG = /^\d+\.\d+\.\d+(-\d+)?$/;
const IMAGE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const ROW_FIELDS: { key: keyof MatrixRow; re: RegExp; what: string }[] = [
  { key: 'acpVersion', re: ACP_VERSION, what: 'an ACP version like v4.1' },
  { key: 'alaudaOSImage', re: IMAGE_NAME, what: 'an IMS image name' },
  { key: 'kubernetesVersion', re: K8S_VERSION, what: 'a Kubernetes version like v1.31.6' },
  { key: 'coredns', re: COREDNS_TAG, what: 'a CoreDNS image tag like v1.11.3' },
  { key: 'etcd', re: ETCD_TAG, what: 'an etcd image tag like 3.5.15-0' },
  { key: 'kubeOvn', re: CHART_VERSION, what: 'a chart version like v4.1.6' },
];

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class OsSupportMatrix {
  constructor(
    readonly rows: readonly MatrixRow[],
    /** chart name -> versions served by the chart repository. */
    readonly charts: Readonly<Record<string, readonly string[]>>,
  ) {}

  byAcp(acpVersion: string): MatrixRow | undefined {
    return this.rows.find((r) => r.acpVersion === acpVersion);
  }

  byKubernetesVersion(version: string | undefined): MatrixRow | undefined {
    if (!version) return undefined;
    const v = version.startsWith('v') ? version : `v${version}`;
    return this.rows.find((r) => r.kubernetesVersion === v);
  }

  byImage(imageName: string | undefined): MatrixRow | undefined {
    return imageName ? this.rows.find((r) => r.alaudaOSImage === imageName) : undefined;
  }

  byKubeOvn(chartVersion: string): MatrixRow | undefined {
    return this.rows.find((r) => r.kubeOvn === chartVersion);
  }

  /** Versions of `chart` in the chart repository ([] for an unknown chart). */
  chartVersions(chart: string): readonly string[] {
    return this.charts[chart] ?? [];
  }
}

/** Parse and validate matrix text. Throws MatrixError naming the field. */
export function parseOsSupportMatrix(text: string, source = 'os-support-matrix'): OsSupportMatrix {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new MatrixError(source, '(document)', `not valid YAML: ${(e as Error).message}`);
  }
  if (!isObj(doc)) throw new MatrixError(source, '(document)', 'must be a mapping with rows and chartRepository');
  const known = new Set(['apiVersion', 'kind', 'rows', 'chartRepository']);
  for (const k of Object.keys(doc)) if (!known.has(k)) throw new MatrixError(source, k, `unknown field (known: ${[...known].join(', ')})`);
  if (doc.kind !== undefined && doc.kind !== 'OSSupportMatrix') throw new MatrixError(source, 'kind', `must be OSSupportMatrix, got ${JSON.stringify(doc.kind)}`);
  if (!Array.isArray(doc.rows) || doc.rows.length === 0) throw new MatrixError(source, 'rows', 'must be a non-empty list');

  const charts: Record<string, string[]> = {};
  if (doc.chartRepository !== undefined) {
    if (!isObj(doc.chartRepository)) throw new MatrixError(source, 'chartRepository', 'must map chart names to lists of versions');
    for (const [name, versions] of Object.entries(doc.chartRepository)) {
      const field = `chartRepository.${name}`;
      if (!Array.isArray(versions)) throw new MatrixError(source, field, 'must be a list of versions');
      versions.forEach((v, i) => {
        if (typeof v !== 'string' || !CHART_VERSION.test(v)) throw new MatrixError(source, `${field}[${i}]`, `must be a chart version like v4.1.6, got ${JSON.stringify(v)}`);
      });
      charts[name] = [...(versions as string[])];
    }
  }

  const rows: MatrixRow[] = [];
  doc.rows.forEach((raw, i) => {
    const at = `rows[${i}]`;
    if (!isObj(raw)) throw new MatrixError(source, at, 'must be a mapping');
    for (const k of Object.keys(raw)) {
      if (!ROW_FIELDS.some((f) => f.key === k)) throw new MatrixError(source, `${at}.${k}`, `unknown field (known: ${ROW_FIELDS.map((f) => f.key).join(', ')})`);
    }
    const row = {} as MatrixRow;
    for (const f of ROW_FIELDS) {
      const v = raw[f.key];
      if (v === undefined || v === null || v === '') throw new MatrixError(source, `${at}.${f.key}`, `is required (${f.what})`);
      // YAML reads 3.5 or 1.11 as numbers; every cell must be quoted text or a version string.
      if (typeof v !== 'string') throw new MatrixError(source, `${at}.${f.key}`, `must be a string (${f.what}), got ${JSON.stringify(v)}; quote it`);
      if (!f.re.test(v)) throw new MatrixError(source, `${at}.${f.key}`, `must be ${f.what}, got ${JSON.stringify(v)}`);
      row[f.key] = v;
    }
    // Alauda OS image names carry the Kubernetes version they were built with (…-k8s-v1.31.6).
    const m = /-k8s-(v\d+\.\d+\.\d+)$/.exec(row.alaudaOSImage);
    if (m && m[1] !== row.kubernetesVersion) {
      throw new MatrixError(source, `${at}.alaudaOSImage`, `image ${row.alaudaOSImage} is built for ${m[1]} but the row's kubernetesVersion is ${row.kubernetesVersion}`);
    }
    for (const [k, label] of [
      ['acpVersion', 'ACP version'],
      ['alaudaOSImage', 'image'],
      ['kubernetesVersion', 'Kubernetes version'],
    ] as const) {
      const j = rows.findIndex((r) => r[k] === row[k]);
      if (j >= 0) throw new MatrixError(source, `${at}.${k}`, `${label} ${row[k]} already in rows[${j}]; one row per ${label}`);
    }
    const served = charts[KUBE_OVN_CHART];
    if (served && !served.includes(row.kubeOvn)) {
      throw new MatrixError(source, `${at}.kubeOvn`, `${row.kubeOvn} is not in chartRepository.${KUBE_OVN_CHART} (${served.join(', ')})`);
    }
    rows.push(row);
  });
  if (!charts[KUBE_OVN_CHART]) charts[KUBE_OVN_CHART] = [...new Set(rows.map((r) => r.kubeOvn))];
  return new OsSupportMatrix(rows, charts);
}

/** Load a matrix file (default: data/os-support-matrix.yaml). */
export function loadOsSupportMatrix(path: string = DEFAULT_MATRIX_PATH): OsSupportMatrix {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new MatrixError(path, '(file)', `cannot read: ${(e as Error).message}`);
  }
  return parseOsSupportMatrix(text, path);
}

let cached: OsSupportMatrix | undefined;

/** The default matrix, loaded once per process. */
export function defaultOsSupportMatrix(): OsSupportMatrix {
  return (cached ??= loadOsSupportMatrix());
}
