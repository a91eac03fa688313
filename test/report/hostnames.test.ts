/**
 * The hostname view's model (src/harness/report/hostnames.ts) and picture
 * (src/harness/report/hostnames-svg.ts): the succession of machines on a hostname
 * from the event log, its persistent disk's states, faults on the row whose
 * volume the call named; short names; time-axis labels that never touch.
 */
import { describe, expect, it } from 'vitest';
import type { LogEvent } from '../../src/core/events.js';
import { HostHistoryBuilder, hostHistories, shortNames } from '../../src/harness/report/hostnames.js';
import { axisTicks, renderHostnames } from '../../src/harness/report/hostnames-svg.js';
import { CHAR_W, timeAxis } from '../../src/harness/report/timeline.js';

let seq = 0;
const ev = (t: number, source: LogEvent['source'], type: string, data: Record<string, unknown>): LogEvent => ({ seq: ++seq, t, source, type, message: type, data });
const M = 60_000;
const persistent = { 'hcs.io/persistent': 'true', 'hcs.io/hostname': 'w-1', 'hcs.io/slot': '0' };
const EVENTS: LogEvent[] = [
  ev(0, 'capi', 'machine.phase', { machine: 'demo-md-0-aaaaa-11111', phase: 'Provisioning' }),
  ev(1 * M, 'provider', 'hcsmachine.entry-bound', { machine: 'cpaas-system/demo-md-0-aaaaa-11111', hostname: 'w-1', pool: 'p' }),
  ev(1 * M, 'cloud', 'volume.created', { volumeId: 'vol-1', name: 'demo-w-1-pd0', metadata: persistent }),
  ev(2 * M, 'cloud', 'volume.available', { volumeId: 'vol-1' }),
  ev(2 * M, 'cloud', 'server.created', { serverId: 'srv-1', name: 'demo-md-0-aaaaa-11111' }),
  ev(2 * M, 'provider', 'hcsmachine.server-bound', { machine: 'cpaas-system/demo-md-0-aaaaa-11111', serverId: 'srv-1' }),
  ev(3 * M, 'cloud', 'volume.attach-requested', { volumeId: 'vol-1', serverId: 'srv-1' }),
  ev(4 * M, 'cloud', 'volume.attached', { volumeId: 'vol-1', serverId: 'srv-1' }),
  ev(5 * M, 'capi', 'machine.phase', { machine: 'demo-md-0-aaaaa-11111', phase: 'Running' }),
  ev(20 * M, 'capi', 'machine.phase', { machine: 'demo-md-0-aaaaa-11111', phase: 'Deleting' }),
  ev(21 * M, 'cloud', 'volume.detach-requested', { volumeId: 'vol-1', serverId: 'srv-1' }),
  ev(21 * M, 'fault', 'fault.stuck', { path: '/v1/p/servers/srv-1/detachvolume/vol-1' }),
  // A volume that is not persistent (a root disk) is not drawn.
  ev(22 * M, 'cloud', 'volume.created', { volumeId: 'vol-root', name: 'root', metadata: {} }),
];

describe('hostHistories', () => {
  it('the machine serving w-1 from its entry binding, its phases, the disk states and the fault on its row', () => {
    const h = hostHistories(EVENTS, 30 * M).get('w-1')!;
    expect(h.machines).toEqual([
      {
        machine: 'demo-md-0-aaaaa-11111', from: 1 * M, to: 30 * M, gone: false,
        phases: [{ from: 1 * M, to: 5 * M, phase: 'Provisioning' }, { from: 5 * M, to: 20 * M, phase: 'Running' }, { from: 20 * M, to: 30 * M, phase: 'Deleting' }],
      },
    ]);
    expect(h.disks.map((d) => [d.state, d.from, d.to, d.server])).toEqual([
      ['creating', 1 * M, 2 * M, undefined],
      ['available', 2 * M, 3 * M, undefined],
      ['attaching', 3 * M, 4 * M, 'demo-md-0-aaaaa-11111'],
      ['in-use', 4 * M, 21 * M, 'demo-md-0-aaaaa-11111'],
      ['detaching', 21 * M, 30 * M, 'demo-md-0-aaaaa-11111'],
    ]);
    expect(h.faults.map((f) => f.t)).toEqual([21 * M]);
  });

  it('a deleted Machine ends its span; the next machine bound to the hostname follows it', () => {
    const more = [
      ...EVENTS,
      ev(23 * M, 'kube', 'object.deleted', { kind: 'Machine', cluster: 'management', name: 'demo-md-0-aaaaa-11111' }),
      ev(24 * M, 'provider', 'hcsmachine.entry-bound', { machine: 'cpaas-system/demo-md-0-bbbbb-22222', hostname: 'w-1', pool: 'p' }),
    ];
    const h = hostHistories(more, 30 * M).get('w-1')!;
    expect(h.machines.map((m) => [m.machine, m.from, m.to, m.gone])).toEqual([
      ['demo-md-0-aaaaa-11111', 1 * M, 23 * M, true],
      ['demo-md-0-bbbbb-22222', 24 * M, 30 * M, false],
    ]);
  });
});

