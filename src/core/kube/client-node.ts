/**
 * KubeClient on a real apiserver (or the HTTP facade), through
 * @kubernetes/client-node: KubeConfig resolves the server, TLS and
 * credentials of any kubeconfig, its Watch class streams watches.
 *
 * REST calls are made with KubeConfig.applyToHTTPSOptions + node:http(s)
 * rather than KubernetesObjectApi: the latter (de)serializes through the
 * typed models (metadata.creationTimestamp becomes a Date, unknown fields of
 * built-in kinds are dropped), which would change what controllers see
 * compared with the embedded store. Objects here stay plain JSON.
 */
import http from 'node:http';
import https from 'node:https';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { rfc3339, type Clock } from '../clock.js';
import type { KubeClient, ListOptions, PatchType, WatchOptions, WriteOptions } from './client.js';
import { KindInformer, keyOfObject, rvNumber } from './informer.js';
import { KubeApiError, type FieldCause, type StatusReason } from './errors.js';
import { resourceForKind, type ResourceInfo } from './resources.js';
import { jsonClone } from './patch.js';
import { labelSelectorString, objectFilter } from './selectors.js';
import { compareObjectKeys, type KubeObject, type ObjectRef, type WatchEvent } from './types.js';

export interface Response {
  status: number;
  body: unknown;
  headers: http.IncomingHttpHeaders;
}

interface StatusBody {
  kind?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { field?: string; message?: string }[] };
}

