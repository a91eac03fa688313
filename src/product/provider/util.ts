import type { Condition } from '../api/capi.js';
import { rfc3339 } from '../../core/clock.js';
import type { EventInput } from '../../core/events.js';
import type { KubeClient } from '../../core/kube/client.js';
import { isConflict } from '../../core/kube/errors.js';
import type { KubeObject, ObjectRef } from '../../core/kube/types.js';
import type { ControllerContext, Logger } from '../../core/runtime/context.js';

export const DEPLOYMENT = 'hcs-controller-manager';

/**
 * Set (or replace) a condition; lastTransitionTime only moves when the status
 * changes. Returns true when anything changed.
 */
export function setCondition(conds: Condition[], c: Omit<Condition, 'lastTransitionTime'>, nowMs: number): boolean {
  const i = conds.findIndex((x) => x.type === c.type);
  const prev = i >= 0 ? conds[i] : undefined;
  const next: Condition = {
    type: c.type,
    status: c.status,
    ...(c.severity !== undefined ? { severity: c.severity } : c.status === 'False' ? { severity: 'Warning' as const } : {}),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
    ...(c.message !== undefined ? { message: c.message } : {}),
    lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : rfc3339(nowMs),
  };
  if (prev && sameJsonText(prev, next)) return false;
  if (i >= 0) conds[i] = next;
  else conds.push(next);
  return true;
}

/**
 * Exactly `JSON.stringify(a) === JSON.stringify(b)` (key order included) for
 * JSON data, without building the strings; shared subtrees compare by
 * reference (setCondition's old and new condition; a status before and after
 * a reconcile). The callbacks of mutatePoolStatus (pool.ts) take a shallow snapshot of the
 * status before they change it: they replace what they change (entries,
 * conditions, counts) instead of editing it, so the snapshot is the old status.
 */
export function sameJsonText(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' ? JSON.stringify(a) === JSON.stringify(b) : false;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    const el = (v: unknown): unknown => (v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v);
    for (let i = 0; i < a.length; i++) if (!sameJsonText(el(a[i]), el(bb[i]))) return false;
    return true;
  }
  if ('toJSON' in a || 'toJSON' in b) return JSON.stringify(a) === JSON.stringify(b);
  const keys = (o: object): string[] => Object.keys(o).filter((k) => {
    const v = (o as Record<string, unknown>)[k];
    return v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';
  });
  const ka = keys(a);
  const kb = keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return false;
    if (!sameJsonText((a as Record<string, unknown>)[ka[i]!], (b as Record<string, unknown>)[kb[i]!])) return false;
  }
  return true;
}

export function getCondition(conds: Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type);
}

/**
 * Structured decision reporting: one controller log line
 * (`kubectl logs deployment/hcs-controller-manager`, OPS-3; its `event` key
 * is the event type) and one entry in the run's event log, with the SPEC
 * rule IDs that apply.
 */
export class Reporter {
  readonly log: Logger;
  constructor(
    private readonly ctx: ControllerContext,
    controller: string,
  ) {
    this.log = ctx.logs.logger(DEPLOYMENT, controller);
  }

  // The log line names the event type (`event`): a run with an outside provider process rebuilds the provider's
  // events from its log (src/product/provider/process.ts followProviderLog), as the in-process provider records them.
  info(type: string, msg: string, kv: Record<string, unknown> = {}, rules?: string[]): void {
    this.log.info(msg, { event: type, ...kv, ...(rules ? { rules } : {}) });
    this.record({ source: 'provider', type, message: msg, data: kv, ...(rules ? { rules } : {}) });
  }

  error(type: string, msg: string, kv: Record<string, unknown> = {}, rules?: string[]): void {
    this.log.error(msg, { event: type, ...kv, ...(rules ? { rules } : {}) });
    this.record({ source: 'provider', type, message: msg, data: kv, ...(rules ? { rules } : {}) });
  }

  private record(e: EventInput): void {
    this.ctx.events.record(e);
  }

  /** A Kubernetes Event on `obj` (kubectl describe), e.g. for a stuck state. */
  async k8sEvent(obj: KubeObject, type: 'Normal' | 'Warning', reason: string, message: string, rules?: string[]): Promise<void> {
    await this.ctx.recorder.record('provider', 'hcs-controller-manager', obj, type, reason, message, rules);
  }
}

/**
 * Read-modify-write of an object's status with optimistic concurrency,
 * retried on Conflict. `mutate` returns false to skip the write.
 */
export async function mutateStatus<T extends KubeObject>(
  client: KubeClient,
  ref: ObjectRef,
  mutate: (obj: T) => boolean | void,
  attempts = 8,
): Promise<T | undefined> {
  for (let i = 0; ; i++) {
    const cur = await client.get<T>(ref);
    if (!cur) return undefined;
    if (mutate(cur) === false) return cur;
    try {
      return await client.updateStatus(cur);
    } catch (e) {
      if (!isConflict(e) || i >= attempts - 1) throw e;
    }
  }
}

/** IPv4 `ip` inside `cidr`? Returns undefined when either does not parse. */
export function ipInCidr(ip: string, cidr: string): boolean | undefined {
  const toInt = (s: string): number | undefined => {
    const p = s.split('.');
    if (p.length !== 4) return undefined;
    let n = 0;
    for (const x of p) {
      if (!/^\d{1,3}$/.test(x) || Number(x) > 255) return undefined;
      n = n * 256 + Number(x);
    }
    return n;
  };
  const [base, bitsText] = cidr.split('/');
  const a = toInt(ip);
  const b = base === undefined ? undefined : toInt(base);
  const bits = Number(bitsText);
  if (a === undefined || b === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) return undefined;
  const size = 2 ** (32 - bits);
  return Math.floor(a / size) === Math.floor(b / size);
}

/** Per-key in-process mutex: concurrent callers with the same key run one after another. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<R>(key: string, fn: () => Promise<R>): Promise<R> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
