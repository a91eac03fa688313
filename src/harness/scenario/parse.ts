import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { formatDuration, parseDuration } from '../../core/clock.js';
import { errorMessage, InputError, inputErrorPrefix } from '../../core/errors.js';
import { RESOURCES } from '../../core/kube/resources.js';
import { tokenize } from '../kubectl/tokenize.js';
import { SPEC_RULES } from '../../core/rules.js';
import { FAULT_EFFECTS, FAULT_OPERATIONS, parseFaultRule } from '../../../mock-hcs/src/faults.js';
import { CHECKS } from './checks.js';
import { INVARIANT_RULES } from './invariants.js';
import { checkManifestPath } from './manifest-check.js';
import { didYouMean, nearest } from './suggest.js';
import { parseYamlFile, type FieldPath, type SourceDoc } from '../manifests/source.js';
import type { CheckSpec, Scenario, Step } from './types.js';
import { parseSchedule } from './schedule.js';
import { repoPath } from '../../core/repo.js';
import { readBundleFile } from '../capture/bundle-file.js';

/**
 * Largest virtual duration one step may take (`advance`, `wait.timeout`,
 * `crash.downFor`): the library's longest is 2h (a bring-up wait); a day
 * leaves room for any procedure while `advance: 876000h` (a century of 15 s
 * requeues, issue 24) is refused with the field named instead of running on.
 */
export const MAX_STEP_DURATION_MS = 24 * 3_600_000;

const RULE_IDS = SPEC_RULES.map((r) => r.id);
const STEP_ACTIONS = ['apply', 'kubectl', 'wait', 'expect', 'write', 'read', 'advance', 'fault', 'crash', 'edit', 'server'] as const;
type Action = (typeof STEP_ACTIONS)[number];
const STEP_COMMON = ['name', 'rules'];
/** Fields besides the action key, per action. */
const STEP_FIELDS: Record<Action, readonly string[]> = {
  apply: ['expectError'],
  kubectl: ['expectOutput', 'expectError', 'real'],
  wait: ['timeout'],
  expect: [],
  write: [],
  read: [],
  advance: [],
  fault: [],
  crash: [],
  edit: [],
  server: [],
};
const ALL_STEP_KEYS = [...new Set([...STEP_ACTIONS, ...STEP_COMMON, ...Object.values(STEP_FIELDS).flat()])];
const TOP_FIELDS = ['name', 'description', 'rules', 'seed', 'expectViolations', 'manifestPath', 'steps', 'schedule', 'from'];

/**
 * Controllers a `crash` step can name (the testbed's controller manager;
 * test/scenario/parse.test.ts checks this list against a live testbed), and the groups.
 */
export const CRASH_CONTROLLERS = [
  'capi-cluster', 'capi-machinedeployment', 'capi-machineset', 'capi-machine', 'capi-kubeadmconfig', 'capi-kubeadmcontrolplane',
  'hcscluster', 'hcscluster-workload', 'hcsmachineconfigpool', 'hcsmachine', 'apprelease', 'workload-system', 'guest',
  'cloud-node-lifecycle',
] as const;
export const CRASH_GROUPS = ['provider', 'capi', 'guest', 'all'] as const;

/** The library's shared manifests (`library:NAME` in an apply step) and the library itself (last place a relative path is looked up). */
export const LIBRARY_DIR = repoPath('scenarios');
export const LIBRARY_MANIFESTS = join(LIBRARY_DIR, 'manifests');

export interface LoadOptions {
  /** `--manifests DIR`: more places a relative manifest path is looked up (after the scenario's own manifestPath). */
  manifestDirs?: string[];
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every error of a scenario file at once (validate prints them all). The first one's file, line and field are this error's. */
export class ScenarioErrors extends InputError {
  /** `more`: errors found beyond MAX_COLLECTED_ERRORS, counted but not built (no message, no line lookup). */
  constructor(
    readonly errors: InputError[],
    readonly more = 0,
  ) {
    super(errors[0]!.message.slice(prefixLength(errors[0]!)), errors[0]!.file, errors[0]!.line, errors[0]!.field, errors[0]!.col);
    this.message = errors.map((e) => e.message).join('\n');
    this.name = 'ScenarioErrors';
  }
}

function prefixLength(e: InputError): number {
  const p = inputErrorPrefix(e.file, e.line, e.field, e.col);
  return p ? p.length + 2 : 0;
}

/** Thrown inside a field's parser after its error was recorded: skip the rest of that field. */
class Skip extends Error {}

/**
 * Errors a file's parse builds in full; past this many they are only counted
 * (ScenarioErrors.more): 100,000 unknown keys would otherwise cost a "did you
 * mean" search and an Error (with its stack) each. validate prints the first
 * 100 (src/harness/cli/main.ts) and the total.
 */
export const MAX_COLLECTED_ERRORS = 1000;

class Reader {
  readonly errors: InputError[] = [];
  /** Errors past MAX_COLLECTED_ERRORS: counted only. */
  dropped = 0;
  constructor(readonly src: SourceDoc) {}

