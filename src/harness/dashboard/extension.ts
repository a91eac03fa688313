/**
 * The routes `hcs-testbed serve` adds beside the Kubernetes API of the
 * management cluster (docs/demo.md):
 *
 *   GET  /                       (Accept: text/html, a browser) the live dashboard; API
 *                                clients get the apiserver's root paths from the facade
 *   GET  /_testbed/static/*      the page's script and style (plain files, no build step)
 *   GET  /_testbed/stream        server-sent events: view, then patch (what changed), kevent, log (src/harness/dashboard/feed.ts)
 *   GET  /_testbed/view          the current view as JSON
 *   GET  /_testbed/object?kind=&namespace=&name=[&cluster=ns/name]
 *                                one object drilled into: its conditions, its Events, its YAML (a workload
 *                                cluster's with cluster=)
 *   GET  /_testbed/timeline      the report's timeline (one lane per machine, server, volume) as SVG, on demand
 *   GET  /api/v1/namespaces/NS/events?fieldSelector=involvedObject.…uid=…   (kubectl describe's Events) while
 *                                virtual time is ahead of the wall clock: dated so that kubectl's ages read in
 *                                virtual time (describe-events.ts); otherwise, and every other request, the API's
 *   GET  /_testbed/status        hostnames now and the stalls ("why is it waiting?"): hcs-testbed status
 *   *    /_testbed/time[/...]    the live clock (src/harness/dashboard/time-api.ts)
 *   GET  /_testbed/faults        the fault rules in force; POST {preset} or {rule} injects (HCS-6)
 *   GET  /_testbed/faults/presets
 *   POST /_testbed/faults/release        remove every rule, complete stuck transitions
 *   POST /_testbed/faults/{id}/release   remove one rule, complete stuck transitions
 *
 * Every call but GET/HEAD is a control call: same origin, a loopback Host and
 * Content-Type: application/json, or a 403/415 Status (control-guard.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FacadeExtension } from '../../world/facade/server.js';
import type { TimeControl } from '../../world/facade/timecontrol.js';
import { DashboardFeed, type FeedSources } from './feed.js';
import { FAULT_PRESETS, injectFault, releaseFault } from './faults.js';
import { ApiError, jsonBody, timeRequest } from './time-api.js';
import { computeView, statusOf } from './view.js';
import { objectDetail } from './object.js';
import { describeEvents, isDescribeEvents } from './describe-events.js';
import { timelineSvg } from '../report/html.js';
import { checkControlCall, isControlCall } from './control-guard.js';

export interface ExtensionParts {
  time: TimeControl;
  /** The testbed behind the dashboard (without it: the time API only). */
  dashboard?: Omit<FeedSources, 'time'>;
}

export const PREFIX = '/_testbed';

/** The warning a watch gets while the live clock is paused (RFC 7234 warn-code 299, as the apiserver sends them). */
export const PAUSED_WATCH_WARNING = '299 - "virtual time is paused (hcs-testbed serve): nothing changes until it is advanced or resumed (hcs-testbed time advance 5m | hcs-testbed time resume, or the dashboard)"';

const STATIC_DIR = join(fileURLToPath(new URL('.', import.meta.url)), 'static');
const STATIC: Record<string, string> = { 'index.html': 'text/html; charset=utf-8', 'parts.js': 'text/javascript; charset=utf-8', 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };

function staticFile(name: string): string {
  return readFileSync(join(STATIC_DIR, name), 'utf8');
}

export interface TestbedExtension extends FacadeExtension {
  feed?: DashboardFeed;
}

