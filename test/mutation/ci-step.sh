#!/usr/bin/env bash
# The CI step of mutation testing (issue 37): StrykerJS on the mutants in the product-code lines changed since a
# base commit (`npm run mutation -- changed`), within a wall-clock budget. Prints the score and every survivor
# (file:line, mutator); a run cut off by the budget prints the verdicts it had (`npm run mutation -- partial`).
# It does not fail the build on survivors (they are classified in docs/scenarios.md "Mutation survivors");
# it fails when Stryker itself fails (e.g. the dry run: the unmutated library must pass).
#
#   test/mutation/ci-step.sh [BASE]     # BASE: HCS_MUTATION_BASE, else HEAD~1 (a merge commit: its first parent, the branch's whole diff)
#   HCS_MUTATION_BUDGET_S=600           # wall-clock budget (default 600 s)
set -uo pipefail
cd "$(dirname "$0")/../.."
base="${1:-${HCS_MUTATION_BASE:-HEAD~1}}"
budget="${HCS_MUTATION_BUDGET_S:-600}"
if ! git rev-parse --verify -q "$base^{commit}" >/dev/null; then
  echo "== mutation: SKIPPED, no base commit $base in this clone (set HCS_MUTATION_BASE)"
  exit 0
fi
t0=$SECONDS
timeout --kill-after=30 "$budget" npm run --silent mutation -- changed --base "$base"
rc=$?
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
  echo "== mutation: the ${budget} s budget ran out; the verdicts so far:"
  if [ -s out/mutation/changed/mutants.jsonl ]; then npm run --silent mutation -- partial out/mutation/changed; fi
  rc=0
fi
echo "== mutation step done in $((SECONDS - t0)) s (exit $rc)"
exit "$rc"