  private full(): boolean {
    if (this.errors.length < MAX_COLLECTED_ERRORS) return false;
    this.dropped++;
    return true;
  }

  fail(path: FieldPath, reason: string): InputError {
    return this.src.error(path, reason);
  }

  /** Record an error and go on with the next field. */
  report(path: FieldPath, reason: string): void {
    if (!this.full()) this.errors.push(this.fail(path, reason));
  }

  /** Run a field's parser; its error is recorded and undefined returned, so every error of a file is found in one pass. */
  attempt<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      if (e instanceof ScenarioErrors) {
        this.errors.push(...e.errors);
        this.dropped += e.more;
      }
      else if (e instanceof InputError) this.errors.push(e);
      else if (!(e instanceof Skip)) throw e;
      return undefined;
    }
  }

  obj(v: unknown, path: FieldPath, what: string): Obj {
    if (!isObj(v)) throw this.fail(path, `must be a mapping (${what}), got ${describe(v)}`);
    return v;
  }

  str(v: unknown, path: FieldPath, opts: { optional?: boolean } = {}): string | undefined {
    if (v === undefined || v === null) {
      if (opts.optional) return undefined;
      throw this.fail(path, 'is required');
    }
    if (typeof v !== 'string' || v.trim() === '') throw this.fail(path, `must be a non-empty string, got ${describe(v)}`);
    return v;
  }

  absPath(v: unknown, path: FieldPath): string {
    const p = this.str(v, path)!;
    if (!p.startsWith('/')) throw this.fail(path, `must be an absolute path, got "${p}"${p.includes('/') || p.includes('.') ? ` (did you mean "/${p.replace(/^\.?\//, '')}"?)` : ''}`);
    return p;
  }

  duration(v: unknown, path: FieldPath): number {
    let ms: number;
    if (typeof v === 'number' && v >= 0) ms = v * 1000;
    else {
      const s = this.str(v, path)!;
      try {
        ms = parseDuration(s);
      } catch (e) {
        throw this.fail(path, (e as Error).message);
      }
    }
    if (!(ms <= MAX_STEP_DURATION_MS)) throw this.fail(path, `must be at most ${formatDuration(MAX_STEP_DURATION_MS)} of virtual time, got ${typeof v === 'number' ? `${v} (seconds)` : JSON.stringify(v)}: every periodic requeue and cloud poll runs through it, so a step of years would not end`);
    return ms;
  }

  rules(v: unknown, path: FieldPath, expectable?: readonly string[]): string[] {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw this.fail(path, 'must be a list of SPEC rule IDs such as DISK-3');
    const out: string[] = [];
    v.forEach((r, i) => {
      if (typeof r !== 'string' || !RULE_IDS.includes(r)) {
        this.report([...path, i], `"${String(r)}" is not a SPEC rule ID (e.g. DISK-3, POOL-2)${typeof r === 'string' && nearest(r, RULE_IDS) ? didYouMean(r, RULE_IDS) : ''}`);
      } else if (expectable && !expectable.includes(r)) {
        this.report([...path, i], `"${r}" cannot be expected: no continuous invariant checks it (expectable: ${expectable.join(', ')})`);
      } else out.push(r);
    });
    return out;
  }

  noUnknown(o: Obj, allowed: readonly string[], path: FieldPath): void {
    for (const k of Object.keys(o)) {
      if (!allowed.includes(k) && !this.full()) this.errors.push(this.fail([...path, k], `unknown field "${k}"${didYouMean(k, allowed, 'allowed')}`));
    }
  }
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `${typeof v} ${JSON.stringify(v)}`;
}

