/**
 * Issue 33: every HCS_TESTBED_* variable is in one documented table
 * (docs/env.md). Fails when code, a script or a test reads a variable the
 * table does not list, or the table lists one nothing reads.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, repoPath } from '../../src/core/repo.js';

describe('docs/env.md', () => {
  it('lists exactly the HCS_TESTBED_* variables the repository reads, each with its use', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && !f.startsWith('docs/') && f !== 'README.md' && f !== 'package-lock.json' && !f.endsWith('.png'));
    const used = new Set<string>();
    for (const f of files) {
      let text: string;
      try {
        text = readFileSync(repoPath(f), 'utf8');
      } catch {
        continue; // deleted in the working tree
      }
      for (const m of text.matchAll(/HCS_TESTBED_[A-Z0-9_]*[A-Z0-9]/g)) used.add(m[0]);
    }
    const table = readFileSync(repoPath('docs', 'env.md'), 'utf8');
    const rows = [...table.matchAll(/^\| `(HCS_TESTBED_[A-Z0-9_]+)` \| (user|ci|test) \|/gm)].map((m) => m[1]!);
    expect(new Set(rows).size, 'a variable listed twice').toBe(rows.length);
    expect([...used].filter((v) => !rows.includes(v)).sort(), 'read but not in docs/env.md').toEqual([]);
    expect(rows.filter((v) => !used.has(v)).sort(), 'in docs/env.md but read nowhere').toEqual([]);
  });
});
