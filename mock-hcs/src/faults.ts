/**
 * Fault injection (HCS-6). A rule matches calls by service, operation and
 * optionally by resource (id, name substring, tag/metadata key[=value]);
 * when it fires, its effect changes what the cloud does:
 *
 * - `error`    the call is refused with the given HTTP status and code; nothing changes.
 * - `capacity` createServers is refused with Ecs.0319 (insufficient capacity), optionally only for one flavor / AZ.
 * - `quota`    the create call is refused with the documented quota code (Ecs.0001 / Ecs.0021, EVS.1034 / EVS.1042; errors.ts quotaCode).
 * - `partial`  the call is carried out, but the client gets a 500 (it must reconcile, not retry blindly).
 * - `latency`  `mode: 'job'` (default for calls that start a job): every transition the call starts takes
 *              `ms` longer on the injected clock; `mode: 'response'` (default for reads): the response is held
 *              until the injected clock has moved `ms` forward (with a VirtualClock, whoever drives the clock
 *              releases it — the timer is registered on that clock like any other).
 * - `jobFail`  the call is accepted, its transitions end in failure and the job ends FAIL with error_code / fail_reason.
 * - `stuck`    the call is accepted, its transitions never complete (server stays BUILD, volume stays
 *              detaching, ...) until `releaseStuck()` / `POST /_admin/faults/release`.
 * - `throttle` API Gateway flow control (issue 37): a token bucket of `perSecond` calls per second (`burst` at most,
 *              default perSecond) on the injected clock; a matching call that finds it empty is refused with 429
 *              APIGW.0308 "The throttling threshold has been reached" (Huawei Cloud API signing error codes,
 *              support.huaweicloud.com/intl/en-us/devg-apisign/api-sign-errorcode.html; "APIG.0308 ... policy user over
 *              ratelimit,limit:XX,time:1 second" in the service FAQs), nothing changes.
 * - `listLag`  read-after-write lag (issue 37): a server created less than `ms` ago is left out of ListServersDetails
 *              (ShowServer by id still finds it), as an eventually consistent list would.
 * - `timeout`  the call is accepted and its job stays RUNNING (volume `detaching`, server `BUILD`, ...) for `ms`
 *              of injected-clock time, then the transition is given up as the cloud gives up a job that did not
 *              finish: the job ends FAIL with error_code / fail_reason and the resource is back where it was (a
 *              detach leaves the volume `in-use` on its server) — see TIMEOUT_DEFAULTS for the sources.
 *
 * Options: `probability` (0..1, drawn from the seeded Rng stream `mock-hcs/faults`), `count` (fire at most N
 * times), `after` (let the first N matching calls through), `atMs` (active from that injected-clock time).
 * Every firing is recorded in the EventLog (source `fault`, type `fault.fired`, data.ruleId).
 */
import type { Rng } from '../../src/core/index.js';
import { HCS_OPERATIONS, type HcsService } from '../../src/core/hcs/index.js';
import { CloudError, Codes } from './errors.js';

export type FaultService = HcsService;

/**
 * Operations per service: the catalogue's names (src/core/hcs; lower camel
 * case like the SDK clients' methods), which are also the routes' (mock-hcs
 * registers every route from its catalogue entry, routes/operation.ts).
 */
export const FAULT_OPERATIONS: Record<FaultService, readonly string[]> = {
  ecs: HCS_OPERATIONS.ecs.map((o) => o.name),
  evs: HCS_OPERATIONS.evs.map((o) => o.name),
  vpc: HCS_OPERATIONS.vpc.map((o) => o.name),
  ims: HCS_OPERATIONS.ims.map((o) => o.name),
  iam: HCS_OPERATIONS.iam.map((o) => o.name),
};

/** Operations that start a job (the catalogue's `job`; latency defaults to making the job longer). */
export const JOB_OPERATIONS: ReadonlySet<string> = new Set(Object.values(HCS_OPERATIONS).flatMap((ops) => ops.filter((o) => o.job).map((o) => o.name)));

export type { QuotaResource } from './errors.js';
import { QUOTA_RESOURCES, type QuotaResource } from './errors.js';

