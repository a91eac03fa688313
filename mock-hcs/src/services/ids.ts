/**
 * The one id allocator of the fake cloud. Every id a server, volume, port,
 * NIC, attachment or job gets comes from here, from one seeded stream, so a
 * run is deterministic per seed; and no id is handed out twice, whatever
 * its kind, across restarts:
 *
 * - the stream is forked per id epoch: a data file reopened by a new process
 *   bumps `idEpoch` (persisted), so a restarted cloud does not replay the
 *   ids of the previous process (the epoch-0 stream is the seed's own, so a
 *   fresh or reset cloud hands out the same ids as before);
 * - every new uuid is checked against every uuid in use (servers, their NIC
 *   ports, volumes, their attachments, VPC ports and private IPs) and every
 *   job id against every job and sub-job id, so a restored document or a
 *   reused stream cannot make two resources of different kinds share an id.
 */
import type { Rng } from '../../../src/core/index.js';
import type { DbData, Store } from '../state.js';

function streamLabel(epoch: number | undefined): string {
  return epoch ? `mock-hcs/ids@${epoch}` : 'mock-hcs/ids';
}

export class IdAllocator {
  private ids: Rng;
  /** Every uuid and job id in use or handed out by this process (built lazily from the document). */
  private used: Set<string> | undefined;

  constructor(
    private readonly rng: Rng,
    private readonly store: Store,
  ) {
    this.ids = rng.fork(streamLabel(store.data.idEpoch));
    store.onReplace(() => {
      this.used = undefined;
    });
  }

  /** Restart the stream from the seed and the document's epoch (admin reset: a reset cloud hands out the same ids as a fresh one). */
  restart(): void {
    this.ids = this.rng.fork(streamLabel(this.store.data.idEpoch));
  }

  private usedSet(): Set<string> {
    if (!this.used) this.used = idsInUse(this.store.data);
    return this.used;
  }

  /** A uuid no resource of any kind holds. */
  uuid(): string {
    const used = this.usedSet();
    for (;;) {
      const id = this.ids.uuid();
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  }

  newServerId(): string {
    return this.uuid();
  }

  newVolumeId(): string {
    return this.uuid();
  }

  newPortId(): string {
    return this.uuid();
  }

  /** ECS job ids are 32 hex characters without dashes; unique among jobs and sub-jobs. */
  newJobId(): string {
    const used = this.usedSet();
    for (;;) {
      const id = this.ids.hex(32);
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  }

  hex(len: number): string {
    return this.ids.hex(len);
  }

  mac(): string {
    return `fa:16:3e:${this.ids.hex(2)}:${this.ids.hex(2)}:${this.ids.hex(2)}`;
  }
}

/** Every id the document holds: servers, NIC ports, volumes, attachments, VPC ports, jobs and sub-jobs. */
export function idsInUse(d: DbData): Set<string> {
  const out = new Set<string>();
  for (const s of Object.values(d.servers)) {
    out.add(s.id);
    for (const n of s.nics) out.add(n.portId);
  }
  for (const v of Object.values(d.volumes)) {
    out.add(v.id);
    if (v.attachment) out.add(v.attachment.attachmentId);
  }
  for (const p of Object.values(d.ports)) out.add(p.id);
  for (const j of Object.values(d.jobs)) {
    out.add(j.job_id);
    for (const sj of j.sub_jobs ?? []) out.add(sj.job_id);
  }
  return out;
}
