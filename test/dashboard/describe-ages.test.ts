/**
 * kubectl describe on virtual time (issue 34): once virtual time runs ahead
 * of the wall clock, describe's Event ages (computed by kubectl from the
 * Events' timestamps and the local clock) read in virtual time, not
 * `<invalid>` (src/harness/dashboard/describe-events.ts); `kubectl get
 * events -o json` still shows the Events as stored.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MachineSet } from '../../src/product/api/capi.js';
import type { KubeObject } from '../../src/core/kube/types.js';
import { parseServeArgs, startServe, type Served, type ServeOptions } from '../../src/harness/cli/serve.js';
import { haveKubectl, KubectlRunner } from '../facade/kubectl.js';

describe.skipIf(!haveKubectl)('kubectl describe: Event ages in virtual time', () => {
  let s: Served;
  let k: KubectlRunner;
  beforeAll(async () => {
    const o: ServeOptions = { ...(parseServeArgs(['--preset', 'worker-cluster', '--speed', '0', '--port', '0']) as ServeOptions), kubeconfigDir: mkdtempSync(join(tmpdir(), 'ages-kc-')), tickMs: 0 };
    s = await startServe(o);
    k = new KubectlRunner(s.facade.kubeconfigPaths.combined);
  }, 120_000);
  afterAll(async () => s?.close());

  it('two hours of virtual time ahead: the MachineSet\'s Events are about two hours old, never <invalid>; get -o json keeps their timestamps', async () => {
    await s.time.advance(2 * 3_600_000);
    const ms = s.tb.env.mgmt.listSync<MachineSet>('MachineSet', { namespace: 'cpaas-system' })[0]!;
    const stored = s.tb.env.mgmt.listSync<KubeObject & { lastTimestamp?: string; involvedObject?: { name?: string } }>('Event', { namespace: 'cpaas-system' }).filter((e) => e.involvedObject?.name === ms.metadata.name);
    expect(stored.length).toBeGreaterThan(0);
    const out = await k.ok(`kubectl describe machineset ${ms.metadata.name} -n cpaas-system`);
    const events = out.slice(out.indexOf('Events:'));
    expect(events).not.toContain('<invalid>');
    // The ages as the virtual clock has them: now − lastTimestamp, in kubectl's HumanDuration (minutes up to 3 h).
    const ages = [...events.matchAll(/^\s+(?:Normal|Warning)\s+\S+\s+(\S+)/gm)].map((m) => m[1]!);
    expect(ages.length).toBe(stored.length);
    const want = stored.map((e) => Math.floor((s.tb.clock.now() - Date.parse(e.lastTimestamp!)) / 60_000));
    for (const [i, a] of ages.entries()) expect(Math.abs(Number(/^(\d+)m$/.exec(a)?.[1]) - want[i]!), `${a} vs ${want[i]}m`).toBeLessThanOrEqual(1);
    // Any other read of the Events (kubectl get -o json) shows them as stored.
    const json = JSON.parse(await k.ok(`kubectl get events -n cpaas-system --field-selector involvedObject.name=${ms.metadata.name} -o json`)) as { items: { lastTimestamp: string }[] };
    expect(json.items.map((e) => e.lastTimestamp).sort()).toEqual(stored.map((e) => e.lastTimestamp).sort());
  }, 60_000);
});
