/**
 * Where the upstream Cluster API managers and their CRDs are (built by
 * tools/capi/build.sh):
 *
 * 1. `$HCS_TESTBED_CAPI_BIN`: a directory with the binaries and `crds/`;
 * 2. the build cache: `${HCS_TESTBED_CAPI_CACHE:-${XDG_CACHE_HOME:-~/.cache}/hcs-testbed/capi}/<CAPI_VERSION>/`
 *    with CAPI_VERSION from tools/capi/versions.env.
 */
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { toolCacheRoot, toolVersion } from '../apiserver/binaries.js';

export interface CapiBinaries {
  dir: string;
  /** The core manager (sigs.k8s.io/cluster-api main package). */
  core: string;
  /** The kubeadm bootstrap provider manager (CABPK). */
  bootstrap: string;
  /** The kubeadm control plane provider manager (KCP). */
  controlPlane: string;
  clusterctl: string;
  /** The upstream CRD files of the same version (CABPK/KCP ones carry the contract label). */
  crds: string[];
}

/** The pinned upstream version (tools/capi/versions.env). */
export function capiVersion(): string {
  return toolVersion('capi', 'CAPI_VERSION');
}

/** The build cache directory tools/capi/build.sh writes to. */
export function capiCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(toolCacheRoot('capi', env), capiVersion());
}

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The binaries and CRDs, or a sentence saying why they are not there (tests print it when they skip). */
export function findCapiBinaries(env: NodeJS.ProcessEnv = process.env): CapiBinaries | { missing: string } {
  const dir = env.HCS_TESTBED_CAPI_BIN || capiCacheDir(env);
  const from = env.HCS_TESTBED_CAPI_BIN ? '$HCS_TESTBED_CAPI_BIN' : 'the build cache';
  const b = {
    dir,
    core: join(dir, 'cluster-api-manager'),
    bootstrap: join(dir, 'kubeadm-bootstrap-manager'),
    controlPlane: join(dir, 'kubeadm-control-plane-manager'),
    clusterctl: join(dir, 'clusterctl'),
  };
  const absent = [b.core, b.bootstrap, b.controlPlane, b.clusterctl].filter((p) => !executable(p));
  let crds: string[] = [];
  try {
    crds = readdirSync(join(dir, 'crds'))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => join(dir, 'crds', f));
  } catch {
    absent.push(join(dir, 'crds/'));
  }
  if (absent.length === 0 && crds.length === 0) absent.push(join(dir, 'crds/*.yaml'));
  if (absent.length === 0) return { ...b, crds };
  return {
    missing: `upstream Cluster API ${capiVersion()} not found in ${from} (${absent.join(', ')} missing); build it with tools/capi/build.sh (~10-15 min cold, needs Go) or set HCS_TESTBED_CAPI_BIN`,
  };
}