function parseChecks(r: Reader, v: unknown, path: FieldPath): CheckSpec[] {
  const list = Array.isArray(v) ? v : [v];
  if (list.length === 0) throw r.fail(path, 'needs at least one check');
  const known = Object.keys(CHECKS);
  const out: CheckSpec[] = [];
  list.forEach((c, i) => {
    const p = Array.isArray(v) ? [...path, i] : path;
    const check = r.attempt((): CheckSpec => {
      const o = r.obj(c, p, `a check such as {machines: {phase: Running, count: 3}}; known checks: ${known.join(', ')}`);
      const keys = Object.keys(o);
      if (keys.length !== 1) throw r.fail(p, `a check has exactly one key (the check type), got ${keys.length ? keys.join(', ') : 'none'}`);
      const type = keys[0]!;
      const def = CHECKS[type];
      if (!def) throw r.fail([...p, type], `unknown check "${type}"${didYouMean(type, known)}`);
      const params = o[type] === null || o[type] === undefined ? {} : r.obj(o[type], [...p, type], `parameters of ${type}`);
      for (const [name, value] of Object.entries(params)) {
        const spec = def.params[name];
        const at = [...p, type, name];
        if (!spec) {
          r.report(at, `unknown parameter "${name}" of check ${type}${didYouMean(name, Object.keys(def.params), 'allowed')}`);
          continue;
        }
        const ok =
          spec.type === 'string' ? typeof value === 'string' :
          spec.type === 'number' ? typeof value === 'number' && Number.isFinite(value) :
          spec.type === 'boolean' ? typeof value === 'boolean' :
          spec.type === 'scalar' ? ['string', 'number', 'boolean'].includes(typeof value) :
          true;
        if (!ok) r.report(at, `must be a ${spec.type}, got ${describe(value)}`);
        else if (spec.values && !spec.values.includes(value as string)) r.report(at, `"${String(value)}" is not a ${name} of check ${type}${didYouMean(String(value), spec.values, 'one of')}`);
        else if (spec.absolute && !(value as string).startsWith('/')) r.report(at, `must be an absolute path, got "${String(value)}"`);
        else if (type === 'events' && name === 'rule' && !RULE_IDS.includes(value as string)) r.report(at, `"${String(value)}" is not a SPEC rule ID${nearest(String(value), RULE_IDS) ? didYouMean(String(value), RULE_IDS) : ''}`);
      }
      for (const [name, spec] of Object.entries(def.params)) {
        if (spec.required && params[name] === undefined) r.report([...p, type], `check ${type} needs "${name}"`);
      }
      return { type, params, line: r.src.lineOf([...p, type]) };
    });
    if (check) out.push(check);
  });
  return out;
}

/** `--manifests` as worker processes (run --jobs, explore) inherit it: HCS_TESTBED_MANIFESTS, directories separated by ":". */
function envManifestDirs(): string[] {
  return (process.env.HCS_TESTBED_MANIFESTS ?? '').split(':').filter(Boolean);
}

/** Where a relative manifest path of an apply step is looked up, in order. */
function searchDirs(scenarioDir: string, manifestPath: string[], opts: LoadOptions): string[] {
  return [...new Set([scenarioDir, ...manifestPath.map((d) => resolve(scenarioDir, d)), ...(opts.manifestDirs ?? []).map((d) => resolve(d)), LIBRARY_DIR])];
}

/** Resolve a manifest path of an apply step: `library:NAME`, absolute, or relative along the search path. */
function resolveManifest(p: string, dirs: string[]): { path: string } | { error: string } {
  if (p.startsWith('library:')) {
    const rest = p.slice('library:'.length).replace(/^\/+/, '');
    const full = join(LIBRARY_MANIFESTS, rest);
    return existsSync(full) ? { path: full } : { error: `library manifest "${rest}" not found in ${LIBRARY_MANIFESTS}` };
  }
  if (isAbsolute(p)) return existsSync(p) ? { path: p } : { error: `manifest "${p}" not found` };
  for (const d of dirs) {
    const full = resolve(d, p);
    if (existsSync(full)) return { path: full };
  }
  return { error: `manifest "${p}" not found (looked in ${dirs.join(', ')}; the library's shared manifests are reachable as library:NAME, e.g. library:worker-cluster)` };
}

