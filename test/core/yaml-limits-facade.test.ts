/**
 * The YAML limits on the facade's request bodies (application/yaml,
 * application/apply-patch+yaml as `kubectl apply --server-side` sends them):
 * an alias bomb or a body nested too deep is a 400 naming the limit and the
 * line; a ConfigMap of 40,000 keys is created (duplicate keys are checked in
 * linear time). OPS-1: the real kubectl and raw clients reach the testbed
 * through the facade.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../../src/world/facade/index.js';
import { createTestbed, type Testbed } from '../../src/harness/testbed/testbed.js';
import { raw } from '../facade/http.js';
import { aliasBomb } from '../support/yaml-bomb.js';

let tb: Testbed;
let facade: Facade;

beforeAll(async () => {
  tb = await createTestbed({ seed: 1 });
  facade = await startFacade({ mgmt: tb.env.mgmt, workloads: tb.env.workloads, logs: tb.env.logs, clock: tb.clock });
});

afterAll(async () => {
  await facade?.close();
  await tb?.close();
});

const PATH = '/api/v1/namespaces/default/configmaps';
const head = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: default\n`;

describe('OPS-1: YAML request bodies of the facade within the YAML limits', () => {
  it('an alias bomb is a 400 naming the alias limit and its line', async () => {
    const bomb = `${head('lol')}data:\n${aliasBomb('  ')}`;
    const r = await raw(facade, 'POST', PATH, { body: bomb, contentType: 'application/yaml' });
    expect(r.code).toBe(400);
    expect(r.json.message).toMatch(/YAML aliases stand for more than 10000 nodes \(alias limit, billion-laughs protection\).*\(line 11, column \d+\)/);
  });

  it('nesting past the depth limit and a duplicate key are 400s', async () => {
    const deep = await raw(facade, 'POST', PATH, { body: `${head('deep')}data: {x: "${'['.repeat(200)}"}\nextra: ${'['.repeat(200)}${']'.repeat(200)}\n`, contentType: 'application/yaml' });
    expect(deep.code).toBe(400);
    expect(deep.json.message).toMatch(/depth limit of 100 levels/);
    const dup = await raw(facade, 'POST', PATH, { body: `${head('dup')}data:\n  a: "1"\n  a: "2"\n`, contentType: 'application/yaml' });
    expect(dup.code).toBe(400);
    expect(dup.json.message).toMatch(/duplicate key "a" in a mapping \(first at line 7, column 3\)/);
  });

  it('a ConfigMap of 40,000 keys is created', async () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `  key-${i}: "v${i}"\n`).join('');
    const r = await raw(facade, 'POST', PATH, { body: `${head('big')}data:\n${keys}`, contentType: 'application/yaml' });
    expect(r.code, r.text.slice(0, 300)).toBe(201);
    expect(Object.keys((r.json.data ?? {}) as object)).toHaveLength(40_000);
  });
});
