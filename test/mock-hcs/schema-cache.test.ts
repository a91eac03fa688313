/**
 * Route schemas are compiled once per process, not once per mock-hcs app
 * (mock-hcs/src/schema-cache.ts), and only when a request first needs them;
 * a second app's validators still refuse what the schema refuses.
 */
import { describe, expect, it } from 'vitest';
import { processValidators, sharedValidators } from '../../mock-hcs/src/schema-cache.js';
import { setup } from './helpers.js';

describe('shared route-schema validators', () => {
  it('a second app compiles nothing new, and its admin routes still reject a body the schema refuses (400)', async () => {
    const first = await setup({ seed: 1 });
    const second = await setup({ seed: 2 });
    // Nothing compiled while the apps start (a fresh process: this is the file's first test).
    expect(processValidators.compiled()).toBe(0);
    let afterFirst = 0;
    for (const env of [first, second]) {
      const res = await env.hcs.app.inject({ method: 'POST', url: '/_admin/reset', headers: { 'content-type': 'application/json', 'x-admin-token': env.hcs.adminToken ?? '' }, payload: '{"bogus":1}' });
      expect(res.statusCode).toBe(400);
      const ok = await env.hcs.app.inject({ method: 'POST', url: '/_admin/reset', headers: { 'content-type': 'application/json', 'x-admin-token': env.hcs.adminToken ?? '' }, payload: '{"keepFaults":true}' });
      expect(ok.statusCode).toBe(200);
      // Compiled by the first app's first request; the second app's requests compile nothing.
      if (env === first) afterFirst = processValidators.compiled();
      expect(afterFirst).toBeGreaterThan(0);
      expect(processValidators.compiled()).toBe(afterFirst);
      await env.hcs.app.close();
    }
  });

  it('compiles a schema only when a request first needs it (its schemaEnv or a call), keeping Ajv\'s errors', () => {
    const v = sharedValidators();
    const compile = v.buildValidator({}, { customOptions: { coerceTypes: false } });
    const schema = { type: 'object', required: ['a'], properties: { a: { type: 'integer' } } };
    const f = compile({ schema, method: 'POST', url: '/x', httpPart: 'body' });
    expect(v.compiled()).toBe(0);
    expect(f.schemaEnv).toBeDefined();
    expect(v.compiled()).toBe(1);
    expect(f({ a: 'x' })).toBe(false);
    expect(f.errors?.[0]).toMatchObject({ instancePath: '/a', message: 'must be integer' });
    expect(f({ a: 2 })).toBe(true);
    expect(f.errors).toBeNull();
    expect(v.compiled()).toBe(1);
  });

  it('one compile per distinct (options, http part, schema)', () => {
    const v = sharedValidators();
    const compile = v.buildValidator({}, { customOptions: { coerceTypes: false } });
    const schema = { type: 'object', required: ['a'], properties: { a: { type: 'integer' } } };
    const a = compile({ schema, method: 'POST', url: '/x', httpPart: 'body' });
    const b = compile({ schema: JSON.parse(JSON.stringify(schema)) as typeof schema, method: 'PUT', url: '/y', httpPart: 'body' });
    expect(b).toBe(a);
    expect(a({ a: 1 })).toBe(true);
    expect(v.compiled()).toBe(1);
    compile({ schema, method: 'GET', url: '/x', httpPart: 'querystring' })({ a: 1 });
    v.buildValidator({}, { customOptions: { coerceTypes: true } })({ schema, method: 'POST', url: '/x', httpPart: 'body' })({ a: 1 });
    expect(v.compiled()).toBe(3);
    expect(a({ a: 1 })).toBe(true);
    expect(a({ a: '1' })).toBe(false);
  });
});