export function testbedExtension(parts: ExtensionParts): TestbedExtension {
  const feed = parts.dashboard ? new DashboardFeed({ ...parts.dashboard, time: parts.time }) : undefined;
  const json = (reply: FastifyReply, code: number, body: unknown): FastifyReply => reply.code(code).type('application/json').header('Cache-Control', 'no-store').send(body);
  const needDashboard = (): NonNullable<ExtensionParts['dashboard']> => {
    if (!parts.dashboard) throw new ApiError(404, 'NotFound', 'this server has no dashboard');
    return parts.dashboard;
  };
  return {
    feed,
    close: () => feed?.close(),
    async handle(req: FastifyRequest, reply: FastifyReply, path: string, query: URLSearchParams): Promise<FastifyReply | undefined> {
      const method = req.method.toUpperCase();
      // A watch (kubectl get -w, kubectl wait) while virtual time is paused sees nothing change: say so, as a
      // Kubernetes warning (299), which kubectl prints at once ("Warning: ...") instead of hanging silently.
      // Set on the raw response: the facade's watch writes its own head and keeps it (Node merges set headers).
      if (method === 'GET' && /^(true|1)$/.test(query.get('watch') ?? '') && !parts.time.running) reply.raw.setHeader('Warning', PAUSED_WATCH_WARNING);
      // kubectl describe's Events, while virtual time runs ahead of the wall clock: dated so that its ages read in virtual time.
      const describeNs = parts.dashboard ? isDescribeEvents(method, path, query) : undefined;
      if (describeNs !== undefined && parts.dashboard) {
        const ahead = parts.time.status().now - Date.now();
        if (ahead > 1000) return json(reply, 200, describeEvents(parts.dashboard.mgmt, describeNs, query.get('fieldSelector') ?? '', ahead));
      }
      if (path === '/') {
        // A browser asks for HTML; kubectl, client-go and Cluster API's cluster cache ask for JSON and get the root paths.
        if (feed && method === 'GET' && /\btext\/html\b/.test(String(req.headers.accept ?? ''))) return reply.code(200).type(STATIC['index.html']!).header('Cache-Control', 'no-store').send(staticFile('index.html'));
        return undefined;
      }
      if (path !== PREFIX && !path.startsWith(`${PREFIX}/`)) return undefined;
      try {
        // Control calls (they pause time, inject faults): same origin, a loopback Host, JSON only (control-guard.ts).
        if (isControlCall(method)) checkControlCall(req);
        const sub = path.slice(PREFIX.length);
        if (sub === '/time' || sub.startsWith('/time/')) {
          const out = await timeRequest(parts.time, method, sub.slice('/time'.length), method === 'POST' ? jsonBody(req.body) : {}, query);
          feed?.flush();
          return json(reply, 200, out);
        }
        const st = /^\/static\/([^/]+)$/.exec(sub);
        if (st && method === 'GET') {
          const type = STATIC[st[1]!];
          if (!type || !feed) throw new ApiError(404, 'NotFound', `no such file ${sub}`);
          return reply.code(200).type(type).header('Cache-Control', 'no-store').send(staticFile(st[1]!));
        }
        if (sub === '/stream' && method === 'GET') {
          if (!feed) needDashboard();
          reply.hijack();
          feed!.attach(reply.raw, (fn) => req.raw.on('close', fn));
          return reply;
        }
        if (sub === '/view' && method === 'GET') {
          const d = needDashboard();
          return json(reply, 200, computeView({ mgmt: d.mgmt, cloud: d.cloud, events: d.events, time: () => parts.time.status(), ...(d.workloads ? { workloads: d.workloads } : {}) }));
        }
        if (sub === '/status' && method === 'GET') {
          const d = needDashboard();
          return json(reply, 200, statusOf(computeView({ mgmt: d.mgmt, cloud: d.cloud, events: d.events, time: () => parts.time.status() })));
        }
        if (sub === '/object' && method === 'GET') {
          const d = needDashboard();
          return json(reply, 200, objectDetail(d, { kind: query.get('kind') ?? '', namespace: query.get('namespace') ?? '', name: query.get('name') ?? '', cluster: query.get('cluster') ?? '' }));
        }
        if (sub === '/timeline' && method === 'GET') {
          const d = needDashboard();
          const width = Math.min(4000, Math.max(600, Number(query.get('width') ?? 1200) || 1200));
          return reply.code(200).type('image/svg+xml; charset=utf-8').header('Cache-Control', 'no-store').send(timelineSvg(d.events.all(), { until: parts.time.status().now, width }));
        }
        if (sub === '/faults/presets' && method === 'GET') return json(reply, 200, Object.fromEntries(Object.entries(FAULT_PRESETS).map(([k, p]) => [k, { title: p.title, rule: p.rule }])));
        if (sub === '/faults') {
          const d = needDashboard();
          if (method === 'GET') return json(reply, 200, { faults: d.cloud.faults.list() });
          if (method === 'POST') {
            const out = injectFault(d.cloud, jsonBody(req.body));
            feed?.flush();
            return json(reply, 201, out);
          }
        }
        const rel = /^\/faults(?:\/([^/]+))?\/release$/.exec(sub);
        if (rel && method === 'POST') {
          const out = releaseFault(needDashboard().cloud, rel[1] ? decodeURIComponent(rel[1]) : undefined);
          feed?.flush();
          return json(reply, 200, out);
        }
        throw new ApiError(404, 'NotFound', `the server could not find the requested resource ${method} ${path}`);
      } catch (e) {
        if (e instanceof ApiError) return json(reply, e.code, e.toStatus());
        throw e;
      }
    },
  };
}
