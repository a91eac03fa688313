/**
 * What a run shares with controllers outside it (`hcs-testbed run
 * --provider external`, `--capi external`):
 *
 * - the modes of the two flags;
 * - `CloudFront`: one HTTPS address (127.0.0.1) for the whole run where an
 *   outside provider reaches mock-hcs, signed AK/SK as against HCS. Each
 *   scenario has a fresh mock-hcs (its state, its virtual clock); the front
 *   forwards every request to the current scenario's one (`attach`), byte
 *   for byte (signature headers included), and answers 503 between
 *   scenarios;
 * - the info files a user's provider is started from (`provider.env`,
 *   `provider.json`, the CA bundle, a copy of the management cluster's
 *   kubeconfig): cloud URL, AK/SK, project, region, the kubeconfig, a health
 *   address that cannot collide with the run's own ports and the stop file;
 *   then the ready marker (`ready`, or `--external-ready-file`), written last,
 *   once they are all in place (docs/real-clusters.md §7).
 */
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { dirname, resolve, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { defaultCloudConfig, type MockHcs } from '../../../mock-hcs/src/index.js';
import { loopbackTls } from '../../world/facade/auth.js';
import { writeSecretFile } from '../../core/secret-file.js';

export const CAPI_MODES = ['embedded', 'upstream', 'external'] as const;
export type CapiMode = (typeof CAPI_MODES)[number];
/** in-cluster: the provider runs as deployment/hcs-controller-manager in the cluster (`hcs-testbed kind up --managers in-cluster`). */
export const PROVIDER_MODES = ['embedded', 'external', 'in-cluster'] as const;
export type ProviderMode = (typeof PROVIDER_MODES)[number];

export { PROVIDER_DEPLOYMENT } from '../../product/provider/process.js';

export interface ExternalInfo {
  cloudUrl: string;
  /** PEM file of the CA that signed the front's certificate (the provider's --ca-file). */
  caFile: string;
  ak: string;
  sk: string;
  projectId: string;
  region: string;
  kubeconfig: string;
  context?: string;
  namespace: string;
  /** Where the provider serves /healthz and /readyz: a free loopback port outside the kernel's ephemeral range, so none of the run's own listeners (port 0) can take it. */
  healthAddr: string;
  /** The run creates this file when it ends: the provider stops (as on SIGTERM) before the run takes the apiserver down. */
  stopFile: string;
}

export class CloudFront {
  private current: MockHcs | undefined;
  private requests = 0;

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    readonly url: string,
    readonly caPem: string,
  ) {}

  /**
   * Listen on 127.0.0.1 (`port` 0: a free one), or on `host` with a given certificate (`--provider in-cluster`:
   * the address on the kind network and the certificate `kind up` gave the in-cluster provider's CA).
   */
  static async start(opts: { port?: number; host?: string; tls?: { certPem: string; keyPem: string; caPem: string } } = {}): Promise<CloudFront> {
    const tls = opts.tls ? { server: { certPem: opts.tls.certPem, keyPem: opts.tls.keyPem }, ca: { certPem: opts.tls.caPem } } : loopbackTls();
    const host = opts.host ?? '127.0.0.1';
    const holder: { front?: CloudFront } = {};
    const server = createServer({ key: tls.server.keyPem, cert: tls.server.certPem }, (req, res) => void holder.front!.handle(req, res));
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(opts.port ?? 0, host, () => ok());
    });
    const port = (server.address() as AddressInfo).port;
    holder.front = new CloudFront(server, `https://${host.includes(':') ? `[${host}]` : host}:${port}`, tls.ca.certPem);
    return holder.front;
  }

  /** Requests forwarded so far (an outside provider that never called shows 0). */
  requestCount(): number {
    return this.requests;
  }

  attach(cloud: MockHcs): void {
    this.current = cloud;
  }

  detach(cloud: MockHcs): void {
    if (this.current === cloud) this.current = undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const cloud = this.current;
    if (!cloud) {
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error_code: 'APIGW.0503', error_msg: 'no scenario is running: the testbed is between scenarios' }));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    this.requests++;
    try {
      const out = await cloud.dispatch({ method: req.method ?? 'GET', path: req.url ?? '/', headers, ...(chunks.length ? { body: Buffer.concat(chunks).toString('utf8') } : {}) });
      const h = { ...out.headers };
      delete h['content-length'];
      delete h['transfer-encoding'];
      delete h['connection'];
      res.writeHead(out.status, h).end(out.body);
    } catch (e) {
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error_code: 'APIGW.0503', error_msg: `the scenario's mock-hcs is gone: ${(e as Error).message}` }));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** The first project of the default cloud (what every scenario's mock-hcs starts with). */
export function defaultProject(): { id: string; ak: string; sk: string; region: string } {
  const p = defaultCloudConfig().projects[0]!;
  return { id: p.id, ak: p.ak, sk: p.sk, region: p.region };
}

/** The kernel's ephemeral port range (what a listen on port 0 gets); Linux's default when it cannot be read. */
export function ephemeralPortRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (lo && hi && lo <= hi) return [lo, hi];
  } catch {
    // not Linux
  }
  return [32768, 60999];
}

