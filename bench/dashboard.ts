/**
 * The dashboard's updates (issue 34): what one update costs at 10 and 100
 * workers during a rollout (maxSurge 0, maxUnavailable 10 %): the bytes the
 * page receives (a patch of what changed, src/harness/dashboard/diff.ts) and
 * the wall time to compute the view and the patch, per 20 s step of virtual
 * time; beside it, the whole view (what a page gets once, when it opens).
 * Targets (issue 34): an update under 50 KB and 200 ms at 100 machines.
 *
 * Run alone: `npx tsx bench/dashboard.ts [N...]`.
 */
import type { ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import type { Machine } from '../src/product/api/capi.js';
import { DashboardFeed } from '../src/harness/dashboard/feed.js';
import { TimeControl } from '../src/world/facade/timecontrol.js';
import { applyObject, loadManifestPath } from '../src/harness/manifests/index.js';
import { createTestbed } from '../src/harness/testbed/index.js';
import type { BenchResult } from './scale.js';
import { bigClusterManifests } from '../test/dashboard/fixtures.js';

const NS = 'cpaas-system';

/** A stream that counts what it is sent (the page's side of the wire). */
function counter(): { res: ServerResponse; bytes: () => number; other: () => number; last: () => string } {
  let bytes = 0;
  let other = 0;
  let last = '';
  const res = {
    writeHead: () => res,
    write: (chunk: string) => {
      // The view and its patches; the Kubernetes Events and controller log lines stream beside them (counted apart).
      if (chunk.startsWith('event: patch') || chunk.startsWith('event: view')) {
        bytes += Buffer.byteLength(chunk);
        last = chunk;
      } else other += Buffer.byteLength(chunk);
      return true;
    },
    end: () => undefined,
  } as unknown as ServerResponse;
  return { res, bytes: () => bytes, other: () => other, last: () => last };
}

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * p))] ?? 0;

export async function benchDashboardAt(n: number): Promise<BenchResult[]> {
  const tb = await createTestbed({ seed: 42, startMs: Date.UTC(2026, 0, 1) });
  try {
    for (const m of loadManifestPath(bigClusterManifests(n))) await applyObject(tb.env.mgmt, m.obj, m.obj.metadata.namespace);
    const up = () => tb.env.mgmt.listSync<Machine>('Machine').filter((m) => m.status?.phase === 'Running').length === n + 3;
    if (!(await tb.sim.runUntil(up, 4 * 3_600_000)).ok) throw new Error(`${n} workers did not come up`);
    const time = new TimeControl(tb.sim, { paused: true, tickMs: 0 });
    const feed = new DashboardFeed({ mgmt: tb.env.mgmt, cloud: tb.cloud, events: tb.env.events, logs: tb.env.logs, workloads: tb.env.workloads, time, throttleMs: 1_000_000 });
    const page = counter();
    feed.attach(page.res, () => undefined);
    const full = page.bytes();
    // The rollout: a new template (another flavor), as the worker document's infrastructure upgrade.
    const t = tb.env.mgmt.getSync<Machine & { spec: { template: { spec: Record<string, unknown> } } }>({ kind: 'HCSMachineTemplate', namespace: NS, name: 'demo-worker-template' })!;
    await tb.env.mgmt.create({ apiVersion: t.apiVersion, kind: 'HCSMachineTemplate', metadata: { name: 'demo-worker-template-2', namespace: NS }, spec: { template: { spec: { ...t.spec.template.spec, flavorName: 's6.xlarge.2' } } } });
    await tb.env.mgmt.patch({ kind: 'MachineDeployment', namespace: NS, name: 'demo-md-0' }, 'merge', { spec: { template: { spec: { infrastructureRef: { name: 'demo-worker-template-2' } } } } });
    const bytes: number[] = [];
    const ms: number[] = [];
    const other0 = page.other();
    let biggest = '';
    for (let i = 0; i < 90; i++) {
      await time.advance(20_000);
      const before = page.bytes();
      const t0 = performance.now();
      feed.flush();
      const wall = performance.now() - t0;
      if (page.bytes() === before) continue;
      bytes.push(page.bytes() - before);
      ms.push(wall);
      if (page.last().length > biggest.length) biggest = page.last();
    }
    if (process.env.BENCH_VERBOSE) {
      const p = JSON.parse(biggest.slice(biggest.indexOf('data: ') + 6)) as Record<string, unknown>;
      console.log(`largest update at ${n}: ${Object.entries(p).map(([k, v]) => `${k} ${JSON.stringify(v).length}`).join(', ')}`);
    }
    feed.close();
    time.close();
    const kb = (b: number): number => Math.round(b / 102.4) / 10;
    return [
      { name: `dashboard: the whole view at ${n} workers (a page opening)`, value: kb(full), unit: 'KB' },
      { name: `dashboard: one update at ${n} workers, median / p95 / max`, value: kb(pct(bytes, 0.5)), unit: `KB / ${kb(pct(bytes, 0.95))} KB / ${kb(Math.max(...bytes))} KB`, note: `${bytes.length} updates over ${bytes.length * 20} s of a rollout; target < 50 KB` },
      { name: `dashboard: compute + diff + send at ${n} workers, median / p95 / max`, value: pct(ms, 0.5), unit: `ms / ${pct(ms, 0.95).toFixed(1)} ms / ${Math.max(...ms).toFixed(1)} ms`, note: 'target < 200 ms' },
      { name: `dashboard: Events and controller log lines streamed beside them at ${n} workers`, value: kb((page.other() - other0) / Math.max(1, bytes.length)), unit: 'KB per update', note: 'one message per Event or log line, not part of the view' },
    ];
  } finally {
    await tb.close();
  }
}

export async function benchDashboard(sizes = [10, 100]): Promise<BenchResult[]> {
  const out: BenchResult[] = [];
  for (const n of sizes) out.push(...(await benchDashboardAt(n)));
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sizes = process.argv.slice(2).map(Number).filter((x) => x > 0);
  for (const r of await benchDashboard(sizes.length ? sizes : undefined)) console.log(`${r.name}: ${Number.isInteger(r.value) ? r.value : r.value.toFixed(2)} ${r.unit}${r.note ? `  (${r.note})` : ''}`);
}
