/**
 * The operation catalogue (src/core/hcs) is the one list of HCS calls
 * (issue 33, "one source per fact"): mock-hcs serves every catalogued
 * operation on every path of it, its routes are all declared through the
 * catalogue (routes/operation.ts `route`), and the fault rules' operation
 * lists are the catalogue's (HCS-6).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HCS_OPERATIONS, pathsOf } from '../../src/core/hcs/index.js';
import { repoPath } from '../../src/core/repo.js';
import { FAULT_OPERATIONS, JOB_OPERATIONS } from '../../mock-hcs/src/faults.js';
import { fastifyPath } from '../../mock-hcs/src/routes/operation.js';
import { setup, type Env } from './helpers.js';

describe('operation catalogue (src/core/hcs)', () => {
  let env: Env;
  beforeAll(async () => {
    env = await setup();
  });
  afterAll(async () => {
    await env.hcs.close();
  });

  it('every catalogued operation is served on each of its paths, with its name for fault matching', () => {
    const missing: string[] = [];
    for (const ops of Object.values(HCS_OPERATIONS)) {
      for (const op of ops) {
        for (const p of pathsOf(op)) {
          const url = fastifyPath(p);
          if (!env.hcs.app.hasRoute({ method: op.method, url })) missing.push(`${op.service}.${op.name}: ${op.method} ${p}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('mock-hcs routes are declared only through the catalogue (no app.get/post/put/delete/route in routes/*.ts)', () => {
    const dir = repoPath('mock-hcs', 'src', 'routes');
    const direct: string[] = [];
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.ts') && x !== 'operation.ts')) {
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/\bapp\.(get|post|put|delete|patch|head|route)\(/.test(line)) direct.push(`${f}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(direct).toEqual([]);
  });

  it('fault rules name the catalogued operations; the job operations are those the catalogue marks', () => {
    for (const [service, ops] of Object.entries(HCS_OPERATIONS)) {
      expect(FAULT_OPERATIONS[service as keyof typeof FAULT_OPERATIONS]).toEqual(ops.map((o) => o.name));
    }
    const jobs = Object.values(HCS_OPERATIONS)
      .flat()
      .filter((o) => o.job)
      .map((o) => o.name);
    expect([...JOB_OPERATIONS].sort()).toEqual([...jobs].sort());
    expect(JOB_OPERATIONS.has('detachVolume')).toBe(true);
    expect(JOB_OPERATIONS.has('showServer')).toBe(false);
  });

  it('a fault rule on a catalogued operation fires on its route (the body picks among operations sharing a path)', async () => {
    const id = env.hcs.faults.add({ service: 'ecs', operation: 'batchRebootServers', effect: { type: 'error', status: 503, code: 'Ecs.0002' } });
    const pid = env.config.projects[0]!.id;
    const stop = await env.req('POST', `/v1/${pid}/cloudservers/action`, { 'os-stop': { servers: [{ id: 'nope' }] } });
    expect(stop.status).not.toBe(503);
    const reboot = await env.req('POST', `/v1/${pid}/cloudservers/action`, { reboot: { servers: [{ id: 'nope' }], type: 'SOFT' } });
    expect(reboot.status).toBe(503);
    env.hcs.faults.remove(id);
  });
});
