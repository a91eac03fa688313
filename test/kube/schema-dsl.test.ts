/**
 * The schema language (src/core/kube/schema-dsl.ts): one description gives
 * the CRD schema and the TypeScript type (issue 33, "one source per fact");
 * the HCS kinds' CRDs are built from src/product/api/hcs.ts, and admission's
 * mandatory fields are the description's `assured` keys.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as s from '../../src/core/kube/schema-dsl.js';
import type { Infer } from '../../src/core/kube/schema-dsl.js';
import { schemaForKind } from '../../src/product/api/crds/definitions.js';
import { hcsClusterSpec, hcsMachineConfigPoolSpec, hcsMachineSpec, hcsMachineTemplateSpec, persistentDisk, type HCSMachineSpec, type PersistentDisk } from '../../src/product/api/hcs.js';
import { validateMachine, validatePool } from '../../src/product/api/admission.js';

describe('schema language', () => {
  it('gives the JSON schema a CRD carries and the type of the values it admits', () => {
    const disk = s.object(
      { size: s.int('GiB', { minimum: 1 }), type: s.string(), tags: s.array(s.string()), meta: s.stringMap(), kind: s.oneOf(['a', 'b']) },
      { required: ['size'], assured: ['type'], assuredBy: 'a test' },
    );
    expect(disk.json).toEqual({
      type: 'object',
      properties: {
        size: { type: 'integer', format: 'int32', description: 'GiB', minimum: 1 },
        type: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        meta: { type: 'object', additionalProperties: { type: 'string' } },
        kind: { type: 'string', enum: ['a', 'b'] },
      },
      required: ['size'],
    });
    expect(disk.keys).toEqual(['size', 'type', 'tags', 'meta', 'kind']);
    expect(disk.assured).toEqual(['type']);
    expectTypeOf<Infer<typeof disk>>().toEqualTypeOf<{ size: number; type: string; tags?: string[]; meta?: Record<string, string>; kind?: 'a' | 'b' }>();
  });

  it('refuses assured keys without saying what assures them', () => {
    expect(() => s.object({ a: s.string() }, { assured: ['a'] })).toThrow(/assured keys a need assuredBy/);
  });

  it('the HCS kinds: CRD schemas and types from one description (src/product/api/hcs.ts)', () => {
    expect(schemaForKind('HCSMachine')?.properties?.spec).toBe(hcsMachineSpec.json);
    expect(schemaForKind('HCSCluster')?.properties?.spec).toBe(hcsClusterSpec.json);
    expect(schemaForKind('HCSMachineTemplate')?.properties?.spec).toBe(hcsMachineTemplateSpec.json);
    expect(schemaForKind('HCSMachineConfigPool')?.properties?.spec).toBe(hcsMachineConfigPoolSpec.json);
    // TPL-1 fields are assured (admission), optional in the schema as the documents say.
    expect(hcsMachineSpec.json.required).toBeUndefined();
    expectTypeOf<HCSMachineSpec['imageName']>().toEqualTypeOf<string>();
    expectTypeOf<HCSMachineSpec['rootVolume']>().toEqualTypeOf<{ type?: string; size?: number } | undefined>();
    expectTypeOf<PersistentDisk['mountOptions']>().toEqualTypeOf<string[] | undefined>();
  });

  it("admission requires exactly the description's assured fields (TPL-1, DISK-1)", () => {
    const causes = validateMachine('CREATE', { apiVersion: 'x', kind: 'HCSMachine', metadata: { name: 'm' }, spec: {} });
    expect(causes.map((c) => c.field)).toEqual(hcsMachineSpec.assured.map((k) => `spec.${k}`));
    const pool = validatePool(
      'CREATE',
      { apiVersion: 'x', kind: 'HCSMachineConfigPool', metadata: { name: 'p' }, spec: { configs: [{ hostname: 'h', networks: [{ subnetName: 's', ipAddress: '10.0.0.1' }], persistentDisks: [{}] }] } },
      undefined,
    );
    expect(pool.filter((c) => c.rule === 'DISK-1').map((c) => c.field)).toEqual(persistentDisk.assured.map((k) => `spec.configs[0].persistentDisks[0].${k}`));
  });
});
