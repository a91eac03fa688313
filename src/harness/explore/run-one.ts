/**
 * One exploration run: a scenario with a seed and a schedule, on an embedded
 * testbed, reduced to what the explorer compares (the failure's signature, a
 * hash of the event log). Never throws: a run that errors is a finding too.
 */
import { createHash } from 'node:crypto';
import { errorMessage } from '../../core/errors.js';
import type { LogEvent } from '../../core/events.js';
import { FAULT_OPERATIONS, type FaultService } from '../../../mock-hcs/src/faults.js';
import type { MockHcsAppPool } from '../../../mock-hcs/src/index.js';
import { runScenario, type ScenarioResult } from '../scenario/runner.js';
import type { Scenario } from '../scenario/types.js';
import type { HCSMachineConfigPool } from '../../product/api/hcs.js';
import type { Testbed } from '../testbed/testbed.js';
import { embeddedFactory, type TestbedPlugin } from './plugin.js';
import { ANCHOR_SOURCES, armScenarioSchedule, type ScheduleItem } from './schedule.js';
import { META_HOSTNAME } from '../../product/api/metadata.js';

/** What the scenario exercised in its baseline run: the pool schedules are drawn from. */
export interface Profile {
  /** Cloud operations the provider called, with how many calls (counted by never-firing probe rules). */
  calls: { service: FaultService; operation: string; count: number }[];
  /** Events (source, type) of the baseline log a crash can follow, with their counts. */
  anchors: { source: string; type: string; count: number }[];
  /** Controllers that reconciled at least once. */
  controllers: string[];
}

export interface Failure {
  /** What two runs must share to be "the same failure": the invariant rules violated, or the failing step. */
  signature: string;
  step?: number;
  title?: string;
  error: string;
}

export interface RunSummary {
  ok: boolean;
  failure?: Failure;
  events: number;
  /** sha256 of the event log's JSON lines. */
  eventsHash: string;
  virtualMs: number;
  wallMs: number;
  profile?: Profile;
}

export function eventsText(events: readonly LogEvent[]): string {
  return events.map((e) => JSON.stringify(e)).join('\n') + (events.length ? '\n' : '');
}

export function hashEvents(events: readonly LogEvent[]): string {
  return createHash('sha256').update(eventsText(events)).digest('hex');
}

/** The failure of a result, if it failed. */
export function failureOf(r: ScenarioResult): Failure | undefined {
  if (r.ok) return undefined;
  const expected = new Set(r.scenario.expectViolations);
  const rules = [...new Set(r.violations.filter((v) => !expected.has(v.rule)).map((v) => v.rule))].sort();
  const failed = r.steps.find((s) => !s.ok);
  const error = failed?.error ?? 'the scenario failed';
  const where = failed ? { step: failed.index, title: failed.title } : {};
  if (rules.length) return { signature: `invariant ${rules.join(',')}`, ...where, error };
  return { signature: failed ? `step ${failed.index} failed (${failed.title})` : 'failed', ...where, error };
}

/** Never-firing rules that count every call of every operation (`seen`). */
function addProbes(tb: Testbed): void {
  for (const [service, ops] of Object.entries(FAULT_OPERATIONS)) {
    for (const operation of ops) {
      tb.cloud.faults.add({ service: service as FaultService, operation, effect: { type: 'latency', ms: 0, mode: 'response' }, after: Number.MAX_SAFE_INTEGER, description: 'explore probe' });
    }
  }
}

function profileOf(tb: Testbed, events: readonly LogEvent[]): Profile {
  const calls = tb.cloud.faults
    .list()
    .filter((r) => r.description === 'explore probe' && r.seen > 0)
    .map((r) => ({ service: r.service, operation: r.operation, count: r.seen }));
  const counts = new Map<string, { source: string; type: string; count: number }>();
  for (const e of events) {
    if (!(ANCHOR_SOURCES as readonly string[]).includes(e.source)) continue;
    const k = `${e.source} ${e.type}`;
    const c = counts.get(k) ?? { source: e.source, type: e.type, count: 0 };
    c.count++;
    counts.set(k, c);
  }
  const anchors = [...counts.values()].sort((a, b) => (a.source + a.type < b.source + b.type ? -1 : 1));
  const controllers = Object.entries(tb.sim.manager.reconcileStats()).filter(([, n]) => n > 0).map(([c]) => c).sort();
  return { calls, anchors, controllers };
}

/** A cloud snapshot for a bundle: servers, volumes (with attachments and identity metadata), pool entries. */
export async function snapshotOf(tb: Testbed): Promise<Record<string, unknown>> {
  const hv = tb.cloud.hypervisor;
  const servers = hv.listServers().map((s) => {
    const d = hv.server(s.id);
    return { id: s.id, name: s.name, status: s.status, ips: d?.ips ?? [], volumes: d?.volumes ?? [], hostname: d?.metadata[META_HOSTNAME] };
  });
  const volumes = hv.listVolumes().map((v) => ({ id: v.id, name: v.name, status: v.status, attachedTo: v.attachedTo, metadata: v.metadata, files: Object.keys(hv.volume(v.id)?.fs.files ?? {}).sort() }));
  const pools = (await tb.world.mgmt.list<HCSMachineConfigPool>('HCSMachineConfigPool')).map((p) => ({ name: `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`, status: p.status ?? {} }));
  return { virtualTime: new Date(tb.clock.now()).toISOString(), servers, volumes, pools };
}

export interface RunOneOptions {
  plugin?: TestbedPlugin;
  /** Count the calls and events the run exercises (the baseline). */
  profile?: boolean;
  /** Called with the testbed (e.g. for a watchdog). */
  onTestbed?: (tb: Testbed) => void;
  /** Keep the full result (bundles). */
  keep?: (r: ScenarioResult, tb: Testbed) => Promise<void>;
  /** The mock-hcs apps of the run's testbed come from this pool and go back to it (a worker keeps one; TestbedOptions.appPool). */
  appPool?: MockHcsAppPool;
}

/** Run `scenario` with `seed` and `schedule`; summarise. Catches everything. */
export async function runOne(scenario: Scenario, seed: number, schedule: readonly ScheduleItem[], o: RunOneOptions = {}): Promise<RunSummary> {
  const wall0 = performance.now();
  let testbed: Testbed | undefined;
  const factory = embeddedFactory(o.plugin, (tb) => {
    testbed = tb;
    if (o.profile) addProbes(tb);
    o.onTestbed?.(tb);
  }, o.appPool);
  const s: Scenario = { ...scenario, schedule: [...schedule] };
  if (schedule.length === 0) delete s.schedule;
  try {
    const r = await runScenario(s, factory, { seed, prepare: armScenarioSchedule });
    const failure = failureOf(r);
    if (o.keep && testbed) await o.keep(r, testbed);
    return {
      ok: r.ok,
      ...(failure ? { failure } : {}),
      events: r.events.length,
      eventsHash: hashEvents(r.events),
      virtualMs: r.virtualMs,
      wallMs: performance.now() - wall0,
      ...(o.profile && testbed ? { profile: profileOf(testbed, r.events) } : {}),
    };
  } catch (e) {
    const events = testbed?.events.all() ?? [];
    return {
      ok: false,
      failure: { signature: `error: ${errorMessage(e).split('\n')[0]!.slice(0, 160)}`, error: errorMessage(e) },
      events: events.length,
      eventsHash: hashEvents(events),
      virtualMs: 0,
      wallMs: performance.now() - wall0,
    };
  }
}
