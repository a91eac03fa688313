/**
 * mock-hcs: a fake Huawei Cloud Stack (ECS, EVS, VPC, IMS, IAM, AK/SK and token auth, jobs)
 * that the official SDKs accept unchanged. All services live on one fastify
 * app: use `app.inject()` in-process or `app.listen()` standalone.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Clock, EventLog, Rng } from '../../src/core/index.js';
import { adminRoutes, type AdminOps, type Catalog, type StateDump } from './admin.js';
import type { CloudBinding, MockHcsAppPool } from './binding.js';
import { CloudEngine, type Hypervisor, type ServerChange, type VolumeChange } from './cloud.js';
import { DEFAULT_VOLUME_TYPES, defaultCloudConfig, type CloudConfig } from './config.js';
import { dispatch, DispatchError, type DispatchRequest, type DispatchResponse } from './dispatch.js';
import { CloudError, Codes } from './errors.js';
import { FaultRegistry, parseFaultRule, type FaultRule } from './faults.js';
import { guardConnections } from './connections.js';
import { clientErrorHandler, frameworkErrors, installHttpLayer } from './http.js';
import { IamService } from './iam.js';
import { NetworkService } from './network.js';
import { ecsRoutes } from './routes/ecs.js';
import { ecsServerExtraRoutes } from './routes/ecs-server-extras.js';
import { evsRoutes } from './routes/evs.js';
import { iamRoutes } from './routes/iam.js';
import { imsRoutes } from './routes/ims.js';
import { vpcRoutes } from './routes/vpc.js';
import { emptyData, normalizeDbData, Store, validateDbData, type DbData } from './state.js';
import { checkIntegrity } from './state-validate.js';
import { processValidators } from './schema-cache.js';

export { defaultCloudConfig, usersOf, DEFAULT_DOMAIN, DEFAULT_TOKEN_TTL_MS } from './config.js';
export type {
  CapacityConfig,
  CloudConfig,
  DomainConfig,
  FlavorAzStatus,
  FlavorConfig,
  ImageConfig,
  ProjectConfig,
  QuotaConfig,
  SubnetConfig,
  TimingConfig,
  UserConfig,
  VpcConfig,
} from './config.js';
export type { Hypervisor, ServerChange, VolumeChange } from './cloud.js';
export type { VolumeFs } from './state.js';
export { DataFileError } from './state.js';
export { CloudError } from './errors.js';
export { DispatchError, type DispatchRequest, type DispatchResponse } from './dispatch.js';
export { MockHcsAppPool } from './binding.js';
export { FAULT_OPERATIONS, type FaultEffect, type FaultMatch, type FaultRule, type FaultRuleInput, type FaultService } from './faults.js';
export type { Catalog, StateDump } from './admin.js';
export { configFromListing, stateFromListing, ListingError, type CloudListing, type ListedDisk } from './load.js';

export interface MockHcsOptions {
  clock: Clock;
  rng: Rng;
  config?: CloudConfig;
  /** JSON data file (atomic writes, persist.ts); omit for in-memory state. */
  dataFile?: string;
  events?: EventLog;
  /** Allowed |X-Sdk-Date - now| (default 15 minutes). */
  signatureSkewMs?: number;
  /** Register the /_admin/... routes (default true); every admin request must carry `adminToken`. */
  admin?: boolean;
  /** The admin token (X-Admin-Token header); default: a random one, see MockHcs.adminToken. */
  adminToken?: string;
  /**
   * Time source for the X-Sdk-Date check (default: the injected clock). The
   * standalone server passes wall time: real SDK clients sign with wall time,
   * which a sped-up clock would leave behind.
   */
  authNow?: () => number;
  /** Request body limit in bytes (default 1 MiB); larger bodies get 413. */
  bodyLimit?: number;
  /**
   * Socket timeouts of a listening server (defaults: a request must be
   * complete within 60 s, its headers within 30 s; an idle keep-alive
   * connection is closed after 30 s; the server checks every 10 s; a
   * connection silent for 5 s without a request being answered, or a TLS
   * handshake not done in 5 s, is closed), so no connection stays open past
   * about 70 s without a request in progress.
   */
  timeouts?: HttpTimeouts;
  /**
   * At most this many open client connections (default 1024). A newcomer beyond it closes the oldest
   * connection with no request being answered (idle, or headers still arriving) of the address that
   * holds the most: an idle or trickling crowd cannot lock new clients out (connections.ts, issue 32).
   */
  maxConnections?: number;
  /** Of them, at most this many from one remote address (default 512); a newcomer beyond it closes that address's oldest idle one. */
  maxConnectionsPerClient?: number;
  /** Serve HTTPS with this certificate and key (PEM); see tls.ts for making them. */
  https?: { cert: string; key: string };
  /**
   * Take the fastify app from this pool when it holds an idle one (built for
   * an earlier mock with the same admin, bodyLimit, timeouts and connection limits), and give it
   * back on close() (binding.ts): for runs that make one mock after another
   * in process. Not with `https`; an app that listened is closed, not pooled.
   */
  appPool?: MockHcsAppPool;
}

