/**
 * An HTTP facade that serves the embedded management cluster, and every
 * simulated workload cluster under /clusters/<namespace>/<name>, with enough
 * of the Kubernetes REST API that the real kubectl works against it:
 * discovery, OpenAPI v3, get/list/watch (JSON lines), server-side tables,
 * create/update/patch (json, merge; strategic for built-in kinds only)/delete,
 * the status subresource, Events, and pods/log for the controller
 * deployments. Errors are metav1.Status objects. See docs/kube.md.
 */
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Clock } from '../../core/clock.js';
import { parseYamlValue } from '../../core/yaml-limits.js';
import type { WriteOptions } from '../../core/kube/client.js';
import type { EmbeddedStore } from '../../core/kube/embedded-store.js';
import { KubeApiError } from '../../core/kube/errors.js';
import { applyJsonPatch, applyMergePatch } from '../../core/kube/patch.js';
import { BUILTIN_GROUPS, RESOURCES, type ResourceInfo } from '../../core/kube/resources.js';
import type { KubeObject, WatchEvent } from '../../core/kube/types.js';
import type { ControllerLogs } from '../../core/runtime/context.js';
import type { EmbeddedWorkloadClusters } from '../embedded.js';
import { ANN_LOG_STREAM, ensureControllerObjects, ensureNamespaces, KNOWN_CONTROLLER_DEPLOYMENTS, CONTROLLER_NAMESPACE } from './controllers.js';
import { apiGroupInfo, apiGroupList, apiResourceList, apiVersions, groupVersions, openApiV3, openApiV3Index, SERVER_VERSION } from './discovery.js';
import { CERT_USER, identify, rawAuthenticated, issueClientCertificate, loopbackTls, newToken, PUBLIC_PATHS, selfSubjectReview, TOKEN_COOKIE, UNAUTHORIZED } from './auth.js';
import { rfc3339 } from '../../core/clock.js';
import { requireFieldManager, withApplyEntry, type ManagedFieldsEntry } from './managed-fields.js';
import { SCALE_KINDS, serveScale } from './scale.js';
import { serveEviction } from './eviction.js';
import { routeToWorkload, WorkloadListeners } from './listeners.js';
import { PortForwards, type ClusterCaSource, type EtcdCaSource } from './portforward/etcd-forward.js';
import type { WorkloadEtcd } from './etcd/members.js';
import { checkCreate, checkWrite, jsonDepth, MAX_BODY_DEPTH, valueDepth } from './validate.js';
import { statusClientError } from './client-error.js';
import { writeKubeconfigFiles, type KubeconfigCluster, type KubeconfigFiles } from './kubeconfig-files.js';
import { deleteOptions, impersonationRefusal, isDryRun, selfSubjectAccessReview, selfSubjectRulesReview } from './access.js';
import { toTable, type IncludeObject } from './tables.js';
import { decodeKubeProtobuf, PROTOBUF_CONTENT_TYPE, ProtobufError } from './protobuf/decode.js';
import { ensureManagementNode } from '../workload/management.js';
import { versionInfo, workloadKubernetesVersion } from '../workload/system-pods.js';

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
}

/**
 * Asked first for every request to the management cluster's address (not
 * /clusters/...): answers it (returns the reply) or leaves it to the
 * Kubernetes API (returns undefined).
 */
export interface FacadeExtension {
  handle(req: FastifyRequest, reply: FastifyReply, path: string, query: URLSearchParams): Promise<FastifyReply | undefined> | FastifyReply | undefined;
  /** Called when the facade closes (end open streams). */
  close?(): void;
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
  close(): Promise<void>;
}

interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason: string; message: string; field?: string }[] };
  code: number;
}

class HttpStatus extends Error {
  constructor(readonly status: Status) {
    super(status.message);
  }
}

function status(code: number, reason: string, message: string, details?: Status['details']): HttpStatus {
  return new HttpStatus({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code });
}

const qualified = (info: ResourceInfo): string => (info.group ? `${info.plural}.${info.group}` : info.plural);

