/**
 * The HCS provider as a standalone controller process (`hcs-testbed
 * provider`, src/harness/cli/provider.ts), the way a provider deployment runs:
 *
 * - the management cluster through @kubernetes/client-node (any kubeconfig);
 * - the workload clusters through their `<cluster>-kubeconfig` Secrets, as
 *   Cluster API's cluster cache does (the Kube-OVN AppRelease, OVN-1..3);
 * - the cloud only over HTTP(S), AK/SK-signed (src/product/cloud/client.ts), never in
 *   process; the credentials Secret (HCS-5) is followed as in the testbed;
 * - the wall clock (`speed`, for testbed runs on paced time only, shortens
 *   the delays: requeues and backoff; timestamps, certificates and
 *   signatures stay wall-clock);
 * - one JSON log line per decision on stdout (the LogLine shape of
 *   `kubectl logs deployment/hcs-controller-manager`), Kubernetes Events with
 *   the SPEC rules they cite in an annotation;
 * - /healthz, /readyz and /metrics on a loopback address;
 * - `stop()`: no new work item starts, the one in flight finishes, watches
 *   close. Nothing else is kept: a new process lists every object and
 *   carries on from the cluster's and the cloud's state (idempotent creates
 *   by client token, disks found by their (hostname, slot) metadata).
 *
 * Also here: what a run with `--provider external` reads of such a process
 * (its log file, its Kubernetes Events).
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { request as httpRequest, Agent as HttpAgent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { secretValue, type Secret } from '../api/core.js';
import { KUBECONFIG_DATA_KEY, LABEL_CLUSTER_NAME, SECRET_TYPE_CLUSTER } from '../api/capi.js';
import { RealClock, rfc3339, type Clock, type TimerId } from '../../core/clock.js';
import { errorMessage } from '../../core/errors.js';
import { EventLog, type EventInput, type EventListener, type EventSource, type LogEvent } from '../../core/events.js';
import { SeededRng } from '../../core/rng.js';
import { HcsClient, type HcsTransport } from '../cloud/index.js';
import { ClientNodeKube } from '../../core/kube/client-node.js';
import type { KubeClient, ListOptions, WatchOptions } from '../../core/kube/client.js';
import type { KubeObject, ObjectRef, WatchEvent } from '../../core/kube/types.js';
import { setupProviderControllers, type ProviderControllers } from './index.js';
import { ControllerLogs, EventRecorder, kubeEvent, type ControllerContext, type LogLine, type Logger, type WorkloadClusters } from '../../core/runtime/context.js';
import { Manager } from '../../core/runtime/manager.js';

/** The provider's Deployment (and controller-log) name, as clusterctl would install it: hcs-controller-manager. */
export const PROVIDER_DEPLOYMENT = 'hcs-controller-manager';

/** Annotation on the provider's Kubernetes Events: the SPEC rules the Event cites (comma-separated). */
export const ANN_EVENT_RULES = 'hcs-testbed.io/rules';
/** The Secret with keys ak, sk the provider switches its cloud credentials to (HCS-5; testbed.ts CLOUD_CREDENTIALS_SECRET). */
export const DEFAULT_CREDENTIALS_SECRET = 'cpaas-system/hcs-cloud-credentials';

export interface ProviderProcessOptions {
  /** `hcs-testbed provider --stop-file`: the CLI stops the process once this file exists (not read here). */
  stopFile?: string;
  /**
   * The management cluster's kubeconfig; IN_CLUSTER: the pod's service account (in-cluster config, as
   * controller-runtime's GetConfig falls back to it in a pod: /var/run/secrets/kubernetes.io/serviceaccount
   * and $KUBERNETES_SERVICE_HOST/PORT).
   */
  kubeconfig: string;
  context?: string;
  cloudUrl: string;
  ak: string;
  sk: string;
  projectId: string;
  region?: string;
  /** PEM CA bundle for an https cloud URL (default: the system's). */
  caPem?: string;
  /** Reconcile only this namespace's objects (default: all). */
  namespace?: string;
  /** "ns/name" of the credentials Secret to follow (HCS-5); "" for none. */
  credentialsSecret?: string;
  /** host:port for /healthz and /readyz (127.0.0.1 only, or `podIp`; port 0: a free one). */
  healthAddr?: string;
  /** In a pod: its own address ($POD_IP), which the health and metrics addresses may name besides loopback. */
  podIp?: string;
  /** host:port for /metrics (127.0.0.1 only); undefined: the health address serves it too. */
  metricsAddr?: string;
  /** Testbed runs only: requeue and backoff delays are this many times shorter (default 1); time itself stays the wall clock. */
  speed?: number;
  /** Where log lines go (default stdout). */
  write?: (line: string) => void;
}

