/**
 * The one id allocator of the fake cloud. Every id a resource, job, port or
 * attachment gets comes from one seeded stream (`mock-hcs/ids`), so a run is
 * deterministic per seed.
 */
import type { Rng } from '../../../src/core/index.js';
import type { Store } from '../state.js';

export class IdAllocator {
  private ids: Rng;

  constructor(
    private readonly rng: Rng,
    private readonly store: Store,
  ) {
    this.ids = rng.fork('mock-hcs/ids');
  }

  /** Restart the stream from the seed (admin reset: a reset cloud hands out the same ids as a fresh one). */
  restart(): void {
    this.ids = this.rng.fork('mock-hcs/ids');
  }

  private get data() {
    return this.store.data;
  }

  private newId(taken: (id: string) => boolean): string {
    // The rng stream restarts with the seed when a data file is reopened: skip ids already in use.
    for (;;) {
      const id = this.ids.uuid();
      if (!taken(id)) return id;
    }
  }

  newServerId(): string {
    return this.newId((id) => id in this.data.servers);
  }

  newVolumeId(): string {
    return this.newId((id) => id in this.data.volumes);
  }

  newPortId(): string {
    return this.newId((id) => id in this.data.ports);
  }

  /** ECS job ids are 32 hex characters without dashes. */
  newJobId(): string {
    for (;;) {
      const id = this.ids.hex(32);
      if (!(id in this.data.jobs)) return id;
    }
  }

  /** A fresh UUID from the id stream (NIC ports, attachments). */
  uuid(): string {
    return this.ids.uuid();
  }

  hex(len: number): string {
    return this.ids.hex(len);
  }

  mac(): string {
    return `fa:16:3e:${this.ids.hex(2)}:${this.ids.hex(2)}:${this.ids.hex(2)}`;
  }
}
