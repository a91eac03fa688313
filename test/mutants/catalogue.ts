/**
 * The mutant catalogue (issue 22): realistic one-change bugs of the reference
 * provider, the guest and the Cluster API model, applied at test time by
 * test/mutants/runner.ts (source patches through a module-loader hook, or a
 * testbed plugin): never in the product's code paths. The kill table and the
 * survivors' reasons are in docs/scenarios.md ("Mutant catalogue").
 */
import { capiMutants, guestMutants } from './catalogue-guest-capi.js';
import { providerMutants } from './catalogue-provider.js';
import type { Mutant } from './types.js';

export const CATALOGUE: readonly Mutant[] = [...providerMutants, ...guestMutants, ...capiMutants];

/** The mutants whose id is listed (in the catalogue's order); an unknown id is an error naming it. */
export function selectMutants(ids: readonly string[]): Mutant[] {
  const known = new Set(CATALOGUE.map((m) => m.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length) throw new Error(`unknown mutant(s): ${unknown.join(', ')} (see test/mutants/catalogue*.ts)`);
  return CATALOGUE.filter((m) => ids.includes(m.id));
}