export type FaultEffect =
  | { type: 'error'; status: number; code: string; message?: string }
  | { type: 'latency'; ms: number; mode?: 'job' | 'response' }
  | { type: 'jobFail'; errorCode?: string; failReason?: string }
  | { type: 'stuck' }
  | { type: 'timeout'; ms?: number; errorCode?: string; failReason?: string }
  | { type: 'partial'; status?: number; code?: string; message?: string }
  | { type: 'capacity'; flavor?: string; az?: string; message?: string }
  | { type: 'quota'; resource: QuotaResource }
  | { type: 'throttle'; perSecond: number; burst?: number }
  | { type: 'listLag'; ms: number };

export interface FaultMatch {
  /** Exact id of a resource the call touches (server, volume, job, subnet, image). */
  id?: string;
  /** Substring of the name of a resource the call touches (or creates). */
  name?: string;
  /** "key=value" or "key": a server tag or a server/volume metadata entry. */
  tag?: string;
}

export interface FaultRuleInput {
  service: FaultService;
  /** One of FAULT_OPERATIONS[service], or "*". */
  operation: string;
  match?: FaultMatch;
  effect: FaultEffect;
  probability?: number;
  count?: number;
  after?: number;
  atMs?: number;
  description?: string;
}

export interface FaultRule extends FaultRuleInput {
  id: string;
  /** Matching calls seen so far. */
  seen: number;
  /** Times the rule fired. */
  fired: number;
  /** `throttle`: the tokens left and when they were counted (injected-clock ms). */
  bucket?: { tokens: number; at: number };
}

/** What a call touches, for resource matching. */
export interface ResourceInfo {
  ids: string[];
  names: string[];
  tags: Record<string, string>[];
  flavor?: string;
  az?: string;
}

export interface FiredFault {
  rule: FaultRule;
  effect: FaultEffect;
}

/**
 * The `timeout` effect as ECS behaves (HCS-6): DetachServerVolume
 * (`DELETE /v1/{project_id}/cloudservers/{server_id}/detachvolume/{volume_id}`)
 * is asynchronous — it returns a job_id, and only the job status SUCCESS means
 * the disk is detached (ECS API reference, "Detaching an EVS Disk from an ECS",
 * support.huaweicloud.com/eu/api-ecs/ecs_02_0606.html). The job is INIT, then
 * RUNNING, and ends SUCCESS or FAIL with error_code and fail_reason ("Querying
 * Job Execution Status", support.huaweicloud.com/api-ecs/ecs_03_0702.html). A detach from a running
 * Linux ECS fails when the guest still has the disk mounted or in use ("you
 * need to ... run the umount command ... Otherwise, the detachment will fail",
 * support.huaweicloud.com/intl/tr-tr/api-ecs/ecs_03_0904.html), and the disk then stays attached (`in-use`). Public documents
 * give no figure for how long the job runs before it gives up, nor a code for
 * that failure: the testbed's defaults are 10 minutes and the stand-in
 * Ecs.0002 (mock-hcs/README.md lists stand-in codes).
 */
export const TIMEOUT_DEFAULTS = { ms: 10 * 60_000, errorCode: Codes.internal } as const;

/** Effect types (scenario validation suggests the nearest one for a misspelt type). */
export const FAULT_EFFECTS = ['error', 'latency', 'jobFail', 'stuck', 'timeout', 'partial', 'capacity', 'quota', 'throttle', 'listLag'] as const;
/** Operations a `listLag` effect applies to. */
export const LIST_LAG_OPERATIONS = new Set(['listServers']);
const EFFECTS = FAULT_EFFECTS;
const OPTS = new Set(['service', 'operation', 'match', 'effect', 'probability', 'count', 'after', 'atMs', 'description', 'id', 'seen', 'fired', 'bucket']);

