/**
 * Standalone mock-hcs: one HTTP server with ECS, EVS, VPC, IMS and /_admin.
 *
 *   node --import tsx mock-hcs/src/server.ts --port 8443 --data-file state.json
 *   npx tsx mock-hcs/src/server.ts --help
 *
 * Time is a RealClock (optionally sped up); with --data-file every
 * acknowledged mutation is on disk before its response, so a kill -9 and a
 * restart with the same file lose nothing, and pending transitions resume.
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { EventLog, RealClock, SeededRng, type Clock, type TimerId } from '../../src/core/index.js';
import { writeSecretFile } from '../../src/core/secret-file.js';
import { parseYamlValue, YamlInputError } from '../../src/core/yaml-limits.js';
import { prepareTls, type TlsFiles } from './tls.js';
import { createMockHcs, DEFAULT_DOMAIN, defaultCloudConfig, usersOf, type CloudConfig, type MockHcs } from './index.js';

export const HELP = `mock-hcs — a fake Huawei Cloud Stack (ECS, EVS, VPC, IMS) for the official SDKs

Usage: node --import tsx mock-hcs/src/server.ts [options]
       npx tsx mock-hcs/src/server.ts [options]

Options:
  --port N          TCP port (default 8443; 0 = any free port, printed at startup)
  --host ADDR       listen address (default 127.0.0.1)
  --data-file F     persist state in F (JSON). Created if missing; a file that cannot be
                    read as mock-hcs state is a startup error, never a silent reset.
  --config F        cloud configuration, YAML or JSON (projects, availabilityZones, flavors,
                    images, vpcs, subnets, timings, volumeTypes, capacity); keys not given
                    come from the default cloud
  --seed N          seed of the random source (ids, jitter, fault probabilities; default 1)
  --speedup N       run the clock N times faster than wall time (default 1)
  --no-admin        do not serve the /_admin API
  --admin-token T   the token /_admin requests must send as X-Admin-Token (at least 16
                    characters; default: $MOCK_HCS_ADMIN_TOKEN, else a random one, printed)
  --admin-token-file F
                    write the admin token to F (mode 0600, replacing F; not printed then), for scripts
  --log-events      print the event log as JSON lines on stderr
  --tls-dir DIR     serve HTTPS: a CA (kept if DIR already has ca.crt + ca.key) and a
                    certificate for 127.0.0.1, ::1 and localhost (plus --host) are written to
                    DIR/ca.crt, DIR/server.crt, DIR/server.key; trust DIR/ca.crt in the client
  -h, --help        this text

Admin API (X-Admin-Token, no AK/SK signature): GET /_admin/catalog, GET|PUT /_admin/state, POST /_admin/reset,
GET /_admin/seed, GET|POST|DELETE /_admin/faults, DELETE /_admin/faults/{id},
POST /_admin/faults/release. See mock-hcs/README.md.
`;

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface ServerArgs {
  port: number;
  host: string;
  dataFile?: string;
  config?: string;
  seed: number;
  speedup: number;
  admin: boolean;
  adminToken?: string;
  adminTokenFile?: string;
  logEvents: boolean;
  /** Serve HTTPS with a CA and certificate written to this directory. */
  tlsDir?: string;
  help: boolean;
}

