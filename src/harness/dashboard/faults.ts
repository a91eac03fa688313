/**
 * Faults the dashboard can inject with one click: mock-hcs fault rules
 * (HCS-6, mock-hcs/README.md "Faults"), each named for what an operator sees.
 * Release = the rule removed and every stuck transition completed.
 */
import type { MockHcs } from '../../../mock-hcs/src/index.js';
import { ApiError, badRequest } from './time-api.js';

export interface FaultPreset {
  title: string;
  rule: Record<string, unknown>;
}

export const FAULT_PRESETS: Record<string, FaultPreset> = {
  'stuck-detach': { title: 'volume detach never completes (stuck detaching)', rule: { service: 'ecs', operation: 'detachVolume', effect: { type: 'stuck' } } },
  // Bug report 2 (docs/scenarios.md, effect `timeout`): the next detach stays RUNNING for 10 min, then its job ends FAIL with
  // the disk still in-use; the provider reports DiskDetachFailed and detaches again (DISK-9). One detach only (count 1).
  'detach-timeout': { title: 'the next volume detach times out (10 min, then FAIL; the disk stays in-use)', rule: { service: 'ecs', operation: 'detachVolume', effect: { type: 'timeout' }, count: 1 } },
  'stuck-attach': { title: 'volume attach never completes (stuck attaching)', rule: { service: 'ecs', operation: 'attachVolume', effect: { type: 'stuck' } } },
  'no-capacity': { title: 'no capacity: server creation refused (Ecs.0319)', rule: { service: 'ecs', operation: 'createServers', effect: { type: 'capacity' } } },
  'build-fails': { title: 'server build ends in ERROR', rule: { service: 'ecs', operation: 'createServers', effect: { type: 'jobFail' } } },
  'slow-build': { title: 'server builds take 10 min longer', rule: { service: 'ecs', operation: 'createServers', effect: { type: 'latency', ms: 600_000 } } },
  'ecs-unavailable': { title: 'ECS API answers 503', rule: { service: 'ecs', operation: '*', effect: { type: 'error', status: 503, code: 'APIGW.0503', message: 'service unavailable (injected)' } } },
};

export function injectFault(cloud: MockHcs, body: Record<string, unknown>): { id: string; preset?: string } {
  const preset = body.preset;
  if (typeof preset === 'string') {
    const p = FAULT_PRESETS[preset];
    if (!p) throw badRequest(`unknown fault preset "${preset}" (known: ${Object.keys(FAULT_PRESETS).join(', ')})`);
    return { id: cloud.faults.add(structuredClone(p.rule) as unknown as Parameters<MockHcs['faults']['add']>[0]), preset };
  }
  if (body.rule === undefined) throw badRequest('give {"preset": NAME} or {"rule": a mock-hcs fault rule}');
  try {
    return { id: cloud.faults.add(body.rule as Parameters<MockHcs['faults']['add']>[0]) };
  } catch (e) {
    throw badRequest(`fault rule refused (HCS-6): ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Remove one rule (or all) and complete the stuck transitions it left. */
export function releaseFault(cloud: MockHcs, id?: string): { removed: number; released: number } {
  let removed = 0;
  if (id === undefined) {
    removed = cloud.faults.list().length;
    cloud.faults.clear();
  } else {
    if (!cloud.faults.remove(id)) throw new ApiError(404, 'NotFound', `no fault rule "${id}"`);
    removed = 1;
  }
  const released = cloud.faults.releaseStuck();
  return { removed, released };
}