function bad(path: string, reason: string): never {
  throw new CloudError(400, Codes.adminBadRequest, `Invalid fault rule: ${path} ${reason}`, ['HCS-6']);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optNum(o: Record<string, unknown>, k: string, path: string, min: number, max: number, integer: boolean): number | undefined {
  const v = o[k];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v))) bad(`${path}${k}`, `must be ${integer ? 'an integer' : 'a number'}`);
  if (v < min || v > max) bad(`${path}${k}`, `must be between ${min} and ${max}`);
  return v;
}

function optStr(o: Record<string, unknown>, k: string, path: string, max = 1024): string | undefined {
  const v = o[k];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0 || v.length > max) bad(`${path}${k}`, `must be a non-empty string of at most ${max} characters`);
  return v;
}

/** Validate a rule (from the in-process API or the admin API); throws a 400 CloudError naming the field. */
export function parseFaultRule(input: unknown): FaultRuleInput {
  if (!isObj(input)) bad('body', 'must be an object');
  for (const k of Object.keys(input)) if (!OPTS.has(k)) bad(k, `is not a known field (known: ${[...OPTS].filter((x) => !['id', 'seen', 'fired'].includes(x)).join(', ')})`);
  const service = input.service;
  if (typeof service !== 'string' || !Object.hasOwn(FAULT_OPERATIONS, service)) bad('service', `must be one of ${Object.keys(FAULT_OPERATIONS).join(', ')}`);
  const svc = service as FaultService;
  const operation = input.operation;
  if (typeof operation !== 'string' || (operation !== '*' && !FAULT_OPERATIONS[svc].includes(operation))) {
    bad('operation', `must be "*" or one of ${FAULT_OPERATIONS[svc].join(', ')} for service ${svc}`);
  }
  let match: FaultMatch | undefined;
  if (input.match !== undefined) {
    if (!isObj(input.match)) bad('match', 'must be an object');
    for (const k of Object.keys(input.match)) if (!['id', 'name', 'tag'].includes(k)) bad(`match.${k}`, 'is not a known field (known: id, name, tag)');
    match = {};
    const id = optStr(input.match, 'id', 'match.');
    const name = optStr(input.match, 'name', 'match.');
    const tag = optStr(input.match, 'tag', 'match.');
    if (id !== undefined) match.id = id;
    if (name !== undefined) match.name = name;
    if (tag !== undefined) match.tag = tag;
  }
  const e = input.effect;
  if (!isObj(e)) bad('effect', 'must be an object with a type');
  const type = e.type;
  if (typeof type !== 'string' || !(EFFECTS as readonly string[]).includes(type)) bad('effect.type', `must be one of ${EFFECTS.join(', ')}`);
  let effect: FaultEffect;
  const allow = (keys: string[]) => {
    for (const k of Object.keys(e)) if (k !== 'type' && !keys.includes(k)) bad(`effect.${k}`, `is not a field of a ${type} effect (fields: ${keys.join(', ') || 'none'})`);
  };
  switch (type) {
    case 'error': {
      allow(['status', 'code', 'message']);
      const status = optNum(e, 'status', 'effect.', 400, 599, true);
      if (status === undefined) bad('effect.status', 'is required (400..599)');
      const code = optStr(e, 'code', 'effect.', 64);
      if (code === undefined) bad('effect.code', 'is required (e.g. Ecs.0002)');
      const message = optStr(e, 'message', 'effect.');
      effect = { type, status, code, ...(message !== undefined ? { message } : {}) };
      break;
    }
    case 'latency': {
      allow(['ms', 'mode']);
      const ms = optNum(e, 'ms', 'effect.', 0, 7 * 24 * 3600_000, true);
      if (ms === undefined) bad('effect.ms', 'is required');
      if (e.mode !== undefined && e.mode !== 'job' && e.mode !== 'response') bad('effect.mode', 'must be "job" or "response"');
      effect = { type, ms, ...(e.mode !== undefined ? { mode: e.mode as 'job' | 'response' } : {}) };
      break;
    }
    case 'jobFail': {
      allow(['errorCode', 'failReason']);
      const errorCode = optStr(e, 'errorCode', 'effect.', 64);
      const failReason = optStr(e, 'failReason', 'effect.');
      effect = { type, ...(errorCode !== undefined ? { errorCode } : {}), ...(failReason !== undefined ? { failReason } : {}) };
      break;
    }
    case 'stuck':
      allow([]);
      effect = { type };
      break;
    case 'timeout': {
      allow(['ms', 'errorCode', 'failReason']);
      const ms = optNum(e, 'ms', 'effect.', 1, 7 * 24 * 3600_000, true);
      const errorCode = optStr(e, 'errorCode', 'effect.', 64);
      const failReason = optStr(e, 'failReason', 'effect.');
      effect = { type, ...(ms !== undefined ? { ms } : {}), ...(errorCode !== undefined ? { errorCode } : {}), ...(failReason !== undefined ? { failReason } : {}) };
      break;
    }
    case 'partial': {
      allow(['status', 'code', 'message']);
      const status = optNum(e, 'status', 'effect.', 500, 599, true);
      const code = optStr(e, 'code', 'effect.', 64);
      const message = optStr(e, 'message', 'effect.');
      effect = { type, ...(status !== undefined ? { status } : {}), ...(code !== undefined ? { code } : {}), ...(message !== undefined ? { message } : {}) };
      break;
    }
    case 'capacity': {
      allow(['flavor', 'az', 'message']);
      if (svc !== 'ecs' || (operation !== 'createServers' && operation !== '*')) bad('effect.type', 'capacity applies to ecs createServers');
      const flavor = optStr(e, 'flavor', 'effect.');
      const az = optStr(e, 'az', 'effect.');
      const message = optStr(e, 'message', 'effect.');
      effect = { type, ...(flavor !== undefined ? { flavor } : {}), ...(az !== undefined ? { az } : {}), ...(message !== undefined ? { message } : {}) };
      break;
    }
    case 'throttle': {
      allow(['perSecond', 'burst']);
      const perSecond = optNum(e, 'perSecond', 'effect.', 0.001, 1_000_000, false);
      if (perSecond === undefined) bad('effect.perSecond', 'is required (calls per second)');
      const burst = optNum(e, 'burst', 'effect.', 1, 1_000_000, true);
      effect = { type, perSecond, ...(burst !== undefined ? { burst } : {}) };
      break;
    }
    case 'listLag': {
      allow(['ms']);
      if (operation !== '*' && !LIST_LAG_OPERATIONS.has(operation)) bad('effect.type', `listLag applies to ${[...LIST_LAG_OPERATIONS].join(', ')}`);
      const ms = optNum(e, 'ms', 'effect.', 1, 7 * 24 * 3600_000, true);
      if (ms === undefined) bad('effect.ms', 'is required');
      effect = { type, ms };
      break;
    }
    default: {
      allow(['resource']);
      const resource = QUOTA_RESOURCES.find((r) => r === e.resource);
      if (resource === undefined) bad('effect.resource', `must be one of ${QUOTA_RESOURCES.join(', ')}`);
      effect = { type: 'quota', resource };
    }
  }
  if ((effect.type === 'jobFail' || effect.type === 'stuck' || effect.type === 'timeout') && operation !== '*' && !JOB_OPERATIONS.has(operation)) {
    bad('effect.type', `${effect.type} only applies to operations that start a job (${[...JOB_OPERATIONS].join(', ')})`);
  }
  const probability = optNum(input, 'probability', '', 0, 1, false);
  const count = optNum(input, 'count', '', 1, Number.MAX_SAFE_INTEGER, true);
  const after = optNum(input, 'after', '', 0, Number.MAX_SAFE_INTEGER, true);
  const atMs = optNum(input, 'atMs', '', 0, Number.MAX_SAFE_INTEGER, true);
  const description = optStr(input, 'description', '');
  return {
    service: svc,
    operation,
    ...(match ? { match } : {}),
    effect,
    ...(probability !== undefined ? { probability } : {}),
    ...(count !== undefined ? { count } : {}),
    ...(after !== undefined ? { after } : {}),
    ...(atMs !== undefined ? { atMs } : {}),
    ...(description !== undefined ? { description } : {}),
  };
}