/** Load and validate a scenario file. Every error names the file, the line and the field; all of them are reported at once (ScenarioErrors). */
export function loadScenario(file: string, text?: string, opts: LoadOptions = {}): Scenario {
  const src = parseYamlFile(file, text);
  const r = new Reader(src);
  const top = r.obj(src.value(), [], 'a scenario with name, seed and steps');
  r.noUnknown(top, TOP_FIELDS, []);
  const name = r.attempt(() => {
    const n = r.str(top.name, ['name'])!;
    if (!/^[a-z0-9][a-z0-9-]*$/.test(n)) throw r.fail(['name'], `"${n}" must be lowercase letters, digits and dashes`);
    return n;
  }) ?? 'unnamed';
  const description = r.attempt(() => r.str(top.description, ['description'], { optional: true })) ?? '';
  const rules = r.attempt(() => r.rules(top.rules, ['rules'])) ?? [];
  const expectViolations = r.attempt(() => r.rules(top.expectViolations, ['expectViolations'], INVARIANT_RULES)) ?? [];
  const seed = r.attempt(() => {
    const s = top.seed ?? 1;
    if (typeof s !== 'number' || !Number.isInteger(s)) throw r.fail(['seed'], `must be an integer, got ${describe(s)}`);
    return s;
  }) ?? 1;
  const base = dirname(resolve(file));
  const manifestPath = r.attempt(() => {
    const m = top.manifestPath;
    if (m === undefined) return [];
    const list = Array.isArray(m) ? m : [m];
    return list.map((d, i) => {
      const at = Array.isArray(m) ? ['manifestPath', i] : ['manifestPath'];
      const dir = r.str(d, at)!;
      const full = dir.startsWith('library:') ? join(LIBRARY_MANIFESTS, dir.slice(8)) : resolve(base, dir);
      if (!existsSync(full)) throw r.fail(at, `directory "${dir}" not found (${full})`);
      return full;
    });
  }) ?? [];
  const dirs = searchDirs(base, manifestPath, { manifestDirs: opts.manifestDirs ?? envManifestDirs() });
  const from = top.from === undefined ? undefined : r.attempt(() => {
    const f = r.str(top.from, ['from'])!;
    const full = resolve(base, f);
    if (!existsSync(full)) throw r.fail(['from'], `bundle "${f}" not found (${full}); capture one with hcs-testbed capture (docs/incident.md)`);
    try {
      readBundleFile(full);
    } catch (e) {
      throw r.fail(['from'], errorMessage(e));
    }
    return full;
  });
  if (!Array.isArray(top.steps) || top.steps.length === 0) {
    r.report(['steps'], 'must be a non-empty list of steps');
    throw new ScenarioErrors(r.errors, r.dropped);
  }
  const steps: Step[] = [];
  top.steps.forEach((raw, index) => {
    const step = r.attempt(() => parseStep(r, raw, index, file, base, dirs));
    if (step) steps.push(step);
  });
  const schedule = top.schedule === undefined ? undefined : r.attempt(() => parseSchedule(top.schedule, (p, reason) => r.fail(p, reason)));
  if (r.errors.length) throw new ScenarioErrors(r.errors, r.dropped);
  return { file, name, description, rules, seed, expectViolations, steps, ...(schedule ? { schedule } : {}), ...(from ? { from } : {}) };
}