/** True when nothing listens on 127.0.0.1:port now. */
export async function portFree(port: number): Promise<boolean> {
  const srv = createNetServer();
  return new Promise((ok) => {
    srv.once('error', () => ok(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => ok(true)));
  });
}

/**
 * A free loopback port below the ephemeral range, for the outside provider's
 * health endpoint: the run's own listeners (cloud front, webhook, apiserver,
 * facades) all listen on port 0 and so get ports inside the range, never this
 * one. Starts at a point derived from `salt` (the pid) so that concurrent runs
 * try different ports first.
 */
export async function pickHealthPort(salt = process.pid): Promise<number> {
  const [lo] = ephemeralPortRange();
  const base = Math.max(1024, Math.min(20000, lo - 4096));
  const span = Math.max(1, lo - base);
  for (let i = 0; i < Math.min(span, 512); i++) {
    const port = base + ((salt * 7 + i) % span);
    if (await portFree(port)) return port;
  }
  throw new Error(`no free loopback port below the ephemeral range (${lo}) for the provider's health endpoint`);
}

/** The files of `writeExternalInfo` that a previous run left: removed before a new run starts, so nobody starts from stale ones. */
export function clearExternalMarkers(dir: string, readyFile = join(dir, 'ready')): void {
  for (const f of [readyFile, join(dir, 'stop'), join(dir, 'provider.env'), join(dir, 'provider.json')]) rmSync(f, { force: true });
}

const writeAtomic = (file: string, text: string, mode = 0o600): void => {
  writeFileSync(`${file}.tmp`, text, { mode });
  renameSync(`${file}.tmp`, file);
};

/**
 * Write `provider.env` (shell: `set -a; . provider.env`), `provider.json`,
 * `cloud-ca.pem` and (with `copyKubeconfig`) `kubeconfig` into `dir`, for the
 * outside provider, then the ready marker (`readyFile`, default `dir/ready`:
 * the path of provider.env and a newline). Every file is written whole
 * (temporary file + rename), the marker last. Returns the files.
 */
export function writeExternalInfo(
  dir: string,
  front: CloudFront,
  mgmt: { kubeconfig: string; context?: string },
  o: { namespace?: string; healthPort: number; readyFile?: string; copyKubeconfig?: boolean },
): { env: string; json: string; ready: string; info: ExternalInfo } {
  mkdirSync(dir, { recursive: true });
  const caFile = resolve(join(dir, 'cloud-ca.pem'));
  writeAtomic(caFile, front.caPem, 0o644);
  let kubeconfig = resolve(mgmt.kubeconfig);
  if (o.copyKubeconfig) {
    const copy = resolve(join(dir, 'kubeconfig'));
    copyFileSync(kubeconfig, `${copy}.tmp`);
    renameSync(`${copy}.tmp`, copy);
    kubeconfig = copy;
  }
  const p = defaultProject();
  const info: ExternalInfo = {
    cloudUrl: front.url,
    caFile,
    ak: p.ak,
    sk: p.sk,
    projectId: p.id,
    region: p.region,
    kubeconfig,
    ...(mgmt.context ? { context: mgmt.context } : {}),
    namespace: o.namespace ?? 'cpaas-system',
    healthAddr: `127.0.0.1:${o.healthPort}`,
    stopFile: resolve(join(dir, 'stop')),
  };
  const env = join(dir, 'provider.env');
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  // AK/SK: 0600, also over an existing file (src/core/secret-file.ts; issue 24).
  writeSecretFile(
    env,
    [
      '# hcs-testbed run --provider external: what your provider needs (hcs-testbed provider reads these variables)',
      `HCS_CLOUD_URL=${q(info.cloudUrl)}`,
      `HCS_CA_FILE=${q(info.caFile)}`,
      `HCS_AK=${q(info.ak)}`,
      `HCS_SK=${q(info.sk)}`,
      `HCS_PROJECT_ID=${q(info.projectId)}`,
      `HCS_REGION=${q(info.region)}`,
      `KUBECONFIG=${q(info.kubeconfig)}`,
      ...(info.context ? [`KUBE_CONTEXT=${q(info.context)}`] : []),
      `HCS_NAMESPACE=${q(info.namespace)}`,
      '# serve /healthz and /readyz here (outside the ephemeral port range: the run\'s own listeners cannot hold it)',
      `HCS_HEALTH_ADDR=${q(info.healthAddr)}`,
      '# stop (as on SIGTERM) when this file appears: the run creates it when it ends, before it stops the apiserver',
      `HCS_STOP_FILE=${q(info.stopFile)}`,
      '',
    ].join('\n'),
  );
  const json = join(dir, 'provider.json');
  writeSecretFile(json, JSON.stringify(info, null, 2) + '\n');
  const ready = resolve(o.readyFile ?? join(dir, 'ready'));
  mkdirSync(dirname(ready), { recursive: true });
  writeAtomic(ready, `${resolve(env)}\n`, 0o644);
  return { env, json, ready, info };
}
