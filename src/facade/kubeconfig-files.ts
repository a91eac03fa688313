/**
 * The kubeconfig files the facade writes (docs/kube.md): `kubeconfig` (every
 * context, "management" current), `management.kubeconfig`, one per workload
 * cluster, and over TLS `client-cert.kubeconfig` (kubeadm's admin.conf user,
 * a client certificate and its private key). Each holds a credential (the
 * bearer token or the private key), so each is written 0600, also over a file
 * that was there before (src/core/secret-file.ts; issue 24).
 */
import { join } from 'node:path';
import { writeSecretFile } from '../core/secret-file.js';

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
    const f = join(dir, `${c.key.replace('/', '-')}.kubeconfig`);
    writeSecretFile(f, render(c.name));
    files.workloads[c.key] = f;
  }
  return files;
}
