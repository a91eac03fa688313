/**
 * `hcs-testbed serve` as a user starts it: the real command line in a child
 * process (bin/hcs-testbed.mjs serve --preset … --speed 0 --port 0), its
 * banner read for the kubeconfig, the contexts and the workload kubeconfig
 * it prints; virtual time moved only through its time API
 * (POST /_testbed/time/advance, what `hcs-testbed time advance` sends), so
 * the run is deterministic. The state a test checks is read through the
 * served API with the kubeconfig's token and CA. Every wait is bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../facade/fixture.js';

export interface Banner {
  text: string;
  url: string;
  kubeconfig: string;
  /** Workload context name → the kubeconfig file with it current (the banner's "or KUBECONFIG=…"). */
  workloads: Record<string, { file: string; getNodes: string }>;
}

export interface ServeProcess {
  child: ChildProcess;
  banner: Banner;
  token: string;
  ca: string;
  /** GET/POST/… through the served API (management cluster unless the path says /clusters/…). */
  api(method: string, path: string, body?: unknown): Promise<{ code: number; json: Record<string, unknown>; text: string }>;
  /** POST /_testbed/time/advance. */
  advance(duration: string): Promise<void>;
  /** Advance in `step`s until `cond` holds; at most `maxVirtual` of virtual time, 45 s of wall time. */
  advanceUntil(cond: () => Promise<boolean>, what: string, opts?: { step?: string; maxVirtualMs?: number }): Promise<void>;
  /** Virtual time now (ms). */
  now(): Promise<number>;
  stop(): Promise<void>;
}

function parseBanner(text: string): Banner {
  const url = /^API:\s+(\S+)/m.exec(text)?.[1];
  const kubeconfig = /^export KUBECONFIG=(\S+)$/m.exec(text)?.[1];
  if (!url || !kubeconfig) throw new Error(`serve's banner lacks the API address or the kubeconfig:\n${text}`);
  const workloads: Banner['workloads'] = {};
  for (const m of text.matchAll(/^ {2}(\S+)\s+the workload cluster \S+: (kubectl --context \S+ get nodes)\s+\(or KUBECONFIG=(\S+)\)$/gm)) workloads[m[1]!] = { getNodes: m[2]!, file: m[3]! };
  return { text, url, kubeconfig, workloads };
}

/** Start `hcs-testbed serve ARGS --speed 0 --port 0 --kubeconfig-dir <tmp>` and wait (≤ 60 s) for its banner. */
export async function startServeCli(args: string[]): Promise<ServeProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'docs-serve-'));
  const child = spawn(process.execPath, [join(REPO, 'bin/hcs-testbed.mjs'), 'serve', ...args, '--speed', '0', '--port', '0', '--kubeconfig-dir', dir], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const text = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no banner within 60 s: ${out}${err}`)), 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.includes('Ctrl-C stops.')) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}) before its banner: ${out}${err}`));
    });
  });
  const banner = parseBanner(text);
  const kc = JSON.parse(readFileSync(banner.kubeconfig, 'utf8')) as { users: { user: { token: string } }[]; clusters: { cluster: { 'certificate-authority-data': string } }[] };
  const token = kc.users[0]!.user.token;
  const ca = Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8');
  const base = new URL(banner.url);

  const api: ServeProcess['api'] = (method, path, body) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request({ host: base.hostname, port: base.port, method, path, ca, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(payload ? { 'Content-Type': 'application/json' } : {}) }, timeout: 30_000 }, (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (t += d));
        res.on('end', () => {
          let json: Record<string, unknown> = {};
          try {
            json = JSON.parse(t) as Record<string, unknown>;
          } catch {
            /* not JSON */
          }
          resolve({ code: res.statusCode ?? 0, json, text: t });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no answer to ${method} ${path} within 30 s`)));
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });

  const advance = async (duration: string): Promise<void> => {
    const r = await api('POST', '/_testbed/time/advance', { duration });
    if (r.code !== 200) throw new Error(`advance ${duration}: ${r.code} ${r.text}`);
  };
  const now = async (): Promise<number> => (await api('GET', '/_testbed/time')).json.now as number;
  const advanceUntil: ServeProcess['advanceUntil'] = async (cond, what, opts = {}) => {
    const step = opts.step ?? '30s';
    const t0 = await now();
    const maxV = opts.maxVirtualMs ?? 2 * 3_600_000;
    const wallDeadline = Date.now() + 45_000;
    while (!(await cond())) {
      const t = await now();
      if (t - t0 > maxV) throw new Error(`not within ${maxV / 60_000} min of virtual time: ${what}`);
      if (Date.now() > wallDeadline) throw new Error(`not within 45 s of wall time: ${what}`);
      await advance(step);
    }
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  };
  return { child, banner, token, ca, api, advance, advanceUntil, now, stop };
}

/** GET a list through the API and return its items. */
export async function items<T>(s: ServeProcess, path: string): Promise<T[]> {
  const r = await s.api('GET', path);
  if (r.code !== 200) throw new Error(`GET ${path}: ${r.code} ${r.text}`);
  return (r.json.items ?? []) as T[];
}
