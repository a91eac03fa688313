import { describe, expect, it } from 'vitest';
import { defaultCloudConfig } from '../../mock-hcs/src/index.js';
import { DEFAULT_MATRIX_PATH, KUBE_OVN_CHART, MatrixError, loadOsSupportMatrix, parseOsSupportMatrix } from '../../src/world/workload/index.js';

const ROW = `  - acpVersion: v4.1
    alaudaOSImage: alauda-os-v4.1-k8s-v1.31.6
    kubernetesVersion: v1.31.6
    coredns: v1.11.3
    etcd: 3.5.15-0
    kubeOvn: v4.1.6
`;

function parseErr(text: string): MatrixError {
  try {
    parseOsSupportMatrix(text, 'm.yaml');
  } catch (e) {
    if (e instanceof MatrixError) return e;
    throw e;
  }
  throw new Error('expected a MatrixError');
}

describe('OS Support Matrix (UPG-4)', () => {
  const m = loadOsSupportMatrix();

  it('UPG-4: the data file loads; every row agrees with an image of the fake cloud (name and Kubernetes version)', () => {
    const images = defaultCloudConfig().images;
    expect(m.rows.length).toBeGreaterThanOrEqual(3);
    for (const r of m.rows) {
      const img = images.find((i) => i.name === r.alaudaOSImage);
      expect(img, r.alaudaOSImage).toBeDefined();
      expect(img!.kubernetesVersion).toBe(r.kubernetesVersion);
    }
    expect(m.byImage('alauda-os-v4.2-k8s-v1.32.3')?.acpVersion).toBe('v4.2');
    expect(m.byKubernetesVersion('1.31.6')?.alaudaOSImage).toBe('alauda-os-v4.1-k8s-v1.31.6');
    expect(m.byAcp('v4.0')?.kubernetesVersion).toBe('v1.30.10');
  });

  it('UPG-4, KCP-3: CoreDNS and etcd tags are the ones kubeadm pins for each Kubernetes release', () => {
    // kubeadm (cmd/kubeadm/app/constants/constants.go) for these patch releases.
    expect(m.rows.map((r) => [r.kubernetesVersion, r.coredns, r.etcd])).toEqual([
      ['v1.30.10', 'v1.11.3', '3.5.15-0'],
      ['v1.31.6', 'v1.11.3', '3.5.15-0'],
      ['v1.32.3', 'v1.11.3', '3.5.16-0'],
    ]);
  });

  it('OVN-5: the chart repository lists every kube-ovn version of the matrix', () => {
    const served = m.chartVersions(KUBE_OVN_CHART);
    for (const r of m.rows) expect(served).toContain(r.kubeOvn);
    expect(m.chartVersions('acp/unknown')).toEqual([]);
  });

  it('UPG-4: validation errors name the field', () => {
    expect(parseErr(`rows:\n${ROW.replace('    etcd: 3.5.15-0\n', '')}`).message).toMatch(/^m\.yaml: rows\[0\]\.etcd: is required/);
    expect(parseErr(`rows:\n${ROW.replace('3.5.15-0', '3.5')}`).message).toMatch(/rows\[0\]\.etcd: must be a string .*quote it/);
    expect(parseErr(`rows:\n${ROW.replace('v1.11.3', 'latest')}`).message).toMatch(/rows\[0\]\.coredns: must be a CoreDNS image tag/);
    expect(parseErr(`rows:\n${ROW}${ROW}`).message).toMatch(/rows\[1\]\.acpVersion: ACP version v4\.1 already in rows\[0\]/);
    expect(parseErr(`rows:\n${ROW.replace('kubernetesVersion: v1.31.6', 'kubernetesVersion: v1.32.3')}`).message).toMatch(/rows\[0\]\.alaudaOSImage: image .* is built for v1\.31\.6/);
    expect(parseErr(`rows:\n${ROW}chartRepository:\n  ${KUBE_OVN_CHART}: [v4.0.9]\n`).message).toMatch(/rows\[0\]\.kubeOvn: v4\.1\.6 is not in chartRepository/);
    expect(parseErr(`rows:\n${ROW}  - {acpVersion: v4.2, colour: blue}\n`).message).toMatch(/rows\[1\]\.colour: unknown field/);
    expect(parseErr('rows: [').message).toMatch(/\(document\): not valid YAML/);
    expect(parseErr('rows: []').message).toMatch(/rows: must be a non-empty list/);
    expect(parseErr(`kind: Other\nrows:\n${ROW}`).message).toMatch(/kind: must be OSSupportMatrix/);
    expect(() => loadOsSupportMatrix('/nonexistent/matrix.yaml')).toThrow(/\/nonexistent\/matrix\.yaml: \(file\): cannot read/);
    expect(DEFAULT_MATRIX_PATH).toMatch(/data\/os-support-matrix\.yaml$/);
  });
});