export function parseServerArgs(argv: string[], env: Record<string, string | undefined> = process.env): ServerArgs {
  let v;
  try {
    v = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-file': { type: 'string' },
        config: { type: 'string' },
        seed: { type: 'string' },
        speedup: { type: 'string' },
        'no-admin': { type: 'boolean' },
        'admin-token': { type: 'string' },
        'admin-token-file': { type: 'string' },
        'log-events': { type: 'boolean' },
        'tls-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const int = (name: string, text: string | undefined, dflt: number, min: number, max: number): number => {
    if (text === undefined) return dflt;
    if (!/^-?\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`--${name} must be an integer between ${min} and ${max}, got "${text}"`);
    return Number(text);
  };
  const speedup = v.speedup === undefined ? 1 : Number(v.speedup);
  if (!(speedup > 0) || !Number.isFinite(speedup)) throw new UsageError(`--speedup must be a number > 0, got "${v.speedup}"`);
  const adminToken = v['admin-token'] ?? env.MOCK_HCS_ADMIN_TOKEN;
  if (adminToken !== undefined && (adminToken.length < 16 || !/^[\x21-\x7e]+$/.test(adminToken))) {
    throw new UsageError(`--admin-token (or MOCK_HCS_ADMIN_TOKEN) must be at least 16 printable characters without spaces`);
  }
  return {
    port: int('port', v.port, 8443, 0, 65535),
    host: v.host ?? '127.0.0.1',
    ...(v['data-file'] !== undefined ? { dataFile: v['data-file'] } : {}),
    ...(v.config !== undefined ? { config: v.config } : {}),
    seed: int('seed', v.seed, 1, -2147483648, 2147483647),
    speedup,
    admin: !v['no-admin'],
    ...(adminToken !== undefined ? { adminToken } : {}),
    ...(v['admin-token-file'] !== undefined ? { adminTokenFile: v['admin-token-file'] } : {}),
    logEvents: v['log-events'] === true,
    ...(v['tls-dir'] !== undefined ? { tlsDir: v['tls-dir'] } : {}),
    help: v.help === true,
  };
}

