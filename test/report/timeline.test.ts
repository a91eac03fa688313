/**
 * The HTML timeline (src/harness/report/timeline.ts, timeline-svg.ts), checked on its
 * deterministic model and the SVG it renders (issue 14): step labels never
 * overlap, a long idle wait is compressed with a visible break, machine and
 * server lanes show hostnames, volume intervals name their server, Warning
 * events are marked, and every state has its own colour with a legend.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { lanes, STATE_COLORS, MARKER_COLORS, timelineModel, xOf } from '../../src/harness/report/timeline.js';
import { renderTimeline, timelineSvg } from '../../src/harness/report/timeline-svg.js';

const T0 = 1_767_225_600_000;

/** A small rollout: machine m1 on server s-1 (hostname h1) with persistent volume pd0, moved to server s-2 of machine m2 (hostname h2). */
function rollout(): { log: EventLog; clock: VirtualClock } {
  const clock = new VirtualClock(T0);
  const log = new EventLog(clock);
  const at = (ms: number): void => void clock.advanceBy(T0 + ms - clock.now());
  log.record({ source: 'scenario', type: 'step.start', message: 'step 1: apply manifests/worker-cluster', data: { step: 1 } });
  log.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm1', phase: 'Provisioning' } });
  log.record({ source: 'provider', type: 'hcsmachine.entry-bound', message: '', data: { machine: 'cpaas-system/m1', pool: 'p', hostname: 'h1' } });
  log.record({ source: 'cloud', type: 'volume.created', message: '', data: { volumeId: 'v-1', name: 'pd0', metadata: { 'hcs.io/persistent': 'true' } } });
  log.record({ source: 'cloud', type: 'server.created', message: '', data: { serverId: 's-1', name: 'm1' } });
  log.record({ source: 'provider', type: 'hcsmachine.server-bound', message: '', data: { machine: 'cpaas-system/m1', serverId: 's-1' } });
  at(5_000);
  log.record({ source: 'cloud', type: 'volume.available', message: '', data: { volumeId: 'v-1' } });
  at(40_000);
  log.record({ source: 'cloud', type: 'server.active', message: '', data: { serverId: 's-1' } });
  log.record({ source: 'cloud', type: 'volume.attach-requested', message: '', data: { volumeId: 'v-1', serverId: 's-1' } });
  at(45_000);
  log.record({ source: 'cloud', type: 'volume.attached', message: '', data: { volumeId: 'v-1', serverId: 's-1' } });
  log.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm1', phase: 'Running' } });
  log.record({ source: 'scenario', type: 'step.start', message: 'step 2: the replacement waits for a pool entry', data: { step: 2 } });
  log.record({ source: 'provider', type: 'event.NoFreePoolEntry', message: 'HCSMachine cpaas-system/m1: NoFreePoolEntry: no free entry', data: { kind: 'HCSMachine', name: 'm1', eventType: 'Warning', reason: 'NoFreePoolEntry' } });
  at(60_000);
  log.record({ source: 'cloud', type: 'volume.detach-requested', message: '', data: { volumeId: 'v-1', serverId: 's-1' } });
  log.record({ source: 'fault', type: 'fault.fired', message: 'detach held', data: { path: '/v1/p/cloudservers/s-1/detachvolume/v-1' } });
  at(70_000);
  log.record({ source: 'cloud', type: 'volume.detached', message: '', data: { volumeId: 'v-1', serverId: 's-1' } });
  log.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm2', phase: 'Provisioning' } });
  log.record({ source: 'provider', type: 'hcsmachine.entry-bound', message: '', data: { machine: 'cpaas-system/m2', pool: 'p', hostname: 'h2' } });
  log.record({ source: 'cloud', type: 'server.created', message: '', data: { serverId: 's-2', name: 'm2' } });
  log.record({ source: 'provider', type: 'hcsmachine.server-bound', message: '', data: { machine: 'cpaas-system/m2', serverId: 's-2' } });
  at(100_000);
  log.record({ source: 'cloud', type: 'server.active', message: '', data: { serverId: 's-2' } });
  log.record({ source: 'cloud', type: 'volume.attach-requested', message: '', data: { volumeId: 'v-1', serverId: 's-2' } });
  at(110_000);
  log.record({ source: 'cloud', type: 'volume.attached', message: '', data: { volumeId: 'v-1', serverId: 's-2' } });
  log.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm2', phase: 'Running' } });
  return { log, clock };
}

