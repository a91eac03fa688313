/**
 * A planted provider bug for test/explore (loaded by explore's workers and by
 * `hcs-testbed run --plugin`): a disk claimer that keeps the (hostname, slot)
 * → volume bindings it handed out in process memory and trusts only that
 * memory for a volume that is mid-attach. A provider crash empties the
 * memory (a process restart); a claim made after the restart while the
 * volume is still `attaching` does not recognise it as the identity's disk
 * and creates a second one: the pool entry's binding now points at an empty
 * volume, and the next replacement of that hostname comes up without its
 * data (DISK-3, DISK-8).
 *
 * Without a crash, or with a crash at any other moment, it behaves like the
 * real claimer — only "the provider crashes during an attach" exposes it.
 */
import type { HcsClient } from '../../src/product/cloud/index.js';
import type { ClaimedDisk, DiskClaimer, DiskRequest } from '../../src/product/provider/index.js';
import { EvsDiskClaimer } from '../../src/product/provider/index.js';
import type { Testbed } from '../../src/harness/testbed/testbed.js';

const key = (r: { namespace: string; cluster: string; hostname: string; slot: number }): string => `${r.namespace}/${r.cluster}/${r.hostname}/${r.slot}`;

export class VolatileClaimer implements DiskClaimer {
  private readonly real: EvsDiskClaimer;
  private readonly memory = new Map<string, ClaimedDisk>();

  constructor(private readonly cloud: HcsClient) {
    this.real = new EvsDiskClaimer(cloud);
  }

  /** The provider process restarted: its memory is gone. */
  forget(): void {
    this.memory.clear();
  }

  find(id: Parameters<DiskClaimer['find']>[0]): Promise<ClaimedDisk | undefined> {
    return this.real.find(id);
  }

  async claim(req: DiskRequest): Promise<ClaimedDisk> {
    const found = await this.real.find(req);
    // The bug: a volume mid-attach counts as ours only if this process remembers handing it out.
    if (found && found.status === 'attaching' && !this.memory.has(key(req))) {
      const res = await this.cloud.createVolume({
        volume: {
          name: `${req.cluster}-${req.hostname}-pd${req.slot}`,
          size: req.size,
          volume_type: req.type,
          availability_zone: req.availabilityZone,
          metadata: { 'hcs.io/cluster': req.cluster, 'hcs.io/namespace': req.namespace, 'hcs.io/pool': req.pool, 'hcs.io/hostname': req.hostname, 'hcs.io/slot': String(req.slot), 'hcs.io/persistent': 'true' },
        },
      });
      const fresh: ClaimedDisk = { volumeId: res.volume_ids[0]!, name: `${req.cluster}-${req.hostname}-pd${req.slot}`, status: 'creating', attachedServerIds: [], created: true, warnings: [] };
      this.memory.set(key(req), fresh);
      return fresh;
    }
    const c = found ?? (await this.real.claim(req));
    this.memory.set(key(req), c);
    return c;
  }
}

let current: VolatileClaimer | undefined;

export function options(): { diskClaimer: (cloud: HcsClient) => DiskClaimer } {
  return {
    diskClaimer: (cloud) => (current = new VolatileClaimer(cloud)),
  };
}

export function prepare(tb: Testbed): void {
  const claimer = current;
  tb.events.subscribe((e) => {
    if (e.type === 'controller.crashed' && e.message === 'controller hcsmachine crashed') claimer?.forget();
  });
}
