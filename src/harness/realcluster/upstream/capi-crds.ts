/**
 * The upstream Cluster API CRDs of the pinned version (extracted by
 * tools/capi/build.sh from the module cache), for installing beside the
 * testbed's own infrastructure CRDs when the upstream managers are the
 * Cluster API. They are created or replaced whole (POST / PUT, as
 * `installCrds` does): a client-side apply would copy each into the
 * last-applied annotation, over its 256 KiB limit for the big ones
 * (KubeadmControlPlane is ~5000 lines).
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { CustomResourceDefinition } from '../../../product/api/crds/index.js';

/** The label the core controllers look up a provider's API version for the v1beta1 contract by. */
export const CONTRACT_LABEL = 'cluster.x-k8s.io/v1beta1';

/** Every CustomResourceDefinition in the given files (multi-document YAML). */
export function loadUpstreamCrds(files: readonly string[]): CustomResourceDefinition[] {
  const out: CustomResourceDefinition[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
      if (doc.errors.length) throw new Error(`${f}: ${doc.errors[0]!.message}`);
      const o = doc.toJS() as CustomResourceDefinition | null;
      if (!o) continue;
      if (o.kind !== 'CustomResourceDefinition') throw new Error(`${f}: expected a CustomResourceDefinition, got ${String(o.kind)}`);
      out.push(o);
    }
  }
  return out;
}

/** The API version a CRD stores (the one `storage: true` names). */
export function storageVersion(crd: CustomResourceDefinition): string | undefined {
  return crd.spec.versions.find((v) => v.storage)?.name;
}