function parseStep(r: Reader, raw: unknown, index: number, file: string, base: string, dirs: string[]): Step {
  const path: FieldPath = ['steps', index];
  const o = r.obj(raw, path, `a step: one of ${STEP_ACTIONS.join(', ')}`);
  const keys = Object.keys(o);
  const unknown = keys.filter((k) => !ALL_STEP_KEYS.includes(k));
  for (const k of unknown) r.report([...path, k], `unknown field "${k}"${didYouMean(k, ALL_STEP_KEYS, 'step fields')}`);
  const actions = keys.filter((k): k is Action => (STEP_ACTIONS as readonly string[]).includes(k));
  if (actions.length === 0) {
    if (unknown.some((k) => nearest(k, STEP_ACTIONS))) throw new Skip();
    throw r.fail(path, `step has no action; use one of ${STEP_ACTIONS.join(', ')}`);
  }
  if (actions.length > 1) throw r.fail(path, `step has several actions (${actions.join(', ')}); use one per step`);
  const action = actions[0]!;
  for (const k of keys) {
    if (k === action || STEP_COMMON.includes(k) || !ALL_STEP_KEYS.includes(k) || STEP_FIELDS[action].includes(k)) continue;
    r.report([...path, k], `field "${k}" does not belong to a ${action} step (${action} takes: ${[action, ...STEP_FIELDS[action], ...STEP_COMMON].join(', ')})`);
  }
  const common = {
    index: index + 1,
    line: r.src.lineOf(path),
    ...(o.name !== undefined ? { name: r.attempt(() => r.str(o.name, [...path, 'name'])) ?? '' } : {}),
    ...(o.rules !== undefined ? { rules: r.attempt(() => r.rules(o.rules, [...path, 'rules'])) ?? [] } : {}),
  };
  switch (action) {
    case 'apply': {
      const v = o.apply;
      const items = Array.isArray(v) ? v : [v];
      const files: string[] = [];
      const inline: unknown[] = [];
      const expectError = r.attempt(() => r.str(o.expectError, [...path, 'expectError'], { optional: true }));
      items.forEach((it, i) => {
        const p = Array.isArray(v) ? [...path, 'apply', i] : [...path, 'apply'];
        if (typeof it === 'string') {
          const res = resolveManifest(it, dirs);
          if ('error' in res) return r.report(p, res.error);
          files.push(res.path);
          // A rejection the step expects is checked when it runs; otherwise what run would refuse is refused now.
          if (!expectError) r.errors.push(...checkManifestPath(res.path));
        } else if (isObj(it)) inline.push(it);
        else r.report(p, `must be a manifest file path or an inline manifest, got ${describe(it)}`);
      });
      return { kind: 'apply', ...common, files, inline, ...(expectError ? { expectError } : {}) };
    }
    case 'kubectl': {
      if (o.real !== undefined && typeof o.real !== 'boolean') r.report([...path, 'real'], 'must be true or false');
      const command = r.str(o.kubectl, [...path, 'kubectl'])!;
      if (!/^\s*kubectl\s/.test(command)) throw r.fail([...path, 'kubectl'], 'must start with "kubectl " (the command as the documents write it)');
      let expectOutput: string[] | undefined;
      if (o.expectOutput !== undefined) {
        const eo = o.expectOutput;
        const arr = Array.isArray(eo) ? eo : [eo];
        expectOutput = arr.map((s, i) => r.attempt(() => r.str(s, [...path, 'expectOutput', ...(Array.isArray(eo) ? [i] : [])])) ?? '');
      }
      const expectError = r.attempt(() => r.str(o.expectError, [...path, 'expectError'], { optional: true }));
      if (!expectError) checkKubectlFiles(r, command, base, [...path, 'kubectl']);
      return { kind: 'kubectl', ...common, command, ...(o.real ? { real: true } : {}), ...(expectOutput ? { expectOutput } : {}), ...(expectError ? { expectError } : {}) };
    }
    case 'wait': {
      const checks = r.attempt(() => parseChecks(r, o.wait, [...path, 'wait'])) ?? [];
      if (o.timeout === undefined) throw r.fail([...path, 'timeout'], 'is required for wait (virtual time, e.g. 30m)');
      const timeoutMs = r.duration(o.timeout, [...path, 'timeout']);
      return { kind: 'wait', ...common, checks, timeoutMs };
    }
    case 'expect':
      return { kind: 'expect', ...common, checks: parseChecks(r, o.expect, [...path, 'expect']) };
    case 'write': {
      const w = r.obj(o.write, [...path, 'write'], 'write: {hostnames: [...], path, content}');
      r.noUnknown(w, ['hostnames', 'hostname', 'path', 'content'], [...path, 'write']);
      const hostnames = w.hostname !== undefined ? [r.str(w.hostname, [...path, 'write', 'hostname'])!] : Array.isArray(w.hostnames) ? w.hostnames.map((h, i) => r.str(h, [...path, 'write', 'hostnames', i])!) : undefined;
      if (!hostnames?.length) r.report([...path, 'write', 'hostnames'], 'is required (a list of node hostnames, or use hostname)');
      const p = r.attempt(() => r.absPath(w.path, [...path, 'write', 'path']));
      const content = r.attempt(() => r.str(w.content, [...path, 'write', 'content']));
      if (!hostnames?.length || p === undefined || content === undefined) throw new Skip();
      return { kind: 'write', ...common, hostnames, path: p, content };
    }
    case 'fault':
      return { kind: 'fault', ...common, action: parseFault(r, o.fault, [...path, 'fault']) };
    case 'crash': {
      const c = r.obj(o.crash, [...path, 'crash'], 'crash: {controllers: [provider], downFor: 30s}');
      r.noUnknown(c, ['controllers', 'downFor'], [...path, 'crash']);
      const list = typeof c.controllers === 'string' ? [c.controllers] : c.controllers;
      if (!Array.isArray(list) || list.length === 0) throw r.fail([...path, 'crash', 'controllers'], 'is required: controller names or provider, capi, guest, all');
      const known = [...CRASH_CONTROLLERS, ...CRASH_GROUPS] as string[];
      const controllers = list.map((x, i) => {
        const n = r.str(x, [...path, 'crash', 'controllers', i])!;
        if (!known.includes(n)) r.report([...path, 'crash', 'controllers', i], `unknown controller "${n}"${didYouMean(n, known)}`);
        return n;
      });
      const downForMs = c.downFor === undefined ? 0 : r.duration(c.downFor, [...path, 'crash', 'downFor']);
      return { kind: 'crash', ...common, controllers, downForMs };
    }
    case 'edit': {
      const e = r.obj(o.edit, [...path, 'edit'], 'edit: {kind, name, namespace, set: {field.path: value}}');
      r.noUnknown(e, ['kind', 'name', 'namespace', 'set'], [...path, 'edit']);
      const kind = r.str(e.kind, [...path, 'edit', 'kind'])!;
      const kinds = RESOURCES.map((x) => x.kind);
      if (!kinds.includes(kind)) r.report([...path, 'edit', 'kind'], `unknown kind "${kind}"${didYouMean(kind, kinds)}`);
      const name = r.str(e.name, [...path, 'edit', 'name'])!;
      const namespace = r.str(e.namespace, [...path, 'edit', 'namespace'], { optional: true }) ?? 'cpaas-system';
      const set = r.obj(e.set, [...path, 'edit', 'set'], 'field paths to new values');
      if (Object.keys(set).length === 0) throw r.fail([...path, 'edit', 'set'], 'needs at least one field to change');
      return { kind: 'edit', ...common, target: { kind, name, namespace }, set };
    }
    case 'read': {
      const rd = r.obj(o.read, [...path, 'read'], 'read: {hostname, path, content}');
      r.noUnknown(rd, ['hostname', 'path', 'content', 'absent'], [...path, 'read']);
      const hostname = r.attempt(() => r.str(rd.hostname, [...path, 'read', 'hostname']));
      const p = r.attempt(() => r.absPath(rd.path, [...path, 'read', 'path']));
      if (rd.absent !== undefined && typeof rd.absent !== 'boolean') r.report([...path, 'read', 'absent'], 'must be true or false');
      if (rd.content === undefined && rd.absent !== true) r.report([...path, 'read'], 'needs content (expected text) or absent: true');
      if (hostname === undefined || p === undefined) throw new Skip();
      const content = rd.content === undefined ? undefined : String(rd.content);
      return { kind: 'read', ...common, hostname, path: p, ...(content !== undefined ? { content } : {}), ...(rd.absent ? { absent: true } : {}) };
    }
    case 'advance':
      return { kind: 'advance', ...common, ms: r.duration(o.advance, [...path, 'advance']) };
    case 'server': {
      const c = r.obj(o.server, [...path, 'server'], 'server: {hostname: demo-worker-1, action: stop}');
      r.noUnknown(c, ['hostname', 'action'], [...path, 'server']);
      const hostname = r.str(c.hostname, [...path, 'server', 'hostname']);
      if (!hostname) throw r.fail([...path, 'server', 'hostname'], 'is required: the pool hostname whose server the action is for');
      if (c.action !== 'stop' && c.action !== 'start') throw r.fail([...path, 'server', 'action'], 'must be stop or start');
      return { kind: 'server', ...common, hostname, action: c.action };
    }
  }
}