export interface ProviderProcess {
  /** The health endpoint's base URL (http://127.0.0.1:PORT). */
  healthUrl: string;
  metricsUrl: string;
  controllers: ProviderControllers;
  /** Resolves once the initial lists are done (readyz 200). */
  ready: Promise<void>;
  /** Graceful stop: the reconcile in flight finishes; no new one starts. */
  stop(reason?: string): Promise<void>;
  /** Resolves when the process's manager loop has ended (after stop). */
  done: Promise<void>;
}

/** Wall-clock time whose timers fire `speed` times sooner (testbed runs on paced time: requeues at the run's pace). */
export class FastTimersClock implements Clock {
  private readonly timers = new Map<TimerId, NodeJS.Timeout>();
  private seq = 0;
  constructor(private readonly speed: number) {}
  now(): number {
    return Date.now();
  }
  setTimer(delayMs: number, fn: () => void): TimerId {
    const id = ++this.seq;
    this.timers.set(id, setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, delayMs / this.speed));
    return id;
  }
  clearTimer(id: TimerId): void {
    const h = this.timers.get(id);
    if (h) clearTimeout(h);
    this.timers.delete(id);
  }
}

/** Log lines (the LogLine shape) written as they happen, not kept: a long-running process must not grow. */
class StreamLogs extends ControllerLogs {
  constructor(
    private readonly clk: Clock,
    private readonly out: (line: string) => void,
  ) {
    super(clk);
  }
  override logger(_deployment: string, controller: string): Logger {
    const push = (level: LogLine['level'], msg: string, kv?: Record<string, unknown>): void => {
      this.out(JSON.stringify({ t: new Date(this.clk.now()).toISOString(), level, controller, msg, ...kv }) + '\n');
    };
    return { info: (msg, kv) => push('info', msg, kv), error: (msg, kv) => push('error', msg, kv) };
  }
  override text(): string {
    return '';
  }
}

/** An event log that keeps nothing: listeners see each event (reconcile errors are logged). */
class StreamEventLog extends EventLog {
  private seq = 0;
  private readonly ls = new Set<EventListener>();
  constructor(private readonly clk: Clock) {
    super(clk);
  }
  override record(e: EventInput): LogEvent {
    const ev: LogEvent = { seq: ++this.seq, t: this.clk.now(), ...e };
    for (const l of this.ls) l(ev);
    return ev;
  }
  override subscribe(l: EventListener): () => void {
    this.ls.add(l);
    return () => this.ls.delete(l);
  }
  override all(): readonly LogEvent[] {
    return [];
  }
  override size(): number {
    return this.seq;
  }
}

/** Kubernetes Events as the testbed's recorder writes them, plus the rules they cite as an annotation. */
class AnnotatingRecorder extends EventRecorder {
  private n = 0;
  private readonly suffix = Math.floor(Math.random() * 0xffff).toString(16).padStart(4, '0');
  constructor(
    private readonly kube: KubeClient,
    private readonly clk: Clock,
  ) {
    super(kube, new StreamEventLog(clk), clk);
  }
  override async record(_source: EventSource, component: string, obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string, rules?: string[]): Promise<void> {
    const name = `${obj.metadata.name}.${this.suffix}${(++this.n).toString(16).padStart(8, '0')}`;
    // A process-unique suffix: a restarted process must not collide with its predecessor's names.
    await this.kube.create(kubeEvent(obj, name, component, type, reason, message, rfc3339(this.clk.now()), rules?.length ? { [ANN_EVENT_RULES]: rules.join(',') } : undefined));
  }
}

/** list and watch limited to one namespace (--namespace), as a namespaced cache is. */
export function namespaced(client: KubeClient, ns: string): KubeClient {
  const scoped = <O extends ListOptions | WatchOptions | undefined>(o: O): O => ({ ...(o ?? {}), namespace: o?.namespace ?? ns }) as O;
  return new Proxy(client, {
    get(t, prop, recv) {
      const v = Reflect.get(t, prop, recv) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'list' || prop === 'listShared') return (kind: string, o?: ListOptions) => (v as (k: string, o?: ListOptions) => unknown).call(t, kind, scoped(o));
      if (prop === 'watch') return (kind: string, h: (e: WatchEvent) => void, o?: WatchOptions) => (v as (k: string, h: unknown, o?: WatchOptions) => unknown).call(t, kind, h, scoped(o));
      if (prop === 'listSharedSync') return undefined; // no synchronous snapshot: the Kube-OVN values list the control plane Machines
      return (v as (...a: unknown[]) => unknown).bind(t);
    },
  });
}