const REASONS: StatusReason[] = ['NotFound', 'AlreadyExists', 'Conflict', 'Invalid', 'BadRequest', 'Forbidden', 'Gone', 'MethodNotAllowed', 'UnsupportedMediaType', 'InternalError'];
const BY_CODE: Record<number, StatusReason> = { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict', 410: 'Gone', 415: 'UnsupportedMediaType', 422: 'Invalid' };

/**
 * How long `kubeRequest` waits for a whole response (headers and body) by
 * default: 120 s, twice the apiserver's own 60 s request timeout
 * (kube-apiserver --request-timeout, after which it answers 504 itself), so
 * a live apiserver always answers first and only a hung one (or a hung
 * network path) trips the client's bound.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export interface KubeRequestOptions {
  /** Bound on the whole call, from sending the request to the end of the body (ms; default DEFAULT_REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** A REST call that got no complete response within its bound: the request was aborted (its socket destroyed). */
export class KubeRequestTimeoutError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} ${url}: no complete response from the apiserver within ${timeoutMs} ms (client-side timeout; the request was aborted)`);
    this.name = 'KubeRequestTimeoutError';
  }
}

/**
 * One REST call with the kubeconfig's TLS, tokens and client certificates
 * (node:http(s); see the class comment for why not KubernetesObjectApi).
 * The body comes back parsed as JSON when it is JSON, as text otherwise.
 * The whole call is bounded by `opts.timeoutMs` (default 120 s): past it the
 * request is aborted and the promise rejects with KubeRequestTimeoutError.
 */
export async function kubeRequest(kc: KubeConfig, method: string, url: URL, body?: unknown, contentType = 'application/json', opts: KubeRequestOptions = {}): Promise<Response> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new RangeError(`kubeRequest: timeoutMs must be a positive finite number of milliseconds, got ${timeoutMs}`);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const ropts: https.RequestOptions = {
    method,
    headers: { Accept: 'application/json', ...(payload !== undefined ? { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) } : {}) },
  };
  await kc.applyToHTTPSOptions(ropts);
  const mod = url.protocol === 'https:' ? https : http;
  if (mod === https) ropts.agent = keepAliveAgent(kc, ropts.agent);
  return new Promise<Response>((resolve, reject) => {
    let done = false;
    const finish = (err: unknown, r?: Response): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err === undefined) resolve(r!);
      else reject(err instanceof Error ? err : new Error(String(err)));
    };
    const req = mod.request(url, ropts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? (JSON.parse(text) as unknown) : undefined;
        } catch {
          /* plain text (e.g. logs) */
        }
        finish(undefined, { status: res.statusCode ?? 0, body: parsed, headers: res.headers });
      });
      res.on('error', (e) => finish(e));
    });
    // Rejected first, then the socket destroyed: whatever error the destroy makes the request or response emit comes second and is ignored.
    const timer = setTimeout(() => {
      const err = new KubeRequestTimeoutError(method, url.href, timeoutMs);
      finish(err);
      req.destroy(err);
    }, timeoutMs);
    req.on('error', (e) => finish(e));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A kubeconfig file, with `context` as the current context when given. */
export function loadKubeconfig(file: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  if (context) kc.setCurrentContext(context);
  return kc;
}

const agents = new WeakMap<KubeConfig, https.Agent>();

/**
 * KubeConfig.applyToHTTPSOptions builds a new https.Agent (no keep-alive) for
 * every request, so every call would pay a TLS handshake with client-cert
 * authentication. Keep one keep-alive agent per KubeConfig, built from the
 * first agent's TLS options (CA, client cert/key, servername); credentials
 * that can change per request (tokens, basic auth) are headers, which are
 * still taken from each applyToHTTPSOptions call.
 */
function keepAliveAgent(kc: KubeConfig, built: https.RequestOptions['agent']): https.Agent | undefined {
  let a = agents.get(kc);
  if (!a) {
    const base = built instanceof https.Agent ? (built as https.Agent & { options: https.AgentOptions }).options : {};
    a = new https.Agent({ ...base, keepAlive: true, maxSockets: 16 });
    agents.set(kc, a);
  }
  return a;
}

/** Turn an apiserver Status into the KubeApiError the embedded store would throw (rule IDs recovered from cause messages). */
export function statusToError(code: number, body: unknown): KubeApiError {
  const s = (typeof body === 'object' && body !== null ? body : {}) as StatusBody;
  const reason: StatusReason = s.reason === 'Expired' ? 'Gone' : REASONS.includes(s.reason as StatusReason) ? (s.reason as StatusReason) : (BY_CODE[code] ?? 'InternalError');
  const causes: FieldCause[] = (s.details?.causes ?? []).map((c) => {
    // The facade prefixes the rule ("NET-6: Forbidden: …"); a real apiserver's CEL rules put it after the
    // error type ("Forbidden: TPL-4: …", 'Invalid value: "object": NET-2: …'). The message keeps the rest.
    const m = /^((?:[A-Z][a-z]+(?: [a-z]+)*: (?:"[^"]*": )?)?)([A-Z]+-\d+): (.*)$/s.exec(c.message ?? '');
    return { field: c.field ?? '', message: m ? m[1]! + m[3]! : (c.message ?? ''), ...(m ? { rule: m[2]! } : {}) };
  });
  return new KubeApiError(reason, s.message ?? (typeof body === 'string' ? body : `HTTP ${code}`), causes);
}

export interface ClientNodeOptions {
  /**
   * The testbed's virtual clock. When set, the timestamps the apiserver
   * stamps from its wall clock (metadata.creationTimestamp,
   * metadata.deletionTimestamp) are shown on the virtual clock instead: the
   * virtual instant at which this client first saw the object (or first saw
   * it marked for deletion). Controllers compare these with `clock.now()`
   * (machine age for the delete policy, node drain timeout); wall-clock
   * values would be meaningless on a clock that jumps. The apiserver keeps
   * its own values: both fields are read-only for clients (BeforeUpdate in
   * k8s.io/apiserver/pkg/registry/rest/update.go copies them from the old
   * object), so writing the translated value back changes nothing.
   */
  clock?: Clock;
  /** How long `settled()` waits for the watches to catch up before it fails (wall ms, default 60 s). */
  settleTimeoutMs?: number;
  /**
   * Serve get/list from the informers' caches when they are at least as new
   * as this client's own writes (see `fresh`), as controller-runtime's
   * default client reads from its cache. Only sound when this client is the
   * only writer (or `sync()` is called after others wrote): the testbed on a
   * dedicated management cluster.
   */
  cacheReads?: boolean;
  /** Bound on each REST call of this client (wall ms, default DEFAULT_REQUEST_TIMEOUT_MS; see kubeRequest). Watches are not bounded by it. */
  requestTimeoutMs?: number;
}

export class ClientNodeKube implements KubeClient {
  private readonly watcher: Watch;
  private readonly informers = new Map<string, KindInformer>();
  /** Per kind: the highest resourceVersion this client's own writes returned. */
  private readonly written = new Map<string, number>();
  /** Per kind: objects this client deleted whose DELETED event has not been delivered yet (key -> uid). */
  private readonly pendingDeletes = new Map<string, Map<string, string>>();
  /** uid -> timestamps on the virtual clock (see ClientNodeOptions.clock). */
  private readonly times = new Map<string, { created: string; deleted?: string }>();
  private readonly rawWatches = new Set<() => void>();

  constructor(
    readonly kc: KubeConfig,
    private readonly opts: ClientNodeOptions = {},
  ) {
    this.watcher = new Watch(kc);
  }

  static fromKubeconfig(file: string, context?: string, opts: ClientNodeOptions = {}): ClientNodeKube {
    return new ClientNodeKube(loadKubeconfig(file, context), opts);
  }

  /**
   * Normalize an object from the apiserver: managedFields dropped (the
   * embedded store has none; an update without them keeps the server's), and
   * the wall-clock timestamps translated to the virtual clock.
   */
  private decode<T extends KubeObject>(o: T): T {
    if (!o || typeof o !== 'object' || !o.metadata) return o;
    const m = o.metadata as T['metadata'] & { managedFields?: unknown };
    if (m.managedFields !== undefined) delete m.managedFields;
    const clock = this.opts.clock;
    if (clock && m.uid) {
      let t = this.times.get(m.uid);
      if (!t) {
        t = { created: rfc3339(clock.now()) };
        this.times.set(m.uid, t);
      }
      if (m.creationTimestamp) m.creationTimestamp = t.created;
      if (m.deletionTimestamp) m.deletionTimestamp = t.deleted ??= rfc3339(clock.now());
    }
    return o;
  }

  /** Remember what a write returned, for `settled()`. */
  private noteWrite(kind: string, o: unknown, wopts?: WriteOptions): void {
    if (wopts?.dryRun) return;
    const rv = rvNumber((o as KubeObject | undefined)?.metadata?.resourceVersion);
    if (rv > (this.written.get(kind) ?? 0)) this.written.set(kind, rv);
  }

  private server(): string {
    const c = this.kc.getCurrentCluster();
    if (!c) throw new Error('kubeconfig has no current cluster');
    return c.server.replace(/\/+$/, '');
  }

  private path(info: ResourceInfo, namespace?: string, name?: string, sub?: string): string {
    const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
    const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${base}${ns}/${info.plural}${name ? `/${encodeURIComponent(name)}` : ''}${sub ? `/${sub}` : ''}`;
  }

  private async request(method: string, path: string, query: Record<string, string | undefined> = {}, body?: unknown, contentType = 'application/json'): Promise<Response> {
    const url = new URL(this.server() + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    return kubeRequest(this.kc, method, url, body, contentType, { timeoutMs: this.opts.requestTimeoutMs });
  }

  private async call(method: string, path: string, query: Record<string, string | undefined> = {}, body?: unknown, contentType?: string, wopts?: WriteOptions): Promise<unknown> {
    const r = await this.request(method, path, query, body, contentType);
    const warn = r.headers.warning;
    if (warn && wopts?.warnings) for (const w of Array.isArray(warn) ? warn : [warn]) wopts.warnings.push(w.replace(/^299 - "?|"$/g, '').replace(/\\"/g, '"'));
    if (r.status >= 400) throw statusToError(r.status, r.body);
    return r.body;
  }

  private writeQuery(w: WriteOptions = {}): Record<string, string | undefined> {
    return { dryRun: w.dryRun ? 'All' : undefined, fieldValidation: w.fieldValidation, fieldManager: 'hcs-testbed' };
  }

  /**
   * The informer of a kind when its cache can answer a read exactly as the
   * apiserver would: established, and it has delivered every write this
   * client made (every version a write of the kind returned, every deletion).
   * With no other writer, the cache then holds the server's current state
   * of the kind (controller-runtime reads from such a cache too, without
   * this guard: the guard gives the read-your-writes the simulated
   * controllers were written against).
   */
  private fresh(kind: string): KindInformer | undefined {
    if (!this.opts.cacheReads) return undefined;
    const inf = this.informers.get(kind);
    if (!inf?.isReady || inf.delivered < (this.written.get(kind) ?? 0) || (this.pendingDeletes.get(kind)?.size ?? 0) > 0) return undefined;
    return inf;
  }

  private cachedGet(ref: ObjectRef): { hit: boolean; obj?: KubeObject } {
    const info = resourceForKind(ref.kind);
    if (info.namespaced && !ref.namespace) return { hit: false };
    const inf = this.fresh(ref.kind);
    if (!inf) return { hit: false };
    const o = inf.cache.get(`${info.namespaced ? ref.namespace : ''}/${ref.name}`);
    return o ? { hit: true, obj: o } : { hit: true };
  }

  private cachedList(kind: string, opts: ListOptions): KubeObject[] | undefined {
    const inf = this.fresh(kind);
    if (!inf) return undefined;
    const match = objectFilter(kind, opts);
    const out = [...inf.cache.values()].filter((o) => !match || match(o));
    return out.sort(compareObjectKeys);
  }

  /** From a fresh informer cache: the cached (deep-frozen) objects themselves; else a plain read. */
  async getShared<T extends KubeObject>(ref: ObjectRef): Promise<Readonly<T> | undefined> {
    const c = this.cachedGet(ref);
    return c.hit ? (c.obj as T | undefined) : this.get<T>(ref);
  }

  async listShared<T extends KubeObject>(kind: string, opts: ListOptions = {}): Promise<readonly Readonly<T>[]> {
    return (this.cachedList(kind, opts) as T[] | undefined) ?? this.list<T>(kind, opts);
  }

  async get<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    const c = this.cachedGet(ref);
    if (c.hit) return c.obj ? (jsonClone(c.obj) as T) : undefined;
    const info = resourceForKind(ref.kind);
    try {
      return this.decode((await this.call('GET', this.path(info, ref.namespace, ref.name))) as T);
    } catch (e) {
      if (e instanceof KubeApiError && e.reason === 'NotFound') return undefined;
      throw e;
    }
  }

  /** A list plus its resourceVersion (to start a watch from). */
  async listWithVersion<T extends KubeObject>(kind: string, opts: ListOptions = {}): Promise<{ items: T[]; resourceVersion: string }> {
    const info = resourceForKind(kind);
    const body = (await this.call('GET', this.path(info, opts.namespace), {
      labelSelector: opts.labelSelector === undefined ? undefined : labelSelectorString(opts.labelSelector),
      fieldSelector: opts.fieldSelector,
    })) as { items?: T[]; metadata?: { resourceVersion?: string } };
    const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
    // Built-in kinds come without apiVersion/kind in list items; the embedded store always has them.
    const items = (body.items ?? []).map((o) => this.decode({ ...o, apiVersion: o.apiVersion || apiVersion, kind: o.kind || kind }));
    items.sort(compareObjectKeys);
    return { items, resourceVersion: body.metadata?.resourceVersion ?? '' };
  }

  async list<T extends KubeObject>(kind: string, opts: ListOptions = {}): Promise<T[]> {
    const cached = this.cachedList(kind, opts);
    if (cached) return cached.map((o) => jsonClone(o) as T);
    return (await this.listWithVersion<T>(kind, opts)).items;
  }

  async create<T extends KubeObject>(obj: T, wopts?: WriteOptions): Promise<T> {
    const info = resourceForKind(obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    const out = (await this.call('POST', this.path(info, ns), this.writeQuery(wopts), obj, 'application/json', wopts)) as T;
    this.noteWrite(obj.kind, out, wopts);
    return this.decode(out);
  }

  async update<T extends KubeObject>(obj: T, wopts?: WriteOptions): Promise<T> {
    const info = resourceForKind(obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    const out = (await this.call('PUT', this.path(info, ns, obj.metadata.name), this.writeQuery(wopts), obj, 'application/json', wopts)) as T;
    this.noteWrite(obj.kind, out, wopts);
    return this.decode(out);
  }

  async updateStatus<T extends KubeObject>(obj: T, wopts?: WriteOptions): Promise<T> {
    const info = resourceForKind(obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    // Kinds without a status subresource take status through the main resource (as in the embedded store).
    const out = (await this.call('PUT', this.path(info, ns, obj.metadata.name, info.statusSubresource ? 'status' : undefined), this.writeQuery(wopts), obj, 'application/json', wopts)) as T;
    this.noteWrite(obj.kind, out, wopts);
    return this.decode(out);
  }

  async patch<T extends KubeObject>(ref: ObjectRef, type: PatchType, patch: unknown, opts: { subresource?: 'status' } & WriteOptions = {}): Promise<T> {
    const info = resourceForKind(ref.kind);
    const ct = type === 'json' ? 'application/json-patch+json' : 'application/merge-patch+json';
    const sub = opts.subresource === 'status' && info.statusSubresource ? 'status' : undefined;
    const out = (await this.call('PATCH', this.path(info, ref.namespace, ref.name, sub), this.writeQuery(opts), patch, ct, opts)) as T;
    this.noteWrite(ref.kind, out, opts);
    return this.decode(out);
  }

  async delete(ref: ObjectRef, opts: { ignoreNotFound?: boolean } = {}): Promise<void> {
    const info = resourceForKind(ref.kind);
    try {
      const out = (await this.call('DELETE', this.path(info, ref.namespace, ref.name), { propagationPolicy: 'Background' })) as KubeObject & { details?: { uid?: string } };
      this.noteDelete(ref, out);
    } catch (e) {
      if (opts.ignoreNotFound && e instanceof KubeApiError && e.reason === 'NotFound') return;
      throw e;
    }
  }

  /**
   * A delete either marked the object (finalizers: the response is the object
   * with deletionTimestamp, a write like any other) or removed it (the
   * response is the object as it was, or a Status): then `settled()` waits
   * for its DELETED event.
   */
  private noteDelete(ref: ObjectRef, out: KubeObject & { details?: { uid?: string } }): void {
    const isObject = out && typeof out === 'object' && out.kind !== 'Status' && !!out.metadata;
    if (isObject && out.metadata.deletionTimestamp && (out.metadata.finalizers ?? []).length > 0) {
      this.noteWrite(ref.kind, out);
      this.decode(out);
      return;
    }
    const uid = isObject ? out.metadata.uid : out?.details?.uid;
    const inf = this.informers.get(ref.kind);
    if (!uid || !inf || inf.wasDeleted(uid)) return;
    const m = this.pendingDeletes.get(ref.kind) ?? new Map<string, string>();
    this.pendingDeletes.set(ref.kind, m);
    m.set(`${ref.namespace ?? ''}/${ref.name}`, uid);
  }

  private informer(kind: string): KindInformer {
    let inf = this.informers.get(kind);
    if (inf) return inf;
    const info = resourceForKind(kind);
    const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
    inf = new KindInformer(kind, {
      list: () => this.listWithVersion(kind),
      watch: async (rv, onEvent, onDone) => {
        // The Watch callback's object is untyped JSON.
        const ctl = await this.watcher.watch(this.path(info), { resourceVersion: rv, allowWatchBookmarks: true }, (phase: string, obj: unknown) => {
          const o = obj as KubeObject & StatusBody;
          if (phase === 'ERROR' || phase === 'BOOKMARK') return onEvent(phase, o as KubeObject & { code?: number });
          if (phase === 'DELETED') this.pendingDeletes.get(kind)?.delete(keyOfObject(o));
          onEvent(phase, this.decode({ ...o, apiVersion: o.apiVersion || apiVersion, kind: o.kind || kind }));
        }, onDone);
        return () => ctl.abort();
      },
    });
    this.informers.set(kind, inf);
    inf.start();
    return inf;
  }

  /**
   * The barrier of a simulation step on a real apiserver: resolves once every
   * informer is established and has delivered this client's own writes
   * (every kind's stream at or past the highest resourceVersion a write of
   * that kind returned, every deleted object's DELETED event seen). After
   * that, every watch handler that this client's writes will ever trigger has
   * run, so "no work queued and no timer due" means quiescent, as on the
   * embedded store whose handlers run synchronously.
   */
  async settled(): Promise<void> {
    const deadline = Date.now() + (this.opts.settleTimeoutMs ?? 60_000);
    for (;;) {
      const waiting = this.lagging();
      if (waiting.length === 0) return;
      if (Date.now() > deadline) throw new Error(`the apiserver's watches did not catch up with this client's writes within ${(this.opts.settleTimeoutMs ?? 60_000) / 1000} s: ${waiting.map((i) => i.kind).join(', ')}`);
      await Promise.race([Promise.any(waiting.map((i) => i.changed())), new Promise((r) => setTimeout(r, 1000))]);
    }
  }

  private lagging(): KindInformer[] {
    return [...this.informers.values()].filter((i) => !i.isReady || i.delivered < (this.written.get(i.kind) ?? 0) || (this.pendingDeletes.get(i.kind)?.size ?? 0) > 0);
  }

  /**
   * Catch up with writes made by someone else (the real kubectl): list every
   * informed kind, then wait until each informer has delivered every listed
   * version and the deletion of every cached object the list no longer has.
   */
  async sync(): Promise<void> {
    const targets: { inf: KindInformer; items: Map<string, number>; listRv: number }[] = [];
    for (const inf of this.informers.values()) {
      await inf.ready;
      const l = await this.listWithVersion(inf.kind);
      targets.push({ inf, items: new Map(l.items.map((o) => [keyOfObject(o), rvNumber(o.metadata.resourceVersion)])), listRv: rvNumber(l.resourceVersion) });
    }
    const deadline = Date.now() + (this.opts.settleTimeoutMs ?? 60_000);
    for (;;) {
      const behind = targets.filter(({ inf, items, listRv }) => {
        for (const rv of items.values()) if (inf.delivered < rv) return true;
        for (const [k, o] of inf.cache) if (!items.has(k) && rvNumber(o.metadata.resourceVersion) <= listRv) return true;
        return false;
      });
      if (behind.length === 0) return this.settled();
      if (Date.now() > deadline) throw new Error(`watches did not catch up with the apiserver: ${behind.map((b) => b.inf.kind).join(', ')}`);
      await Promise.race([Promise.any(behind.map((b) => b.inf.changed())), new Promise((r) => setTimeout(r, 1000))]);
    }
  }

  /** Stop every watch this client started. */
  close(): void {
    for (const inf of this.informers.values()) inf.stop();
    this.informers.clear();
    for (const stop of [...this.rawWatches]) stop();
  }

  /**
   * Watch a kind. Without `opts.resourceVersion`: a subscription to the
   * kind's shared informer (changes from now on, like the embedded store;
   * selectors applied client-side, see src/core/kube/informer.ts). With one: a
   * watch of its own, resumed from that version on the server (the
   * apiserver applies the selectors); disconnects are resumed from the last
   * seen version; a 410 Gone is reported to `onError`, then the watch
   * re-lists (reporting every current object as MODIFIED) and continues.
   */
  watch<T extends KubeObject>(kind: string, handler: (e: WatchEvent<T>) => void, opts: WatchOptions = {}): () => void {
    if (opts.resourceVersion === undefined || opts.resourceVersion === '') {
      const inf = this.informer(kind);
      const unsubscribe = inf.subscribe(handler as (e: WatchEvent) => void, opts);
      let live = true;
      void inf.ready.then(() => live && opts.onReady?.());
      return () => {
        live = false;
        unsubscribe();
      };
    }
    const info = resourceForKind(kind);
    let stopped = false;
    let abort: AbortController | undefined;
    let rv = opts.resourceVersion;
    let retry: NodeJS.Timeout | undefined;
    const query = (): Record<string, string | number | boolean | undefined> => ({
      resourceVersion: rv,
      allowWatchBookmarks: true,
      ...(opts.labelSelector !== undefined ? { labelSelector: labelSelectorString(opts.labelSelector) } : {}),
      ...(opts.fieldSelector ? { fieldSelector: opts.fieldSelector } : {}),
    });
    const relist = async (notify: boolean): Promise<void> => {
      const l = await this.listWithVersion<T>(kind, opts);
      rv = l.resourceVersion;
      if (notify) for (const o of l.items) handler({ type: 'MODIFIED', object: o });
    };
    const start = async (): Promise<void> => {
      if (stopped) return;
      try {
        if (rv === undefined || rv === '') await relist(false);
        let gone = false;
        // The Watch callback's object is untyped JSON.
        const onEvent = (phase: string, obj: unknown): void => {
          const o = obj as KubeObject & StatusBody;
          if (phase === 'ERROR') {
            const err = statusToError(o.code ?? 500, o);
            if (err.reason === 'Gone') gone = true;
            opts.onError?.(err);
            return;
          }
          if (o.metadata?.resourceVersion) rv = o.metadata.resourceVersion;
          if (phase === 'BOOKMARK') return;
          if (!stopped) handler({ type: phase as WatchEvent['type'], object: this.decode({ ...o, apiVersion: o.apiVersion || (info.group ? `${info.group}/${info.version}` : info.version), kind: o.kind || kind }) as unknown as T });
        };
        const path = this.path(info, opts.namespace);
        // Watch prepends the kubeconfig's server URL (path prefix included).
        abort = await this.watcher.watch(path, query(), onEvent, (err: unknown) => {
          if (stopped) return;
          if (gone) {
            void relist(true).then(start, (e: unknown) => opts.onError?.(e));
            return;
          }
          if (err) opts.onError?.(err);
          retry = setTimeout(() => void start(), err ? 1000 : 0);
        });
        if (stopped) abort.abort();
        else opts.onReady?.();
      } catch (e) {
        opts.onError?.(e);
        if (!stopped) retry = setTimeout(() => void start(), 1000);
      }
    };
    void start();
    const stop = (): void => {
      stopped = true;
      if (retry) clearTimeout(retry);
      abort?.abort();
      this.rawWatches.delete(stop);
    };
    this.rawWatches.add(stop);
    return stop;
  }
}
