/**
 * `hcs-testbed capture` and `hcs-testbed doctor` (issue 35; docs/incident.md).
 * Exit codes: capture 0 written, 1 the cluster or cloud failed, 2 bad input;
 * doctor 0 clean, 1 violations, 2 bad input (a bundle that cannot be read,
 * missing flags).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { errorMessage } from '../../core/errors.js';
import { ClientNodeKube } from '../../core/kube/client-node.js';
import { RealClock } from '../../core/clock.js';
import { dumpYaml } from '../../core/yaml.js';
import { HcsClient } from '../../product/cloud/index.js';
import { cloudTransport } from '../../product/provider/process.js';
import { LABEL_DEPLOYMENT_NAME } from '../../product/api/capi.js';
import { BundleError, serializeBundle, type Bundle, type BundleDisk, type DataMarker } from '../capture/bundle.js';
import { readBundleFile } from '../capture/bundle-file.js';
import { captureBundle } from '../capture/capture.js';
import { offlineBundle } from '../capture/offline.js';
import { bundleState } from '../capture/state.js';
import { doctor, doctorJson, doctorJunit, doctorText } from '../capture/doctor.js';

export const CAPTURE_HELP = `hcs-testbed capture — a management cluster and its HCS project in one bundle (docs/incident.md)

Usage:
  hcs-testbed capture --kubeconfig FILE [--context C] [--namespace NS]... --cloud-url URL --project ID [options]
  hcs-testbed capture --offline --kube-dump FILE... [--workload-dump NS/CLUSTER=FILE]... --cloud-json FILE... --project ID

What it reads: the Cluster API and HCS objects with Secrets, ConfigMaps and Events of the namespaces (default:
every namespace holding a Cluster), walked as clusterctl move walks them; each workload cluster through its
<cluster>-kubeconfig Secret (Nodes and the rest); ECS servers, EVS volumes, VPC ports and subnets, IMS images
(the documented list calls, paged by marker), flavors and AZs. The AK/SK come from $HCS_AK and $HCS_SK.
Credentials never enter the bundle: Secret data, private keys and bootstrap tokens are cut (certificates stay),
and the bundle's "redactions" list says what was cut.

Options:
  --kubeconfig FILE        the management cluster ($KUBECONFIG)
  --context NAME           its context (default: the current one)
  --namespace NS           a namespace to capture (repeatable)
  --cloud-url URL          HCS endpoint ($HCS_CLOUD_URL); AK/SK from $HCS_AK, $HCS_SK
  --project ID             HCS project id ($HCS_PROJECT_ID)
  --region NAME            region ($HCS_REGION; recorded only)
  --ca-file FILE           CA bundle for an https cloud URL ($HCS_CA_FILE)
  --provider-log FILE      the provider's log (kubectl logs -n cpaas-system deployment/hcs-controller-manager > FILE)
  --disks FILE             what the nodes showed: JSON {"disks": [{volumeId, fsType, label, files}],
                           "dataMarkers": [{hostname, path, content, volumeId, persistent, mountPath}]}
  --page-size N            page size of the cloud's list calls (default: the largest each API takes)
  --offline                read dumps instead of a cluster: --kube-dump FILE (kubectl get ... -o yaml|json,
                           repeatable), --workload-dump NS/CLUSTER=FILE (the workload cluster's Nodes etc.),
                           --cloud-json FILE (an SDK's or the API's JSON answer of a list call: servers,
                           volumes, ports, subnets, images, flavors, availabilityZoneInfo; repeatable)
  --out FILE               the bundle (default incident.bundle.json)
  --scenario FILE          also write a scenario that starts from the bundle (from:), to replay the incident
`;

export const DOCTOR_HELP = `hcs-testbed doctor — the disk-reuse contract judged on one state, read-only (docs/incident.md)

Usage:
  hcs-testbed doctor BUNDLE [--format text|json|junit] [--out FILE]
  hcs-testbed doctor --kubeconfig FILE --cloud-url URL --project ID [capture's options]   (a live cluster)

Runs the invariants the scenario runner checks at every instant (the same library) and the rules that need no
history, and prints every violation with its rule and evidence: stranded data (DISK-8), two volumes for one
(hostname, slot) and a volume on another hostname's server (DISK-3), a pool entry bound to a machine that is gone
or released while its holder's server exists (POOL-4), orphaned servers (HCS-1) and volumes (TPL-3), Node IPs
that are not the entry's (NET-7), runtime ids in templates (TPL-4), maxSurge > 0 with persistent disks (MD-3,
KCP-1), a full pool (POOL-2), machines beyond the rollout strategy (MD-1).
Exit codes: 0 clean, 1 violations, 2 bad input.
`;

const OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', multiple: true },
  'cloud-url': { type: 'string' },
  project: { type: 'string' },
  region: { type: 'string' },
  'ca-file': { type: 'string' },
  'provider-log': { type: 'string' },
  disks: { type: 'string' },
  'page-size': { type: 'string' },
  offline: { type: 'boolean' },
  'kube-dump': { type: 'string', multiple: true },
  'workload-dump': { type: 'string', multiple: true },
  'cloud-json': { type: 'string', multiple: true },
  out: { type: 'string' },
  scenario: { type: 'string' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function readText(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--${flag}: cannot read "${file}": ${errorMessage(e)}`);
  }
}

function nodeFacts(v: Values): { disks?: BundleDisk[]; dataMarkers?: DataMarker[] } {
  if (!v.disks) return {};
  let doc: { disks?: unknown; dataMarkers?: unknown };
  try {
    doc = JSON.parse(readText('disks', v.disks)) as typeof doc;
  } catch (e) {
    throw e instanceof UsageError ? e : new UsageError(`--disks: "${v.disks}" is not JSON: ${errorMessage(e)}`);
  }
  if (doc.disks !== undefined && !Array.isArray(doc.disks)) throw new UsageError('--disks: "disks" must be a list');
  if (doc.dataMarkers !== undefined && !Array.isArray(doc.dataMarkers)) throw new UsageError('--disks: "dataMarkers" must be a list');
  return { ...(doc.disks ? { disks: doc.disks as BundleDisk[] } : {}), ...(doc.dataMarkers ? { dataMarkers: doc.dataMarkers as DataMarker[] } : {}) };
}

/** A bundle from the flags: live (kubeconfig + cloud) or offline (dumps). */
async function bundleFromFlags(v: Values, env: NodeJS.ProcessEnv): Promise<Bundle> {
  const pick = (flag: keyof typeof OPTIONS, name: string): string | undefined => (v[flag] as string | undefined) ?? (env[name] || undefined);
  const projectId = pick('project', 'HCS_PROJECT_ID');
  if (!projectId) throw new UsageError('--project is required (or $HCS_PROJECT_ID)');
  const region = pick('region', 'HCS_REGION');
  const providerLog = v['provider-log'] ? readText('provider-log', v['provider-log']) : undefined;
  const facts = nodeFacts(v);
  const secrets = [env.HCS_AK, env.HCS_SK];
  if (v.offline) {
    if (!v['kube-dump']?.length) throw new UsageError('--offline needs --kube-dump FILE (kubectl get ... -o yaml)');
    if (!v['cloud-json']?.length) throw new UsageError('--offline needs --cloud-json FILE (the JSON of the cloud\'s list calls)');
    const workloadDumps = (v['workload-dump'] ?? []).map((w) => {
      const m = /^([^/=]+)\/([^=]+)=(.+)$/.exec(w);
      if (!m) throw new UsageError(`--workload-dump must be NAMESPACE/CLUSTER=FILE, got "${w}"`);
      return { namespace: m[1]!, cluster: m[2]!, file: m[3]! };
    });
    return offlineBundle({ kubeDumps: v['kube-dump'], workloadDumps, cloudFiles: v['cloud-json'], projectId, ...(region ? { region } : {}), ...(providerLog !== undefined ? { providerLog } : {}), ...facts, secrets });
  }
  const kubeconfig = pick('kubeconfig', 'KUBECONFIG')?.split(':')[0];
  if (!kubeconfig) throw new UsageError('--kubeconfig is required (or $KUBECONFIG), or --offline with dumps');
  const cloudUrl = pick('cloud-url', 'HCS_CLOUD_URL');
  if (!cloudUrl) throw new UsageError('--cloud-url is required (or $HCS_CLOUD_URL)');
  if (!/^https?:\/\//.test(cloudUrl)) throw new UsageError(`--cloud-url must be an http(s) URL, got "${cloudUrl}"`);
  if (!env.HCS_AK || !env.HCS_SK) throw new UsageError('$HCS_AK and $HCS_SK must hold the project\'s access key and secret key (never given as flags: they would show in ps)');
  const caFile = pick('ca-file', 'HCS_CA_FILE');
  const caPem = caFile ? readText('ca-file', caFile) : undefined;
  const pageSize = v['page-size'] !== undefined ? Number(v['page-size']) : undefined;
  if (pageSize !== undefined && (!Number.isInteger(pageSize) || pageSize < 1)) throw new UsageError(`--page-size must be a positive integer, got "${v['page-size']}"`);
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(kubeconfig);
    if (v.context) kc.setCurrentContext(v.context);
  } catch (e) {
    throw new UsageError(`--kubeconfig: "${kubeconfig}": ${errorMessage(e)}`);
  }
  const cloud = new HcsClient({ transport: cloudTransport(cloudUrl, caPem), ak: env.HCS_AK, sk: env.HCS_SK, projectId, clock: new RealClock() });
  return captureBundle({
    mgmt: new ClientNodeKube(kc),
    ...(v.namespace?.length ? { namespaces: v.namespace } : {}),
    workloadClient: (text) => {
      const w = new KubeConfig();
      w.loadFromString(text);
      return new ClientNodeKube(w);
    },
    cloud,
    cloudEndpoint: cloudUrl,
    ...(region ? { region } : {}),
    secrets,
    ...(providerLog !== undefined ? { providerLog } : {}),
    ...facts,
    now: Date.now(),
    ...(pageSize ? { pageSize } : {}),
    context: kc.getCurrentContext(),
    detail: `kubeconfig ${kubeconfig}, cloud ${cloudUrl}`,
  });
}