/**
 * Workload clusters reached through `<cluster>-kubeconfig` Secrets (data key
 * `value`), as Cluster API's cluster cache does: one client per cluster,
 * rebuilt when the Secret changes.
 */
export class SecretWorkloadClusters implements WorkloadClusters {
  private readonly secrets = new Map<string, Secret>();
  private readonly clients = new Map<string, { rv: string; client: ClientNodeKube }>();

  constructor(private readonly mgmt: KubeClient) {
    mgmt.watch<Secret>('Secret', (e) => {
      const s = e.object;
      const cluster = s.metadata.labels?.[LABEL_CLUSTER_NAME];
      if (!cluster || s.metadata.name !== `${cluster}-kubeconfig` || (s as Secret & { type?: string }).type !== SECRET_TYPE_CLUSTER) return;
      const key = `${s.metadata.namespace ?? 'default'}/${cluster}`;
      if (e.type === 'DELETED') {
        this.secrets.delete(key);
        this.clients.get(key)?.client.close();
        this.clients.delete(key);
      } else this.secrets.set(key, s);
    }, { shared: true });
  }

  names(): string[] {
    return [...this.secrets.keys()].sort();
  }

  private async resolve(ns: string, name: string): Promise<ClientNodeKube> {
    const key = `${ns}/${name}`;
    let secret = this.secrets.get(key);
    secret ??= await this.mgmt.get<Secret>({ kind: 'Secret', namespace: ns, name: `${name}-kubeconfig` });
    const text = secret ? secretValue(secret, KUBECONFIG_DATA_KEY) : undefined;
    if (!secret || !text) throw new Error(`workload cluster ${key}: Secret ${name}-kubeconfig (key ${KUBECONFIG_DATA_KEY}) not found yet`);
    const rv = secret.metadata.resourceVersion ?? '';
    const have = this.clients.get(key);
    if (have && have.rv === rv) return have.client;
    have?.client.close();
    const kc = new KubeConfig();
    kc.loadFromString(text);
    const client = new ClientNodeKube(kc);
    this.clients.set(key, { rv, client });
    return client;
  }

  client(ns: string, name: string): KubeClient {
    const at = (): Promise<ClientNodeKube> => this.resolve(ns, name);
    const lazy: KubeClient = {
      get: async (ref) => (await at()).get(ref),
      list: async (kind, o) => (await at()).list(kind, o),
      create: async (obj, o) => (await at()).create(obj, o),
      update: async (obj, o) => (await at()).update(obj, o),
      updateStatus: async (obj, o) => (await at()).updateStatus(obj, o),
      patch: async (ref, type, p, o) => (await at()).patch(ref, type, p, o),
      delete: async (ref: ObjectRef, o) => (await at()).delete(ref, o),
      watch: (kind, handler, o) => {
        let stop: (() => void) | undefined;
        let stopped = false;
        void at().then(
          (c) => {
            if (!stopped) stop = c.watch(kind, handler, o);
          },
          () => undefined,
        );
        return () => {
          stopped = true;
          stop?.();
        };
      },
    };
    return lazy;
  }

  close(): void {
    for (const c of this.clients.values()) c.client.close();
    this.clients.clear();
  }
}

/** Keep-alive HTTP(S) to the cloud with an optional CA bundle (fetch cannot take one without undici). */
export function cloudTransport(endpoint: string, caPem?: string): HcsTransport {
  const base = new URL(endpoint.replace(/\/+$/, ''));
  const tls = base.protocol === 'https:';
  const agent = tls ? new Agent({ keepAlive: true, ...(caPem ? { ca: caPem } : {}) }) : new HttpAgent({ keepAlive: true });
  const prefix = base.pathname.replace(/\/+$/, '');
  return {
    host: base.host,
    send: (req) =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = { ...req.headers, host: base.host };
        if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
        const r = (tls ? httpsRequest : httpRequest)({ protocol: base.protocol, hostname: base.hostname, port: base.port || (tls ? 443 : 80), path: prefix + req.path, method: req.method, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const out: Record<string, string> = {};
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
            resolve({ status: res.statusCode ?? 0, headers: out, body: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', reject);
        });
        r.setTimeout(60_000, () => r.destroy(new Error(`cloud request ${req.method} ${req.path}: no answer within 60 s`)));
        r.on('error', reject);
        if (req.body !== undefined) r.write(req.body);
        r.end();
      }),
  };
}

