/**
 * Print every CRD as a multi-document YAML stream, ready for
 * `kubectl apply -f` against a real apiserver:
 *
 *   npx tsx src/product/api/crds/dump.ts > out/crds.yaml
 */
import { stringify } from 'yaml';
import { CRDS } from './definitions.js';

export function crdsYaml(): string {
  return CRDS.map((c) => stringify(c, { lineWidth: 0 })).join('---\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(crdsYaml());
