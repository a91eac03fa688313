/**
 * What a mock-hcs fastify app serves, and a pool of idle apps (issue 36, plan 8).
 *
 * Building the app (fastify, avvio, find-my-way: ~50 routes and their hooks)
 * is ~6 ms of CPU, nearly all of a mock's start-up and of an embedded
 * testbed's (docs/performance.md). Runs that make one testbed after another
 * (explore's workers, the scenario library, mutation testing) can hand a
 * closed mock's app to the next one instead: its hooks and routes read
 * everything they serve from a `CloudBinding` at each request, and the pool
 * replaces the binding's contents with the next mock's engine, clock, faults,
 * tokens and keys. Only an app whose mock has no request in flight goes back
 * to the pool (so no handler can resume on the next mock's state), and only
 * one that never listened on a socket.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock, Rng } from '../../src/core/index.js';
import type { AdminOps } from './admin.js';
import type { CloudEngine } from './cloud.js';
import type { FaultRegistry } from './faults.js';
import type { IamService } from './iam.js';
import type { NetworkService } from './network.js';

/** Everything a request to the app reads of its mock. One object per app; its fields are replaced when the app serves another mock. */
export interface CloudBinding {
  engine: CloudEngine;
  clock: Clock;
  net: NetworkService;
  iam: IamService;
  faults: FaultRegistry;
  /** x-request-id source (a fork of the mock's rng). */
  requestIds: Rng;
  /** The mock's creation time on its clock (the created_at of subnets and images). */
  createdMs: number;
  signatureSkewMs: number;
  /** Token every /_admin request must carry (X-Admin-Token or Authorization: Bearer). */
  adminToken: string | undefined;
  /** Clock for the X-Sdk-Date skew check (default clock.now). */
  authNow: (() => number) | undefined;
  /** The /_admin operations (when the app has admin routes). */
  adminOps: AdminOps | undefined;
}

/** An app and the binding its hooks and routes read. */
export interface BoundApp {
  app: FastifyInstance;
  binding: CloudBinding;
}

/**
 * Idle apps, by the options their build depends on (admin routes, body
 * limit). Pass one pool to every mock of a sequence (createMockHcs's
 * `appPool`); a pool holds at most `max` idle apps per key (default 4) and
 * closes the others. Not shared between processes; an app is in the pool or
 * in one mock, never both.
 */
export class MockHcsAppPool {
  private readonly idle = new Map<string, BoundApp[]>();
  /** Apps handed out again (for tests and benchmarks). */
  reused = 0;

  constructor(private readonly max = 4) {}

  take(key: string): BoundApp | undefined {
    const list = this.idle.get(key);
    const got = list?.pop();
    if (got) this.reused++;
    return got;
  }

  /** Keep `b` for the next mock with the same key (or close it when the pool is full). */
  async give(key: string, b: BoundApp): Promise<void> {
    const list = this.idle.get(key) ?? [];
    if (list.length >= this.max) {
      await b.app.close();
      return;
    }
    list.push(b);
    this.idle.set(key, list);
  }

  /** Idle apps held, over all keys. */
  size(): number {
    let n = 0;
    for (const l of this.idle.values()) n += l.length;
    return n;
  }

  /** Close every idle app. */
  async close(): Promise<void> {
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.all(all.map((b) => b.app.close()));
  }
}