/** In-process fault injection (HCS-6); the same rules as /_admin/faults. */
export interface FaultApi {
  /** Validate and add a rule; returns its id ("fault-N"). Throws CloudError (400, Admin.0400) on a bad rule. */
  add(rule: import('./faults.js').FaultRuleInput): string;
  list(): FaultRule[];
  remove(id: string): boolean;
  clear(): void;
  /** Let every stuck transition (or those of one server/volume id) complete now. Returns how many. */
  releaseStuck(target?: string): number;
}

export interface HttpTimeouts {
  requestMs?: number;
  headersMs?: number;
  keepAliveMs?: number;
  checkIntervalMs?: number;
  /**
   * A connection that sends nothing for this long while no request of it is being answered is
   * closed (one that never sends a byte, or stops mid-headers); also the TLS handshake bound.
   */
  silentMs?: number;
}

/** Open client connections a listening mock-hcs keeps at most (connections.ts). */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** Open connections from one remote address at most. */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 512;

export const DEFAULT_HTTP_TIMEOUTS: Required<HttpTimeouts> = { requestMs: 60_000, headersMs: 30_000, keepAliveMs: 30_000, checkIntervalMs: 10_000, silentMs: 5_000 };

export interface MockHcs {
  /** The fastify app. With `appPool` it is lent: after close() it serves the pool's next mock. */
  app: FastifyInstance;
  /**
   * One HTTP request in process, through fastify's request handler
   * (`app.routing`) without sockets or light-my-request: the same routing,
   * hooks (authentication, faults, durability), validation, handlers and
   * error rendering as `app.inject()` and `app.listen()`, and the same status,
   * headers (less Node's date and connection) and body as `app.inject()`.
   * Rejects with DispatchError once the mock is closed.
   */
  dispatch(req: DispatchRequest): Promise<DispatchResponse>;
  config: CloudConfig;
  /** The token /_admin requests must send as X-Admin-Token (undefined when admin is off). */
  adminToken: string | undefined;
  hypervisor: Hypervisor;
  /** Bumped by every change of the cloud's state (servers, volumes, jobs, ...): while it stays the same, so does everything the hypervisor view shows. */
  revision(): number;
  onServerChange(fn: (s: ServerChange) => void): () => void;
  onVolumeChange(fn: (v: VolumeChange) => void): () => void;
  flush(): Promise<void>;
  close(): Promise<void>;
  faults: FaultApi;
  /** Back to the configured initial state: no resources, no fault rules (unless keepFaults), id streams restarted. */
  reset(opts?: { keepFaults?: boolean }): Promise<void>;
  /** JSON-serialisable dump of the whole state (what GET /_admin/state returns). */
  dumpState(): StateDump;
  /** Restore a dump (or a raw data-file document); throws CloudError 400 naming the problem, changing nothing. */
  restoreState(dump: unknown): Promise<void>;
  /** Provider API values: flavors per AZ (sold out?), AZs, images with Kubernetes versions, volume types, subnets (TPL-2). */
  catalog(): Catalog;
}

export const DEFAULT_SIGNATURE_SKEW_MS = 15 * 60_000;

