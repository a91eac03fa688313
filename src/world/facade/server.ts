/**
 * An HTTP facade that serves the embedded management cluster, and every
 * simulated workload cluster under /clusters/<namespace>/<name> and on its
 * own address, with enough of the Kubernetes REST API that the real kubectl
 * works against it: discovery, OpenAPI v3, get/list/watch (JSON lines),
 * server-side tables, create/update/patch (json, merge; strategic for
 * built-in kinds only)/delete, the status and scale subresources, eviction,
 * Events, pods/log for the controller deployments and pods/portforward to the
 * etcd members and kube-apiservers. Errors are metav1.Status objects. See
 * docs/kube.md. The routes are fastify plugins (app.ts); this module starts
 * them and keeps the kubeconfig files.
 */
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../core/clock.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import type { ControllerLogs } from '../../core/runtime/context.js';
import type { EmbeddedWorkloadClusters } from '../embedded.js';
import { ensureManagementNode } from '../workload/management.js';
import { buildFacadeApp } from './app.js';
import { ConnectionGuard, defaultConnectionLimits, LISTEN_BACKLOG, SERVER_TIMEOUTS, type ConnectionLimits, type ConnectionStats, type ServerTimeouts } from './connections.js';
import { CERT_USER, issueClientCertificate, loopbackTls, newToken } from './auth.js';
import { ensureControllerObjects, ensureNamespaces, KNOWN_CONTROLLER_DEPLOYMENTS, CONTROLLER_NAMESPACE } from './controllers.js';
import { SERVER_VERSION } from './discovery.js';
import type { WorkloadEtcd } from './etcd/members.js';
import { OpenStreams, type FacadeContext, type FacadeExtension } from './http/context.js';
import { writeKubeconfigFiles, type KubeconfigCluster, type KubeconfigFiles } from './kubeconfig-files.js';
import type { ClusterCaSource, EtcdCaSource } from './portforward/etcd-forward.js';

export type { FacadeExtension };

export interface FacadeOptions {
  mgmt: EmbeddedStore;
  workloads?: EmbeddedWorkloadClusters;
  /** Controller logs served as the pods/log of the controller deployments. */
  logs?: ControllerLogs;
  /** The simulation clock (ages in tables are computed on it). */
  clock: Clock;
  /** Default 0 (an ephemeral port). */
  port?: number;
  host?: string;
  /** Directory for kubeconfig files (default: a fresh temp dir). */
  kubeconfigDir?: string;
  /** Routes beside the Kubernetes API (the dashboard and the time API of `hcs-testbed serve`). */
  extension?: FacadeExtension;
  /** The bearer token clients must send (default: a fresh random one; it goes into the kubeconfig). */
  token?: string;
  /**
   * Serve HTTPS with a fresh loopback CA and certificate (default true: client-go,
   * hence kubectl, sends no bearer token over plain http). false: plain http.
   */
  tls?: boolean;
  /**
   * The etcd CA of workload cluster `<namespace>/<cluster>` (Cluster API's `<cluster>-etcd` Secret), for the
   * etcd members served through pods/etcd-<node>/portforward (etcd-forward.ts); undefined: the forward is refused.
   */
  etcdCa?: EtcdCaSource;
  /** The cluster CA (`<cluster>-ca`): signs the kube-apiserver pods' certificates behind pods/kube-apiserver-<node>/portforward (apiserver-forward.ts); undefined: refused. */
  clusterCa?: ClusterCaSource;
  /** Told of a failure in background work that must not end the server (default: written to stderr). */
  onError?: (message: string) => void;
  /** Connection limits and timeouts (connections.ts; default: its defaults). Tests shorten them. */
  limits?: { connections?: Partial<ConnectionLimits>; timeouts?: Partial<ServerTimeouts> };
}

