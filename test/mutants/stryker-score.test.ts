/** bench/stryker.ts reads Stryker's JSON report (mutation-testing-report-schema) into the bench figures. */
import { describe, expect, it } from 'vitest';
import { scoreOf } from '../../bench/stryker.js';

describe('StrykerJS report → score', () => {
  it('counts statuses and scores (killed + timeout) / (all − errors − ignored), as Stryker prints it', { timeout: 5_000 }, () => {
    const report = {
      files: {
        'src/product/provider/surge.ts': { mutants: [{ status: 'Killed' }, { status: 'Killed' }, { status: 'Timeout' }, { status: 'Survived' }, { status: 'CompileError' }, { status: 'Ignored' }] },
        'src/product/provider/labels.ts': { mutants: [{ status: 'NoCoverage' }, { status: 'Survived' }] },
      },
    } as Parameters<typeof scoreOf>[0];
    const s = scoreOf(report);
    expect(s).toMatchObject({ mutants: 8, killed: 2, timeout: 1, survived: 2, noCoverage: 1, errors: 1 });
    // 3 detected of 6 valid (8 − 1 error − 1 ignored).
    expect(s.score).toBe(50);
    expect(scoreOf({ files: {} }).score).toBe(0);
  });
});
