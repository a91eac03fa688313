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
 *   `provider.json`, the CA bundle): cloud URL, AK/SK, project, region and
 *   the management cluster's kubeconfig.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import { resolve, join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { defaultCloudConfig, type MockHcs } from '../../mock-hcs/src/index.js';
import { loopbackTls } from '../facade/auth.js';
import { writeSecretFile } from '../core/secret-file.js';

export const CAPI_MODES = ['embedded', 'upstream', 'external'] as const;
export type CapiMode = (typeof CAPI_MODES)[number];
export const PROVIDER_MODES = ['embedded', 'external'] as const;
export type ProviderMode = (typeof PROVIDER_MODES)[number];

/** The deployment name the scenario checks read the provider's log of (OPS-3). */
export const PROVIDER_DEPLOYMENT = 'hcs-controller-manager';

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
}

export class CloudFront {
  private current: MockHcs | undefined;
  private requests = 0;

  private constructor(
    private readonly server: ReturnType<typeof createServer>,
    readonly url: string,
    readonly caPem: string,
  ) {}

  /** Listen on 127.0.0.1 (`port` 0: a free one). */
  static async start(opts: { port?: number } = {}): Promise<CloudFront> {
    const tls = loopbackTls();
    const holder: { front?: CloudFront } = {};
    const server = createServer({ key: tls.server.keyPem, cert: tls.server.certPem }, (req, res) => void holder.front!.handle(req, res));
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(opts.port ?? 0, '127.0.0.1', () => ok());
    });
    const port = (server.address() as AddressInfo).port;
    holder.front = new CloudFront(server, `https://127.0.0.1:${port}`, tls.ca.certPem);
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

/**
 * Write `provider.env` (shell: `set -a; . provider.env`), `provider.json`
 * and `cloud-ca.pem` into `dir`, for the outside provider. Returns the files.
 */
export function writeExternalInfo(dir: string, front: CloudFront, mgmt: { kubeconfig: string; context?: string }, namespace = 'cpaas-system'): { env: string; json: string; info: ExternalInfo } {
  mkdirSync(dir, { recursive: true });
  const caFile = resolve(join(dir, 'cloud-ca.pem'));
  writeFileSync(caFile, front.caPem);
  const p = defaultProject();
  const info: ExternalInfo = { cloudUrl: front.url, caFile, ak: p.ak, sk: p.sk, projectId: p.id, region: p.region, kubeconfig: resolve(mgmt.kubeconfig), ...(mgmt.context ? { context: mgmt.context } : {}), namespace };
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
      '',
    ].join('\n'),
  );
  const json = join(dir, 'provider.json');
  writeSecretFile(json, JSON.stringify(info, null, 2) + '\n');
  return { env, json, info };
}
