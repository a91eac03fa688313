import { describe, expect, it } from 'vitest';
import { unknownArgument, USAGE } from './cli.js';

// The catalogue CLI once started a full 13-minute pass on `--help`; now every argument is known or refused.
describe('test/mutants/cli.ts arguments', () => {
  it('accepts every documented flag, with its value apart or after =', { timeout: 10_000 }, () => {
    expect(unknownArgument(['--jobs', '1', '--only', 'a,b', '--explore-runs=0', '--seeds', '2', '--no-control', '--json', 'x.json'])).toBeUndefined();
  });
  it('names the first unknown argument, including a stray value', { timeout: 10_000 }, () => {
    expect(unknownArgument(['--jobs', '1', '--bogus'])).toBe('--bogus');
    expect(unknownArgument(['--no-control', 'extra'])).toBe('extra');
  });
  it('the usage names every flag it accepts', { timeout: 10_000 }, () => {
    for (const f of ['--jobs', '--only', '--explore-runs', '--seeds', '--no-control', '--json', '--help']) expect(USAGE).toContain(f);
  });
});
