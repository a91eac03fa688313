import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoPath } from '../../src/core/repo.js';
import { parse, parseAllDocuments } from 'yaml';
import { CRDS, crdForKind, prune, schemaForKind, validate, type JSONSchemaProps } from '../../src/product/api/crds/index.js';
import { crdsYaml } from '../../src/product/api/crds/dump.js';
import { RESOURCES } from '../../src/core/kube/resources.js';
import { loadManifestPath } from '../../src/harness/manifests/index.js';
import { evalColumnPath } from '../../src/world/facade/tables.js';
import { parseLabelSelector, matchesLabels, parseFieldSelector } from '../../src/core/kube/selectors.js';

const SEEDS = repoPath('test', 'docs-verbatim', 'seeds'); // the documents, in the repository
const REPO = join(import.meta.dirname, '..', '..');

/** The YAML manifests of a procedure document (blocks starting at `apiVersion:`), placeholders filled in. */
function seedManifests(text: string): unknown[] {
  const lines = text.split('\n');
  const out: unknown[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('apiVersion: ')) continue;
    const block: string[] = [];
    for (; i < lines.length; i++) {
      const l = lines[i]!;
      if (l.trim() === '' || /^\s/.test(l) || /^[a-zA-Z]+:/.test(l)) block.push(l);
      else break;
    }
    out.push(parse(block.join('\n').replace(/<[^>]+>/g, 'placeholder-value')));
  }
  return out;
}

function check(obj: { kind: string; spec?: unknown }): { unknown: string[]; invalid: string[] } {
  const schema = schemaForKind(obj.kind)!;
  const copy = structuredClone(obj) as Record<string, unknown>;
  const unknown = prune(copy.spec, schema.properties!.spec, 'spec');
  const invalid = validate(copy.spec, schema.properties!.spec, 'spec').map((c) => `${c.field}: ${c.message}`);
  return { unknown, invalid };
}

