/** Broken system parts that scenario tests swap in to prove the checks can fail. */
import type { HcsClient } from '../../src/product/cloud/index.js';
import type { DiskClaimer } from '../../src/product/provider/index.js';

/** The classic disk-reuse bug: every claim creates a fresh volume, the (hostname, slot) identity is forgotten. */
export const forgetfulClaimer = (cloud: HcsClient): DiskClaimer => {
  let n = 0;
  return {
    find: async () => undefined,
    async claim(req) {
      const res = await cloud.createVolume({
        volume: {
          name: `${req.cluster}-${req.hostname}-pd${req.slot}-${++n}`,
          size: req.size,
          volume_type: req.type,
          availability_zone: req.availabilityZone,
          metadata: { 'hcs.io/cluster': req.cluster, 'hcs.io/hostname': req.hostname, 'hcs.io/slot': String(req.slot), 'hcs.io/persistent': 'true' },
        },
      });
      return { volumeId: res.volume_ids[0]!, name: 'x', status: 'creating', attachedServerIds: [], created: true, warnings: [] };
    },
  };
};

/** Delegate to `target`, overriding some members (methods stay bound to the target). */
export function overriding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (prop in overrides) return (overrides as Record<string | symbol, unknown>)[prop];
      const v = (t as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}