/**
 * The cloud's "X is not a field of a timeout effect (fields: ms, errorCode)" /
 * "is not a known field (known: ...)" with a "did you mean" for a misspelt field.
 */
function withSuggestion(field: string, reason: string): string {
  const m = /^(is not a (?:field of an? \w+ effect|known field)) \((?:fields|known): ([^)]*)\)$/.exec(reason);
  if (!m) return reason;
  const known = m[2]!.split(',').map((x) => x.trim()).filter((x) => x && x !== 'none');
  return known.length ? `${m[1]}${didYouMean(field, known, 'fields')}` : reason;
}

/** A fault rule, checked as the fake cloud will check it (HCS-6), with suggestions for misspelt services, operations and effects. */
function parseFault(r: Reader, v: unknown, path: FieldPath): { add: Record<string, unknown> } | { clear: true } | { release: string | true } {
  const f = r.obj(v, path, 'a mock-hcs fault rule {service, operation, effect, ...}, or {clear: true}, or {release: stuck}');
  if ('clear' in f) {
    if (f.clear !== true || Object.keys(f).length !== 1) throw r.fail([...path, 'clear'], 'use fault: {clear: true} alone');
    return { clear: true };
  }
  if ('release' in f) {
    if (Object.keys(f).length !== 1 || (f.release !== true && typeof f.release !== 'string')) throw r.fail([...path, 'release'], 'use fault: {release: true} or {release: <resource id>} alone');
    return { release: f.release as string | true };
  }
  let bad = false;
  for (const k of ['service', 'operation', 'effect']) {
    if (f[k] === undefined) {
      r.report([...path, k], 'is required in a fault rule (see docs/scenarios.md)');
      bad = true;
    }
  }
  const services = Object.keys(FAULT_OPERATIONS);
  if (typeof f.service === 'string' && !services.includes(f.service)) {
    r.report([...path, 'service'], `unknown cloud service "${f.service}"${didYouMean(f.service, services)}`);
    bad = true;
  } else if (typeof f.service === 'string' && typeof f.operation === 'string' && f.operation !== '*') {
    const ops = FAULT_OPERATIONS[f.service as keyof typeof FAULT_OPERATIONS];
    if (!ops.includes(f.operation)) {
      r.report([...path, 'operation'], `unknown ${f.service} operation "${f.operation}"${didYouMean(f.operation, ['*', ...ops])}`);
      bad = true;
    }
  }
  if (isObj(f.effect) && typeof f.effect.type === 'string' && !(FAULT_EFFECTS as readonly string[]).includes(f.effect.type)) {
    r.report([...path, 'effect', 'type'], `unknown fault effect "${f.effect.type}"${didYouMean(f.effect.type, FAULT_EFFECTS)}`);
    bad = true;
  }
  if (bad) throw new Skip();
  try {
    parseFaultRule(f);
  } catch (e) {
    // "Invalid fault rule: effect.ms must be ..." -> point at that field.
    const m = /^Invalid fault rule: (\S+) (.*)$/s.exec(errorMessage(e));
    const field = m?.[1] && m[1] !== 'body' ? m[1].split('.') : [];
    throw r.fail([...path, ...field], m ? `${withSuggestion(field.at(-1) ?? '', m[2]!)} (HCS-6)` : errorMessage(e));
  }
  return { add: f };
}

/** `kubectl apply -f PATH` (relative to the scenario's directory, as the built-in kubectl resolves it): the manifests must exist and be valid. */
function checkKubectlFiles(r: Reader, command: string, base: string, path: FieldPath): void {
  let args: string[];
  try {
    args = tokenize(command.replace(/\\\n/g, ' '));
  } catch {
    return; // the interpreter reports its own syntax errors when the step runs
  }
  if (args[1] !== 'apply') return;
  for (let i = 2; i < args.length; i++) {
    const a = args[i]!;
    const f = a === '-f' || a === '--filename' ? args[i + 1] : a.startsWith('--filename=') ? a.slice(11) : a.startsWith('-f') && a.length > 2 ? a.slice(2) : undefined;
    if (f === undefined || f === '-') continue;
    const full = isAbsolute(f) ? f : resolve(base, f);
    if (!existsSync(full)) r.report(path, `kubectl apply -f ${f}: no such file or directory (${full}; kubectl resolves -f relative to the scenario's directory)`);
    else r.errors.push(...checkManifestPath(full));
  }
}