describe('CRDs (src/core/kube/crds)', () => {
  it('cover every custom resource of the rule catalogue, match the resources table and carry status subresources', () => {
    const kinds = CRDS.map((c) => c.spec.names.kind).sort();
    expect(kinds).toEqual(['AppRelease', 'Cluster', 'HCSCluster', 'HCSMachine', 'HCSMachineConfigPool', 'HCSMachineTemplate', 'KubeadmConfig', 'KubeadmConfigTemplate', 'KubeadmControlPlane', 'Machine', 'MachineDeployment', 'MachineSet']);
    for (const c of CRDS) {
      const r = RESOURCES.find((x) => x.kind === c.spec.names.kind)!;
      expect(r, c.metadata.name).toBeDefined();
      expect([c.spec.group, c.spec.versions[0]!.name, c.spec.names.plural]).toEqual([r.group, r.version, r.plural]);
      expect(!!c.spec.versions[0]!.subresources?.status, c.metadata.name).toBe(r.statusSubresource);
      expect(c.metadata.name).toBe(`${r.plural}.${r.group}`);
    }
    expect(crdForKind('Machine')!.spec.versions[0]!.additionalPrinterColumns!.map((p) => p.name.toUpperCase())).toEqual(['CLUSTER', 'NODENAME', 'PROVIDERID', 'PHASE', 'AGE', 'VERSION']);
  });

  it('are structural: every object node has properties, additionalProperties or preserve-unknown-fields; no node mixes them', () => {
    const walk = (s: JSONSchemaProps, path: string): void => {
      if (s.type === 'object') {
        const shapes = [s.properties !== undefined, s.additionalProperties !== undefined].filter(Boolean).length;
        expect(shapes <= 1, path).toBe(true);
        expect(shapes === 1 || s['x-kubernetes-preserve-unknown-fields'] === true || path.endsWith('.metadata'), `${path} has no shape`).toBe(true);
      }
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`);
      if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, `${path}.*`);
      if (s.items) walk(s.items, `${path}[]`);
    };
    for (const c of CRDS) walk(c.spec.versions[0]!.schema.openAPIV3Schema, c.spec.names.kind);
  });

  it('dump as YAML that parses back to the same CRDs', () => {
    const docs = parseAllDocuments(crdsYaml()).map((d) => d.toJS() as unknown);
    expect(docs).toEqual(JSON.parse(JSON.stringify(CRDS)));
  });

  it('accept the scenario manifests without pruning or errors', () => {
    const dir = join(REPO, 'scenarios', 'manifests');
    for (const m of readdirSync(dir).flatMap((d) => loadManifestPath(join(dir, d)))) {
      if (!crdForKind(m.obj.kind)) continue;
      expect(check(m.obj), `${m.file}: ${m.obj.kind}`).toEqual({ unknown: [], invalid: [] });
    }
  });

  it('accept every manifest of the procedure documents (test/docs-verbatim/seeds), legacy subenetName included', () => {
    let n = 0;
    for (const f of readdirSync(SEEDS).filter((x) => x.endsWith('.txt'))) {
      for (const obj of seedManifests(readFileSync(join(SEEDS, f), 'utf8')) as { kind: string; spec?: unknown }[]) {
        expect(check(obj), `${f}: ${obj.kind}`).toEqual({ unknown: [], invalid: [] });
        n++;
      }
    }
    expect(n).toBeGreaterThanOrEqual(4);
    const legacy = { kind: 'HCSMachineConfigPool', spec: { configs: [{ hostname: 'w1', networks: [{ subenetName: 's', ipAddress: '10.0.0.1' }] }] } };
    expect(check(legacy)).toEqual({ unknown: [], invalid: [] });
  });

  it('reject wrong types with the apiserver wording, naming the field', () => {
    const bad = { kind: 'MachineDeployment', spec: { clusterName: 'c', replicas: '3', template: { spec: { clusterName: 'c', bootstrap: {}, infrastructureRef: {} } }, strategy: { type: 'Recreate', rollingUpdate: { maxSurge: true } } } };
    expect(check(bad).invalid).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      'spec.strategy.type: Unsupported value: "Recreate": supported values: "RollingUpdate", "OnDelete"',
      'spec.strategy.rollingUpdate.maxSurge: Invalid value: true: spec.strategy.rollingUpdate.maxSurge in body must be of type integer,string: "boolean"',
    ]);
  });
});

describe('printer-column JSONPath and selectors', () => {
  const obj = { metadata: { labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } }, status: { conditions: [{ type: 'Ready', reason: 'A' }, { type: 'Sync', reason: 'Synced' }], charts: { a: { phase: 'Success' } } } };
  it.each([
    [".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']", ['demo']],
    ['.status.conditions[?(@.type=="Sync")].reason', ['Synced']],
    ['.status.conditions[1].type', ['Sync']],
    ['.status.charts.*.phase', ['Success']],
    ['.status.missing', []],
  ])('%s', (path, want) => {
    expect(evalColumnPath(path, obj)).toEqual(want);
  });

  it('parses set-based label selectors and rejects malformed ones', () => {
    const reqs = parseLabelSelector('a=1,b!=2,c in (x, y),d notin (z),e,!f');
    expect(reqs.map((r) => r.op)).toEqual(['=', '!=', 'in', 'notin', 'exists', '!']);
    expect(matchesLabels({ a: '1', c: 'y', e: '' }, reqs)).toBe(true);
    expect(matchesLabels({ a: '1', c: 'y', e: '', f: 'x' }, reqs)).toBe(false);
    expect(() => parseLabelSelector('a in x')).toThrow(/unable to parse requirement/);
    expect(parseFieldSelector('metadata.name=x,involvedObject.uid!=y')).toEqual([
      { path: 'metadata.name', op: '=', value: 'x' },
      { path: 'involvedObject.uid', op: '!=', value: 'y' },
    ]);
  });
});