/** `kubeconfig` value of ProviderProcessOptions for the pod's own service account. */
export const IN_CLUSTER = 'in-cluster';

/** Whether this process runs in a pod with a service account (what in-cluster config needs). */
export function inClusterAvailable(env: NodeJS.ProcessEnv = process.env, exists: (f: string) => boolean = existsSync): boolean {
  return !!env.KUBERNETES_SERVICE_HOST && !!env.KUBERNETES_SERVICE_PORT && exists('/var/run/secrets/kubernetes.io/serviceaccount/token');
}

/**
 * "127.0.0.1:8081" → [host, port]; only loopback hosts (nothing of the testbed listens beyond loopback), or, in a
 * pod, exactly the pod's own address (`podIp`: $POD_IP from the downward API), which the kubelet's probes reach:
 * the pod network lives inside the kind node, on this machine.
 */
export function parseLoopbackAddr(flag: string, value: string, podIp?: string): { host: string; port: number } {
  if (podIp && value.startsWith(`${podIp}:`)) {
    const port = Number(value.slice(podIp.length + 1));
    if (!/^\d{1,5}$/.test(value.slice(podIp.length + 1)) || port > 65535) throw new Error(`${flag}: bad port in "${value}"`);
    return { host: podIp, port };
  }
  const m = /^(127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})$/.exec(value) ?? /^:(\d{1,5})$/.exec(value);
  if (!m) throw new Error(`${flag} must be 127.0.0.1:PORT (loopback only; PORT 0 = a free one)${podIp ? ` or the pod's address ${podIp}:PORT` : ''}, got "${value}"`);
  const port = Number(m.length === 3 ? m[2] : m[1]);
  if (port > 65535) throw new Error(`${flag}: port out of range in "${value}"`);
  return { host: m.length === 3 && m[1] === '[::1]' ? '::1' : '127.0.0.1', port };
}

async function listen(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok());
  });
  const a = server.address() as AddressInfo;
  return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
}