describe('timeline lanes', () => {
  it('machine and server lanes carry the hostname of the pool entry; volume intervals name the server they are attached to', () => {
    const ls = lanes(rollout().log.all());
    expect(ls.map((l) => [l.group, l.label, l.hostname])).toEqual([
      ['machine', 'm1', 'h1'],
      ['machine', 'm2', 'h2'],
      ['server', 'm1', 'h1'],
      ['server', 'm2', 'h2'],
      ['volume', 'pd0', undefined],
    ]);
    expect(ls[4]!.segments.map((s) => [s.state, s.server, s.from - T0, s.to - T0])).toEqual([
      ['creating', undefined, 0, 5_000],
      ['available', undefined, 5_000, 40_000],
      ['attaching', 'm1', 40_000, 45_000],
      ['in-use', 'm1', 45_000, 60_000],
      ['detaching', 'm1', 60_000, 70_000],
      ['available', undefined, 70_000, 100_000],
      ['attaching', 'm2', 100_000, 110_000],
      ['in-use', 'm2', 110_000, 110_000],
    ].map(([st, sv, a, b]) => [st, sv, a, b]));
  });

  it('the SVG shows hostnames in the lane labels and the server inside the volume intervals (and in their tooltips)', () => {
    const { log } = rollout();
    const svg = timelineSvg(log.all(), { until: T0 + 200_000 });
    expect(svg).toContain('>machine: m1 · h1<');
    expect(svg).toContain('>server: m2 · h2<');
    expect(svg).toMatch(/<rect [^>]*data-lane="volume" data-state="in-use" data-server="m1"><title>pd0: in-use on m1 00:00:45–00:01:00<\/title>/);
    expect(svg).toMatch(/<rect [^>]*data-lane="volume" data-state="in-use" data-server="m2"><title>pd0: in-use on m2 00:01:50–00:03:20<\/title>/);
    expect(svg).toContain('>→ m2</text>');
  });
});

describe('timeline markers', () => {
  it('a Warning event is marked on the lane of the machine it is about; a fault on the volume its call names', () => {
    const m = timelineModel(rollout().log.all())!;
    const warning = m.markers.find((k) => k.kind === 'warning')!;
    expect(m.lanes[warning.lane]).toMatchObject({ group: 'machine', label: 'm1' });
    const fault = m.markers.find((k) => k.kind === 'fault')!;
    expect(m.lanes[fault.lane]).toMatchObject({ group: 'volume', label: 'pd0' });
    const svg = renderTimeline(m);
    expect(svg).toMatch(/<path [^>]*class="warning" data-lane="machine"><title>00:00:45 HCSMachine cpaas-system\/m1: NoFreePoolEntry: no free entry<\/title>/);
    expect(svg).toMatch(/<circle [^>]*class="fault" data-lane="volume"><title>00:01:00 detach held<\/title>/);
  });
});

describe('timeline colours and legend', () => {
  it('every state of every lane kind has its own colour, distinct from the others and from the markers', () => {
    const all = [...Object.values(STATE_COLORS).flatMap((g) => Object.values(g)), ...Object.values(MARKER_COLORS)];
    expect(new Set(all.map((c) => c.toLowerCase())).size).toBe(all.length);
    expect(Object.keys(STATE_COLORS.machine)).toEqual(['Pending', 'Provisioning', 'Provisioned', 'Running', 'Deleting', 'Failed']);
    expect(Object.keys(STATE_COLORS.volume)).toEqual(['creating', 'available', 'attaching', 'in-use', 'detaching']);
  });

  it('the legend lists each drawn state under its lane kind, with the colour the lanes use, and the marks drawn', () => {
    const m = timelineModel(rollout().log.all())!;
    expect(m.legend.map((l) => `${l.group}:${l.name}`)).toEqual([
      'machine:Provisioning', 'machine:Running',
      'server:BUILD', 'server:ACTIVE',
      'volume:creating', 'volume:available', 'volume:attaching', 'volume:in-use', 'volume:detaching',
      'marker:fault', 'marker:Warning event',
    ]);
    for (const l of m.legend) if (l.group !== 'marker') expect(l.color).toBe(STATE_COLORS[l.group][l.name]);
    const svg = renderTimeline(m);
    for (const l of m.legend) expect(svg).toContain(`data-group="${l.group}" data-name="${l.name}"`);
  });
});

