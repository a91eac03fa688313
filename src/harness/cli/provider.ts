/**
 * `hcs-testbed provider`: the TypeScript HCS provider as a standalone
 * controller process against any management cluster and any HCS endpoint
 * (src/product/provider/process.ts; docs/provider.md "Running the provider
 * as a process"). Bad flags exit 2 with a message; SIGTERM/SIGINT stop it
 * gracefully (exit 0).
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { errorMessage } from '../../core/errors.js';
import { DEFAULT_CREDENTIALS_SECRET, IN_CLUSTER, inClusterAvailable, parseLoopbackAddr, startProviderProcess, type ProviderProcessOptions } from '../../product/provider/process.js';

export const PROVIDER_HELP = `hcs-testbed provider — the HCS Cluster API provider as a standalone controller process

Usage:
  hcs-testbed provider --kubeconfig FILE --cloud-url URL [options]

Reconciles HCSCluster, HCSMachineConfigPool and HCSMachine objects of the management cluster
(persistent disk claiming, cloud-init injection, pool entries, the Kube-OVN AppRelease in the
workload clusters through their <cluster>-kubeconfig Secrets), calling the HCS APIs over
HTTP(S), AK/SK-signed. Wall clock; one JSON log line per decision on stdout.

Options (a flag wins over its environment variable):
  --kubeconfig FILE        management cluster ($KUBECONFIG; neither, in a pod: its service account,
                           the in-cluster config, as a Deployment in the management cluster runs)
  --context NAME           kubeconfig context ($KUBE_CONTEXT; default: the current one)
  --cloud-url URL          HCS endpoint, e.g. https://127.0.0.1:8443 ($HCS_CLOUD_URL)
  --cloud-ak AK            access key ($HCS_AK)
  --cloud-sk SK            secret key ($HCS_SK; prefer the variable: flags show in ps)
  --project ID             project id ($HCS_PROJECT_ID)
  --region NAME            region ($HCS_REGION; informational: the endpoint selects the region)
  --ca-file FILE           CA bundle for an https cloud URL ($HCS_CA_FILE; default: the system's)
  --namespace NS           reconcile only this namespace ($HCS_NAMESPACE; default: all)
  --credentials-secret NS/NAME   follow this Secret's ak/sk keys (HCS-5; default ${DEFAULT_CREDENTIALS_SECRET}; "" = off)
  --health-addr ADDR       /healthz and /readyz ($HCS_HEALTH_ADDR, default 127.0.0.1:8081; port 0 = a free one, logged;
                           loopback, or in a pod its own $POD_IP:PORT, for the kubelet's probes)
  --stop-file FILE         stop (as on SIGTERM) once FILE exists ($HCS_STOP_FILE: the run creates it when it ends)
  --metrics-addr ADDR      /metrics (Prometheus text; default: served on the health address)
  --speed X                testbed runs only: requeue and backoff delays X times shorter, to match
                           hcs-testbed run --speed X (default 1: a real deployment); time itself,
                           timestamps, certificates and signatures stay on the wall clock
  -h, --help

Leader election: not implemented. Run one replica per management cluster (a second one would
reconcile the same objects; the provider's writes are optimistic-concurrency safe, but the cloud
calls would be duplicated). A stopped or killed process loses nothing: a new one lists every
object and continues from the cluster's and the cloud's state.

Exit codes: 0 stopped by SIGTERM/SIGINT, 1 failed at runtime, 2 bad flags.
`;

const OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'cloud-url': { type: 'string' },
  'cloud-ak': { type: 'string' },
  'cloud-sk': { type: 'string' },
  project: { type: 'string' },
  region: { type: 'string' },
  'ca-file': { type: 'string' },
  namespace: { type: 'string' },
  'credentials-secret': { type: 'string' },
  'health-addr': { type: 'string' },
  'stop-file': { type: 'string' },
  'metrics-addr': { type: 'string' },
  speed: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageError extends Error {}

/** Flags and environment → options; throws UsageError naming the flag. */
export function providerOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): ProviderProcessOptions | 'help' {
  let values;
  try {
    values = parseArgs({ args: argv, options: OPTIONS, allowPositionals: false }).values;
  } catch (e) {
    throw new UsageError(errorMessage(e));
  }
  if (values.help) return 'help';
  const pick = (flag: keyof typeof OPTIONS, envName: string): string | undefined => {
    const v = values[flag] as string | undefined;
    return v !== undefined ? v : env[envName] || undefined;
  };
  const required = (flag: keyof typeof OPTIONS, envName: string): string => {
    const v = pick(flag, envName);
    if (!v) throw new UsageError(`--${flag} is required (or $${envName})`);
    return v;
  };
  // Neither --kubeconfig nor $KUBECONFIG: in a pod, its service account (controller-runtime's GetConfig order).
  const kubeconfig = pick('kubeconfig', 'KUBECONFIG') === undefined && inClusterAvailable(env) ? IN_CLUSTER : required('kubeconfig', 'KUBECONFIG').split(':')[0]!;
  const cloudUrl = required('cloud-url', 'HCS_CLOUD_URL');
  let url: URL;
  try {
    url = new URL(cloudUrl);
  } catch {
    throw new UsageError(`--cloud-url must be an http(s) URL, got "${cloudUrl}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--cloud-url must be an http(s) URL, got "${cloudUrl}"`);
  const ak = required('cloud-ak', 'HCS_AK');
  const sk = required('cloud-sk', 'HCS_SK');
  const projectId = required('project', 'HCS_PROJECT_ID');
  const caFile = pick('ca-file', 'HCS_CA_FILE');
  let caPem: string | undefined;
  if (caFile) {
    try {
      caPem = readFileSync(caFile, 'utf8');
    } catch (e) {
      throw new UsageError(`--ca-file: cannot read "${caFile}": ${errorMessage(e)}`);
    }
    if (!caPem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca-file: "${caFile}" holds no PEM certificate`);
  }
  try {
    if (kubeconfig !== IN_CLUSTER) readFileSync(kubeconfig);
  } catch (e) {
    throw new UsageError(`--kubeconfig: cannot read "${kubeconfig}": ${errorMessage(e)}`);
  }
  const cred = values['credentials-secret'];
  if (cred !== undefined && cred !== '' && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/.test(cred)) throw new UsageError(`--credentials-secret must be NAMESPACE/NAME or "", got "${cred}"`);
  const healthAddr = pick('health-addr', 'HCS_HEALTH_ADDR') ?? '127.0.0.1:8081';
  const stopFile = pick('stop-file', 'HCS_STOP_FILE');
  const metricsAddr = values['metrics-addr'];
  const podIp = env.POD_IP || undefined;
  try {
    parseLoopbackAddr('--health-addr', healthAddr, podIp);
    if (metricsAddr !== undefined) parseLoopbackAddr('--metrics-addr', metricsAddr, podIp);
  } catch (e) {
    throw new UsageError(errorMessage(e));
  }
  let speed: number | undefined;
  if (values.speed !== undefined) {
    speed = Number(values.speed);
    if (values.speed.trim() === '' || !Number.isFinite(speed) || speed <= 0 || speed > 10_000) throw new UsageError(`--speed must be a number above 0 and at most 10000, got "${values.speed}"`);
  }
  const context = pick('context', 'KUBE_CONTEXT');
  const namespace = pick('namespace', 'HCS_NAMESPACE');
  const region = pick('region', 'HCS_REGION');
  return {
    kubeconfig,
    cloudUrl,
    ak,
    sk,
    projectId,
    healthAddr,
    ...(podIp ? { podIp } : {}),
    ...(context ? { context } : {}),
    ...(namespace ? { namespace } : {}),
    ...(region ? { region } : {}),
    ...(caPem ? { caPem } : {}),
    ...(cred !== undefined ? { credentialsSecret: cred } : {}),
    ...(metricsAddr !== undefined ? { metricsAddr } : {}),
    ...(speed !== undefined ? { speed } : {}),
    ...(stopFile ? { stopFile } : {}),
  };
}

export async function providerMain(argv: string[], write: (s: string) => void): Promise<number> {
  let opts;
  try {
    opts = providerOptions(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    write(`error: ${e.message}\n(see hcs-testbed provider --help)\n`);
    return 2;
  }
  if (opts === 'help') {
    write(PROVIDER_HELP);
    return 0;
  }
  let proc;
  try {
    proc = await startProviderProcess(opts);
  } catch (e) {
    process.stderr.write(`error: the provider did not start: ${errorMessage(e)}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    // --stop-file: the run that started us asks us to stop before it takes the apiserver down (docs/real-clusters.md §7).
    const stopFile = opts.stopFile;
    const poll = stopFile ? setInterval(() => existsSync(stopFile) && onSignal('SIGTERM'), 200) : undefined;
    const onSignal = (sig: NodeJS.Signals): void => {
      if (poll) clearInterval(poll);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      proc.stop(sig).then(
        () => resolve(0),
        (e: unknown) => {
          process.stderr.write(`error: stopping: ${errorMessage(e)}\n`);
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
