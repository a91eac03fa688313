/**
 * The `schedule:` field of a scenario (written by `hcs-testbed explore`, see
 * docs/explore.md): its items, their validation and their written form. Part
 * of the scenario language; arming a schedule on a testbed is the explorer's
 * (src/harness/explore/schedule.ts armSchedule), handed to the runner through
 * RunOptions.prepare so the scenario engine does not know the explorer.
 *
 * - `fault` items are mock-hcs fault rules (HCS-6) added at the start, each
 *   anchored on a call count: `after: N, count: 1` fires on the (N+1)-th
 *   matching call of that operation. Rules are validated like a `fault` step's.
 * - `crash` items crash controllers right after the n-th event of a given
 *   source and type in the run's event log and restart them `downFor` of
 *   virtual time later.
 */
import { errorMessage, InputError } from '../../core/errors.js';
import { parseDuration } from '../../core/clock.js';
import { parseFaultRule } from '../../../mock-hcs/src/faults.js';

export interface FaultItem {
  kind: 'fault';
  /** A mock-hcs fault rule (service, operation, effect, after, count, match...). */
  rule: Record<string, unknown>;
}

export interface CrashItem {
  kind: 'crash';
  /** Controller names or the groups provider, capi, guest, all. */
  controllers: string[];
  downForMs: number;
  /** Crash right after the nth (from 1) event of this source and type. */
  on: { source: string; type: string; nth: number };
}

export type ScheduleItem = FaultItem | CrashItem;

/** Event sources a crash can be anchored on (the system's own decisions and the cloud's). */
export const ANCHOR_SOURCES = ['cloud', 'provider', 'capi', 'guest', 'workload', 'kube'] as const;

type Fail = (path: (string | number)[], reason: string) => InputError;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validate the `schedule:` field (a list of {fault: rule} / {crash: {...}}); errors name the item and field. */
export function parseSchedule(raw: unknown, fail: Fail): ScheduleItem[] {
  if (!Array.isArray(raw)) throw fail(['schedule'], 'must be a list of {fault: <rule>} or {crash: {controllers, downFor, after: {source, type, nth}}}');
  return raw.map((it, i): ScheduleItem => {
    const p = ['schedule', i];
    if (!isObj(it) || Object.keys(it).length !== 1 || !('fault' in it || 'crash' in it)) throw fail(p, 'an item is {fault: <rule>} or {crash: {...}}');
    if ('fault' in it) {
      const rule = it.fault;
      if (!isObj(rule)) throw fail([...p, 'fault'], 'must be a mock-hcs fault rule {service, operation, effect, after?, count?, match?}');
      try {
        parseFaultRule(rule);
      } catch (e) {
        throw fail([...p, 'fault'], `${errorMessage(e)} (HCS-6)`);
      }
      return { kind: 'fault', rule };
    }
    const c = it.crash;
    if (!isObj(c)) throw fail([...p, 'crash'], 'must be {controllers, downFor, after: {source, type, nth}}');
    for (const k of Object.keys(c)) if (!['controllers', 'downFor', 'after'].includes(k)) throw fail([...p, 'crash', k], `unknown field "${k}" (allowed: controllers, downFor, after)`);
    const list = typeof c.controllers === 'string' ? [c.controllers] : c.controllers;
    if (!Array.isArray(list) || list.length === 0 || !list.every((x) => typeof x === 'string' && x !== '')) throw fail([...p, 'crash', 'controllers'], 'is required: controller names or provider, capi, guest, all');
    let downForMs = 0;
    if (c.downFor !== undefined) {
      if (typeof c.downFor === 'number' && c.downFor >= 0) downForMs = c.downFor * 1000;
      else if (typeof c.downFor === 'string') {
        try {
          downForMs = parseDuration(c.downFor);
        } catch (e) {
          throw fail([...p, 'crash', 'downFor'], errorMessage(e));
        }
      } else throw fail([...p, 'crash', 'downFor'], 'must be a duration such as 5s');
    }
    const a = c.after;
    if (!isObj(a)) throw fail([...p, 'crash', 'after'], 'is required: {source, type, nth} — the event the crash follows');
    for (const k of Object.keys(a)) if (!['source', 'type', 'nth'].includes(k)) throw fail([...p, 'crash', 'after', k], `unknown field "${k}" (allowed: source, type, nth)`);
    if (typeof a.source !== 'string' || !(ANCHOR_SOURCES as readonly string[]).includes(a.source)) throw fail([...p, 'crash', 'after', 'source'], `must be one of ${ANCHOR_SOURCES.join(', ')}`);
    if (typeof a.type !== 'string' || a.type === '') throw fail([...p, 'crash', 'after', 'type'], 'must be an event type such as volume.attach-requested');
    const nth = a.nth ?? 1;
    if (typeof nth !== 'number' || !Number.isInteger(nth) || nth < 1) throw fail([...p, 'crash', 'after', 'nth'], 'must be an integer >= 1');
    return { kind: 'crash', controllers: list as string[], downForMs, on: { source: a.source, type: a.type, nth } };
  });
}

/** 5m, 30s or 250ms. */
export function durationText(ms: number): string {
  return ms % 60_000 === 0 && ms > 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** The YAML/JSON form of a schedule (what parseSchedule reads back). */
export function scheduleToPlain(items: readonly ScheduleItem[]): unknown[] {
  return items.map((it) =>
    it.kind === 'fault'
      ? { fault: it.rule }
      : { crash: { controllers: it.controllers, downFor: durationText(it.downForMs), after: { source: it.on.source, type: it.on.type, nth: it.on.nth } } },
  );
}

/** One line per item, for the console and the finding's summary. */
export function describeItem(it: ScheduleItem): string {
  if (it.kind === 'crash') return `crash ${it.controllers.join(',')} for ${durationText(it.downForMs)} after ${it.on.source} ${it.on.type} #${it.on.nth}`;
  const r = it.rule as { service?: string; operation?: string; effect?: Record<string, unknown>; after?: number };
  const e = r.effect ?? {};
  const what = e.type === 'error' ? `error ${String(e.status)} ${String(e.code)}` : e.type === 'latency' ? `latency ${String(e.ms)}ms${e.mode ? ` (${String(e.mode)})` : ''}` : String(e.type);
  return `fault ${String(r.service)}.${String(r.operation)} call #${(r.after ?? 0) + 1}: ${what}`;
}

