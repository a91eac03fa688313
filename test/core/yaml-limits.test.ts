/**
 * Limits of YAML input (src/core/yaml-limits.ts; docs/scenarios.md "Limits of
 * YAML input"): size, depth and aliases, each refused with the line and
 * column where it is crossed, for scenario files, manifests and the
 * cloud-init loader; big mappings parse (their speed is measured by
 * `npm run bench -- yaml`, never asserted here).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { loadAllYaml, loadYaml, yamlErrorMessage } from '../../src/core/yaml.js';
import { parseYamlLimited, parseYamlValue, YAML_MAX_ALIAS_NODES, YAML_MAX_BYTES, YAML_MAX_DEPTH, YamlInputError } from '../../src/core/yaml-limits.js';
import { loadManifestFile } from '../../src/harness/manifests/manifests.js';
import { parseYamlDocuments, parseYamlFile, readText } from '../../src/harness/manifests/source.js';
import { loadScenario } from '../../src/harness/scenario/parse.js';
import { aliasBomb } from '../support/yaml-bomb.js';

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error');
}

const SCENARIO_HEAD = 'name: x\nseed: 1\nsteps:\n  - advance: 1s\n';

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'hcs-yaml-limits-'));
}

describe('YAML size limit (4 MiB)', () => {
  const big = `${SCENARIO_HEAD}description: |\n${'  a line of text that repeats\n'.repeat(Math.ceil(YAML_MAX_BYTES / 30) + 10)}`;

  it('refuses text over the limit, naming the limit and the line and column where it is crossed', () => {
    const e = thrown(() => parseYamlLimited(big, false)) as YamlInputError;
    expect(e).toBeInstanceOf(YamlInputError);
    expect(e.reason).toMatch(/over the size limit of 4 MiB/);
    // Four head lines, the `description: |` line, then lines of 30 bytes: byte 4 MiB + 1 falls on this line and column.
    const headBytes = SCENARIO_HEAD.length + 'description: |\n'.length;
    const past = YAML_MAX_BYTES - headBytes; // bytes of the block before the limit
    expect(e.line).toBe(5 + Math.floor(past / 30) + 1);
    expect(e.col).toBe((past % 30) + 1);
  });

  it('a scenario file over the limit: file:line:col, refused before the file is read in full', () => {
    const f = join(tmp(), 'big.yaml');
    writeFileSync(f, big);
    const e = thrown(() => readText(f)) as InputError;
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toMatch(new RegExp(`^${f.replace(/[/.]/g, '\\$&')}:\\d+:\\d+: YAML input is 4\\.0 MiB \\(\\d+ bytes\\), over the size limit of 4 MiB$`));
    expect(() => loadScenario(f)).toThrow(/over the size limit of 4 MiB/);
  });

  it('text just under the limit parses', () => {
    const text = `${SCENARIO_HEAD}description: |\n${'  a line of text that repeats\n'.repeat(Math.floor((YAML_MAX_BYTES - 200) / 30))}`;
    expect(text.length).toBeLessThan(YAML_MAX_BYTES);
    expect(parseYamlFile('ok.yaml', text).value()).toMatchObject({ name: 'x' });
  });

  it('the cloud-init loader (js-yaml) has the same limit', () => {
    expect(yamlErrorMessage(thrown(() => loadYaml(big)))).toMatch(/over the size limit of 4 MiB \(line \d+, column \d+\)/);
  });
});

describe(`YAML depth limit (${YAML_MAX_DEPTH} levels)`, () => {
  const flow = (n: number): string => `x: ${'['.repeat(n)}${']'.repeat(n)}\n`;
  const block = (n: number): string => Array.from({ length: n }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n') + ' leaf\n';

  it('refuses flow and block nesting one level deeper than the limit, at the collection that crosses it', () => {
    // The top mapping is level 1: 99 flow sequences inside it make 100.
    expect(() => parseYamlLimited(flow(YAML_MAX_DEPTH - 1), false)).not.toThrow();
    const e = thrown(() => parseYamlLimited(flow(YAML_MAX_DEPTH), false)) as YamlInputError;
    expect(e.reason).toBe(`YAML nests deeper than the depth limit of ${YAML_MAX_DEPTH} levels`);
    expect([e.line, e.col]).toEqual([1, 3 + YAML_MAX_DEPTH]);
    // n nested keys: the top mapping and the n-1 mappings under k0 … k(n-2), n levels.
    expect(() => parseYamlLimited(block(YAML_MAX_DEPTH), false)).not.toThrow();
    const b = thrown(() => parseYamlLimited(block(YAML_MAX_DEPTH + 1), false)) as YamlInputError;
    expect(b.reason).toMatch(/depth limit of 100 levels/);
    expect(b.line).toBe(YAML_MAX_DEPTH + 1);
  });

  it('nesting far past the limit is refused, not a stack overflow', () => {
    const e = thrown(() => loadScenario('deep.yaml', `${SCENARIO_HEAD}x: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`)) as InputError;
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toMatch(/^deep\.yaml:5:\d+: YAML nests deeper than the depth limit of 100 levels$/);
  });

  it('counts the levels an alias brings in', () => {
    const deep50 = `${'['.repeat(50)}${']'.repeat(50)}`;
    const text = `a: &a ${deep50}\nb: ${'['.repeat(50)}*a${']'.repeat(50)}\n`;
    const e = thrown(() => parseYamlLimited(text, false)) as YamlInputError;
    expect(e.reason).toMatch(/depth limit of 100 levels once alias \*a is expanded/);
    expect(e.line).toBe(2);
  });

  it('the cloud-init loader refuses the same depth', () => {
    expect(() => loadYaml(flow(YAML_MAX_DEPTH - 1))).not.toThrow();
    expect(yamlErrorMessage(thrown(() => loadYaml(flow(YAML_MAX_DEPTH + 5))))).toMatch(/nesting exceeded maxDepth \(100\) at line 1/);
  });
});

describe(`YAML alias limit (${YAML_MAX_ALIAS_NODES} nodes)`, () => {
  it('a billion-laughs scenario file: file:line:col and the limit, as InputError (exit 2)', () => {
    const e = thrown(() => loadScenario('bomb.yaml', `${SCENARIO_HEAD}${aliasBomb()}`)) as InputError;
    expect(e).toBeInstanceOf(InputError);
    // a, b, c, d stand for 10, 91, 820, 7381 nodes; the aliases of b, c and d for 90 + 819 + 7380; e's first *d crosses 10,000.
    expect(e.message).toBe('bomb.yaml:9:8: YAML aliases stand for more than 10000 nodes (alias limit, billion-laughs protection); *d alone stands for 7381');
  });

  it('a billion-laughs manifest: InputError with file:line:col (was a ReferenceError without a file, exit 1)', () => {
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n${aliasBomb('  ')}`;
    const e = thrown(() => loadManifestFile('lol.yaml', text)) as InputError;
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toMatch(/^lol\.yaml:10:10: YAML aliases stand for more than 10000 nodes/);
  });

  it('ordinary anchors and aliases work; a cycle and an unknown alias are refused with their position', () => {
    const v = parseYamlValue('defaults: &d {cpu: 2, disks: [a, b]}\nm1: *d\nm2: *d\n') as Record<string, unknown>;
    expect(v.m1).toEqual({ cpu: 2, disks: ['a', 'b'] });
    const cycle = thrown(() => parseYamlLimited('a: &a [x, *a]\n', false)) as YamlInputError;
    expect(cycle.reason).toBe('alias *a refers to a collection that contains it');
    expect([cycle.line, cycle.col]).toEqual([1, 11]);
    const unknown = thrown(() => parseYamlLimited('a: 1\nb: *nope\n', false)) as YamlInputError;
    expect(unknown.line).toBe(2);
  });

  it('the cloud-init loader (js-yaml) keeps aliases as shared objects: no limit needed, a bomb stays as small as its text', () => {
    const v = loadYaml(aliasBomb()) as Record<string, unknown[]>;
    expect(v.i![0]).toBe(v.h); // the very object, not a copy
    expect(loadAllYaml(`${aliasBomb()}---\nx: 1\n`)).toHaveLength(2);
  });
});

describe('big mappings', () => {
  const keys = (n: number, indent = '  '): string => Array.from({ length: n }, (_, i) => `${indent}key${i}: value ${i}\n`).join('');

  it('a manifest with an 80,000-key mapping loads, and lines resolve to the right key', () => {
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n${keys(80_000)}`;
    const [m] = loadManifestFile('big.yaml', text);
    const data = (m!.obj as unknown as { data: Record<string, string> }).data;
    expect(Object.keys(data)).toHaveLength(80_000);
    expect(data.key79999).toBe('value 79999');
    expect(m!.lineOf('data.key79999')).toBe(6 + 79_999);
    expect(m!.lineOf('data.nope')).toBe(6); // the nearest value that exists: the data mapping
  });

  it('a duplicate key among 40,000 is found, naming both lines', () => {
    const text = `${SCENARIO_HEAD}x:\n${keys(40_000)}  key17: again\n`;
    const e = thrown(() => loadScenario('dup.yaml', text)) as InputError;
    expect(e.message).toBe(`dup.yaml:${5 + 40_000 + 1}:3: invalid YAML: duplicate key "key17" in a mapping (first at line 23, column 3)`);
  });

  it('keys that differ only in type are distinct (1 and "1"); a multi-document manifest keeps every document', () => {
    expect(parseYamlValue('1: a\n"1": b\n')).toEqual({ 1: 'b' }); // as `yaml` builds it: both keys, the later wins in JS
    expect(() => parseYamlValue('1: a\n1: b\n')).toThrow(/duplicate key 1/);
    expect(parseYamlDocuments('m.yaml', 'a: 1\n---\n---\nb: 2\n').map((d) => d.value())).toEqual([{ a: 1 }, { b: 2 }]);
    expect(() => parseYamlFile('one.yaml', 'a: 1\n---\nb: 2\n')).toThrow(/^one\.yaml:2:1: invalid YAML: the file holds several YAML documents/);
  });
});