export interface Facade {
  url: string;
  /** Base URL of a workload cluster's API. */
  clusterUrl(namespace: string, name: string): string;
  /** The management cluster's kubeconfig. */
  kubeconfigPath: string;
  kubeconfigPaths: KubeconfigFiles;
  /** (Re)write kubeconfig files, e.g. after new workload clusters appeared. */
  writeKubeconfig(dir?: string): KubeconfigFiles;
  /** Number of watch streams currently open (tests wait for a client's watch to be established). */
  openWatches(): number;
  /** The bearer token of the generated kubeconfig. */
  token: string;
  /** Headers that authenticate a raw HTTP client ({Authorization: Bearer ...}). */
  authHeaders(): Record<string, string>;
  /** PEM of the CA that signed the serving certificate (TLS only). */
  caPem?: string;
  /** TLS only: a client certificate for `username` (CN) in `group` (O), signed by the facade's CA, valid a year from `nowMs` (default: the wall time). */
  issueClientCertificate(username: string, group?: string, nowMs?: number): { certPem: string; keyPem: string };
  /** The dashboard's address with the token (opening it sets the browser's cookie). */
  dashboardUrl: string;
  /** The etcd served for workload cluster `<namespace>/<name>` (etcd-members.ts), if it is served. */
  etcd(namespace: string, name: string): WorkloadEtcd | undefined;
  /** Open connections, and those closed or refused by the limits (connections.ts). */
  connections(): ConnectionStats;
  close(): Promise<void>;
}

/** What the plugins share (http/context.ts), with the management cluster made ready: namespaces, its Node, the controller Deployments. */
export async function facadeContext(opts: Pick<FacadeOptions, 'mgmt' | 'workloads' | 'logs' | 'clock' | 'extension'>, token: string, clientCa: X509Certificate | undefined): Promise<FacadeContext> {
  const { mgmt, logs, clock } = opts;
  const prepared = new WeakSet<EmbeddedStore>([mgmt]);
  const ctx: FacadeContext = {
    mgmt,
    workloads: opts.workloads,
    logs,
    clock,
    token,
    clientCa,
    extension: opts.extension,
    streams: new OpenStreams(),
    ensureControllers: async () => {
      const names = [...new Set([...KNOWN_CONTROLLER_DEPLOYMENTS, ...(logs?.deployments() ?? [])])].sort();
      await ensureControllerObjects(mgmt, names, clock);
    },
    prepare: async (store) => {
      if (prepared.has(store)) return;
      prepared.add(store);
      await ensureNamespaces(store);
    },
  };
  await ensureNamespaces(mgmt);
  // A management cluster that looks like kind's: its own Node (src/world/workload/management.ts).
  await ensureManagementNode(mgmt, clock, SERVER_VERSION.gitVersion.replace(/\+.*$/, ''));
  await ctx.ensureControllers();
  return ctx;
}