function parse(argv: string[]): { values: Values; positionals: string[] } {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (e) {
    throw new UsageError(errorMessage(e));
  }
}

export async function captureMain(argv: string[], write: (s: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let v: Values;
  try {
    const p = parse(argv);
    v = p.values;
    if (v.help) {
      write(CAPTURE_HELP);
      return 0;
    }
    if (p.positionals.length) throw new UsageError(`capture takes no positional arguments, got "${p.positionals.join(' ')}"`);
    if (v.format !== undefined) throw new UsageError('--format is doctor\'s');
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed capture --help)\n`);
    return 2;
  }
  let bundle: Bundle;
  try {
    bundle = await bundleFromFlags(v, env);
  } catch (e) {
    if (e instanceof UsageError || e instanceof BundleError) {
      write(`error: ${errorMessage(e)}\n(see hcs-testbed capture --help)\n`);
      return 2;
    }
    write(`error: capture failed: ${errorMessage(e)}\n`);
    return 1;
  }
  const out = v.out ?? 'incident.bundle.json';
  writeFileSync(out, serializeBundle(bundle));
  write(`bundle ${out}: ${bundle.management.objects.length} objects, ${bundle.events.length} Events, ${bundle.workloads.reduce((n, w) => n + w.objects.length, 0)} workload objects, ${bundle.cloud.servers.length} servers, ${bundle.cloud.volumes.length} volumes; ${bundle.redactions.length} redaction${bundle.redactions.length === 1 ? '' : 's'} (listed in the bundle)\n`);
  for (const w of bundle.workloads.filter((x) => x.error)) write(`warning: workload cluster ${w.namespace}/${w.cluster}: ${w.error}\n`);
  if (v.scenario) {
    writeFileSync(v.scenario, scenarioSkeleton(bundle, relative(dirname(resolve(v.scenario)), resolve(out)) || basename(out)));
    write(`scenario ${v.scenario}: starts from the bundle; add the operation that failed, then hcs-testbed run ${v.scenario}\n`);
  }
  return 0;
}

/** A runnable scenario that starts from the bundle: controllers take the state over, then what the bundle shows is expected. */
export function scenarioSkeleton(b: Bundle, bundlePath: string): string {
  const mds = b.management.objects.filter((o) => o.kind === 'MachineDeployment');
  const machines = b.management.objects.filter((o) => o.kind === 'Machine');
  const checks = mds.map((md) => ({
    machines: { namespace: md.metadata.namespace ?? 'default', deployment: md.metadata.name, count: machines.filter((m) => m.metadata.namespace === md.metadata.namespace && m.metadata.labels?.[LABEL_DEPLOYMENT_NAME] === md.metadata.name).length },
  }));
  const date = b.capturedAt.slice(0, 10);
  const doc = {
    name: `incident-${date}`,
    description: `Replay of the incident captured at ${b.capturedAt} (${b.source.detail ?? b.source.kind}). Starts from the bundle; add the operation that failed after the first step.`,
    seed: 1,
    from: bundlePath,
    steps: [
      { name: 'the controllers take the captured state over', advance: '30s' },
      ...(checks.length ? [{ name: 'the machines the bundle shows', expect: checks }] : []),
    ],
  };
  return `# Written by hcs-testbed capture --scenario (docs/incident.md).
# Next: apply the operation that failed, e.g.
#   - kubectl: kubectl patch machinedeployment NAME -n NAMESPACE --type=merge -p '{"spec":{"template":{"spec":{"infrastructureRef":{"name":"NEW-TEMPLATE"}}}}}'
#   - wait:
#       - machineDeployment: {name: NAME, replicas: N, updatedReplicas: N, availableReplicas: N}
#     timeout: 2h
# and hcs-testbed explore THIS-FILE searches faults from the same state.
${dumpYaml(doc)}`;
}

export async function doctorMain(argv: string[], write: (s: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let v: Values;
  let positionals: string[];
  try {
    ({ values: v, positionals } = parse(argv));
    if (v.help) {
      write(DOCTOR_HELP);
      return 0;
    }
    if (positionals.length > 1) throw new UsageError(`doctor judges one bundle, got ${positionals.length}: ${positionals.join(' ')}`);
    if (v.format !== undefined && !['text', 'json', 'junit'].includes(v.format)) throw new UsageError(`--format must be text, json or junit, got "${v.format}"`);
    if (v.scenario !== undefined) throw new UsageError('--scenario is capture\'s');
  } catch (e) {
    write(`error: ${errorMessage(e)}\n(see hcs-testbed doctor --help)\n`);
    return 2;
  }
  let bundle: Bundle;
  let source: string;
  try {
    if (positionals[0]) {
      bundle = readBundleFile(positionals[0]);
      source = positionals[0];
    } else {
      bundle = await bundleFromFlags(v, env);
      source = `live: ${bundle.source.detail ?? 'the cluster'}`;
    }
  } catch (e) {
    if (e instanceof UsageError || e instanceof BundleError) {
      write(`error: ${errorMessage(e)}\n(see hcs-testbed doctor --help)\n`);
      return 2;
    }
    write(`error: reading the state failed: ${errorMessage(e)}\n`);
    return 2;
  }
  let state;
  try {
    state = bundleState(bundle);
  } catch (e) {
    write(`error: ${source}: the state cannot be judged: ${errorMessage(e)}\n`);
    return 2;
  }
  const report = await doctor(state, { source, capturedAt: bundle.capturedAt });
  const text = v.format === 'json' ? doctorJson(report) : v.format === 'junit' ? doctorJunit(report) : doctorText(report);
  if (v.out) {
    writeFileSync(v.out, text);
    write(`${report.clean ? 'clean' : `${report.findings.length} violation(s)`}; report in ${v.out}\n`);
  } else write(text);
  return report.clean ? 0 : 1;
}