function toStatus(e: unknown, info?: ResourceInfo, name?: string): Status {
  if (e instanceof HttpStatus) return e.status;
  if (e instanceof KubeApiError) {
    name ??= /^\S+ "([^"]*)" is invalid/.exec(e.message)?.[1];
    let message = e.message;
    if (e.reason === 'NotFound' && info && name) message = `${qualified(info)} "${name}" not found`;
    if (e.reason === 'Invalid' && info?.group && message.startsWith(`${info.kind} "`)) message = `${info.kind}.${info.group}${message.slice(info.kind.length)}`;
    const details: Status['details'] = {
      ...(name ? { name } : {}),
      ...(info ? { group: info.group, kind: e.reason === 'Invalid' ? info.kind : info.plural } : {}),
      ...(e.causes.length
        ? { causes: e.causes.map((c) => ({ reason: /^Required value/.test(c.message) ? 'FieldValueRequired' : /^Forbidden/.test(c.message) ? 'FieldValueForbidden' : /^Unsupported value/.test(c.message) ? 'FieldValueNotSupported' : /^Duplicate/.test(c.message) ? 'FieldValueDuplicate' : 'FieldValueInvalid', message: c.rule ? `${c.rule}: ${c.message}` : c.message, field: c.field })) }
        : {}),
    };
    const reason = e.reason === 'Gone' ? 'Expired' : e.reason;
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code: e.code };
  }
  const msg = e instanceof Error ? e.message : String(e);
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: msg, reason: 'InternalError', details: { causes: [{ reason: 'UnexpectedServerResponse', message: msg }] }, code: 500 };
}

interface Target {
  store: EmbeddedStore;
  info: ResourceInfo;
  namespace?: string;
  name?: string;
  sub?: string;
}

type Query = Record<string, string | undefined>;

function wantsTable(req: FastifyRequest): boolean {
  return /as=Table/.test(String(req.headers.accept ?? ''));
}

function writeOptions(q: Query, params: URLSearchParams, verb: 'Create' | 'Patch' | 'Update', warnings: string[]): WriteOptions {
  const fv = q.fieldValidation;
  return {
    ...(isDryRun(params, verb) ? { dryRun: true } : {}),
    ...(fv === 'Strict' || fv === 'Warn' || fv === 'Ignore' ? { fieldValidation: fv } : {}),
    warnings,
  };
}

/** Whether the request carries a body (a DELETE may, with DeleteOptions). */
function hasBody(req: FastifyRequest): boolean {
  if (Buffer.isBuffer(req.body)) return req.body.length > 0;
  return typeof req.body === 'string' && req.body.trim() !== '';
}

