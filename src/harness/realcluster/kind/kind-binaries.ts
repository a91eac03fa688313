/**
 * Where tools/kind/build.sh puts kind, kubectl and the node image:
 * `${HCS_TESTBED_KIND_CACHE:-${XDG_CACHE_HOME:-~/.cache}/hcs-testbed/kind}/<KIND_VERSION>-<KUBE_VERSION>/bin/`
 * and the Docker image `hcs-testbed/kind-node:<KUBE_VERSION>`, with the
 * versions from tools/kind/versions.env and tools/kube/versions.env.
 */
import { join } from 'node:path';
import { kubeVersions, toolCacheRoot, toolVersion } from '../apiserver/binaries.js';

/** KIND_VERSION of tools/kind/versions.env. */
export function kindVersion(): string {
  return toolVersion('kind', 'KIND_VERSION');
}

/** The bin/ directory of tools/kind/build.sh's cache. */
export function kindBinDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot('kind', env), `${kindVersion()}-${kubeVersions().KUBE_VERSION}`, 'bin');
}

/** The node image tools/kind/build.sh imports into Docker. */
export function kindNodeImage(): string {
  return `hcs-testbed/kind-node:${kubeVersions().KUBE_VERSION}`;
}
