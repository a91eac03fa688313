/**
 * A real management cluster for tests, as controller-runtime's envtest runs
 * one: etcd + kube-apiserver (built by tools/kube/build.sh) on loopback, on
 * free ports, with a fresh PKI (CA, serving cert for 127.0.0.1, service
 * account signing key, an admin client cert in system:masters) and a data
 * directory in a temp dir; a kubeconfig for it; clean shutdown (process
 * groups killed, temp dir removed). No controller manager runs: like envtest,
 * there is no garbage collector and no namespace finalization.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomInt } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { SeededRng } from '../../../core/rng.js';
import { generateCA, issueCertificate, type CertKeyPair } from '../../../core/pki/index.js';
import { findKubeBinaries, type KubeBinaries } from './binaries.js';
import { writeSecretFile } from '../../../core/secret-file.js';

export interface ControlPlaneOptions {
  binaries?: KubeBinaries;
  /**
   * kube-apiserver's watch cache (default off: watches and lists go to etcd,
   * so a version compacted away by `compact()` is 410 Gone at once, which the
   * contract suite checks; with the cache on, old versions stay servable
   * until the cache window moves).
   */
  watchCache?: boolean;
  /** Extra kube-apiserver flags (`--name=value`). */
  apiserverArgs?: string[];
  /** Startup timeout (default 60 s; a 2-core machine needs ~5-15 s). */
  timeoutMs?: number;
  /** Keep the temp dir (logs, certs) after stop(), for debugging. */
  keepDir?: boolean;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  url: string;
  etcdUrl: string;
  /** Temp dir: etcd data, certs, logs (etcd.log, kube-apiserver.log), kubeconfig. */
  dir: string;
  kubeconfigPath: string;
  /** Admin credentials (system:masters) and the CA. */
  ca: CertKeyPair;
  admin: CertKeyPair;
  /** Compact etcd up to its current revision: older resourceVersions become 410 Gone. */
  compact(): Promise<number>;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound then released; good enough on a test machine). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Proc {
  name: string;
  child: ChildProcess;
  log: string;
  exited: Promise<number | null>;
}

export function start(name: string, bin: string, args: string[], dir: string): Proc {
  const log = join(dir, `${name}.log`);
  const fd = openSync(log, 'a');
  // detached: own process group, so stop() can kill it and anything it forked.
  const child = spawn(bin, args, { cwd: dir, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => resolve(code));
    child.on('error', () => resolve(-1));
  });
  return { name, child, log, exited };
}

export async function killGroup(p: Proc, graceMs = 5000): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null || p.child.pid === undefined) return;
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(-p.child.pid!, s);
    } catch {
      /* already gone */
    }
  };
  signal('SIGTERM');
  const done = await Promise.race([p.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs))]);
  if (!done) {
    signal('SIGKILL');
    await p.exited;
  }
}

export function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

interface Got {
  status: number;
  body: string;
}

