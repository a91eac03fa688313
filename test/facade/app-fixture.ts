/**
 * The facade's fastify app without a listening socket (app.inject()), over a
 * fresh management store and one workload cluster (cpaas-system/demo), with
 * controller logs. For the plugins' tests (plugins.test.ts).
 */
import type { FastifyInstance } from 'fastify';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { EmbeddedStore } from '../../src/core/kube/embedded-store.js';
import { SeededRng } from '../../src/core/rng.js';
import { ControllerLogs } from '../../src/core/runtime/context.js';
import { EmbeddedWorkloadClusters } from '../../src/world/embedded.js';
import { buildFacadeApp } from '../../src/world/facade/app.js';
import type { FacadeContext, FacadeExtension } from '../../src/world/facade/http/context.js';
import { facadeContext } from '../../src/world/facade/server.js';

export const TOKEN = 'test-token-0123456789';
export const AUTH = { authorization: `Bearer ${TOKEN}` };

export interface AppBed {
  app: FastifyInstance;
  ctx: FacadeContext;
  clock: VirtualClock;
  mgmt: EmbeddedStore;
  workload: EmbeddedStore;
  logs: ControllerLogs;
}

export async function appBed(opts: { extension?: FacadeExtension } = {}): Promise<AppBed> {
  const clock = new VirtualClock(Date.parse('2026-01-01T00:00:00Z'));
  const rng = new SeededRng(33);
  const workloads = new EmbeddedWorkloadClusters(clock, rng.fork('wl'), new EventLog(clock));
  const workload = workloads.store('cpaas-system', 'demo');
  const mgmt = new EmbeddedStore({ clock, rng: rng.fork('mgmt'), clusterName: 'management' });
  const logs = new ControllerLogs(clock);
  logs.logger('capi-controller-manager', 'machine').info('reconciled', { machine: 'm-1' });
  logs.logger('capi-controller-manager', 'machine').info('reconciled', { machine: 'm-2' });
  const ctx = await facadeContext({ mgmt, workloads, logs, clock, ...(opts.extension ? { extension: opts.extension } : {}) }, TOKEN, undefined);
  const app = await buildFacadeApp({ ctx, host: '127.0.0.1' });
  return { app, ctx, clock, mgmt, workload, logs };
}

/** Wait (a bounded number of event-loop turns) until `cond` holds. */
export async function until(cond: () => boolean, turns = 1000): Promise<void> {
  for (let i = 0; i < turns && !cond(); i++) await new Promise((r) => setImmediate(r));
  if (!cond()) throw new Error(`condition not met within ${turns} event-loop turns`);
}
