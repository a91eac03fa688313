import { readFileSync } from 'node:fs';
import { repoPath } from '../../core/repo.js';

/** hcs-testbed's version (package.json), written into every bundle. */
export const TOOL_VERSION: string = (() => {
  try {
    return String((JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
})();