export async function createMockHcs(opts: MockHcsOptions): Promise<MockHcs> {
  const config = opts.config ?? defaultCloudConfig();
  const store = await Store.open(opts.dataFile, config);
  // A reopened file got a new id epoch: make it durable before any id of that epoch is handed out.
  if (store.dirty) await store.sync(false);
  const engine = new CloudEngine(store, config, opts.clock, opts.rng, opts.events);
  const faults = new FaultRegistry(opts.rng);
  const createdMs = opts.clock.now();
  const admin = opts.admin ?? true;
  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...opts.timeouts };
  if (opts.adminToken !== undefined && opts.adminToken.length < 16) throw new CloudError(400, Codes.adminBadRequest, 'adminToken must be at least 16 characters');
  const adminToken = admin ? (opts.adminToken ?? randomBytes(24).toString('hex')) : undefined;
  const net = new NetworkService(engine);
  const iam = new IamService(store, config, opts.clock, opts.rng);
  // Capacity fault rules without a resource match and not used up: the flavor is sold out there (ListFlavors, catalog).
  const injectedSellout = (flavorId: string, az: string): string | undefined => {
    const rule = faults.find(
      (f) =>
        f.effect.type === 'capacity' &&
        !f.match &&
        (f.count === undefined || f.fired < f.count) &&
        (f.probability ?? 1) >= 1 &&
        (f.effect.flavor === undefined || f.effect.flavor === flavorId) &&
        (f.effect.az === undefined || f.effect.az === az),
    );
    return rule ? `injected fault ${rule.id}` : undefined;
  };
  engine.injectedSellout = injectedSellout;
  const requestIds = opts.rng.fork('mock-hcs/request-id');

  const seed = (): number | null => {
    const s = (opts.rng as { seed?: unknown }).seed;
    return typeof s === 'number' ? s : null;
  };

  const faultApi: FaultApi = {
    add: (rule) => {
      const id = faults.add(rule);
      engine.recordFault('fault.added', `fault rule ${id} added: ${rule.service} ${rule.operation} ${rule.effect.type}`, { ruleId: id, rule: parseFaultRule(rule) });
      return id;
    },
    list: () => faults.list(),
    remove: (id) => {
      const ok = faults.remove(id);
      if (ok) engine.recordFault('fault.removed', `fault rule ${id} removed`, { ruleId: id });
      return ok;
    },
    clear: () => {
      if (faults.size) engine.recordFault('fault.cleared', `${faults.size} fault rule(s) removed`, { count: faults.size });
      faults.clear();
    },
    releaseStuck: (target) => {
      const n = engine.releaseStuck(target);
      if (n) engine.recordFault('fault.released', `${n} stuck transition(s) released${target ? ` for ${target}` : ''}`, { count: n, ...(target ? { target } : {}) });
      return n;
    },
  };

  const catalog = (): Catalog => {
    return {
      note: 'TPL-2: flavorName, availabilityZone and imageName in HCSMachineTemplate are these provider API values, not the names shown in the tenant UI',
      regions: [...new Set(config.projects.map((p) => p.region))],
      projects: config.projects.map((p) => ({ id: p.id, name: p.name, region: p.region, quotas: { ...(engine.quotasOf(p.id) ?? {}) }, usage: engine.quotaUsage(p.id) })),
      availabilityZones: [...config.availabilityZones],
      flavors: config.flavors.map((f) => ({
        id: f.id,
        name: f.name,
        vcpus: f.vcpus,
        ramMiB: f.ramMiB,
        availabilityZones: config.availabilityZones
          .filter((az) => engine.flavorOffered(f, az))
          .map((az) => {
            const cap = engine.capacityOf(f.id, az);
            const st = engine.flavorAzStatus(f, az);
            const soldOut = st.status === 'sellout';
            return {
              name: az,
              soldOut,
              status: st.status,
              ...(soldOut && st.reason ? { reason: st.reason } : {}),
              ...(cap.max !== undefined ? { capacity: { max: cap.max, used: cap.used } } : {}),
            };
          }),
      })),
      images: config.images.map((i) => ({ id: i.id, name: i.name, kubernetesVersion: i.kubernetesVersion, status: i.status ?? 'active' })),
      volumeTypes: [...(config.volumeTypes ?? DEFAULT_VOLUME_TYPES)],
      vpcs: config.vpcs.map((v) => ({ id: v.id, name: v.name, cidr: v.cidr })),
      subnets: config.subnets.map((s) => ({
        id: s.id,
        name: s.name,
        cidr: s.cidr,
        gateway_ip: s.gateway_ip,
        vpc_id: s.vpc_id,
        neutron_network_id: s.neutron_network_id,
        ...(s.availability_zone ? { availability_zone: s.availability_zone } : {}),
      })),
    };
  };

  const dumpState = (): StateDump => ({ format: 'mock-hcs-state', version: 1, nowMs: opts.clock.now(), seed: seed(), data: structuredClone(store.data), faults: faults.list() });

  const restoreState = async (dump: unknown): Promise<void> => {
    const bad = (m: string): never => {
      throw new CloudError(400, Codes.adminBadRequest, `Invalid state: ${m}`);
    };
    if (typeof dump !== 'object' || dump === null || Array.isArray(dump)) bad('the body must be a JSON object (a GET /_admin/state dump or a data-file document)');
    const d = dump as Record<string, unknown>;
    const isDump = d.format !== undefined;
    if (isDump && d.format !== 'mock-hcs-state') bad(`format must be "mock-hcs-state" (got ${JSON.stringify(d.format)})`);
    const data = isDump ? d.data : d;
    const problems = validateDbData(data);
    if (problems.length) bad(problems.join('; '));
    const doc = structuredClone(data) as DbData;
    const inconsistent = checkIntegrity(normalizeDbData(doc), config);
    if (inconsistent.length) bad(inconsistent.join('; '));
    let rules: unknown[] | undefined;
    if (isDump && d.faults !== undefined) {
      if (!Array.isArray(d.faults)) bad('faults must be an array of fault rules');
      rules = d.faults as unknown[];
      rules.forEach((r, i) => {
        try {
          parseFaultRule(r);
        } catch (e) {
          bad(`faults[${i}]: ${e instanceof Error ? e.message : String(e)}`);
        }
      });
    }
    engine.reload(doc, false);
    if (rules) {
      faults.clear();
      for (const r of rules) faults.add(r);
    }
    engine.record('admin.restored', `state restored: ${Object.keys(doc.servers).length} servers, ${Object.keys(doc.volumes).length} volumes`, {
      servers: Object.keys(doc.servers).length,
      volumes: Object.keys(doc.volumes).length,
    });
    await store.sync();
  };

  const reset = async (o: { keepFaults?: boolean } = {}): Promise<void> => {
    engine.reload(emptyData(), true);
    if (!o.keepFaults) faults.reset();
    engine.record('admin.reset', 'state reset to the configured initial state', { keepFaults: o.keepFaults === true });
    await store.sync();
  };

  const clock = opts.clock as Clock & { advanceBy?: (ms: number) => number };
  const adminOps: AdminOps | undefined = admin
    ? {
        catalog,
        dumpState,
        restoreState,
        reset,
        seed,
        setQuotas: (projectId, quotas) => engine.setQuotas(projectId, quotas),
        ...(typeof clock.advanceBy === 'function'
          ? {
              advanceClock: (ms: number) => {
                const fired = clock.advanceBy!(ms);
                return { nowMs: clock.now(), fired };
              },
            }
          : {}),
        faults: {
          add: (rule) => faultApi.add(parseFaultRule(rule)),
          list: () => faults.list(),
          remove: (id) => faultApi.remove(id),
          clear: () => {
            const n = faults.size;
            faultApi.clear();
            return n;
          },
          releaseStuck: (t) => faultApi.releaseStuck(t),
        },
      }
    : undefined;
  const binding: CloudBinding = {
    engine,
    clock: opts.clock,
    net,
    iam,
    faults,
    requestIds,
    createdMs,
    signatureSkewMs: opts.signatureSkewMs ?? DEFAULT_SIGNATURE_SKEW_MS,
    adminToken,
    authNow: opts.authNow,
    adminOps,
  };
  // An idle app of the pool, now serving this mock (binding.ts), or a new one.
  // The key: every option the build reads (buildApp), so a pooled app is the one this mock would have built.
  const poolKey =
    opts.appPool && !opts.https
      ? JSON.stringify({ admin, bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT, timeouts, max: opts.maxConnections, perClient: opts.maxConnectionsPerClient })
      : undefined;
  const pooled = poolKey !== undefined ? opts.appPool!.take(poolKey) : undefined;
  if (pooled) Object.assign(pooled.binding, binding);
  const bound = pooled ?? { app: await buildApp(opts, binding, admin, timeouts), binding };
  const app = bound.app;
  engine.start();
  let closed = false;
  // Requests of this mock in flight, counted only where close() may pool the app.
  let inFlight = 0;
  const counted = <T>(p: Promise<T>): Promise<T> => {
    inFlight++;
    return p.finally(() => inFlight--);
  };
  return {
    app,
    dispatch: (req) => (closed ? Promise.reject(new DispatchError('mock-hcs is closed', 'MOCK_HCS_CLOSED')) : poolKey === undefined ? dispatch(app, req) : counted(dispatch(app, req))),
    config,
    adminToken,
    hypervisor: engine,
    revision: () => store.revision,
    onServerChange: (fn) => engine.onServerChange(fn),
    onVolumeChange: (fn) => engine.onVolumeChange(fn),
    flush: () => store.flush(),
    close: async () => {
      if (closed) return;
      closed = true;
      engine.stop();
      // Back to the pool only with nothing of this mock in flight (no handler resumes on the next mock's state) and never listened.
      if (poolKey !== undefined && inFlight === 0 && !app.server.listening) {
        await store.flush();
        await opts.appPool!.give(poolKey, bound);
        return;
      }
      await app.close();
      await store.flush();
    },
    faults: faultApi,
    reset,
    dumpState,
    restoreState,
    catalog,
  };
}

