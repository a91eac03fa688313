/**
 * The schedule language (src/harness/explore/schedule.ts), random schedules and
 * delta debugging, without running scenarios.
 */
import { describe, expect, it } from 'vitest';
import { SeededRng } from '../../src/core/rng.js';
import { plannedRun } from '../../src/harness/explore/explore.js';
import { generateSchedule } from '../../src/harness/explore/generate.js';
import type { Profile } from '../../src/harness/explore/run-one.js';
import { describeItem, parseSchedule, scheduleToPlain, type ScheduleItem } from '../../src/harness/explore/schedule.js';
import { ddmin } from '../../src/harness/explore/shrink.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';

const fail = (path: (string | number)[], reason: string): Error => new Error(`${path.join('.')}: ${reason}`);

const profile: Profile = {
  calls: [
    { service: 'ecs', operation: 'attachVolume', count: 2 },
    { service: 'evs', operation: 'showVolume', count: 30 },
  ],
  anchors: [
    { source: 'cloud', type: 'volume.attach-requested', count: 2 },
    { source: 'provider', type: 'hcsmachine.ready', count: 2 },
  ],
  controllers: ['hcsmachine', 'capi-machine'],
};

describe('schedule: parse, print, round trip', () => {
  it('reads faults (validated as mock-hcs rules, HCS-6) and crashes anchored on events', () => {
    const items = parseSchedule(
      [
        { fault: { service: 'ecs', operation: 'attachVolume', effect: { type: 'error', status: 500, code: 'Ecs.0002' }, after: 1, count: 1 } },
        { crash: { controllers: ['provider'], downFor: '3s', after: { source: 'cloud', type: 'volume.attach-requested', nth: 2 } } },
      ],
      fail,
    );
    expect(items).toEqual([
      { kind: 'fault', rule: { service: 'ecs', operation: 'attachVolume', effect: { type: 'error', status: 500, code: 'Ecs.0002' }, after: 1, count: 1 } },
      { kind: 'crash', controllers: ['provider'], downForMs: 3000, on: { source: 'cloud', type: 'volume.attach-requested', nth: 2 } },
    ]);
    expect(parseSchedule(scheduleToPlain(items), fail)).toEqual(items);
    expect(items.map(describeItem)).toEqual(['fault ecs.attachVolume call #2: error 500 Ecs.0002', 'crash provider for 3s after cloud volume.attach-requested #2']);
  });

  it.each([
    [{ fault: { service: 'ecs', operation: 'attachVolumes', effect: { type: 'stuck' } } }, /schedule\.0\.fault: .*operation.*HCS-6/],
    [{ crash: { controllers: [], after: { source: 'cloud', type: 'x' } } }, /schedule\.0\.crash\.controllers: is required/],
    [{ crash: { controllers: ['provider'] } }, /schedule\.0\.crash\.after: is required/],
    [{ crash: { controllers: ['provider'], after: { source: 'clouds', type: 'x' } } }, /after\.source: must be one of cloud/],
    [{ crash: { controllers: ['provider'], after: { source: 'cloud', type: 'x', nth: 0 } } }, /after\.nth: must be an integer >= 1/],
    [{ crash: { controllers: ['provider'], downFor: 'soon', after: { source: 'cloud', type: 'x' } } }, /crash\.downFor/],
    [{ crash: { controllers: ['provider'], after: { source: 'cloud', type: 'x' } }, fault: {} }, /an item is \{fault/],
  ])('rejects %j naming the field', (item, why) => {
    expect(() => parseSchedule([item], fail)).toThrow(why);
  });

  it('is a scenario field: loadScenario reads it and names the file and line of a bad item', () => {
    const text = 'name: s\nsteps:\n  - advance: 1s\nschedule:\n  - crash: {controllers: [provider], after: {source: cloud, type: server.created, nth: 1}}\n';
    expect(loadScenario('/tmp/s.yaml', text).schedule).toEqual([{ kind: 'crash', controllers: ['provider'], downForMs: 0, on: { source: 'cloud', type: 'server.created', nth: 1 } }]);
    expect(() => loadScenario('/tmp/s.yaml', text.replace('nth: 1', 'nth: -1'))).toThrow(/\/tmp\/s\.yaml:5: field schedule\[0\]\.crash\.after\.nth/);
  });
});

describe('generated schedules', () => {
  it('draw only from the profile: its operations (within their call counts), controllers and events', () => {
    for (let i = 0; i < 200; i++) {
      for (const it of generateSchedule(new SeededRng(i), profile)) {
        if (it.kind === 'fault') {
          const c = profile.calls.find((x) => x.service === it.rule.service && x.operation === it.rule.operation);
          expect(c).toBeDefined();
          expect(it.rule.after as number).toBeLessThan(c!.count);
          expect(it.rule.count).toBe(1);
        } else {
          const a = profile.anchors.find((x) => x.source === it.on.source && x.type === it.on.type);
          expect(a).toBeDefined();
          expect(it.on.nth).toBeLessThanOrEqual(a!.count);
          expect(['provider', 'capi', 'all', ...profile.controllers]).toContain(it.controllers[0]);
        }
      }
    }
  });

  it('a detach may time out (bug report 2, DISK-9); no other operation gets a timeout, stuck or jobFail', () => {
    const withDetach: Profile = { ...profile, calls: [...profile.calls, { service: 'ecs', operation: 'detachVolume', count: 3 }] };
    const effects = new Map<string, Set<string>>();
    for (let i = 0; i < 400; i++) {
      for (const it of generateSchedule(new SeededRng(i), withDetach, { crashShare: 0 })) {
        if (it.kind !== 'fault') continue;
        const type = String((it.rule.effect as { type: string }).type);
        const op = String(it.rule.operation);
        effects.set(op, (effects.get(op) ?? new Set()).add(type));
        if (type === 'timeout') expect([30_000, 120_000]).toContain((it.rule.effect as { ms: number }).ms);
      }
    }
    expect([...effects.get('detachVolume')!].sort()).toEqual(['error', 'latency', 'partial', 'timeout']);
    expect([...effects.get('attachVolume')!].sort()).toEqual(['error', 'latency', 'partial']);
    expect([...effects.get('showVolume')!].sort()).toEqual(['error', 'latency']);
  });

  it('run i depends on (seed, i) alone', () => {
    expect(plannedRun(7, 3, profile)).toEqual(plannedRun(7, 3, profile));
    expect(plannedRun(7, 3, profile)).not.toEqual(plannedRun(7, 4, profile));
    expect(plannedRun(8, 3, profile)).not.toEqual(plannedRun(7, 3, profile));
  });
});

describe('ddmin', () => {
  const items: ScheduleItem[] = Array.from({ length: 7 }, (_, i) => ({ kind: 'crash', controllers: [`c${i}`], downForMs: 0, on: { source: 'cloud', type: 't', nth: 1 } }));
  const names = (xs: ScheduleItem[]): string[] => xs.map((x) => (x.kind === 'crash' ? x.controllers[0]! : ''));

  it('keeps exactly the items the failure needs (two of seven, apart)', async () => {
    const stats = { tests: 0 };
    const needs = (xs: ScheduleItem[]): boolean => names(xs).includes('c1') && names(xs).includes('c5');
    const out = await ddmin(items, async (cands) => cands.map(needs), stats);
    expect(names(out)).toEqual(['c1', 'c5']);
    expect(stats.tests).toBeGreaterThan(1);
  });

  it('returns the empty schedule when the failure needs none', async () => {
    expect(await ddmin(items, async (cands) => cands.map(() => true))).toEqual([]);
  });

  it('keeps one item when one is enough', async () => {
    expect(names(await ddmin(items, async (cands) => cands.map((xs) => names(xs).includes('c6'))))).toEqual(['c6']);
  });
});
