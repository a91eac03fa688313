/**
 * The dashboard's server-sent event stream (GET /_testbed/stream).
 *
 * Pushed, not polled: watches on the management cluster's Cluster API and
 * HCS kinds, the event log (cloud transitions, faults), the live clock and
 * the controller logs mark the view dirty; at most every `throttleMs` of
 * wall time the view (src/harness/dashboard/view.ts) is computed again and
 * only what changed goes to every open stream as one `patch` message
 * (src/harness/dashboard/diff.ts); a stream that opens gets the whole `view`
 * first. Kubernetes Events and controller log lines go out one by one as
 * `kevent` and `log` messages.
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject, WatchEvent } from '../../core/kube/types.js';
import type { ControllerLogs, LogLine } from '../../core/runtime/context.js';
import type { TimeControl } from '../../world/facade/timecontrol.js';
import { computeView, type DashboardView, type ViewSources } from './view.js';
import { diffView, ViewText, type Patch } from './diff.js';
import { HostHistoryBuilder } from '../report/hostnames.js';

export const WATCHED_KINDS = ['Cluster', 'KubeadmControlPlane', 'MachineDeployment', 'MachineSet', 'Machine', 'HCSMachineConfigPool', 'HCSMachine'];

interface EmbeddedStoreLike {
  watch(kind: string, fn: () => void, opts: { shared: boolean }): () => void;
}

export interface FeedSources extends Omit<ViewSources, 'time' | 'workloads'> {
  /** The workload clusters (watched for Nodes and AppReleases). */
  workloads?: NonNullable<ViewSources['workloads']> & { onCreate?: (l: (key: string, store: EmbeddedStoreLike) => void) => void };
  logs: ControllerLogs;
  time: TimeControl;
  /** Wall ms between two view messages at most (default 200). */
  throttleMs?: number;
}

interface KEvent {
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  reason?: string;
  message?: string;
  type?: string;
  lastTimestamp?: string;
  eventTime?: string;
  count?: number;
}

export class DashboardFeed {
  private readonly clients = new Set<ServerResponse>();
  private readonly unsubs: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private keepAlive: NodeJS.Timeout;
  private readonly recentEvents: unknown[] = [];
  private readonly recentLogs: unknown[] = [];
  /** View messages sent (tests wait on it). */
  sent = 0;
  /** The view the open streams have (the base of the next patch) and its text. */
  private base: { view: DashboardView; text: ViewText } | undefined;
  /** The hostnames' history, read from the event log as it grows. */
  private readonly hostHistory = new HostHistoryBuilder();
  /** The last update: its size (bytes of the message) and the wall ms to compute and diff it (the bench reads it). */
  lastUpdate: { bytes: number; computeMs: number; diffMs: number } | undefined;

  constructor(private readonly src: FeedSources) {
    // What happened before the feed started (the bring-up): the latest Events and log lines.
    const evs = src.mgmt.listSync<KubeObject & KEvent>('Event').map((o) => this.eventMsg(o)).sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
    for (const e of evs.slice(-100)) this.recentEvents.push(e);
    const lines = src.logs.deployments().flatMap((d) => src.logs.text(d).split('\n').filter((l) => l !== '').map((l) => ({ deployment: d, ...(JSON.parse(l) as LogLine) })));
    lines.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
    for (const l of lines.slice(-200)) this.recentLogs.push(l);
    const dirty = (): void => this.dirty();
    for (const kind of WATCHED_KINDS) this.unsubs.push(src.mgmt.watch(kind, dirty, { shared: true }));
    this.unsubs.push(src.events.subscribe((e) => {
      if (e.source === 'cloud' || e.source === 'fault' || e.source === 'workload' || e.type === 'machine.phase') dirty();
    }));
    // The workload clusters' Nodes and AppReleases (kubectl annotate/patch on the workload context move no management object).
    if (src.workloads) {
      const watchWorkload = (store: { watch: EmbeddedStoreLike['watch'] }): void => {
        for (const kind of ['Node', 'AppRelease']) this.unsubs.push(store.watch(kind, dirty, { shared: true }));
      };
      for (const key of src.workloads.names()) {
        const [n, c] = key.split('/') as [string, string];
        watchWorkload(src.workloads.store(n, c));
      }
      src.workloads.onCreate?.((_key, store) => watchWorkload(store));
    }
    this.unsubs.push(src.time.onChange(dirty));
    this.unsubs.push(src.mgmt.watch<KubeObject & KEvent>('Event', (e: WatchEvent<KubeObject & KEvent>) => {
      if (e.type === 'DELETED') return;
      const msg = this.eventMsg(e.object);
      this.remember(this.recentEvents, msg, 100);
      this.broadcast('kevent', msg);
    }, { shared: true }));
    this.unsubs.push(src.logs.subscribe((deployment: string, line: LogLine) => {
      const msg = { deployment, ...line };
      this.remember(this.recentLogs, msg, 200);
      this.broadcast('log', msg);
    }));
    this.keepAlive = setInterval(() => {
      for (const c of this.clients) c.write(': keep-alive\n\n');
    }, 15_000);
    this.keepAlive.unref();
  }