describe('HostHistoryBuilder (the live dashboard reads only the new events)', () => {
  it('fed the log as it grows, with snapshots in between, it gives what hostHistories gives over the whole log; a snapshot leaves it unchanged', () => {
    const more = [...EVENTS, ev(25 * M, 'cloud', 'volume.detached', { volumeId: 'vol-1' }), ev(26 * M, 'management' as LogEvent['source'], 'object.deleted', { kind: 'Machine', cluster: 'management', name: 'demo-md-0-aaaaa-11111' })];
    const b = new HostHistoryBuilder();
    for (let n = 1; n <= more.length; n++) {
      b.addAll(more.slice(0, n));
      expect(b.snapshot(30 * M), `after ${n} events`).toEqual(hostHistories(more.slice(0, n), 30 * M));
      expect(b.snapshot(Infinity)).toEqual(hostHistories(more.slice(0, n), Infinity));
    }
    expect(b.added).toBe(more.length);
  });
});

describe('short names and the axis', () => {
  it('short names drop the prefix the pool\'s machines share', () => {
    expect([...shortNames(['demo-md-0-aaaaa-11111', 'demo-md-0-bbbbb-22222']).values()]).toEqual(['aaaaa-11111', 'bbbbb-22222']);
    expect([...shortNames(['demo-control-plane-abcde', 'demo-control-plane-abxyz']).values()]).toEqual(['abcde', 'abxyz']);
    expect([...shortNames(['demo-md-0-aaaaa-11111']).values()]).toEqual(['11111']);
  });

  it('time-axis labels never touch, with or without compressed gaps', () => {
    const instants = [0, 1, 2, 3, 60, 61, 62, 200, 201].map((x) => x * M);
    for (const axis of [timeAxis(0, 240 * M, instants, 130, 1062), timeAxis(0, 5 * M, [M, 2 * M], 130, 1062)]) {
      const ticks = axisTicks(axis);
      const ext = ticks.map((t) => (t.anchor === 'start' ? [t.x, t.x + t.text.length * CHAR_W] : [t.x - t.text.length * CHAR_W, t.x]) as [number, number]);
      for (let i = 1; i < ext.length; i++) expect(ext[i]![0], `${ticks[i - 1]!.text} and ${ticks[i]!.text}`).toBeGreaterThan(ext[i - 1]![1]);
      expect(ticks.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('a segment too narrow for the short name gets the machine\'s suffix, or no label; never a cut one', () => {
    const h = hostHistories(EVENTS, 30 * M).get('w-1')!;
    const pic = { pools: [{ namespace: 'n', name: 'p', role: 'workers', rows: [{ hostname: 'w-1', ip: '10.0.0.1', now: { status: 'serving' as const, machine: 'demo-md-0-aaaaa-11111', phase: 'Deleting', version: 'v1.31.6', disks: [{ slot: 0, state: 'detaching', volume: 'demo-w-1-pd0' }] }, history: h }] }], t0: 0, t1: 30 * M };
    const wide = renderHostnames(pic, 1400).svg;
    expect(wide).toContain('class="seg">11111</text>'); // the only machine of the pool: its suffix
    expect(wide).toContain('data-hostname="w-1" data-status="serving" data-machine="demo-md-0-aaaaa-11111" data-phase="Deleting" data-disk-state="detaching"');
    expect(wide).toContain('class="fault"');
    // 30 minutes over a few px: no room for any label on the span.
    const narrow = renderHostnames(pic, 480).svg;
    expect(narrow).toContain('class="mseg"');
    expect(narrow).not.toMatch(/class="seg">/);
    expect(narrow).not.toContain('…');
  });
});