export async function startProviderProcess(o: ProviderProcessOptions): Promise<ProviderProcess> {
  const write = o.write ?? ((l: string) => void process.stdout.write(l));
  // The wall clock; --speed (testbed runs only) shortens the delays (requeues, backoff), never the time itself:
  // timestamps, certificates and signatures must agree with everyone else's clocks.
  const clock = o.speed && o.speed !== 1 ? new FastTimersClock(o.speed) : new RealClock(1);
  const logs = new StreamLogs(clock, write);
  const log = logs.logger(PROVIDER_DEPLOYMENT, 'manager');
  const events = new StreamEventLog(clock);
  const kc = new KubeConfig();
  if (o.kubeconfig === IN_CLUSTER) kc.loadFromCluster();
  else {
    kc.loadFromFile(o.kubeconfig);
    if (o.context) kc.setCurrentContext(o.context);
  }
  const raw = new ClientNodeKube(kc, { cacheReads: true });
  const mgmt = o.namespace ? namespaced(raw, o.namespace) : raw;
  const manager = new Manager({ clock, events });
  events.subscribe((e) => {
    if (e.type === 'reconcile.error') log.error(e.message, { ...(e.data ?? {}) });
  });
  const workloads = new SecretWorkloadClusters(raw);
  const recorder = new AnnotatingRecorder(raw, clock);
  const ctx: ControllerContext = { clock, rng: new SeededRng(Date.now() % 2 ** 31), events, mgmt, workloads, manager, logs, recorder };

  const transport = cloudTransport(o.cloudUrl, o.caPem);
  const clientFor = (ak: string, sk: string): HcsClient => new HcsClient({ transport, ak, sk, projectId: o.projectId, clock });
  const initial = clientFor(o.ak, o.sk);
  let current = initial;
  const cloud = new Proxy(initial, {
    get(_t, prop) {
      const v = (current as unknown as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(current) : v;
    },
  });
  const credSecret = o.credentialsSecret ?? DEFAULT_CREDENTIALS_SECRET;
  if (credSecret) {
    const [cns, cname] = credSecret.split('/') as [string, string];
    raw.watch<Secret>('Secret', (e) => {
      const s = e.object;
      if (s.metadata.namespace !== cns || s.metadata.name !== cname) return;
      const ak = secretValue(s, 'ak');
      const sk = secretValue(s, 'sk');
      const next = e.type === 'DELETED' || !ak || !sk ? initial : clientFor(ak, sk);
      if (next !== current) log.info(e.type === 'DELETED' || !ak || !sk ? `credentials Secret ${credSecret} gone or incomplete: back to the configured AK` : `cloud credentials switched to Secret ${credSecret} (AK ${ak.slice(0, 4)}…)`, { rules: ['HCS-5'] });
      current = next;
    }, { shared: true });
  }
  const controllers = setupProviderControllers(ctx, { cloud });

  // ---- health and metrics
  let isReady = false;
  let stopping = false;
  const metrics = (): string => {
    const lines = ['# HELP hcs_provider_reconcile_total Reconciles run, per controller.', '# TYPE hcs_provider_reconcile_total counter'];
    for (const [c, n] of Object.entries(manager.reconcileStats())) lines.push(`hcs_provider_reconcile_total{controller="${c}"} ${n}`);
    lines.push('# HELP hcs_provider_reconcile_seconds_total Wall time spent in reconciles, per controller.', '# TYPE hcs_provider_reconcile_seconds_total counter');
    for (const [c, ms] of Object.entries(manager.reconcileWallMs())) lines.push(`hcs_provider_reconcile_seconds_total{controller="${c}"} ${(ms / 1000).toFixed(3)}`);
    return lines.join('\n') + '\n';
  };
  const handler = (withMetrics: boolean, withHealth: boolean) => createHttpServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (withHealth && path === '/healthz') return void res.writeHead(stopping ? 503 : 200, { 'content-type': 'text/plain' }).end(stopping ? 'stopping\n' : 'ok\n');
    if (withHealth && path === '/readyz') return void res.writeHead(isReady && !stopping ? 200 : 503, { 'content-type': 'text/plain' }).end(isReady && !stopping ? 'ok\n' : 'not ready\n');
    if (withMetrics && path === '/metrics') return void res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metrics());
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  const h = parseLoopbackAddr('--health-addr', o.healthAddr ?? '127.0.0.1:8081', o.podIp);
  const healthServer = handler(o.metricsAddr === undefined, true);
  const healthUrl = await listen(healthServer, h.host, h.port);
  let metricsServer: Server | undefined;
  let metricsUrl = healthUrl;
  if (o.metricsAddr !== undefined) {
    const m = parseLoopbackAddr('--metrics-addr', o.metricsAddr, o.podIp);
    metricsServer = handler(true, false);
    metricsUrl = await listen(metricsServer, m.host, m.port);
  }

  const abort = new AbortController();
  const done = manager.run(abort.signal);
  const ready = (async () => {
    // The watches list first (informers); settled() resolves once every one has delivered its list.
    await raw.settled();
    isReady = true;
    log.info('informers synced; reconciling', { health: healthUrl, metrics: metricsUrl });
  })();
  ready.catch((e: unknown) => log.error(`informers did not sync: ${errorMessage(e)}`));
  log.info('hcs provider started', { kubeconfig: o.kubeconfig, ...(o.context ? { context: o.context } : {}), cloud: o.cloudUrl, project: o.projectId, ...(o.region ? { region: o.region } : {}), namespace: o.namespace ?? '(all)', leaderElection: false, ...(o.speed && o.speed !== 1 ? { speed: o.speed } : {}) });

  let stopped: Promise<void> | undefined;
  const stop = (reason = 'stop'): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      log.info(`${reason}: finishing the reconcile in flight, starting no new one`);
      // Controllers marked stopped: the drain skips every further item; the one in flight runs to its end.
      for (const n of manager.controllerNames()) manager.crash(n);
      abort.abort();
      await done;
      raw.close();
      workloads.close();
      healthServer.closeAllConnections();
      await new Promise<void>((r) => healthServer.close(() => r()));
      if (metricsServer) {
        metricsServer.closeAllConnections();
        await new Promise<void>((r) => metricsServer!.close(() => r()));
      }
      log.info('stopped', { reconciles: manager.reconcileCount() });
    })();
    return stopped;
  };
  return { healthUrl, metricsUrl, controllers, ready, stop, done };
}

// ---- what a run with --provider external reads of the outside provider

/** The provider's log from now on (what was in the file before belongs to earlier scenarios). */
export function readProviderLog(file: string): () => string {
  let offset = 0;
  try {
    offset = statSync(file).size;
  } catch {
    offset = 0;
  }
  return () => {
    try {
      return readFileSync(file).subarray(offset).toString('utf8').replace(/\n+$/, '');
    } catch {
      return '';
    }
  };
}