/** Request body limit of an app (MockHcsOptions.bodyLimit). */
const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** The fastify app: the HTTP layer, the services' routes and (with `admin`) /_admin, all reading `b` at each request. */
async function buildApp(opts: MockHcsOptions, b: CloudBinding, admin: boolean, timeouts: Required<HttpTimeouts>): Promise<FastifyInstance> {
  // Route schemas reject (never silently strip or coerce) unexpected input.
  const app = Fastify({
    logger: false,
    bodyLimit: opts.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // A path parameter may be a metadata key of up to 255 characters (DeleteServerMetadata; ecs_02_0702): fastify's
    // default (100) would refuse it before the route could name the field.
    routerOptions: { maxParamLength: 512 },
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: { headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs), connectionsCheckingInterval: timeouts.checkIntervalMs },
    clientErrorHandler,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
    // Compiled route schemas are shared by every app of the process (mock-hcs/src/schema-cache.ts).
    schemaController: { compilersFactory: { buildValidator: processValidators.buildValidator } },
    frameworkErrors: frameworkErrors(admin),
    // HTTPS on request: the same app behind an https.Server (fastify's handler is the request listener).
    // Fastify applies its timeout options only to a server it creates itself: the https server gets them here, or an
    // idle TLS keep-alive connection would stay open for ever (issue 24: 1,000 sockets, none closed after 130 s).
    ...(opts.https
      ? {
          serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
            const s = createHttpsServer(
              {
                cert: opts.https!.cert,
                key: opts.https!.key,
                requestTimeout: timeouts.requestMs,
                headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
                connectionsCheckingInterval: timeouts.checkIntervalMs,
                // Node's default is 120 s: a TCP connection that never starts the handshake held a slot that long (issue 32).
                handshakeTimeout: timeouts.silentMs,
              },
              handler,
            );
            s.keepAliveTimeout = timeouts.keepAliveMs;
            return s as unknown as HttpServer;
          },
        }
      : {}),
  });
  guardConnections(app.server, {
    max: opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    perClient: opts.maxConnectionsPerClient ?? DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    silentMs: timeouts.silentMs,
  });
  installHttpLayer(app, b, admin);
  await app.register(ecsRoutes(b));
  await app.register(ecsServerExtraRoutes(b));
  await app.register(evsRoutes(b));
  await app.register(vpcRoutes(b));
  await app.register(imsRoutes(b));
  await app.register(iamRoutes(b));
  if (admin) await app.register(adminRoutes(b));
  await app.ready();
  return app;
}
