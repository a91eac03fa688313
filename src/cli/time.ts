/**
 * `hcs-testbed time`: control the live clock of a running `hcs-testbed serve`
 * through its time API (src/dashboard/time-api.ts).
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseArgs } from 'node:util';
import { formatDuration } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { parseYamlValue } from '../core/yaml-limits.js';

export const TIME_HELP = `hcs-testbed time — control the live clock of hcs-testbed serve

Usage:
  hcs-testbed time [status]           show virtual time, speed, paused or running
  hcs-testbed time pause              stop virtual time (controllers stay, nothing falls due)
  hcs-testbed time resume             let it run again at the current speed
  hcs-testbed time speed X            X virtual seconds per wall second (0 = paused)
  hcs-testbed time advance DURATION   let DURATION of virtual time pass now (5m, 90s, 1h30m)
  hcs-testbed time next               run to the next pending timer (a requeue, a cloud transition)

Where the server is:
  --kubeconfig FILE    the kubeconfig serve wrote (default $KUBECONFIG); its management
                       context gives the address and the credentials
  --server URL         the address serve printed (overrides the kubeconfig's)
  --token T            bearer token (overrides the kubeconfig's)
  -h, --help           this text

Exit codes: 0 done, 1 the server refused or could not be reached, 2 bad usage.
`;

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
  // A control call is JSON, even without arguments (src/dashboard/control-guard.ts).
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

function describe(s: { iso?: string; paused?: boolean; speed?: number; nextDue?: number; now?: number; movedMs?: number }): string {
  const next = s.nextDue !== undefined && s.now !== undefined ? `, next timer in ${formatDuration(Math.max(0, s.nextDue - s.now))}` : '';
  const moved = s.movedMs !== undefined ? ` (moved ${formatDuration(s.movedMs)})` : '';
  return `virtual time ${s.iso}${moved}: ${s.paused || s.speed === 0 ? 'paused' : `running at ${s.speed}x`}${next}\n`;
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

export async function timeMain(argv: string[], write: (s: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { kubeconfig: { type: 'string' }, server: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
    });
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed time --help)\n`);
    return 2;
  }
  if (parsed.values.help) {
    write(TIME_HELP);
    return 0;
  }
  const [op = 'status', arg, ...extra] = parsed.positionals;
  const usage = (m: string): number => {
    write(`error: ${m}\n(see hcs-testbed time --help)\n`);
    return 2;
  };
  if (extra.length) return usage(`unexpected arguments: ${extra.join(' ')}`);
  let method = 'POST';
  let path: string;
  let body: unknown;
  switch (op) {
    case 'status':
      method = 'GET';
      path = '_testbed/time';
      break;
    case 'pause':
    case 'resume':
    case 'next':
      path = `_testbed/time/${op}`;
      break;
    case 'speed':
      if (arg === undefined || arg.trim() === '' || !Number.isFinite(Number(arg))) return usage(`speed needs a number (virtual seconds per wall second), got ${arg === undefined ? 'nothing' : `"${arg}"`}`);
      path = '_testbed/time/speed';
      body = { speed: Number(arg) };
      break;
    case 'advance':
      if (!arg) return usage('advance needs a duration such as 5m, 90s or 1h30m');
      path = '_testbed/time/advance';
      body = { duration: arg };
      break;
    default:
      return usage(`unknown time command "${op}" (known: status, pause, resume, speed, advance, next)`);
  }
  if (['status', 'pause', 'resume', 'next'].includes(op) && arg !== undefined) return usage(`${op} takes no argument, got "${arg}"`);
  let target: Target;
  try {
    target = resolveTarget(parsed.values);
  } catch (e) {
    return usage(errorMessage(e));
  }
  try {
    const r = await call(target, method, path, body);
    if (r.code !== 200) {
      const msg = typeof r.json === 'object' && r.json !== null && 'message' in r.json ? String((r.json as { message: unknown }).message) : String(r.json);
      write(`error: ${target.server} answered ${r.code}: ${msg}\n`);
      return 1;
    }
    write(describe(r.json as Parameters<typeof describe>[0]));
    return 0;
  } catch (e) {
    write(`error: ${target.server}: ${errorMessage(e)}\n`);
    return 1;
  }
}
