import type { EmbeddedStore } from '../../../core/kube/embedded-store.js';
import { CRDS } from './definitions.js';

/**
 * Make an embedded store validate and prune every custom resource against
 * its CRD schema (src/product/api/crds/definitions.ts), as a real apiserver does.
 */
export function installCrdSchemas(store: EmbeddedStore): void {
  for (const crd of CRDS) {
    const schema = crd.spec.versions[0]?.schema.openAPIV3Schema;
    if (schema) store.setSchema(crd.spec.names.kind, schema, crd.spec.versions[0]?.subresources?.scale);
  }
}