/** Keys of a provider log line that are not the event's data (StreamLogs, Reporter: src/product/provider/util.ts). */
const LINE_KEYS = new Set(['t', 'level', 'controller', 'msg', 'event', 'rules']);

/**
 * The outside provider's decisions into the run's event log, from its log
 * file: every line with an `event` key (the provider's Reporter names the
 * event type there) becomes the event the in-process provider records
 * (source provider, same type, message, data and rules), e.g.
 * `hcsmachine.entry-bound`, which the report's timeline and the
 * model/upstream sequence comparison read. Lines without one (manager
 * lines, reconcile errors) and lines that are not JSON are not events.
 *
 * `drain()` reads, synchronously, only what was appended since the last
 * call (complete lines; a partial last line waits for its end). The run
 * calls it after every settle barrier: the provider writes its line before
 * the cluster write it decided, so by the time the run has seen that write
 * the line is in its event log, before any check reads it. Its time is the
 * run's clock when drained (paced time: within a settle tick of the
 * decision).
 */
export function followProviderLog(file: string, record: (e: EventInput) => void): { drain(): void } {
  let offset = 0;
  try {
    offset = statSync(file).size;
  } catch {
    offset = 0;
  }
  let partial: Buffer = Buffer.alloc(0);
  const drain = (): void => {
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      return;
    }
    let chunk: Buffer;
    try {
      const size = fstatSync(fd).size;
      if (size < offset) offset = 0; // truncated: start again
      if (size === offset) return;
      chunk = Buffer.alloc(size - offset);
      const n = readSync(fd, chunk, 0, chunk.length, offset);
      offset += n;
      chunk = chunk.subarray(0, n);
    } finally {
      closeSync(fd);
    }
    const buf = partial.length ? Buffer.concat([partial, chunk]) : chunk;
    const end = buf.lastIndexOf(0x0a);
    if (end < 0) {
      partial = buf;
      return;
    }
    partial = Buffer.from(buf.subarray(end + 1));
    for (const text of buf.subarray(0, end).toString('utf8').split('\n')) {
      if (!text.startsWith('{')) continue;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof line.event !== 'string' || !line.event) continue;
      const data: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(line)) if (!LINE_KEYS.has(k)) data[k] = v;
      const rules = Array.isArray(line.rules) ? line.rules.filter((r): r is string => typeof r === 'string') : [];
      record({ source: 'provider', type: line.event, message: typeof line.msg === 'string' ? line.msg : '', data, ...(rules.length ? { rules } : {}) });
    }
  };
  return { drain };
}

const RULE_ID = /\b(?:NET|DISK|POOL|TPL|MD|BOOT|KCP|UPG|OVN|OPS|HCS)-\d+\b/g;

/**
 * The outside provider's Kubernetes Events into the run's event log, as the
 * in-process recorder puts them there: type `event.<reason>`, source
 * provider, rules from the `hcs-testbed.io/rules` annotation, else the rule
 * IDs the message cites (a provider in another language need not annotate).
 */
export function mirrorProviderEvents(mgmt: KubeClient, record: (e: EventInput) => void, component = PROVIDER_DEPLOYMENT, o: { source?: EventSource; warningsOnly?: boolean } = {}): () => void {
  type K8sEvent = KubeObject & { involvedObject?: { kind?: string; name?: string; namespace?: string }; reason?: string; message?: string; type?: string; source?: { component?: string } };
  return mgmt.watch<K8sEvent>('Event', (e) => {
    const ev = e.object;
    if (e.type !== 'ADDED' || ev.source?.component !== component || (o.warningsOnly && ev.type !== 'Warning')) return;
    const io = ev.involvedObject ?? {};
    const ann = ev.metadata.annotations?.[ANN_EVENT_RULES];
    const rules = ann ? ann.split(',').filter(Boolean) : [...new Set((ev.message ?? '').match(RULE_ID) ?? [])];
    record({
      source: o.source ?? 'provider',
      type: `event.${ev.reason ?? ''}`,
      message: `${io.kind ?? ''} ${io.namespace ? io.namespace + '/' : ''}${io.name ?? ''}: ${ev.reason ?? ''}: ${ev.message ?? ''}`,
      data: { kind: io.kind, name: io.name, namespace: io.namespace, eventType: ev.type, reason: ev.reason },
      ...(rules.length ? { rules } : {}),
    });
  }, { shared: true });
}