export function get(url: string, opts: https.RequestOptions & { method?: string } = {}, body?: string): Promise<Got> {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { timeout: 5000, ...opts }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export async function waitFor(what: string, p: Proc, deadline: number, probe: () => Promise<boolean>): Promise<void> {
  let last = '';
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`${p.name} exited with ${p.child.exitCode} before ${what}; last log lines:\n${tail(p.log)}`);
    try {
      if (await probe()) return;
    } catch (e) {
      last = (e as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (${last})` : ''}; last ${p.name} log lines:\n${tail(p.log)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A kubeconfig with embedded credentials (one cluster/user/context, all named `name`). */
export function kubeconfigYaml(name: string, server: string, ca: CertKeyPair, user: CertKeyPair): string {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': b64(ca.certPem) } }],
    users: [{ name, user: { 'client-certificate-data': b64(user.certPem), 'client-key-data': b64(user.keyPem) } }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
  });
}

/** Start etcd + kube-apiserver; resolves once /readyz is ok. */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const found = opts.binaries ?? findKubeBinaries();
  if ('missing' in found) throw new Error(found.missing);
  const bins = found;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const dir = mkdtempSync(join(tmpdir(), 'hcs-testbed-kube-'));
  const procs: Proc[] = [];
  const stop = async (): Promise<void> => {
    // apiserver first (it would log etcd errors otherwise), then etcd.
    for (const p of [...procs].reverse()) await killGroup(p);
    if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    // ---- PKI
    const now = Date.now();
    const rng = new SeededRng(randomInt(2 ** 31));
    const ca = await generateCA(rng, now, 'hcs-testbed-ca');
    const serving = await issueCertificate(ca, { commonName: 'kube-apiserver', dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'], ips: ['127.0.0.1'] }, rng, now);
    const admin = await issueCertificate(ca, { commonName: 'hcs-testbed-admin', organization: 'system:masters' }, rng, now);
    const sa = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const files = {
      ca: join(dir, 'ca.crt'),
      tlsCert: join(dir, 'apiserver.crt'),
      tlsKey: join(dir, 'apiserver.key'),
      saKey: join(dir, 'sa.key'),
      saPub: join(dir, 'sa.pub'),
    };
    writeFileSync(files.ca, ca.certPem);
    writeFileSync(files.tlsCert, serving.certPem);
    writeSecretFile(files.tlsKey, serving.keyPem);
    writeSecretFile(files.saKey, String(sa.privateKey.export({ type: 'pkcs8', format: 'pem' })));
    writeFileSync(files.saPub, sa.publicKey.export({ type: 'spki', format: 'pem' }));

    // ---- etcd
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const etcdUrl = `http://127.0.0.1:${clientPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const etcd = start(
      'etcd',
      bins.etcd,
      [
        '--name=default',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ],
      dir,
    );
    procs.push(etcd);
    await waitFor('etcd /health', etcd, deadline, async () => {
      const r = await get(`${etcdUrl}/health`);
      return r.status === 200 && r.body.includes('"true"');
    });

    // ---- kube-apiserver (flags as envtest sets them)
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const apiserver = start(
      'kube-apiserver',
      bins.kubeApiserver,
      [
        `--etcd-servers=${etcdUrl}`,
        `--secure-port=${port}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--cert-dir=${join(dir, 'cert')}`,
        `--tls-cert-file=${files.tlsCert}`,
        `--tls-private-key-file=${files.tlsKey}`,
        `--client-ca-file=${files.ca}`,
        `--service-account-issuer=${url}`,
        `--service-account-key-file=${files.saPub}`,
        `--service-account-signing-key-file=${files.saKey}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--authorization-mode=RBAC',
        '--disable-admission-plugins=ServiceAccount',
        '--allow-privileged=true',
        '--enable-priority-and-fairness=false',
        '--profiling=false',
        `--watch-cache=${opts.watchCache ? 'true' : 'false'}`,
        ...(opts.apiserverArgs ?? []),
      ],
      dir,
    );
    procs.push(apiserver);
    const tls: https.RequestOptions = { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem };
    await waitFor('kube-apiserver /readyz', apiserver, deadline, async () => (await get(`${url}/readyz`, tls)).status === 200);

    const kubeconfigPath = join(dir, 'kubeconfig');
    writeSecretFile(kubeconfigPath, kubeconfigYaml('hcs-testbed-real', url, ca, admin));

    const compact = async (): Promise<number> => {
      // etcd's gRPC gateway: read the current revision, compact to it (physical: wait until done).
      const headers = { 'Content-Type': 'application/json' };
      const r = await get(`${etcdUrl}/v3/kv/range`, { method: 'POST', headers }, JSON.stringify({ key: Buffer.from('/').toString('base64') }));
      const rev = Number((JSON.parse(r.body) as { header?: { revision?: string } }).header?.revision);
      if (!Number.isInteger(rev)) throw new Error(`etcd range: unexpected answer ${r.status} ${r.body}`);
      const c = await get(`${etcdUrl}/v3/kv/compaction`, { method: 'POST', headers }, JSON.stringify({ revision: String(rev), physical: true }));
      if (c.status !== 200 && !c.body.includes('compacted')) throw new Error(`etcd compaction: ${c.status} ${c.body}`);
      return rev;
    };
    return { url, etcdUrl, dir, kubeconfigPath, ca, admin, compact, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