function matches(m: FaultMatch | undefined, r: ResourceInfo): boolean {
  if (!m) return true;
  if (m.id !== undefined && !r.ids.includes(m.id)) return false;
  if (m.name !== undefined && !r.names.some((n) => n.includes(m.name!))) return false;
  if (m.tag !== undefined) {
    const i = m.tag.indexOf('=');
    const key = i < 0 ? m.tag : m.tag.slice(0, i);
    const value = i < 0 ? undefined : m.tag.slice(i + 1);
    if (!r.tags.some((t) => Object.prototype.hasOwnProperty.call(t, key) && (value === undefined || t[key] === value))) return false;
  }
  return true;
}

export class FaultRegistry {
  private rules: FaultRule[] = [];
  private seq = 0;
  private rng: Rng;

  constructor(private readonly parentRng: Rng) {
    this.rng = parentRng.fork('mock-hcs/faults');
  }

  add(input: unknown): string {
    const rule: FaultRule = { ...parseFaultRule(input), id: `fault-${++this.seq}`, seen: 0, fired: 0 };
    this.rules.push(rule);
    return rule.id;
  }

  list(): FaultRule[] {
    return this.rules.map((r) => structuredClone(r));
  }

  /** The first rule, in the order added, that `test` accepts: read in place, not copied (list() copies every rule). */
  find(test: (r: Readonly<FaultRule>) => boolean): Readonly<FaultRule> | undefined {
    return this.rules.find(test);
  }

