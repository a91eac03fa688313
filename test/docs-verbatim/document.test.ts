/**
 * The command extraction the verbatim tests rely on (test/docs-verbatim/document.ts): the copies of
 * the procedure documents are the seeds the rule catalogue (docs/rules.md) was written from, commands come out with their
 * continuation lines, placeholders are filled only from the table, and the walk follows the
 * document's order (OPS-1).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extractCommands, fill, SEEDS_DIR, SeedDocument, UPGRADE_DOC, WORKER_DOC } from './document.js';

/** The project's own copy of the seeds, outside the repository, when a machine has one (HCS_TESTBED_SEEDS=DIR). */
const SHARED_SEEDS = process.env.HCS_TESTBED_SEEDS ?? '';

describe('OPS-1: the documents\' commands, as written', () => {
  it.skipIf(!SHARED_SEEDS || !existsSync(SHARED_SEEDS))('the copies under test/docs-verbatim/seeds are the seeds, byte for byte (skipped unless HCS_TESTBED_SEEDS names the originals)', () => {
    for (const f of [WORKER_DOC, UPGRADE_DOC]) expect(readFileSync(join(SEEDS_DIR, f), 'utf8'), f).toBe(readFileSync(join(SHARED_SEEDS, f), 'utf8'));
  });

  it('extracts every kubectl line with its backslash continuations, in order', () => {
    const worker = new SeedDocument(WORKER_DOC).commands;
    expect(worker).toHaveLength(21);
    expect(worker[5]).toEqual({ line: 245, text: 'kubectl patch machinedeployment <cluster-name>-md-0 -n cpaas-system \\\n     --type=\'json\' -p=\'[{"op": "replace", "path": "/spec/replicas", "value": <new-replica-count>}]\'' });
    const upgrade = new SeedDocument(UPGRADE_DOC).commands;
    expect(upgrade).toHaveLength(17);
    expect(upgrade.map((c) => c.text.split(' ').slice(0, 3).join(' '))).toContain('kubectl edit kubeadmcontrolplane');
    expect(extractCommands('text\n   # comment\n   kubectl get a \\\n     -o yaml\nkubectlx no\n')).toEqual([{ line: 3, text: 'kubectl get a \\\n     -o yaml' }]);
  });

  it('fills placeholders from the table only, and refuses one without a value', () => {
    expect(fill('kubectl get md <cluster-name>-md-0 -o jsonpath=\'{"\\n"}\'', { '<cluster-name>': 'demo' })).toBe('kubectl get md demo-md-0 -o jsonpath=\'{"\\n"}\'');
    expect(() => fill('kubectl apply -f <updated-pool-config.yaml>', {})).toThrow(/no value for the placeholder <updated-pool-config.yaml>/);
  });

  it('next() must name the next command of the document; untyped() lists the rest', () => {
    const d = new SeedDocument(UPGRADE_DOC);
    expect(() => d.next('kubectl edit', {})).toThrow(/004_65166b788b802341.txt:55: the document's next command is/);
    expect(d.next('kubectl get hcsmachinetemplate <current-template-name>', { '<current-template-name>': 't' })).toBe('kubectl get hcsmachinetemplate t -n cpaas-system -o yaml > new-cp-template.yaml');
    expect(d.untyped()).toHaveLength(16);
    expect(() => d.inline('kubectl frobnicate', {})).toThrow(/no longer says/);
    const w = new SeedDocument(WORKER_DOC);
    expect(w.lookup('"version":"<kubernetes-version>"', { '<cluster-name>': 'c', '<kubernetes-version>': 'v1', '<new-template>': 't' })).toContain('-p=\'{"spec":{"template":{"spec":{"version":"v1","infrastructureRef":{"name":"t"}}}}}\'');
    expect(() => w.lookup('kubectl get machines -n cpaas-system -w', {})).toThrow(/3 commands contain/);
  });
});