function parseBody(req: FastifyRequest): unknown {
  if (String(req.headers['content-type'] ?? '').startsWith(PROTOBUF_CONTENT_TYPE) && Buffer.isBuffer(req.body)) {
    try {
      return decodeKubeProtobuf(req.body);
    } catch (e) {
      if (e instanceof ProtobufError) throw status(e.code, e.code === 415 ? 'UnsupportedMediaType' : 'BadRequest', e.message);
      throw e;
    }
  }
  const raw = typeof req.body === 'string' ? req.body : Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  if (raw.trim() === '') throw status(400, 'BadRequest', 'the request body is empty');
  const ct = String(req.headers['content-type'] ?? 'application/json');
  const tooDeep = (): HttpStatus => status(400, 'BadRequest', `the body of the request could not be decoded: it nests deeper than ${MAX_BODY_DEPTH} levels`);
  if (!ct.includes('yaml') && jsonDepth(raw) > MAX_BODY_DEPTH) throw tooDeep();
  let v: unknown;
  try {
    v = ct.includes('yaml') ? parseYamlValue(raw) : (JSON.parse(raw) as unknown); // YAML: the size, depth and alias limits of src/core/yaml-limits.ts, duplicate keys in linear time
  } catch (e) {
    throw status(400, 'BadRequest', `the body of the request could not be decoded: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (ct.includes('yaml') && valueDepth(v, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) throw tooDeep();
  return v;
}

export async function startFacade(opts: FacadeOptions): Promise<Facade> {
  const token = opts.token ?? newToken();
  const tls = opts.tls === false ? undefined : loopbackTls(Date.now(), opts.host);
  // Client certificates are asked for, not required: a client without one (or with one from another CA) may
  // still authenticate with the token. They are checked against the facade's CA in src/world/facade/auth.ts
  // (signedBy), not by OpenSSL: no `ca` here (why: auth.ts).
  const serverTls = tls ? { key: tls.server.keyPem, cert: tls.server.certPem, requestCert: true, rejectUnauthorized: false } : undefined;
  const clientCa = tls ? new X509Certificate(tls.ca.certPem) : undefined;
  // (Fastify's types differ for an https server; the routes are the same.)
  const app = Fastify({
    logger: false,
    forceCloseConnections: true,
    clientErrorHandler: statusClientError,
    bodyLimit: 16 * 1024 * 1024,
    // A URL fastify cannot route (bad percent-encoding, ...) is a Status too.
    frameworkErrors: (err: Error, _req: FastifyRequest, reply: FastifyReply) => {
      void reply.code(400).type('application/json').send({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `the request could not be understood: ${err.message}`, reason: 'BadRequest', code: 400 });
    },
    ...(tls ? { https: serverTls } : {}) } as Parameters<typeof Fastify>[0]) as unknown as FastifyInstance;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(PROTOBUF_CONTENT_TYPE, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  // Errors raised by fastify itself (body too large, a content type it refuses, a malformed request) are Status objects too.
  app.setErrorHandler((err: { statusCode?: number; message?: string; code?: string }, _req, reply) => {
    const code = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const reason = code === 413 ? 'RequestEntityTooLarge' : code === 415 ? 'UnsupportedMediaType' : code === 400 ? 'BadRequest' : code === 404 ? 'NotFound' : code >= 500 ? 'InternalError' : 'BadRequest';
    const message = code === 413 ? `the request body is larger than the ${16} MiB limit` : (err.message ?? 'error');
    void reply.code(code).type('application/json').send({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  });
  app.setNotFoundHandler((_req, reply) => {
    void reply.code(404).type('application/json').send({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', code: 404 });
  });
  const { mgmt, workloads, logs, clock } = opts;
  const streams = new Set<() => void>();

  const ensureControllers = async (): Promise<void> => {
    const names = [...new Set([...KNOWN_CONTROLLER_DEPLOYMENTS, ...(logs?.deployments() ?? [])])].sort();
    await ensureControllerObjects(mgmt, names, clock);
  };
  await ensureNamespaces(mgmt);
  // A management cluster that looks like kind's: its own Node (src/world/workload/management.ts).
  await ensureManagementNode(mgmt, clock, SERVER_VERSION.gitVersion.replace(/\+.*$/, ''));
  await ensureControllers();
  const prepared = new WeakSet<EmbeddedStore>([mgmt]);

  app.all('/*', async (req, reply) => {
    let url: URL;
    try {
      // Not new URL(req.url, base): a path such as "//x" would be taken for a host.
      url = new URL(`http://facade${req.url.startsWith('/') ? '' : '/'}${req.url}`);
      decodeURIComponent(url.pathname);
    } catch {
      return send(reply, status(400, 'BadRequest', `the request URL could not be parsed: ${JSON.stringify(req.url)}`).status);
    }
    const q: Query = Object.fromEntries(url.searchParams.entries());
    let path = url.pathname.replace(/\/+$/, '') || '/';
    const browserPath = path === '/' || path === '/_testbed' || path.startsWith('/_testbed/');
    const who = identify(req, token, browserPath, clientCa);
    if (who) {
      // kubectl --as: refused with a Status, never served as the admin (src/world/facade/access.ts).
      const refused = impersonationRefusal(req, who);
      if (refused) return send(reply, status(refused.code, refused.reason, refused.message, refused.details).status);
    }
    if (!PUBLIC_PATHS.has(path) && !who) {
      // The dashboard's link carries the token once: keep it in an HttpOnly cookie and drop it from the address.
      const given = url.searchParams.get('token');
      if (path === '/' && given !== null && given === token) {
        const secure = tls ? '; Secure' : '';
        return reply.code(303).header('Set-Cookie', `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict${secure}`).header('Location', '/').send();
      }
      if (path === '/' && /\btext\/html\b/.test(String(req.headers.accept ?? ''))) {
        return reply.code(401).type('text/html; charset=utf-8').send('<!doctype html><title>hcs-testbed</title><p>Unauthorized. Open the login address in the <code>dashboard-url</code> file that <code>hcs-testbed serve</code> names (it ends in <code>/?token=…</code>).</p>\n');
      }
      return reply.code(401).type('application/json').send(UNAUTHORIZED);
    }
    if (opts.extension && !path.startsWith('/clusters/')) {
      try {
        const handled = await opts.extension.handle(req, reply, path, url.searchParams);
        if (handled) return handled;
      } catch (e) {
        return send(reply, toStatus(e));
      }
    }
    let store = mgmt;
    let base = '';
    const m = /^\/clusters\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
    if (m) {
      const key = `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`;
      if (!workloads?.names().includes(key)) return send(reply, status(404, 'NotFound', `workload cluster "${key}" not found`).status);
      store = workloads.store(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
      if (!prepared.has(store)) {
        prepared.add(store);
        await ensureNamespaces(store);
      }
      base = `/clusters/${m[1]}/${m[2]}`;
      path = m[3] ?? '/';
    }
    let target: Target | undefined;
    try {
      // Discovery, OpenAPI, / and /version are read-only: another verb (DELETE /api with a body, ...) is a 405 Status.
      if (req.method !== 'GET' && req.method !== 'HEAD' && (path === '/' || path === '/version' || path === '/api' || path === '/apis' || path === '/api/v1' || path.startsWith('/openapi/') || /^\/apis\/[^/]+(\/[^/]+)?$/.test(path))) {
        throw status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      }
      switch (path) {
        case '/':
          // What the apiserver answers at / (metav1.RootPaths); Cluster API's cluster cache probes it.
          return reply.send({ paths: rootPaths() });
        case '/version':
          // A workload cluster reports the version its control plane runs (src/world/workload/system-pods.ts).
          return reply.send(base ? versionInfo(SERVER_VERSION, workloadKubernetesVersion(store)) : SERVER_VERSION);
        case '/healthz':
        case '/livez':
        case '/readyz':
          return reply.type('text/plain').send('ok');
        case '/api':
          return reply.send(apiVersions(`${req.hostname}`));
        case '/apis':
          return reply.send(apiGroupList());
        case '/openapi/v3':
          return reply.send(openApiV3Index(base));
        case '/openapi/v2':
          throw status(404, 'NotFound', 'the server could not find the requested resource (OpenAPI v2 is not served; kubectl uses /openapi/v3)');
        case '/apis/authentication.k8s.io/v1/selfsubjectreviews':
          // kubectl auth whoami: the request's own user (a token, or a client certificate's CN and O).
          if (req.method !== 'POST') throw status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
          return reply.code(201).send(selfSubjectReview(who!, rfc3339(clock.now())));
        case '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews':
          // kubectl auth can-i (src/world/facade/access.ts).
          if (req.method !== 'POST') throw status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
          return reply.code(201).send(selfSubjectAccessReview(parseBody(req), who!));
        case '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews':
          if (req.method !== 'POST') throw status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
          return reply.code(201).send(selfSubjectRulesReview(parseBody(req)));
      }
      let mm: RegExpExecArray | null;
      if ((mm = /^\/openapi\/v3\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path))) {
        const doc = mm[1] ? openApiV3('', 'v1') : openApiV3(mm[2]!, mm[3]!);
        if (!doc) throw status(404, 'NotFound', 'the server could not find the requested resource');
        return reply.send(doc);
      }
      if (path === '/api/v1') return reply.send(apiResourceList('', 'v1'));
      if ((mm = /^\/apis\/([^/]+)$/.exec(path))) {
        const g = apiGroupInfo(mm[1]!);
        if (!g) throw status(404, 'NotFound', 'the server could not find the requested resource');
        return reply.send(g);
      }
      if ((mm = /^\/apis\/([^/]+)\/([^/]+)$/.exec(path))) {
        const l = apiResourceList(mm[1]!, mm[2]!);
        if (!l) throw status(404, 'NotFound', 'the server could not find the requested resource');
        return reply.send(l);
      }
      target = resolve(store, path);
      if (!target) throw status(404, 'NotFound', 'the server could not find the requested resource');
      if ((target.info.kind === 'Deployment' || target.info.kind === 'Pod') && store === mgmt) await ensureControllers();
      return await serve(req, reply, target, q, url.searchParams);
    } catch (e) {
      return send(reply, toStatus(e, target?.info, target?.name));
    }
  });

  function rootPaths(): string[] {
    const paths = ['/api', '/api/v1', '/apis', '/healthz', '/livez', '/openapi/v3', '/readyz', '/version'];
    for (const gv of groupVersions()) if (gv.group) paths.push(`/apis/${gv.group}`, `/apis/${gv.group}/${gv.version}`);
    return [...new Set(paths)].sort();
  }

  function send(reply: FastifyReply, s: Status): FastifyReply {
    return reply.code(s.code).type('application/json').send(s);
  }

  function resolve(store: EmbeddedStore, path: string): Target | undefined {
    const mm = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))\/(.+)$/.exec(path);
    if (!mm) return undefined;
    const group = mm[1] ? '' : mm[2]!;
    const version = mm[1] ?? mm[3]!;
    let rest = mm[4]!.split('/').map(decodeURIComponent);
    const find = (plural: string | undefined): ResourceInfo | undefined => RESOURCES.find((r) => r.group === group && r.version === version && r.plural === plural);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && find(rest[2])?.namespaced) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const info = find(rest[0]);
    if (!info || rest.length > 3) return undefined;
    if (namespace && !info.namespaced) return undefined;
    return { store, info, ...(namespace ? { namespace } : {}), ...(rest[1] ? { name: rest[1] } : {}), ...(rest[2] ? { sub: rest[2] } : {}) };
  }

  async function serve(req: FastifyRequest, reply: FastifyReply, t: Target, q: Query, params: URLSearchParams): Promise<FastifyReply> {
    const { store, info, namespace, name, sub } = t;
    const method = req.method.toUpperCase();
    const warnings: string[] = [];
    const done = (code: number, body: unknown): FastifyReply => {
      for (const w of warnings) void reply.header('Warning', `299 - ${JSON.stringify(w)}`);
      return reply.code(code).type('application/json').send(body);
    };
    if (sub && !(sub === 'status' && info.statusSubresource) && !((sub === 'log' || sub === 'eviction') && info.kind === 'Pod') && !(sub === 'scale' && SCALE_KINDS.has(info.kind))) {
      throw status(404, 'NotFound', 'the server could not find the requested resource');
    }
    if (sub === 'eviction' && name) {
      // policy/v1 Eviction (src/world/facade/eviction.ts): what kubectl drain posts.
      if (method !== 'POST') throw status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
      const s = await serveEviction(store, namespace ?? 'default', name, parseBody(req), q.dryRun);
      return done(s.code, s);
    }
    if (sub === 'scale' && name) {
      const ct = String(req.headers['content-type'] ?? '').split(';')[0]!.trim();
      const patchType = ct === 'application/json-patch+json' ? 'json' : ct === 'application/merge-patch+json' || ct === 'application/strategic-merge-patch+json' ? 'merge' : undefined;
      const ref = { kind: info.kind, ...(namespace ? { namespace } : {}), name };
      return done(200, await serveScale(store, ref, info.plural, method, () => parseBody(req), patchType, writeOptions(q, params, method === 'PATCH' ? 'Patch' : 'Update', warnings)));
    }
    const includeObject = (q.includeObject as IncludeObject | undefined) ?? 'Metadata';
    const ref = { kind: info.kind, namespace: info.namespaced ? namespace : undefined, name: name ?? '' };

    if (method === 'GET' && !name) {
      const listOpts = { ...(namespace ? { namespace } : {}), ...(q.labelSelector ? { labelSelector: q.labelSelector } : {}), ...(q.fieldSelector ? { fieldSelector: q.fieldSelector } : {}) };
      if (q.watch === 'true' || q.watch === '1') return watch(req, reply, t, q, listOpts);
      const { items, resourceVersion } = store.listWithVersion(info.kind, listOpts);
      if (wantsTable(req)) return done(200, toTable(info.kind, items, clock.now(), { resourceVersion, includeObject }));
      return done(200, { kind: `${info.kind}List`, apiVersion: info.group ? `${info.group}/${info.version}` : info.version, metadata: { resourceVersion }, items });
    }
    if (!name) {
      if (method !== 'POST') throw status(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
      const body = parseBody(req) as KubeObject;
      checkBody(body, info, namespace);
      checkCreate(body);
      checkWrite(body, info);
      const wo = writeOptions(q, params, 'Create', warnings);
      const ns = info.namespaced ? namespace ?? body.metadata.namespace ?? 'default' : undefined;
      if (ns !== undefined) namespaceAdmits(store, ns);
      const created = await store.create({ ...body, metadata: { ...body.metadata, ...(ns !== undefined ? { namespace: ns } : {}) } }, wo);
      return done(201, created);
    }
    switch (method) {
      case 'GET': {
        if (sub === 'log') return podLog(reply, store, info, namespace!, name, q);
        const o = store.getSync(ref);
        if (!o) throw KubeApiError.notFound(info.plural, name);
        if (wantsTable(req)) return done(200, toTable(info.kind, [o], clock.now(), { resourceVersion: store.resourceVersion(), includeObject }));
        return done(200, o);
      }
      case 'PUT': {
        const body = parseBody(req) as KubeObject;
        checkBody(body, info, namespace);
        if (body.metadata?.name !== name) throw status(400, 'BadRequest', `the name of the object (${body.metadata?.name ?? ''}) does not match the name on the URL (${name})`);
        checkWrite(body, info);
        const wo = writeOptions(q, params, 'Update', warnings);
        const obj = { ...body, metadata: { ...body.metadata, ...(info.namespaced ? { namespace } : {}) } };
        const out = sub === 'status' ? await store.updateStatus(obj, wo) : await store.update(obj, wo);
        return done(200, out);
      }
      case 'PATCH': {
        const ct = String(req.headers['content-type'] ?? '').split(';')[0]!.trim();
        const wo = writeOptions(q, params, 'Patch', warnings);
        const subOpt = sub === 'status' ? { subresource: 'status' as const } : {};
        const patchWith = async (type: 'json' | 'merge'): Promise<FastifyReply> => {
          const p = parseBody(req);
          previewPatch(store, info, ref, type, p);
          return done(200, await store.patch(ref, type, p, { ...subOpt, ...wo }));
        };
        if (ct === 'application/json-patch+json') return patchWith('json');
        if (ct === 'application/merge-patch+json') return patchWith('merge');
        if (ct === 'application/strategic-merge-patch+json') {
          // The apiserver has no strategic-merge metadata for custom resources.
          if (!BUILTIN_GROUPS.has(info.group)) throw unsupportedMedia(ct);
          return patchWith('merge');
        }
        if (ct === 'application/apply-patch+yaml') return done(200, await serverSideApply(store, info, ref, parseBody(req) as KubeObject, wo, requireFieldManager(q.fieldManager)));
        throw unsupportedMedia(ct);
      }
      case 'DELETE': {
        // kubectl delete --dry-run=server sends DeleteOptions {dryRun: ["All"]} in the body; ?dryRun=All works too.
        const opts = deleteOptions(hasBody(req) ? parseBody(req) : undefined);
        const dry = isDryRun(params, 'Delete', opts.dryRun);
        const before = store.getSync(ref);
        if (!before) throw KubeApiError.notFound(info.plural, name);
        if (dry) {
          // What the delete would leave: marked for deletion while finalizers remain, else the object as it was.
          const wouldWait = (before.metadata.finalizers?.length ?? 0) > 0;
          return done(200, wouldWait ? { ...before, metadata: { ...before.metadata, deletionTimestamp: before.metadata.deletionTimestamp ?? rfc3339(clock.now()), deletionGracePeriodSeconds: 0 } } : before);
        }
        await store.delete(ref);
        const after = store.getSync(ref);
        return done(200, after ?? { ...before, metadata: { ...before.metadata } });
      }
      default:
        throw status(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    }
  }

  /**
   * NamespaceLifecycle admission, as the apiserver runs it on every create of
   * a namespaced object: the namespace must exist (404 NotFound namespaces
   * "x") and not be terminating (403 Forbidden,
   * k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle).
   */
  function namespaceAdmits(store: EmbeddedStore, ns: string): void {
    const n = store.getSync({ kind: 'Namespace', name: ns });
    if (!n) throw status(404, 'NotFound', `namespaces "${ns}" not found`, { name: ns, kind: 'namespaces' });
    if (n.metadata.deletionTimestamp) throw status(403, 'Forbidden', `unable to create new content in namespace ${ns} because it is being terminated`, { name: ns, kind: 'namespaces', causes: [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }] });
  }

  /** Apply a patch to a copy first: what it would write must pass checkWrite, or nothing is written (a 422, not a 500 after the fact). */
  function previewPatch(store: EmbeddedStore, info: ResourceInfo, ref: { kind: string; namespace?: string | undefined; name: string }, type: 'json' | 'merge', p: unknown): void {
    const cur = store.getSync(ref as { kind: string; namespace?: string; name: string });
    if (!cur) throw KubeApiError.notFound(info.plural, ref.name);
    let next: unknown;
    try {
      next = type === 'merge' ? applyMergePatch(cur, p) : applyJsonPatch(cur, p);
    } catch {
      return; // the store answers a patch that does not apply with its own error
    }
    if (typeof next !== 'object' || next === null || Array.isArray(next)) throw status(422, 'Invalid', `${qualified(info)} "${ref.name}" is invalid: the patch does not leave an object`);
    // A patch cannot take away or change what the object is ({"kind": null} was a 500 after the fact).
    for (const f of ['kind', 'apiVersion'] as const) {
      const was = (cur as unknown as Record<string, unknown>)[f];
      const now = (next as Record<string, unknown>)[f];
      if (now !== was) throw status(422, 'Invalid', `${qualified(info)} "${ref.name}" is invalid: ${f}: Invalid value: ${JSON.stringify(now ?? null)}: a patch may not remove or change ${f} (it is ${JSON.stringify(was)})`, { name: ref.name, group: info.group, kind: info.kind, causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(now ?? null)}: may not be removed or changed`, field: f }] });
    }
    checkWrite(next as KubeObject, info);
  }

  function unsupportedMedia(_ct: string): HttpStatus {
    return status(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`);
  }

  function checkBody(body: KubeObject, info: ResourceInfo, namespace: string | undefined): void {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw status(400, 'BadRequest', 'the request body must be a JSON object');
    if (!body.metadata || typeof body.metadata !== 'object') body.metadata = { name: '' };
    const av = info.group ? `${info.group}/${info.version}` : info.version;
    if (body.kind !== info.kind || (body.apiVersion && body.apiVersion !== av)) {
      throw status(400, 'BadRequest', `the API version in the data (${body.apiVersion ?? ''}) does not match the expected API version (${av}) or kind ${body.kind ?? '""'} is not ${info.kind}`);
    }
    if (namespace && body.metadata.namespace && body.metadata.namespace !== namespace) {
      throw status(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    }
  }

  /** A simplified server-side apply: create, or merge the applied fields into the live object (no managedFields). */
  async function serverSideApply(store: EmbeddedStore, info: ResourceInfo, ref: { kind: string; namespace?: string; name: string }, body: KubeObject, wo: WriteOptions, manager: string): Promise<KubeObject> {
    checkBody(body, info, ref.namespace);
    const cur = store.getSync(ref);
    type WithFields = { managedFields?: ManagedFieldsEntry[] };
    if (!cur) {
      if (ref.namespace) namespaceAdmits(store, ref.namespace);
      checkCreate(body);
      checkWrite(body, info);
      const managedFields = withApplyEntry(undefined, manager, body, clock.now());
      return store.create({ ...body, metadata: { ...body.metadata, name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}), managedFields } as KubeObject['metadata'] }, wo);
    }
    const { apiVersion: _a, kind: _k, ...rest } = body;
    const managedFields = withApplyEntry((cur.metadata as WithFields).managedFields, manager, body, clock.now());
    const p = applyMergePatch({}, { ...rest, metadata: { ...(rest.metadata ?? {}), managedFields } });
    checkWrite(applyMergePatch(cur, p) as KubeObject, info);
    return store.patch(ref, 'merge', p, wo);
  }

  function podLog(reply: FastifyReply, store: EmbeddedStore, info: ResourceInfo, namespace: string, name: string, q: Query): FastifyReply {
    const pod = store.getSync({ kind: 'Pod', namespace, name });
    if (!pod) throw KubeApiError.notFound(info.plural, name);
    const stream = pod.metadata.annotations?.[ANN_LOG_STREAM];
    let lines = stream && logs ? logs.text(stream).split('\n').filter((l) => l !== '') : [];
    const tail = q.tailLines !== undefined ? Number(q.tailLines) : undefined;
    if (tail !== undefined && Number.isInteger(tail) && tail >= 0) lines = tail === 0 ? [] : lines.slice(-tail);
    if (q.follow !== 'true' && q.follow !== '1') return reply.code(200).type('text/plain').send(lines.map((l) => l + '\n').join(''));
    // kubectl logs -f: what there is, then every new line of the stream until the client goes away.
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    for (const l of lines) res.write(l + '\n');
    let closed = false;
    const unsub = stream && logs ? logs.subscribe((d, line) => {
      if (!closed && d === stream) res.write(JSON.stringify(line) + '\n');
    }) : undefined;
    const end = (): void => {
      if (closed) return;
      closed = true;
      unsub?.();
      streams.delete(end);
      res.end();
    };
    streams.add(end);
    reply.request.raw.on('close', end);
    return reply;
  }

  function watch(req: FastifyRequest, reply: FastifyReply, t: Target, q: Query, listOpts: { namespace?: string; labelSelector?: string; fieldSelector?: string }): FastifyReply {
    const { store, info } = t;
    const asTable = wantsTable(req);
    const includeObject = (q.includeObject as IncludeObject | undefined) ?? 'Metadata';
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    let first = true;
    let closed = false;
    const write = (e: { type: string; object: unknown }): void => {
      if (!closed) res.write(JSON.stringify(e) + '\n');
    };
    const sendEvent = (e: WatchEvent): void => {
      const object = asTable ? toTable(info.kind, [e.object], clock.now(), { includeObject, noHeaders: !first }) : e.object;
      first = false;
      write({ type: e.type, object });
    };
    let unsub: (() => void) | undefined;
    const end = (): void => {
      if (closed) return;
      closed = true;
      unsub?.();
      streams.delete(end);
      clearTimeout(timer);
      res.end();
    };
    streams.add(end);
    const timeout = q.timeoutSeconds !== undefined ? Number(q.timeoutSeconds) : 1800;
    const timer = setTimeout(end, Math.max(1, timeout) * 1000);
    timer.unref();
    req.raw.on('close', end);
    const rv = q.resourceVersion;
    try {
      if (!rv || rv === '0') {
        for (const o of store.listSync(info.kind, listOpts)) sendEvent({ type: 'ADDED', object: o });
        unsub = store.watch(info.kind, sendEvent, listOpts);
      } else {
        unsub = store.watch(info.kind, sendEvent, { ...listOpts, resourceVersion: rv });
      }
    } catch (e) {
      write({ type: 'ERROR', object: toStatus(e, info) });
      end();
    }
    return reply;
  }

  const address = await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  const url = address.replace('[::1]', '127.0.0.1').replace('//localhost:', '//127.0.0.1:');
  // Every workload cluster also gets its own address, as real clusters have (src/world/facade/listeners.ts).
  const portForwards = new PortForwards({
    store: (key) => (workloads?.names().includes(key) ? workloads.store(...(key.split('/') as [string, string])) : undefined),
    ...(opts.etcdCa ? { etcdCa: opts.etcdCa } : {}),
    ...(opts.clusterCa ? { clusterCa: opts.clusterCa } : {}),
    route: (key, req, res) => routeToWorkload(key, (q, r) => app.routing(q, r), req, res),
    authenticated: (req) => rawAuthenticated(req, token, clientCa),
  });
  const listeners = new WorkloadListeners({
    host: opts.host ?? '127.0.0.1',
    ...(serverTls ? { tls: serverTls } : {}),
    route: (req, res) => app.routing(req, res),
    upgrade: (key, req, socket, head) => portForwards.upgrade(key, req, socket, head),
  });
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
    openWatches: () => streams.size,
    token,
    authHeaders: () => ({ Authorization: `Bearer ${token}` }),
    ...(tls ? { caPem: tls.ca.certPem } : {}),
    issueClientCertificate: (username: string, group?: string, nowMs?: number) => {
      if (!tls) throw new Error('client certificates need TLS (the facade was started with tls: false)');
      return issueClientCertificate(tls, username, group, nowMs);
    },
    dashboardUrl: `${url}/?token=${encodeURIComponent(token)}`,
    etcd: (namespace: string, name: string) => portForwards.etcd(`${namespace}/${name}`),
    close: async () => {
      closed = true;
      workloads?.setEndpoints(undefined);
      for (const end of [...streams]) end();
      opts.extension?.close?.();
      await listeners.close();
      await app.close();
    },
  };
}

export { CONTROLLER_NAMESPACE };