  remove(id: string): boolean {
    const n = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    return this.rules.length !== n;
  }

  clear(): void {
    this.rules = [];
  }

  /** Back to a fresh registry: no rules, ids and the probability stream restart. */
  reset(): void {
    this.rules = [];
    this.seq = 0;
    this.rng = this.parentRng.fork('mock-hcs/faults');
  }

  get size(): number {
    return this.rules.length;
  }

  /** Rules that fire for this call, in the order they were added (counters updated). */
  evaluate(service: FaultService, operation: string, resource: ResourceInfo | (() => ResourceInfo), now: number): FiredFault[] {
    if (this.rules.length === 0) return [];
    const out: FiredFault[] = [];
    // What the call touches, worked out once and only for a rule that reads it (a resource match, a capacity rule).
    let info: ResourceInfo | undefined;
    const touched = (): ResourceInfo => (info ??= typeof resource === 'function' ? resource() : resource);
    for (const rule of this.rules) {
      if (rule.service !== service || (rule.operation !== '*' && rule.operation !== operation)) continue;
      if (rule.atMs !== undefined && now < rule.atMs) continue;
      if (rule.match && !matches(rule.match, touched())) continue;
      const e = rule.effect;
      if (e.type === 'capacity' && (operation !== 'createServers' || (e.flavor !== undefined && e.flavor !== touched().flavor) || (e.az !== undefined && e.az !== touched().az))) continue;
      if ((e.type === 'jobFail' || e.type === 'stuck' || e.type === 'timeout') && !JOB_OPERATIONS.has(operation)) continue;
      if (e.type === 'quota' && operation !== 'createServers' && operation !== 'createVolume') continue;
      if (e.type === 'listLag' && !LIST_LAG_OPERATIONS.has(operation)) continue;
      rule.seen++;
      if (e.type === 'throttle') {
        // Token bucket on the injected clock: a call that finds a token passes; one that finds none is throttled.
        const cap = e.burst ?? Math.max(1, Math.ceil(e.perSecond));
        const b = (rule.bucket ??= { tokens: cap, at: now });
        b.tokens = Math.min(cap, b.tokens + ((now - b.at) / 1000) * e.perSecond);
        b.at = now;
        if (b.tokens >= 1) {
          b.tokens -= 1;
          continue;
        }
      }
      if (rule.after !== undefined && rule.seen <= rule.after) continue;
      if (rule.count !== undefined && rule.fired >= rule.count) continue;
      // Draw only for probabilistic rules, so adding a certain rule does not shift other rules' draws.
      if (rule.probability !== undefined && rule.probability < 1 && !(this.rng.next() < rule.probability)) continue;
      rule.fired++;
      out.push({ rule, effect: e });
    }
    return out;
  }
}