/** Load a YAML/JSON cloud configuration; top-level keys not given come from the default cloud. */
export function loadCloudConfig(file: string): CloudConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read --config ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let doc: unknown;
  try {
    doc = extname(file).toLowerCase() === '.json' ? JSON.parse(text) : parseYamlValue(text); // size, depth and alias limits
  } catch (e) {
    if (e instanceof YamlInputError) throw new UsageError(`--config ${file}${e.line ? `:${e.line}:${e.col ?? 1}` : ''}: ${e.reason}`);
    throw new UsageError(`--config ${file} is not valid ${extname(file).toLowerCase() === '.json' ? 'JSON' : 'YAML'}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new UsageError(`--config ${file} must hold a mapping (projects, flavors, ...)`);
  const cfg = { ...defaultCloudConfig(), ...(doc as Partial<CloudConfig>) };
  const problems: string[] = [];
  const arrays = ['projects', 'availabilityZones', 'flavors', 'images', 'vpcs', 'subnets'] as const;
  for (const k of arrays) if (!Array.isArray(cfg[k])) problems.push(`${k} must be a list`);
  if (Array.isArray(cfg.projects)) {
    if (cfg.projects.length === 0) problems.push('projects must not be empty');
    cfg.projects.forEach((p, i) => {
      for (const f of ['id', 'name', 'ak', 'sk'] as const) if (typeof p?.[f] !== 'string' || p[f].length === 0) problems.push(`projects[${i}].${f} must be a non-empty string`);
    });
  }
  if (typeof cfg.timings !== 'object' || cfg.timings === null) problems.push('timings must be a mapping');
  if (problems.length) throw new UsageError(`--config ${file}: ${problems.join('; ')}`);
  return cfg;
}

/** A RealClock that continues from a saved instant (so a restarted, sped-up server does not jump back in time). */
class ContinuingClock implements Clock {
  constructor(
    private readonly inner: RealClock,
    private readonly offsetMs: number,
  ) {}
  now(): number {
    return this.inner.now() + this.offsetMs;
  }
  setTimer(delayMs: number, fn: () => void): TimerId {
    return this.inner.setTimer(delayMs, fn);
  }
  clearTimer(id: TimerId): void {
    this.inner.clearTimer(id);
  }
}

function savedAt(dataFile: string | undefined): number | undefined {
  if (!dataFile) return undefined;
  try {
    const d = JSON.parse(readFileSync(dataFile, 'utf8')) as { savedAtMs?: unknown };
    return typeof d.savedAtMs === 'number' ? d.savedAtMs : undefined;
  } catch {
    return undefined; // missing or corrupt: createMockHcs reports a corrupt file
  }
}

export interface RunningServer {
  url: string;
  mock: MockHcs;
  stop(): Promise<void>;
}

export async function startServer(args: ServerArgs, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<RunningServer> {
  const config = args.config ? loadCloudConfig(args.config) : defaultCloudConfig();
  const real = new RealClock(args.speedup);
  const resumeAt = savedAt(args.dataFile);
  const clock = new ContinuingClock(real, resumeAt !== undefined && resumeAt > real.now() ? resumeAt - real.now() : 0);
  const events = args.logEvents ? new EventLog(clock) : undefined;
  events?.subscribe((e) => process.stderr.write(`${JSON.stringify(e)}\n`));
  let tls: TlsFiles | undefined;
  if (args.tlsDir !== undefined) {
    if (args.tlsDir === '') throw new UsageError('--tls-dir needs a directory');
    tls = prepareTls(args.tlsDir, Date.now(), args.host === '127.0.0.1' || args.host === '::1' || args.host === 'localhost' ? [] : [args.host]);
  }
  const mock = await createMockHcs({
    ...(tls ? { https: { cert: tls.cert, key: tls.key } } : {}),
    clock,
    rng: new SeededRng(args.seed),
    config,
    admin: args.admin,
    ...(args.adminToken !== undefined ? { adminToken: args.adminToken } : {}),
    authNow: () => Date.now(),
    ...(args.dataFile ? { dataFile: args.dataFile } : {}),
    ...(events ? { events } : {}),
  });
  let address: string;
  try {
    address = await mock.app.listen({ port: args.port, host: args.host });
  } catch (e) {
    await mock.close();
    throw e;
  }
  // fastify names the address http:// when the https.Server comes from a serverFactory.
  const url = (tls ? address.replace(/^http:/, 'https:') : address).replace('[::1]', 'localhost');
  out(`mock-hcs listening on ${url}`);
  if (tls) out(`  tls: ca=${tls.caFile} cert=${tls.certFile} key=${tls.keyFile}`);
  for (const p of config.projects) out(`  project ${p.name}: id=${p.id} region=${p.region} ak=${p.ak} sk=${p.sk}`);
  const domain = config.domain ?? DEFAULT_DOMAIN;
  for (const p of config.projects) {
    for (const u of usersOf(p)) out(`  iam user ${u.name} (domain ${u.domain ?? domain.name}): password=${u.password} project=${p.name}`);
  }
  out(`  data: ${args.dataFile ?? '(in memory)'}; seed ${args.seed}; speedup ${args.speedup}; admin ${args.admin ? `${url}/_admin/catalog` : 'off'}`);
  if (mock.adminToken !== undefined) {
    if (args.adminTokenFile) {
      // 0600 also over an existing file; a symbolic link of that name is replaced, never followed (issue 32).
      try {
        writeSecretFile(args.adminTokenFile, `${mock.adminToken}\n`);
      } catch (e) {
        await mock.close();
        throw new UsageError(`--admin-token-file ${args.adminTokenFile}: cannot write it: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    // Printed only when there is no other way to learn it: not when it was given (the caller's own secret), nor
    // when it went to --admin-token-file (stdout often ends up in a log others read).
    const shown = args.adminTokenFile ? `in ${args.adminTokenFile}` : args.adminToken === undefined ? mock.adminToken : '(as given)';
    out(`  admin token: ${shown}; send it as X-Admin-Token`);
  }
  return { url, mock, stop: () => mock.close() };
}

export async function main(argv: string[]): Promise<number> {
  let args: ServerArgs;
  try {
    args = parseServerArgs(argv);
  } catch (e) {
    process.stderr.write(`mock-hcs: ${e instanceof Error ? e.message : String(e)}\n(see --help)\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  let srv: RunningServer;
  try {
    srv = await startServer(args);
  } catch (e) {
    process.stderr.write(`mock-hcs: error: ${(e instanceof Error ? e.message : String(e)).replace(/^mock-hcs: /, '')}\n`);
    return e instanceof UsageError ? 2 : 1;
  }
  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (sig: string) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`mock-hcs: ${sig}: flushing state and stopping\n`);
      srv.stop().then(resolve, (e: unknown) => {
        process.stderr.write(`mock-hcs: error while stopping: ${e instanceof Error ? e.message : String(e)}\n`);
        process.exitCode = 1;
        resolve();
      });
    };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
  });
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`mock-hcs: fatal: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
