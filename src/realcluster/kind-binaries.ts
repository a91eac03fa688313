/**
 * Where tools/kind/build.sh puts kind, kubectl and the node image:
 * `${HCS_TESTBED_KIND_CACHE:-${XDG_CACHE_HOME:-~/.cache}/hcs-testbed/kind}/<KIND_VERSION>-<KUBE_VERSION>/bin/`
 * and the Docker image `hcs-testbed/kind-node:<KUBE_VERSION>`, with the
 * versions from tools/kind/versions.env and tools/kube/versions.env.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeVersions } from './binaries.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** KIND_VERSION of tools/kind/versions.env. */
export function kindVersion(): string {
  const text = readFileSync(join(repoRoot, 'tools', 'kind', 'versions.env'), 'utf8');
  const m = /^KIND_VERSION=(\S+)/m.exec(text);
  if (!m) throw new Error('tools/kind/versions.env has no KIND_VERSION');
  return m[1]!;
}

/** The bin/ directory of tools/kind/build.sh's cache. */
export function kindBinDir(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.HCS_TESTBED_KIND_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hcs-testbed', 'kind');
  return join(root, `${kindVersion()}-${kubeVersions().KUBE_VERSION}`, 'bin');
}

/** The node image tools/kind/build.sh imports into Docker. */
export function kindNodeImage(): string {
  return `hcs-testbed/kind-node:${kubeVersions().KUBE_VERSION}`;
}
