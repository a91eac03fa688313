/**
 * kubectl steps' expectWords (issue 37): an output check that parses the output into words and compares them
 * exactly, where expectOutput's substrings let a wrong placement through.
 */
import { describe, expect, it } from 'vitest';
import { loadScenario, ScenarioErrors } from '../../src/harness/scenario/parse.js';
import { wordsDiff } from '../../src/harness/scenario/runner.js';

describe('expectWords', () => {
  it('four machines in az1 and one in az2 pass the substrings [az1, az2] but not the words [az1 az1 az1 az2 az2]', () => {
    const out = 'az1 az1 az2 az1 az1\n';
    expect(['az1', 'az2'].every((w) => out.includes(w))).toBe(true);
    expect(wordsDiff(out, ['az1', 'az1', 'az1', 'az2', 'az2'])).toBe('[az1 az1 az1 az1 az2] (expected [az1 az1 az1 az2 az2]: missing az2; unexpected az1)');
    expect(wordsDiff('az2 az1 az1 az2 az1', ['az1', 'az1', 'az1', 'az2', 'az2'])).toBeUndefined();
    expect(wordsDiff('', ['az1'])).toBe('[] (expected [az1]: missing az1)');
    expect(wordsDiff('az1 az10', ['az1'])).toBe('[az1 az10] (expected [az1]: unexpected az10)');
  });

  it('is parsed as a list of words and refused otherwise, naming the field', () => {
    const head = 'name: v\nseed: 1\nsteps:\n';
    const s = loadScenario('scenarios/v.yaml', `${head}  - kubectl: kubectl get machines -n cpaas-system -o jsonpath='{.items[*].spec.failureDomain}'\n    expectWords: [az1, az2]\n`);
    expect(s.steps[0]).toMatchObject({ kind: 'kubectl', expectWords: ['az1', 'az2'] });
    let err: unknown;
    try {
      loadScenario('scenarios/v.yaml', `${head}  - kubectl: kubectl get machines\n    expectWords: az1\n`);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScenarioErrors);
    expect((err as ScenarioErrors).message).toContain('field steps[0].expectWords: must be a list of words');
  });
});
