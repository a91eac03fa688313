/**
 * The repository's root directory, computed once here so that no module
 * counts `..` from its own place (a module that moves would silently point
 * elsewhere). Data the testbed reads from the checkout (scenarios/, data/,
 * tools/, the documents' seeds) is found from here. In the esbuild bundle of
 * the CLI (src/harness/bundle), `import.meta.url` is this source file's URL, so the
 * root is the same.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A path inside the repository. */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}
