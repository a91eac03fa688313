/**
 * `hcs-testbed catalog`: the values the documents leave to the reader, at
 * hand (issue 25): the flavors (HCSMachineTemplate spec.flavorName, with the
 * zones that sell them), the images (spec.imageName, with the Kubernetes
 * version each carries, HCS-4), the availability zones
 * (spec.availabilityZone, TPL-2), the subnets (pool entries'
 * networks[].subnetName, NET-1) and the OS Support Matrix rows (UPG-4: the
 * image, spec.version, dns and etcd image tags of KCP-3 and the Kube-OVN
 * chart version of OVN-3/OVN-4).
 *
 * Read through public surfaces only: mock-hcs's catalog() (what its admin
 * API serves, GET /_admin/catalog) of the cloud `hcs-testbed serve` brings up
 * (its default configuration), and the matrix loader of src/product/matrix/matrix.ts
 * (data/os-support-matrix.yaml). The serve banner prints the short form.
 */
import { parseArgs } from 'node:util';
import { createMockHcs, type Catalog } from '../../../mock-hcs/src/index.js';
import { VirtualClock } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import { SeededRng } from '../../core/rng.js';
import { defaultOsSupportMatrix, type MatrixRow } from '../../product/matrix/matrix.js';

export const CATALOG_HELP = `hcs-testbed catalog — the values the documents' placeholders need

Usage:
  hcs-testbed catalog [--json]

Lists the flavors (spec.flavorName, with the zones that sell them), images
(spec.imageName, with the Kubernetes version each carries), availability zones
(spec.availabilityZone), subnets (a pool entry's networks[].subnetName) of the
cloud hcs-testbed serve brings up, and the OS Support Matrix rows
(data/os-support-matrix.yaml: image, Kubernetes, CoreDNS and etcd tags,
Kube-OVN chart) the upgrade document reads.

  --json      as JSON
  -h, --help  this text
`;

export interface CatalogValues {
  availabilityZones: string[];
  flavors: { name: string; vcpus: number; ramMiB: number; zones: string[] }[];
  images: { name: string; kubernetesVersion: string; status: string }[];
  subnets: { name: string; cidr: string; gateway: string; zone?: string }[];
  matrix: MatrixRow[];
}

/** The values from a cloud's catalog and the matrix. */
export function catalogValues(c: Catalog, matrix: readonly MatrixRow[]): CatalogValues {
  return {
    availabilityZones: [...c.availabilityZones],
    flavors: c.flavors.map((f) => ({ name: f.name, vcpus: f.vcpus, ramMiB: f.ramMiB, zones: f.availabilityZones.filter((z) => z.status !== 'abandon').map((z) => z.name) })),
    images: c.images.map((i) => ({ name: i.name, kubernetesVersion: i.kubernetesVersion, status: i.status })),
    subnets: c.subnets.map((s) => ({ name: s.name, cidr: s.cidr, gateway: s.gateway_ip, ...(s.availability_zone ? { zone: s.availability_zone } : {}) })),
    matrix: [...matrix],
  };
}

/** The catalog of the cloud serve brings up (mock-hcs's default configuration), read from a throw-away instance. */
export async function defaultCatalog(): Promise<CatalogValues> {
  const cloud = await createMockHcs({ clock: new VirtualClock(0), rng: new SeededRng(1) });
  try {
    return catalogValues(cloud.catalog(), defaultOsSupportMatrix().rows);
  } finally {
    await cloud.close();
  }
}

const table = (head: string[], rows: string[][]): string[] => {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]): string => `  ${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(w[i]!))).join('  ')}`.trimEnd();
  return [line(head), ...rows.map(line)];
};

/** The full text of `hcs-testbed catalog`. */
export function catalogText(v: CatalogValues): string {
  const out: string[] = [];
  out.push(`availability zones (HCSMachineTemplate spec.availabilityZone, TPL-2): ${v.availabilityZones.join(', ')}`);
  out.push('', 'flavors (spec.flavorName):');
  out.push(...table(['NAME', 'VCPUS', 'RAM', 'ZONES'], v.flavors.map((f) => [f.name, String(f.vcpus), `${f.ramMiB / 1024} GiB`, f.zones.join(', ')])));
  out.push('', 'images (spec.imageName; the Kubernetes version each carries, HCS-4):');
  out.push(...table(['NAME', 'KUBERNETES', 'STATUS'], v.images.map((i) => [i.name, i.kubernetesVersion, i.status])));
  out.push('', "subnets (a pool entry's networks[].subnetName, NET-1):");
  out.push(...table(['NAME', 'CIDR', 'GATEWAY', 'ZONE'], v.subnets.map((s) => [s.name, s.cidr, s.gateway, s.zone ?? '-'])));
  out.push('', 'OS Support Matrix (data/os-support-matrix.yaml, UPG-4): one row per upgrade, the four fields of KCP-3 and the Kube-OVN chart (OVN-3, OVN-4):');
  out.push(...table(['ACP', 'IMAGE (imageName)', 'KUBERNETES (spec.version)', 'COREDNS (dns.imageTag)', 'ETCD (etcd.local.imageTag)', 'KUBE-OVN (<kube-ovn-version-from-matrix>)'], v.matrix.map((r) => [r.acpVersion, r.alaudaOSImage, r.kubernetesVersion, r.coredns, r.etcd, r.kubeOvn])));
  return out.join('\n') + '\n';
}

/** The banner's short form: one line per kind of value. */
export function catalogSummary(v: CatalogValues): string[] {
  return [
    `values:    zones ${v.availabilityZones.join(', ')}; flavors ${v.flavors.map((f) => f.name).join(', ')}`,
    `           images ${v.images.map((i) => `${i.name} (${i.kubernetesVersion})`).join(', ')}`,
    `           subnets ${v.subnets.map((s) => `${s.name} ${s.cidr}`).join(', ')}; OS Support Matrix ${v.matrix.map((r) => `${r.acpVersion}: ${r.kubernetesVersion}, Kube-OVN ${r.kubeOvn}`).join('; ')}`,
    '           (hcs-testbed catalog lists them all, with the matrix\'s CoreDNS and etcd tags)',
  ];
}

export async function catalogMain(argv: string[], write: (s: string) => void): Promise<number> {
  let values;
  try {
    values = parseArgs({ args: argv, allowPositionals: false, options: { json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } } }).values;
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed catalog --help)\n`);
    return 2;
  }
  if (values.help) {
    write(CATALOG_HELP);
    return 0;
  }
  const v = await defaultCatalog();
  write(values.json ? `${JSON.stringify(v, null, 2)}\n` : catalogText(v));
  return 0;
}