  /** Open a stream on a hijacked response: the current view and recent events/logs first. */
  attach(res: ServerResponse, onClose: (fn: () => void) => void): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.write('retry: 1000\n\n');
    // The streams already open get what changed first, so that the new one starts from the same base.
    this.flush();
    if (!this.base) this.base = this.snapshot();
    this.clients.add(res);
    onClose(() => this.clients.delete(res));
    this.write(res, 'view', this.base.view);
    for (const e of this.recentEvents) this.write(res, 'kevent', e);
    for (const l of this.recentLogs) this.write(res, 'log', l);
  }

  private eventMsg(o: KEvent): { t: string; type: string; reason: string; object: string; message: string; count: number } {
    return { t: o.lastTimestamp ?? o.eventTime ?? '', type: o.type ?? 'Normal', reason: o.reason ?? '', object: `${o.involvedObject?.kind ?? ''}/${o.involvedObject?.name ?? ''}`, message: o.message ?? '', count: o.count ?? 1 };
  }

  openStreams(): number {
    return this.clients.size;
  }

  close(): void {
    for (const u of this.unsubs.splice(0)) u();
    clearInterval(this.keepAlive);
    if (this.timer) clearTimeout(this.timer);
    for (const c of this.clients) c.end();
    this.clients.clear();
  }

  /** Push what changed now (after a control action, so the page answers at once). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.clients.size === 0) {
      this.base = undefined;
      return;
    }
    const patch = this.update();
    if (!patch) return;
    this.sent++;
    this.broadcast('patch', patch);
  }

  /** The patch from the base to the view now (undefined: nothing changed); the view now becomes the base. */
  update(): Patch | undefined {
    const t0 = performance.now();
    const next = this.snapshot();
    const t1 = performance.now();
    const patch = this.base ? diffView(this.base.text, next.text, next.view as unknown as Record<string, unknown>) : ({ ...Object.fromEntries(Object.entries(next.view).map(([k, v]) => [k, { set: v }])) } as Patch);
    const t2 = performance.now();
    this.base = next;
    if (Object.keys(patch).length === 0) return undefined;
    this.lastUpdate = { bytes: Buffer.byteLength(JSON.stringify(patch)), computeMs: t1 - t0, diffMs: t2 - t1 };
    return patch;
  }

  private snapshot(): { view: DashboardView; text: ViewText } {
    const view = computeView(this.viewSources());
    return { view, text: ViewText.of(view as unknown as Record<string, unknown>) };
  }

  private viewSources(): ViewSources {
    return { mgmt: this.src.mgmt, cloud: this.src.cloud, events: this.src.events, time: () => this.src.time.status(), hostHistory: this.hostHistory, ...(this.src.workloads ? { workloads: this.src.workloads } : {}) };
  }

  private dirty(): void {
    if (this.timer || this.clients.size === 0) return;
    this.timer = setTimeout(() => this.flush(), this.src.throttleMs ?? 200);
    this.timer.unref();
  }

  private remember(arr: unknown[], v: unknown, max: number): void {
    arr.push(v);
    if (arr.length > max) arr.splice(0, arr.length - max);
  }

  private broadcast(event: string, data: unknown): void {
    if (this.clients.size === 0) return;
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const c of this.clients) c.write(text);
  }

  private write(res: ServerResponse, event: string, data: unknown): void {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
}
