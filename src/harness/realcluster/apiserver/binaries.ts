/**
 * Where the real control-plane binaries are (built by tools/kube/build.sh):
 *
 * 1. `$HCS_TESTBED_KUBE_BIN`: a directory with `kube-apiserver` and `etcd`;
 * 2. the build cache: `${HCS_TESTBED_KUBE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/hcs-testbed/kube}/<KUBE_VERSION>/`
 *    with KUBE_VERSION from tools/kube/versions.env.
 */
import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../../core/repo.js';

export interface KubeBinaries {
  dir: string;
  kubeApiserver: string;
  etcd: string;
}

export interface KubeVersions {
  KUBE_VERSION: string;
  ETCD_VERSION: string;
}

const repoRoot = REPO_ROOT;
/** The repository (tools/ and the sources), found from this module. */
export function repoRootDir(): string {
  return repoRoot;
}

/** A pinned version from tools/<tool>/versions.env (tools/kube, tools/capi, tools/kind). */
export function toolVersion(tool: 'kube' | 'capi' | 'kind', key: string): string {
  const text = readFileSync(join(repoRoot, 'tools', tool, 'versions.env'), 'utf8');
  const m = new RegExp(`^${key}=(\\S+)`, 'm').exec(text);
  if (!m) throw new Error(`tools/${tool}/versions.env has no ${key}`);
  return m[1]!;
}

/** Where tools/<tool>/build.sh caches its results: $HCS_TESTBED_<TOOL>_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/hcs-testbed/<tool>. */
export function toolCacheRoot(tool: 'kube' | 'capi' | 'kind', env: NodeJS.ProcessEnv = process.env): string {
  return env[`HCS_TESTBED_${tool.toUpperCase()}_CACHE`] || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hcs-testbed', tool);
}

/** The pinned versions (tools/kube/versions.env). */
export function kubeVersions(): KubeVersions {
  return { KUBE_VERSION: toolVersion('kube', 'KUBE_VERSION'), ETCD_VERSION: toolVersion('kube', 'ETCD_VERSION') };
}

/** The build cache directory tools/kube/build.sh writes to. */
export function kubeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot('kube', env), kubeVersions().KUBE_VERSION);
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The binaries, or a sentence saying why they are not there (tests print it when they skip). */
export function findKubeBinaries(env: NodeJS.ProcessEnv = process.env): KubeBinaries | { missing: string } {
  const dir = env.HCS_TESTBED_KUBE_BIN || kubeCacheDir(env);
  const b = { dir, kubeApiserver: join(dir, 'kube-apiserver'), etcd: join(dir, 'etcd') };
  const absent = [b.kubeApiserver, b.etcd].filter((p) => !executable(p));
  if (absent.length === 0) return b;
  const from = env.HCS_TESTBED_KUBE_BIN ? '$HCS_TESTBED_KUBE_BIN' : 'the build cache';
  return { missing: `real kube-apiserver/etcd not found in ${from} (${absent.join(', ')} missing); build them with tools/kube/build.sh (~10 min cold, needs Go) or set HCS_TESTBED_KUBE_BIN` };
}
