import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { EventLog } from '../../src/core/events.js';
import { lanes, renderHtml } from '../../src/harness/report/html.js';
import { specCoverage } from '../../src/harness/report/coverage.js';
import type { ScenarioResult } from '../../src/harness/scenario/runner.js';
import { SPEC_RULES } from '../../src/core/rules.js';

function log(): EventLog {
  const c = new VirtualClock(0);
  const l = new EventLog(c);
  l.record({ source: 'scenario', type: 'step.start', message: 'step 1', data: { step: 1 } });
  l.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm1', phase: 'Pending' } });
  c.advanceBy(10_000);
  l.record({ source: 'cloud', type: 'server.created', message: '', data: { serverId: 's-1', name: 'm1' } });
  l.record({ source: 'cloud', type: 'volume.created', message: '', data: { volumeId: 'v-1', name: 'pd0', metadata: { 'hcs.io/persistent': 'true' } } });
  l.record({ source: 'cloud', type: 'volume.created', message: '', data: { volumeId: 'v-2', name: 'root', metadata: {} } });
  c.advanceBy(50_000);
  l.record({ source: 'cloud', type: 'server.active', message: '', data: { serverId: 's-1' } });
  l.record({ source: 'cloud', type: 'volume.attached', message: '', data: { volumeId: 'v-1', serverId: 's-1' } });
  l.record({ source: 'capi', type: 'machine.phase', message: '', data: { machine: 'm1', phase: 'Running' } });
  c.advanceBy(30_000);
  l.record({ source: 'fault', type: 'fault.fired', message: 'attach failed', data: {} });
  return l;
}

describe('HTML report', () => {
  it('derives one lane per machine, server and persistent volume with their states over time', () => {
    const ls = lanes(log().all());
    expect(ls.map((l) => `${l.group}:${l.label}`)).toEqual(['machine:m1', 'server:m1', 'volume:pd0']);
    expect(ls[0]!.segments).toEqual([
      { from: 0, to: 60_000, state: 'Pending' },
      { from: 60_000, to: 90_000, state: 'Running' },
    ]);
    expect(ls[1]!.segments.map((s) => s.state)).toEqual(['BUILD', 'ACTIVE']);
    expect(ls[2]!.segments.map((s) => s.state)).toEqual(['creating', 'in-use']);
  });

  it('renders a self-contained page with the timeline, faults and the replay command', () => {
    const events = log().all();
    const r = { scenario: { name: 'x', file: 'scenarios/x.yaml', description: 'd', rules: [], seed: 3, expectViolations: [], steps: [] }, seed: 3, ok: true, steps: [], events, virtualMs: 90_000, wallMs: 5, rulesExercised: ['DISK-3'], violations: [] } as ScenarioResult;
    const html = renderHtml([r], specCoverage([r]));
    expect(html).toContain('<svg');
    expect(html).toContain('machine: m1');
    expect(html).toContain('attach failed');
    expect(html).toContain('npx hcs-testbed run scenarios/x.yaml --seed 3');
    expect(html).toContain(`1/${SPEC_RULES.length} rules exercised`);
  });
});