describe('timeline time axis', () => {
  it('a long idle wait (a 30 min timeout after a 2 min rollout) is compressed with a visible break; the rollout keeps most of the width', () => {
    const { log, clock } = rollout();
    log.record({ source: 'scenario', type: 'step.start', message: 'step 3: wait machines(count=4)', data: { step: 3 } });
    clock.advanceBy(30 * 60_000);
    log.record({ source: 'scenario', type: 'step.fail', message: 'step 3 FAILED', data: { step: 3 } });
    const m = timelineModel(log.all(), { width: 1100 })!;
    expect(m.axis.breaks).toHaveLength(1);
    const b = m.axis.breaks[0]!;
    expect([b.from - T0, b.to - T0]).toEqual([110_000, 110_000 + 30 * 60_000]);
    // The 110 s of rollout take (nearly) the whole plot, not 110/1910 = 6 % of it.
    const plot = m.axis.right - m.axis.left;
    expect((xOf(m.axis, T0 + 110_000) - m.axis.left) / plot).toBeGreaterThan(0.9);
    // Time stays monotonic across the break, and the end is at the right edge.
    const xs = [0, 60_000, 110_000, 500_000, 1_000_000, 1_910_000].map((t) => xOf(m.axis, T0 + t));
    expect([...xs].sort((p, q) => p - q)).toEqual(xs);
    expect(xs.at(-1)).toBeCloseTo(m.axis.right);
    const svg = renderTimeline(m);
    expect(svg).toContain(`<g class="break" data-from="110000" data-to="${110_000 + 1_800_000}">`);
    expect(svg).toContain('>≈30m<');
    expect(svg).toContain('idle 00:01:50–00:31:50 (30m)');
    expect(m.legend.at(-1)).toMatchObject({ name: 'idle time compressed' });
    // Step 3 starts at the right edge (where the idle wait begins): its label ends at its line instead of being cut to nothing.
    const last = m.steps.at(-1)!;
    expect(last).toMatchObject({ steps: [3], text: '3 wait machines(count=4)' });
    expect(last.x1).toBeLessThanOrEqual(last.x);
  });

  it('a run without idle gaps keeps a plain linear axis', () => {
    const m = timelineModel(rollout().log.all())!;
    expect(m.axis.breaks).toEqual([]);
    expect(xOf(m.axis, T0 + 55_000)).toBeCloseTo(m.axis.left + (m.axis.right - m.axis.left) / 2);
  });
});

describe('timeline step labels', () => {
  /** 40 steps: bursts at the same instant, then close together, with long titles. */
  function manySteps(): EventLog {
    const clock = new VirtualClock(T0);
    const log = new EventLog(clock);
    log.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm1', phase: 'Provisioning' } });
    for (let i = 1; i <= 40; i++) {
      log.record({ source: 'scenario', type: 'step.start', message: `step ${i}: ${'a long step title that goes on and on '.repeat(2)}#${i}`, data: { step: i } });
      if (i % 4 === 0) clock.advanceBy(5_000 + (i % 3) * 1_000);
    }
    clock.advanceBy(10_000);
    log.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm1', phase: 'Running' } });
    return log;
  }

  it('never overlap: on each label row the labels are disjoint; steps at the same instant share one label', () => {
    const m = timelineModel(manySteps().all(), { width: 1100 })!;
    expect(m.steps.flatMap((s) => s.steps)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // Steps 1-4 start at the same instant: one label "1–4 …".
    expect(m.steps[0]!.steps).toEqual([1, 2, 3, 4]);
    expect(m.steps[0]!.text.startsWith('1–4 ')).toBe(true);
    for (let row = 0; row < 3; row++) {
      const on = m.steps.filter((s) => s.row === row).sort((a, b) => a.x0 - b.x0);
      for (let i = 1; i < on.length; i++) expect(on[i]!.x0, `row ${row}: ${on[i - 1]!.text} / ${on[i]!.text}`).toBeGreaterThan(on[i - 1]!.x1);
    }
    for (const s of m.steps) expect(s.x1 - s.x0).toBeCloseTo(s.text.length * 6.2);
  });

  it('a label cut to its room ends with "…"; the full titles of every step are in its tooltip', () => {
    const m = timelineModel(manySteps().all(), { width: 1100 })!;
    const svg = renderTimeline(m);
    for (const s of m.steps) {
      const full = s.steps.length > 1 ? `${s.steps[0]}–${s.steps.at(-1)} ${s.titles[0]} (+${s.steps.length - 1})` : `${s.steps[0]} ${s.titles[0]}`;
      const num = s.steps.length > 1 ? `${s.steps[0]}–${s.steps.at(-1)}` : String(s.steps[0]);
      expect(s.text === full || s.text === num || (s.text.endsWith('…') && full.startsWith(s.text.slice(0, -1)))).toBe(true);
      for (const [i, n] of s.steps.entries()) expect(svg).toContain(`step ${n}: ${s.titles[i]}`);
    }
    expect(m.steps.some((s) => s.text.endsWith('…'))).toBe(true);
  });

  it('is deterministic: the same event log gives the same SVG, byte for byte', () => {
    expect(timelineSvg(manySteps().all())).toBe(timelineSvg(manySteps().all()));
    expect(timelineSvg(rollout().log.all())).toBe(timelineSvg(rollout().log.all()));
  });
});
