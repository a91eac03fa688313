/**
 * The kubeconfig files the facade writes (docs/kube.md): `kubeconfig` (every
 * context, "management" current), `management.kubeconfig`, one per workload
 * cluster, and over TLS `client-cert.kubeconfig` (kubeadm's admin.conf user,
 * a client certificate and its private key). Each holds a credential (the
 * bearer token or the private key), so each is written 0600, also over a file
 * that was there before (src/core/secret-file.ts; issue 24).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { writeSecretFile } from '../../core/secret-file.js';

export interface KubeconfigFiles {
  /** One file, contexts "management" (current) and one per workload cluster (its name). */
  combined: string;
  management: string;
  /** "namespace/name" -> file whose current context is that workload cluster. */
  workloads: Record<string, string>;
  /** TLS only: the same contexts with a client certificate (kubernetes-admin, O=kubeadm:cluster-admins) instead of the token. */
  clientCert?: string;
}

export interface KubeconfigCluster {
  /** Context and cluster name ("management", or the workload cluster's name). */
  name: string;
  /** "namespace/name" of a workload cluster (absent for the management cluster). */
  key?: string;
  server: string;
}

export interface KubeconfigInput {
  /** The management cluster first, then the workload clusters. */
  clusters: KubeconfigCluster[];
  token: string;
  /** PEM of the serving CA (TLS); absent: plain http, insecure-skip-tls-verify. */
  caPem?: string;
  /** The admin client certificate of client-cert.kubeconfig (TLS only). */
  adminCert?: { username: string; certPem: string; keyPem: string };
}

/**
 * The file name of a workload cluster's kubeconfig: `<namespace>-<name>.kubeconfig`.
 * Admission bounds both parts (a namespace is at most 63 characters, a Cluster
 * name a label value of at most 63), but a file name must stay well inside
 * NAME_MAX (255 bytes, with room for writeSecretFile's temporary name) whatever
 * reaches here: a longer key is cut and given a digest of the whole key, so
 * two long keys never share a file (issue 32: a 300-character clusterName
 * once crashed serve with ENAMETOOLONG).
 */
export function workloadKubeconfigName(key: string): string {
  const base = key.replace('/', '-');
  if (Buffer.byteLength(base) <= 160) return `${base}.kubeconfig`;
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return `${Buffer.from(base).subarray(0, 120).toString('utf8').replace(/\uFFFD+$/, '')}-${digest}.kubeconfig`;
}

/** Write the kubeconfig files into `dir` (which exists), 0600 each. */
export function writeKubeconfigFiles(dir: string, input: KubeconfigInput): KubeconfigFiles {
  const { clusters, token, caPem, adminCert } = input;
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  const user = (cert: boolean) => (cert && adminCert ? { name: adminCert.username, user: { 'client-certificate-data': b64(adminCert.certPem), 'client-key-data': b64(adminCert.keyPem) } } : { name: 'testbed-admin', user: { token } });
  const render = (current: string, cert = false): string =>
    JSON.stringify(
      {
        apiVersion: 'v1',
        kind: 'Config',
        // Over TLS the CA is given; client-node refuses plain http unless insecure-skip-tls-verify is set (kubectl does not mind).
        clusters: clusters.map((c) => ({ name: c.name, cluster: { server: c.server, ...(caPem ? { 'certificate-authority-data': b64(caPem) } : { 'insecure-skip-tls-verify': true }) } })),
        users: [user(cert)],
        contexts: clusters.map((c) => ({ name: c.name, context: { cluster: c.name, user: user(cert).name } })),
        'current-context': current,
        preferences: {},
      },
      null,
      2,
    ) + '\n';
  const files: KubeconfigFiles = { combined: join(dir, 'kubeconfig'), management: join(dir, 'management.kubeconfig'), workloads: {} };
  writeSecretFile(files.combined, render('management'));
  writeSecretFile(files.management, render('management'));
  if (adminCert) {
    files.clientCert = join(dir, 'client-cert.kubeconfig');
    writeSecretFile(files.clientCert, render('management', true));
  }
  for (const c of clusters.slice(1)) {
    if (c.key === undefined) continue;
    const f = join(dir, workloadKubeconfigName(c.key));
    writeSecretFile(f, render(c.name));
    files.workloads[c.key] = f;
  }
  return files;
}
