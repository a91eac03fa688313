/**
 * Where the upstream managers are looked up (src/harness/realcluster/upstream/capi-binaries.ts):
 * $HCS_TESTBED_CAPI_BIN, else the build cache of tools/capi/build.sh under the
 * pinned version; a missing piece is named in the skip reason.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capiCacheDir, capiVersion, findCapiBinaries } from '../../src/harness/realcluster/upstream/capi-binaries.js';

describe('upstream Cluster API binaries', () => {
  it('pins the version in tools/capi/versions.env and caches under it', () => {
    expect(capiVersion()).toMatch(/^v1\.10\.\d+$/);
    expect(capiCacheDir({ HCS_TESTBED_CAPI_CACHE: '/c' })).toBe(`/c/${capiVersion()}`);
    expect(capiCacheDir({ XDG_CACHE_HOME: '/x' })).toBe(`/x/hcs-testbed/capi/${capiVersion()}`);
  });

  it('names what is missing, then finds the managers, clusterctl and the CRDs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capi-bin-'));
    const r = findCapiBinaries({ HCS_TESTBED_CAPI_BIN: dir });
    expect('missing' in r && r.missing).toMatch(/\$HCS_TESTBED_CAPI_BIN .*cluster-api-manager.*kubeadm-bootstrap-manager.*kubeadm-control-plane-manager.*clusterctl.*crds\/.*tools\/capi\/build\.sh/);
    for (const b of ['cluster-api-manager', 'kubeadm-bootstrap-manager', 'kubeadm-control-plane-manager', 'clusterctl']) {
      writeFileSync(join(dir, b), '#!/bin/sh\n');
      chmodSync(join(dir, b), 0o755);
    }
    mkdirSync(join(dir, 'crds'));
    expect('missing' in findCapiBinaries({ HCS_TESTBED_CAPI_BIN: dir })).toBe(true);
    writeFileSync(join(dir, 'crds', 'b.yaml'), '');
    writeFileSync(join(dir, 'crds', 'a.yaml'), '');
    const found = findCapiBinaries({ HCS_TESTBED_CAPI_BIN: dir });
    expect('missing' in found).toBe(false);
    if (!('missing' in found)) {
      expect(found.core).toBe(join(dir, 'cluster-api-manager'));
      expect(found.crds).toEqual([join(dir, 'crds', 'a.yaml'), join(dir, 'crds', 'b.yaml')]);
    }
  });
});
