/** The shape of a catalogued mutant (test/mutants/catalogue*.ts) and of its row in the kill table. */

/** One textual change of one source file, applied at load time (hook.mjs); `from` must occur exactly once. */
export interface Patch {
  /** Repository-relative path of the TypeScript source (src/product/provider/…, src/world/guest/…, src/world/capi/…). */
  file: string;
  from: string;
  to: string;
}

export type Part = 'provider' | 'guest' | 'capi';

export interface Mutant {
  /** `<part>/<short-name>`, unique. */
  id: string;
  part: Part;
  /** The bug as a provider team would write it, in one line. */
  bug: string;
  /** SPEC rules the bug breaks (docs/rules.md). */
  rules: string[];
  /** The one change (usually one replacement; a few when the same slip repeats at each call site). */
  patches?: Patch[];
  /** A testbed plugin module (src/harness/explore/plugin.ts: options()/prepare()) that swaps in the broken part instead. */
  plugin?: string;
  /** The library scenario most likely to catch it: run first, and the one explore explores. */
  scenario: string;
  /** Explore runs this mutant is known to need (a floor on the runner's budget), e.g. as a test states it. */
  exploreRuns?: number;
  /**
   * Set when nothing a user runs can tell this mutant from the reference: why it is equivalent (or which rule
   * it would take to see it). A documented survivor; a mutant with this set that is killed is reported too.
   */
  equivalent?: string;
  /**
   * Set when the mutant is a real bug that nothing in the library or explore can reach yet: the check or flow
   * that would kill it, stated precisely. A documented gap, counted apart from equivalents.
   */
  needs?: string;
}

export type Stage = 'library' | 'explore';

export interface Kill {
  stage: Stage;
  scenario: string;
  seed: number;
  /** Explore only: the run index and its fault/crash schedule, described. */
  run?: number;
  schedule?: string[];
  /** The failing step (index and title) when a step failed. */
  step?: number;
  title?: string;
  /** Rule IDs the failure names (the violated invariants' rules, else those in the error text). */
  rules: string[];
  error: string;
}

export interface Row {
  mutant: Mutant;
  kill?: Kill;
  /** Library runs and explore runs made for this mutant. */
  libraryRuns: number;
  exploreRuns: number;
  /** Explore runs that failed on the unmutated system too (same seed and schedule): not kills. */
  exploreNoise: number;
  wallMs: number;
  /** The mutant could not be applied or run (a patch that no longer matches): counted as neither kill nor survivor. */
  broken?: string;
}
