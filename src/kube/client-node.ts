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
import type { KubeClient, ListOptions, PatchType, WatchOptions, WriteOptions } from './client.js';
import { KubeApiError, type FieldCause, type StatusReason } from './errors.js';
import { resourceForKind, type ResourceInfo } from './resources.js';
import { labelSelectorString } from './selectors.js';
import type { KubeObject, ObjectRef, WatchEvent } from './types.js';

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
 * One REST call with the kubeconfig's TLS, tokens and client certificates
 * (node:http(s); see the class comment for why not KubernetesObjectApi).
 * The body comes back parsed as JSON when it is JSON, as text otherwise.
 */
export async function kubeRequest(kc: KubeConfig, method: string, url: URL, body?: unknown, contentType = 'application/json'): Promise<Response> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const opts: https.RequestOptions = {
    method,
    headers: { Accept: 'application/json', ...(payload !== undefined ? { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(payload) } : {}) },
  };
  await kc.applyToHTTPSOptions(opts);
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = mod.request(url, opts, (res) => {
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
        resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
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

export class ClientNodeKube implements KubeClient {
  private readonly watcher: Watch;

  constructor(readonly kc: KubeConfig) {
    this.watcher = new Watch(kc);
  }

  static fromKubeconfig(file: string, context?: string): ClientNodeKube {
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    if (context) kc.setCurrentContext(context);
    return new ClientNodeKube(kc);
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
    return kubeRequest(this.kc, method, url, body, contentType);
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

  /** Every response is decoded into fresh objects: the shared reads are plain reads here. */
  getShared<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return this.get<T>(ref);
  }

  listShared<T extends KubeObject>(kind: string, opts: ListOptions = {}): Promise<T[]> {
    return this.list<T>(kind, opts);
  }

  async get<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    const info = resourceForKind(ref.kind);
    try {
      return (await this.call('GET', this.path(info, ref.namespace, ref.name))) as T;
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
    const items = (body.items ?? []).map((o) => ({ ...o, apiVersion: o.apiVersion || apiVersion, kind: o.kind || kind }));
    items.sort((a, b) => `${a.metadata.namespace ?? ''}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace ?? ''}/${b.metadata.name}`));
    return { items, resourceVersion: body.metadata?.resourceVersion ?? '' };
  }

  async list<T extends KubeObject>(kind: string, opts: ListOptions = {}): Promise<T[]> {
    return (await this.listWithVersion<T>(kind, opts)).items;
  }

  async create<T extends KubeObject>(obj: T, wopts?: WriteOptions): Promise<T> {
    const info = resourceForKind(obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    return (await this.call('POST', this.path(info, ns), this.writeQuery(wopts), obj, 'application/json', wopts)) as T;
  }

  async update<T extends KubeObject>(obj: T, wopts?: WriteOptions): Promise<T> {
    const info = resourceForKind(obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    return (await this.call('PUT', this.path(info, ns, obj.metadata.name), this.writeQuery(wopts), obj, 'application/json', wopts)) as T;
  }

  async updateStatus<T extends KubeObject>(obj: T, wopts?: WriteOptions): Promise<T> {
    const info = resourceForKind(obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    // Kinds without a status subresource take status through the main resource (as in the embedded store).
    return (await this.call('PUT', this.path(info, ns, obj.metadata.name, info.statusSubresource ? 'status' : undefined), this.writeQuery(wopts), obj, 'application/json', wopts)) as T;
  }

  async patch<T extends KubeObject>(ref: ObjectRef, type: PatchType, patch: unknown, opts: { subresource?: 'status' } & WriteOptions = {}): Promise<T> {
    const info = resourceForKind(ref.kind);
    const ct = type === 'json' ? 'application/json-patch+json' : 'application/merge-patch+json';
    const sub = opts.subresource === 'status' && info.statusSubresource ? 'status' : undefined;
    return (await this.call('PATCH', this.path(info, ref.namespace, ref.name, sub), this.writeQuery(opts), patch, ct, opts)) as T;
  }

  async delete(ref: ObjectRef, opts: { ignoreNotFound?: boolean } = {}): Promise<void> {
    const info = resourceForKind(ref.kind);
    try {
      await this.call('DELETE', this.path(info, ref.namespace, ref.name), { propagationPolicy: 'Background' });
    } catch (e) {
      if (opts.ignoreNotFound && e instanceof KubeApiError && e.reason === 'NotFound') return;
      throw e;
    }
  }

  /**
   * Watch with the client-node Watch class. Without `opts.resourceVersion`
   * it lists first and watches from the list's version (changes from now on,
   * like the embedded store). Disconnects are resumed from the last seen
   * version; a 410 Gone is reported to `onError`, then the watch re-lists
   * (reporting every current object as MODIFIED) and continues.
   */
  watch<T extends KubeObject>(kind: string, handler: (e: WatchEvent<T>) => void, opts: WatchOptions = {}): () => void {
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
          if (!stopped) handler({ type: phase as WatchEvent['type'], object: { ...o, apiVersion: o.apiVersion || (info.group ? `${info.group}/${info.version}` : info.version), kind: o.kind || kind } as unknown as T });
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
    return () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      abort?.abort();
    };
  }
}