export async function startFacade(opts: FacadeOptions): Promise<Facade> {
  const token = opts.token ?? newToken();
  const tls = opts.tls === false ? undefined : loopbackTls(Date.now(), opts.host);
  // Client certificates are asked for, not required: a client without one (or with one from another CA) may
  // still authenticate with the token. They are checked against the facade's CA in src/world/facade/auth.ts
  // (signedBy), not by OpenSSL: no `ca` here (why: auth.ts).
  const serverTls = tls ? { key: tls.server.keyPem, cert: tls.server.certPem, requestCert: true, rejectUnauthorized: false } : undefined;
  const ctx = await facadeContext(opts, token, tls ? new X509Certificate(tls.ca.certPem) : undefined);
  const host = opts.host ?? '127.0.0.1';
  const connections = new ConnectionGuard({ ...defaultConnectionLimits(), ...opts.limits?.connections });
  const timeouts = { ...SERVER_TIMEOUTS, ...opts.limits?.timeouts };
  const app = await buildFacadeApp({ ctx, https: serverTls, host, etcdCa: opts.etcdCa, clusterCa: opts.clusterCa, connections, timeouts });
  const address = await app.listen({ port: opts.port ?? 0, host, backlog: LISTEN_BACKLOG });
  const url = address.replace('[::1]', '127.0.0.1').replace('//localhost:', '//127.0.0.1:');
  const { workloads } = opts;
  // Every workload cluster also gets its own address, as real clusters have (src/world/facade/listeners.ts).
  const listeners = app.workloadListeners;
  // The client certificate of client-cert.kubeconfig (kubeadm's admin.conf user).
  const adminCert = tls ? issueClientCertificate(tls, CERT_USER.username, CERT_USER.group) : undefined;
  const prefixedUrl = (namespace: string, name: string): string => `${url}/clusters/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  const clusterUrl = (namespace: string, name: string): string => listeners.url(`${namespace}/${name}`) ?? prefixedUrl(namespace, name);
  // The <cluster>-kubeconfig Secrets point here while the facade serves (src/world/capi/kubeconfig.ts).
  const endpoints = (namespace: string, name: string) => ({ server: clusterUrl(namespace, name), ...(tls ? { certificateAuthorityData: tls.ca.certPem } : { insecureSkipTlsVerify: true }), token });
  for (const key of workloads?.names() ?? []) await listeners.ensure(key);
  workloads?.setEndpoints(endpoints);
  let closed = false;
  // A workload cluster created later: its address, then the kubeconfig files and the Secrets follow.
  workloads?.onCreate((key) => {
    listeners.ensure(key).then(
      () => {
        if (closed) return;
        // A failure here (a full disk, a file name the system refuses) must not end serve: the
        // workload cluster keeps its prefixed address and the files stay as they were (issue 32).
        try {
          kubeconfigPaths = writeKubeconfig(lastDir);
        } catch (e) {
          (opts.onError ?? ((m: string) => process.stderr.write(`facade: ${m}\n`)))(`kubeconfig files not rewritten for workload cluster ${key}: ${(e as Error).message}`);
        }
        workloads.setEndpoints(endpoints);
      },
      () => undefined, // closed meanwhile
    );
  });

  let defaultDir = opts.kubeconfigDir;
  let lastDir: string | undefined;
  const writeKubeconfig = (dir?: string): KubeconfigFiles => {
    const d = dir ?? lastDir ?? (defaultDir ??= mkdtempSync(join(tmpdir(), 'hcs-facade-')));
    lastDir = d;
    mkdirSync(d, { recursive: true });
    const clusters: KubeconfigCluster[] = [{ name: 'management', server: url }, ...(workloads?.names() ?? []).map((k) => {
      const [ns, n] = k.split('/') as [string, string];
      return { name: n, key: k, server: clusterUrl(ns, n) };
    })];
    return writeKubeconfigFiles(d, { clusters, token, ...(tls ? { caPem: tls.ca.certPem } : {}), ...(adminCert ? { adminCert: { username: CERT_USER.username, ...adminCert } } : {}) });
  };

  let kubeconfigPaths = writeKubeconfig();
  return {
    url,
    clusterUrl,
    get kubeconfigPath() {
      return kubeconfigPaths.management;
    },
    get kubeconfigPaths() {
      return kubeconfigPaths;
    },
    writeKubeconfig: (dir?: string) => (kubeconfigPaths = writeKubeconfig(dir)),
    openWatches: () => ctx.streams.size,
    token,
    authHeaders: () => ({ Authorization: `Bearer ${token}` }),
    ...(tls ? { caPem: tls.ca.certPem } : {}),
    issueClientCertificate: (username: string, group?: string, nowMs?: number) => {
      if (!tls) throw new Error('client certificates need TLS (the facade was started with tls: false)');
      return issueClientCertificate(tls, username, group, nowMs);
    },
    dashboardUrl: `${url}/?token=${encodeURIComponent(token)}`,
    etcd: (namespace: string, name: string) => app.portForwards.etcd(`${namespace}/${name}`),
    connections: () => connections.stats(),
    close: async () => {
      closed = true;
      workloads?.setEndpoints(undefined);
      ctx.streams.endAll();
      await app.close();
    },
  };
}

export { CONTROLLER_NAMESPACE };
