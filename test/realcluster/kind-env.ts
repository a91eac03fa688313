/**
 * When the kind tests with the upstream managers in the cluster run (kind-incluster.test.ts, kind-incident.test.ts):
 * only with HCS_TESTBED_KIND=1 (tools/kind/ci-step.sh sets it) where the tools/capi managers are built and kind,
 * Docker and the node image are there.
 */
import { kindUnavailable } from '../../src/harness/cli/kind.js';
import { findCapiBinaries } from '../../src/harness/realcluster/upstream/capi-binaries.js';

/** Why the in-cluster kind tests are skipped, or undefined when they run. */
export function kindManagersSkipReason(): string | undefined {
  if (process.env.HCS_TESTBED_KIND !== '1') return 'set HCS_TESTBED_KIND=1 where Docker and kind run (tools/kind/ci-step.sh does)';
  const capi = findCapiBinaries();
  if ('missing' in capi) return `${capi.missing} (tools/capi/build.sh)`;
  return kindUnavailable();
}
