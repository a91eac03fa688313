/**
 * The client side of the live testbed's time API (time-api.ts serves it under
 * the facade): where the server is (a kubeconfig written by `hcs-testbed
 * serve`, or --server/--token) and one JSON call. Used by `hcs-testbed time`
 * (src/harness/cli/time.ts) and the guided demo (src/harness/demo/run.ts).
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { errorMessage } from '../../core/errors.js';
import { parseYamlValue } from '../../core/yaml-limits.js';

export interface Target {
  server: string;
  token?: string;
  ca?: string;
}

interface KubeconfigDoc {
  clusters?: { name: string; cluster: { server: string; 'certificate-authority-data'?: string } }[];
  users?: { name: string; user: { token?: string } }[];
  contexts?: { name: string; context: { cluster: string; user: string } }[];
}

/** The management context's server, token and CA from a kubeconfig serve wrote. */
export function targetFromKubeconfig(file: string): Target {
  let doc: KubeconfigDoc;
  try {
    doc = parseYamlValue(readFileSync(file, 'utf8')) as KubeconfigDoc; // within the YAML limits
  } catch (e) {
    throw new Error(`--kubeconfig ${file}: ${errorMessage(e)}`);
  }
  const ctx = doc.contexts?.find((c) => c.name === 'management') ?? doc.contexts?.[0];
  const cluster = doc.clusters?.find((c) => c.name === ctx?.context.cluster);
  if (!ctx || !cluster) throw new Error(`--kubeconfig ${file}: no management context (is it a kubeconfig written by hcs-testbed serve?)`);
  const user = doc.users?.find((u) => u.name === ctx.context.user);
  const caData = cluster.cluster['certificate-authority-data'];
  return { server: cluster.cluster.server, ...(user?.user.token ? { token: user.user.token } : {}), ...(caData ? { ca: Buffer.from(caData, 'base64').toString('utf8') } : {}) };
}

export function call(t: Target, method: string, path: string, body?: unknown): Promise<{ code: number; json: unknown }> {
  const url = new URL(path, t.server.endsWith('/') ? t.server : `${t.server}/`);
  // A control call is JSON, even without arguments (src/harness/dashboard/control-guard.ts).
  const payload = body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(body);
  const headers: Record<string, string> = { Accept: 'application/json', ...(payload ? { 'Content-Type': 'application/json' } : {}), ...(t.token ? { Authorization: `Bearer ${t.token}` } : {}) };
  return new Promise((resolveCall, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers, ...(t.ca ? { ca: t.ca } : {}), timeout: 60_000 }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (data += d));
      res.on('end', () => {
        let json: unknown = data;
        try {
          json = JSON.parse(data);
        } catch {
          /* not JSON: reported as text */
        }
        resolveCall({ code: res.statusCode ?? 0, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${t.server} within 60 s`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** The server to call: --server/--token, else the kubeconfig's management context (--kubeconfig or $KUBECONFIG). Throws a usage message. */
export function resolveTarget(v: { kubeconfig?: string; server?: string; token?: string }): Target {
  const kc = v.kubeconfig ?? process.env.KUBECONFIG?.split(':')[0];
  const fromKc = kc ? targetFromKubeconfig(kc) : undefined;
  const server = v.server ?? fromKc?.server;
  if (!server) throw new Error('where is the server? give --server URL or --kubeconfig FILE (or set KUBECONFIG to the file serve printed)');
  try {
    new URL(server);
  } catch {
    throw new Error(`--server: not a URL: "${server}"`);
  }
  const token = v.token ?? fromKc?.token;
  return { server, ...(token ? { token } : {}), ...(fromKc?.ca ? { ca: fromKc.ca } : {}) };
}

