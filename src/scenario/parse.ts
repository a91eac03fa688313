import { dirname, resolve } from 'node:path';
import { parseDuration } from '../core/clock.js';
import type { InputError } from '../core/errors.js';
import { CHECKS } from './checks.js';
import { parseYamlFile, type FieldPath, type SourceDoc } from '../manifests/source.js';
import type { CheckSpec, Scenario, Step } from './types.js';
import { parseSchedule } from '../explore/schedule.js';

const RULE_ID = /^(NET|POOL|DISK|TPL|BOOT|MD|KCP|UPG|OVN|RB|OPS|HCS)-\d+$/;
const STEP_ACTIONS = ['apply', 'kubectl', 'wait', 'expect', 'write', 'read', 'advance', 'fault', 'crash', 'edit'] as const;
const STEP_COMMON = ['name', 'rules'];

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class Reader {
  constructor(readonly src: SourceDoc) {}

  fail(path: FieldPath, reason: string): InputError {
    return this.src.error(path, reason);
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

  duration(v: unknown, path: FieldPath): number {
    if (typeof v === 'number' && v >= 0) return v * 1000;
    const s = this.str(v, path)!;
    try {
      return parseDuration(s);
    } catch (e) {
      throw this.fail(path, (e as Error).message);
    }
  }

  rules(v: unknown, path: FieldPath): string[] {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw this.fail(path, 'must be a list of SPEC rule IDs such as DISK-3');
    return v.map((r, i) => {
      if (typeof r !== 'string' || !RULE_ID.test(r)) throw this.fail([...path, i], `"${String(r)}" is not a SPEC rule ID (e.g. DISK-3, POOL-2)`);
      return r;
    });
  }

  noUnknown(o: Obj, allowed: readonly string[], path: FieldPath): void {
    for (const k of Object.keys(o)) {
      if (!allowed.includes(k)) throw this.fail([...path, k], `unknown field "${k}" (allowed: ${allowed.join(', ')})`);
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
  return list.map((c, i) => {
    const p = Array.isArray(v) ? [...path, i] : path;
    const o = r.obj(c, p, `a check such as {machines: {phase: Running, count: 3}}; known checks: ${Object.keys(CHECKS).join(', ')}`);
    const keys = Object.keys(o);
    if (keys.length !== 1) throw r.fail(p, `a check has exactly one key (the check type), got ${keys.length ? keys.join(', ') : 'none'}`);
    const type = keys[0]!;
    const def = CHECKS[type];
    if (!def) throw r.fail([...p, type], `unknown check "${type}" (known: ${Object.keys(CHECKS).join(', ')})`);
    const params = o[type] === null || o[type] === undefined ? {} : r.obj(o[type], [...p, type], `parameters of ${type}`);
    for (const [name, value] of Object.entries(params)) {
      const spec = def.params[name];
      if (!spec) throw r.fail([...p, type, name], `unknown parameter "${name}" of check ${type} (allowed: ${Object.keys(def.params).join(', ')})`);
      const ok =
        spec.type === 'string' ? typeof value === 'string' :
        spec.type === 'number' ? typeof value === 'number' && Number.isFinite(value) :
        spec.type === 'boolean' ? typeof value === 'boolean' :
        spec.type === 'scalar' ? ['string', 'number', 'boolean'].includes(typeof value) :
        true;
      if (!ok) throw r.fail([...p, type, name], `must be a ${spec.type}, got ${describe(value)}`);
    }
    for (const [name, spec] of Object.entries(def.params)) {
      if (spec.required && params[name] === undefined) throw r.fail([...p, type], `check ${type} needs "${name}"`);
    }
    return { type, params, line: r.src.lineOf([...p, type]) };
  });
}

/** Load and validate a scenario file. Errors name the file, the line and the field. */
export function loadScenario(file: string, text?: string): Scenario {
  const src = parseYamlFile(file, text);
  const r = new Reader(src);
  const top = r.obj(src.value(), [], 'a scenario with name, seed and steps');
  r.noUnknown(top, ['name', 'description', 'rules', 'seed', 'expectViolations', 'steps', 'schedule'], []);
  const name = r.str(top.name, ['name'])!;
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) throw r.fail(['name'], `"${name}" must be lowercase letters, digits and dashes`);
  const description = r.str(top.description, ['description'], { optional: true }) ?? '';
  const rules = r.rules(top.rules, ['rules']);
  const expectViolations = r.rules(top.expectViolations, ['expectViolations']);
  const seed = top.seed ?? 1;
  if (typeof seed !== 'number' || !Number.isInteger(seed)) throw r.fail(['seed'], `must be an integer, got ${describe(seed)}`);
  if (!Array.isArray(top.steps) || top.steps.length === 0) throw r.fail(['steps'], 'must be a non-empty list of steps');
  const base = dirname(resolve(file));
  const steps: Step[] = top.steps.map((raw, index): Step => {
    const path: FieldPath = ['steps', index];
    const o = r.obj(raw, path, `a step: one of ${STEP_ACTIONS.join(', ')}`);
    const actions = Object.keys(o).filter((k) => !STEP_COMMON.includes(k) && !['expectError', 'expectOutput', 'timeout', 'content', 'path', 'hostnames', 'hostname', 'real'].includes(k));
    const action = actions[0];
    if (actions.length !== 1 || !(STEP_ACTIONS as readonly string[]).includes(action!)) {
      throw r.fail(path, actions.length === 0
        ? `step has no action; use one of ${STEP_ACTIONS.join(', ')}`
        : actions.length > 1 ? `step has several actions (${actions.join(', ')}); use one per step`
        : `unknown step action "${action}" (known: ${STEP_ACTIONS.join(', ')})`);
    }
    const common = {
      index: index + 1,
      line: src.lineOf(path),
      ...(o.name !== undefined ? { name: r.str(o.name, [...path, 'name']) } : {}),
      ...(o.rules !== undefined ? { rules: r.rules(o.rules, [...path, 'rules']) } : {}),
    };
    switch (action) {
      case 'apply': {
        r.noUnknown(o, [...STEP_COMMON, 'apply', 'expectError'], path);
        const v = o.apply;
        const items = Array.isArray(v) ? v : [v];
        const files: string[] = [];
        const inline: unknown[] = [];
        items.forEach((it, i) => {
          const p = Array.isArray(v) ? [...path, 'apply', i] : [...path, 'apply'];
          if (typeof it === 'string') files.push(resolve(base, it));
          else if (isObj(it)) inline.push(it);
          else throw r.fail(p, `must be a manifest file path or an inline manifest, got ${describe(it)}`);
        });
        const expectError = r.str(o.expectError, [...path, 'expectError'], { optional: true });
        return { kind: 'apply', ...common, files, inline, ...(expectError ? { expectError } : {}) };
      }
      case 'kubectl': {
        r.noUnknown(o, [...STEP_COMMON, 'kubectl', 'expectOutput', 'expectError', 'real'], path);
        if (o.real !== undefined && typeof o.real !== 'boolean') throw r.fail([...path, 'real'], 'must be true or false');
        const command = r.str(o.kubectl, [...path, 'kubectl'])!;
        if (!/^\s*kubectl\s/.test(command)) throw r.fail([...path, 'kubectl'], 'must start with "kubectl " (the command as the documents write it)');
        let expectOutput: string[] | undefined;
        if (o.expectOutput !== undefined) {
          const eo = o.expectOutput;
          const arr = Array.isArray(eo) ? eo : [eo];
          expectOutput = arr.map((s, i) => r.str(s, [...path, 'expectOutput', ...(Array.isArray(eo) ? [i] : [])])!);
        }
        const expectError = r.str(o.expectError, [...path, 'expectError'], { optional: true });
        return { kind: 'kubectl', ...common, command, ...(o.real ? { real: true } : {}), ...(expectOutput ? { expectOutput } : {}), ...(expectError ? { expectError } : {}) };
      }
      case 'wait': {
        r.noUnknown(o, [...STEP_COMMON, 'wait', 'timeout'], path);
        const checks = parseChecks(r, o.wait, [...path, 'wait']);
        if (o.timeout === undefined) throw r.fail([...path, 'timeout'], 'is required for wait (virtual time, e.g. 30m)');
        const timeoutMs = r.duration(o.timeout, [...path, 'timeout']);
        return { kind: 'wait', ...common, checks, timeoutMs };
      }
      case 'expect': {
        r.noUnknown(o, [...STEP_COMMON, 'expect'], path);
        return { kind: 'expect', ...common, checks: parseChecks(r, o.expect, [...path, 'expect']) };
      }
      case 'write': {
        r.noUnknown(o, [...STEP_COMMON, 'write'], path);
        const w = r.obj(o.write, [...path, 'write'], 'write: {hostnames: [...], path, content}');
        r.noUnknown(w, ['hostnames', 'hostname', 'path', 'content'], [...path, 'write']);
        const hostnames = w.hostname !== undefined ? [r.str(w.hostname, [...path, 'write', 'hostname'])!] : Array.isArray(w.hostnames) ? w.hostnames.map((h, i) => r.str(h, [...path, 'write', 'hostnames', i])!) : undefined;
        if (!hostnames?.length) throw r.fail([...path, 'write', 'hostnames'], 'is required (a list of node hostnames, or use hostname)');
        const p = r.str(w.path, [...path, 'write', 'path'])!;
        if (!p.startsWith('/')) throw r.fail([...path, 'write', 'path'], `must be an absolute path, got "${p}"`);
        const content = r.str(w.content, [...path, 'write', 'content'])!;
        return { kind: 'write', ...common, hostnames, path: p, content };
      }
      case 'fault': {
        r.noUnknown(o, [...STEP_COMMON, 'fault'], path);
        const f = r.obj(o.fault, [...path, 'fault'], 'a mock-hcs fault rule {service, operation, effect, ...}, or {clear: true}, or {release: stuck}');
        if ('clear' in f) {
          if (f.clear !== true || Object.keys(f).length !== 1) throw r.fail([...path, 'fault', 'clear'], 'use fault: {clear: true} alone');
          return { kind: 'fault', ...common, action: { clear: true } };
        }
        if ('release' in f) {
          if (Object.keys(f).length !== 1 || (f.release !== true && typeof f.release !== 'string')) throw r.fail([...path, 'fault', 'release'], 'use fault: {release: true} or {release: <resource id>} alone');
          return { kind: 'fault', ...common, action: { release: f.release as string | true } };
        }
        for (const k of ['service', 'operation', 'effect']) if (f[k] === undefined) throw r.fail([...path, 'fault', k], 'is required in a fault rule (see docs/scenarios.md)');
        return { kind: 'fault', ...common, action: { add: f } };
      }
      case 'crash': {
        r.noUnknown(o, [...STEP_COMMON, 'crash'], path);
        const c = r.obj(o.crash, [...path, 'crash'], 'crash: {controllers: [provider], downFor: 30s}');
        r.noUnknown(c, ['controllers', 'downFor'], [...path, 'crash']);
        const list = typeof c.controllers === 'string' ? [c.controllers] : c.controllers;
        if (!Array.isArray(list) || list.length === 0) throw r.fail([...path, 'crash', 'controllers'], 'is required: controller names or provider, capi, guest, all');
        const controllers = list.map((x, i) => r.str(x, [...path, 'crash', 'controllers', i])!);
        const downForMs = c.downFor === undefined ? 0 : r.duration(c.downFor, [...path, 'crash', 'downFor']);
        return { kind: 'crash', ...common, controllers, downForMs };
      }
      case 'edit': {
        r.noUnknown(o, [...STEP_COMMON, 'edit'], path);
        const e = r.obj(o.edit, [...path, 'edit'], 'edit: {kind, name, namespace, set: {field.path: value}}');
        r.noUnknown(e, ['kind', 'name', 'namespace', 'set'], [...path, 'edit']);
        const kind = r.str(e.kind, [...path, 'edit', 'kind'])!;
        const name = r.str(e.name, [...path, 'edit', 'name'])!;
        const namespace = r.str(e.namespace, [...path, 'edit', 'namespace'], { optional: true }) ?? 'cpaas-system';
        const set = r.obj(e.set, [...path, 'edit', 'set'], 'field paths to new values');
        if (Object.keys(set).length === 0) throw r.fail([...path, 'edit', 'set'], 'needs at least one field to change');
        return { kind: 'edit', ...common, target: { kind, name, namespace }, set };
      }
      case 'read': {
        r.noUnknown(o, [...STEP_COMMON, 'read'], path);
        const rd = r.obj(o.read, [...path, 'read'], 'read: {hostname, path, content}');
        r.noUnknown(rd, ['hostname', 'path', 'content', 'absent'], [...path, 'read']);
        const hostname = r.str(rd.hostname, [...path, 'read', 'hostname'])!;
        const p = r.str(rd.path, [...path, 'read', 'path'])!;
        if (rd.absent !== undefined && typeof rd.absent !== 'boolean') throw r.fail([...path, 'read', 'absent'], 'must be true or false');
        if (rd.content === undefined && rd.absent !== true) throw r.fail([...path, 'read'], 'needs content (expected text) or absent: true');
        const content = rd.content === undefined ? undefined : String(rd.content);
        return { kind: 'read', ...common, hostname, path: p, ...(content !== undefined ? { content } : {}), ...(rd.absent ? { absent: true } : {}) };
      }
      case 'advance':
        r.noUnknown(o, [...STEP_COMMON, 'advance'], path);
        return { kind: 'advance', ...common, ms: r.duration(o.advance, [...path, 'advance']) };
      default:
        throw r.fail(path, `unknown step action "${String(action)}"`);
    }
  });
  const schedule = top.schedule === undefined ? undefined : parseSchedule(top.schedule, (p, reason) => r.fail(p, reason));
  return { file, name, description, rules, seed, expectViolations, steps, ...(schedule ? { schedule } : {}) };
}
