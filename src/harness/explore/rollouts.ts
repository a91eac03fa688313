/**
 * A generator of MachineDeployment rollouts (issue 26): seeded sequences of
 * operations on a worker pool with persistent disks, written as a scenario
 * that runs the same on the model and on the upstream managers
 * (test/upstream/rollouts.test.ts, bench/upstream-generated.ts).
 *
 * Operations: scale up / down, an infrastructure template change, a version
 * change (template with the new version's image and spec.version in one
 * patch, UPG-1), pause and resume, the delete-machine annotation on the
 * current Machines, a strategy change (maxSurge / maxUnavailable), and cloud
 * faults that hold a step: a server creation held 4 min (BUILD that long,
 * "stuck create"), a server deletion 3 min slower and a volume detach that
 * times out once (2 min; the provider asks again). Each fault rule fires
 * once and is cleared after its phase settled. Operations come in phases; each phase ends with a wait for
 * the state the operations lead to (so a rollout is a phase, as
 * test/upstream/sequences.ts counts them).
 *
 * Only interleavings whose outcome does not depend on pacing are generated:
 * a pause is the first operation of its phase (a pause right after a
 * template change would race the rollout's first step on the upstream
 * side), and replicas stay within the pool (replicas + maxSurge ≤ entries).
 * Everything is a pure function of the seed (the RNG is passed in).
 */
import { SeededRng } from '../../core/rng.js';

export type RolloutOp =
  | { op: 'scale'; replicas: number }
  | { op: 'template' }
  | { op: 'version' }
  | { op: 'pause' }
  | { op: 'resume' }
  | { op: 'annotateDelete' }
  | { op: 'strategy'; maxSurge: number; maxUnavailable: number }
  | { op: 'fault'; fault: 'stuckCreate' | 'slowDelete' | 'detachTimeout' };

/** One phase: its operations, then a wait. */
export type Phase = RolloutOp[];

export interface GeneratedRollout {
  seed: number;
  initial: { replicas: number; maxSurge: number; maxUnavailable: number };
  phases: Phase[];
}

export const POOL_ENTRIES = 6;
const MAX_REPLICAS = 4;
const STRATEGIES: readonly [number, number][] = [
  [0, 1],
  [1, 0],
  [1, 1],
  [0, 2],
];
const NS = 'cpaas-system';
const MD = 'demo-md-0';

/** A seeded sequence of 2-4 phases of 1-2 operations. */
export function generateRollout(seed: number): GeneratedRollout {
  const rng = new SeededRng(seed);
  const [s0, u0] = STRATEGIES[rng.int(STRATEGIES.length)]!;
  const initial = { replicas: 2 + rng.int(2), maxSurge: s0, maxUnavailable: u0 };
  const phases: Phase[] = [];
  let replicas = initial.replicas;
  let paused = false;
  let versioned = false;
  const n = 2 + rng.int(3);
  for (let p = 0; p < n; p++) {
    const phase: Phase = [];
    const count = 1 + rng.int(2);
    for (let i = 0; i < count; i++) {
      const choices: RolloutOp['op'][] = ['scale', 'template', 'strategy', 'annotateDelete', 'fault'];
      if (!versioned) choices.push('version');
      if (paused) choices.push('resume', 'resume');
      else if (i === 0) choices.push('pause');
      const op = choices[rng.int(choices.length)]!;
      switch (op) {
        case 'scale': {
          let to = 1 + rng.int(MAX_REPLICAS);
          if (to === replicas) to = to === MAX_REPLICAS ? to - 1 : to + 1;
          replicas = to;
          phase.push({ op, replicas: to });
          break;
        }
        case 'strategy': {
          const [maxSurge, maxUnavailable] = STRATEGIES[rng.int(STRATEGIES.length)]!;
          phase.push({ op, maxSurge, maxUnavailable });
          break;
        }
        case 'fault': {
          const f = (['stuckCreate', 'slowDelete', 'detachTimeout'] as const)[rng.int(3)]!;
          phase.push({ op, fault: f });
          break;
        }
        case 'version':
          versioned = true;
          phase.push({ op });
          break;
        case 'pause':
          paused = true;
          phase.push({ op });
          break;
        case 'resume':
          paused = false;
          phase.push({ op });
          break;
        default:
          phase.push({ op });
      }
    }
    phases.push(phase);
  }
  // End resumed, so the last wait sees the rollout done.
  if (paused) phases.push([{ op: 'resume' }]);
  return { seed, initial, phases };
}

export function describeOp(o: RolloutOp): string {
  switch (o.op) {
    case 'scale':
      return `scale to ${o.replicas}`;
    case 'strategy':
      return `maxSurge ${o.maxSurge} / maxUnavailable ${o.maxUnavailable}`;
    case 'fault':
      return { stuckCreate: 'a server creation held 4 min', slowDelete: 'server deletions 3 min slower', detachTimeout: 'a volume detach that times out once (2 min)' }[o.fault];
    case 'annotateDelete':
      return 'delete-machine annotation on the current Machines';
    default:
      return o.op;
  }
}

export function describeRollout(g: GeneratedRollout): string {
  return `replicas ${g.initial.replicas}, maxSurge ${g.initial.maxSurge} / maxUnavailable ${g.initial.maxUnavailable}; ${g.phases.map((p) => p.map(describeOp).join(' + ')).join(' | ')}`;
}

/** The phases as one list of operations (for ddmin) and back: `phaseOf[i]` is the phase of operation i. */
export function flatten(g: GeneratedRollout): { ops: RolloutOp[]; phaseOf: number[] } {
  const ops: RolloutOp[] = [];
  const phaseOf: number[] = [];
  g.phases.forEach((p, i) => p.forEach((o) => (ops.push(o), phaseOf.push(i))));
  return { ops, phaseOf };
}

/** A rollout with only the operations kept (`keep`: indexes into flatten's list); empty phases dropped; resumed at the end. */
export function subset(g: GeneratedRollout, keep: readonly number[]): GeneratedRollout {
  const { ops, phaseOf } = flatten(g);
  const phases: Phase[] = [];
  let last = -1;
  let paused = false;
  for (const i of [...keep].sort((a, b) => a - b)) {
    const o = ops[i]!;
    if (phaseOf[i] !== last || (o.op === 'pause' && phases[phases.length - 1]!.length > 0)) phases.push([]);
    last = phaseOf[i]!;
    if (o.op === 'pause') paused = true;
    if (o.op === 'resume') paused = false;
    phases[phases.length - 1]!.push(o);
  }
  if (paused) phases.push([{ op: 'resume' }]);
  return { ...g, phases };
}

/**
 * What the scenario declares in force during each of its waits (the initial
 * settle, then one per phase), for the causal entry bounds of
 * test/upstream/sequences.ts (`entryBounds`): every replicas and
 * maxSurge / maxUnavailable value that holds at some time between the
 * previous wait and this one (the operations of a phase land while the
 * controllers act, so the values before and after each change count).
 */
export interface DeclaredPhase {
  replicas: number[];
  maxSurge: number[];
  maxUnavailable: number[];
}

export function declaredPhases(g: GeneratedRollout): DeclaredPhase[] {
  let cur = { replicas: g.initial.replicas, maxSurge: g.initial.maxSurge, maxUnavailable: g.initial.maxUnavailable };
  const out: DeclaredPhase[] = [{ replicas: [cur.replicas], maxSurge: [cur.maxSurge], maxUnavailable: [cur.maxUnavailable] }];
  for (const phase of g.phases) {
    const d: DeclaredPhase = { replicas: [cur.replicas], maxSurge: [cur.maxSurge], maxUnavailable: [cur.maxUnavailable] };
    for (const o of phase) {
      if (o.op === 'scale') cur = { ...cur, replicas: o.replicas };
      else if (o.op === 'strategy') cur = { ...cur, maxSurge: o.maxSurge, maxUnavailable: o.maxUnavailable };
      else continue;
      d.replicas.push(cur.replicas);
      d.maxSurge.push(cur.maxSurge);
      d.maxUnavailable.push(cur.maxUnavailable);
    }
    out.push(d);
  }
  return out;
}

// ---- the scenario ----------------------------------------------------------------

function poolManifest(): Record<string, unknown> {
  const configs = Array.from({ length: POOL_ENTRIES }, (_, i) => ({
    hostname: `demo-worker-${i + 1}`,
    networks: [{ subnetName: 'worker-subnet', ipAddress: `192.168.10.${11 + i}` }],
    persistentDisks: [{ slot: 0, size: 100, type: 'SSD', mountPath: '/var/cpaas', format: 'xfs' }],
  }));
  return { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachineConfigPool', metadata: { name: 'demo-worker-pool', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'demo' } }, spec: { configs } };
}

function templateManifest(name: string, imageName: string, flavorName: string): Record<string, unknown> {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'HCSMachineTemplate',
    metadata: { name, namespace: NS },
    spec: {
      template: {
        spec: {
          imageName,
          flavorName,
          availabilityZone: 'az1',
          rootVolume: { type: 'SSD', size: 100 },
          configPoolRef: { name: 'demo-worker-pool' },
          dataVolumes: [{ size: 20, type: 'SSD', mountPath: '/var/lib/kubelet', format: 'xfs' }],
        },
      },
    },
  };
}

function mdManifest(g: GeneratedRollout): Record<string, unknown> {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'MachineDeployment',
    metadata: { name: MD, namespace: NS },
    spec: {
      clusterName: 'demo',
      replicas: g.initial.replicas,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: g.initial.maxSurge, maxUnavailable: g.initial.maxUnavailable } },
      template: {
        spec: {
          clusterName: 'demo',
          version: 'v1.31.6',
          nodeDrainTimeout: '1m',
          nodeDeletionTimeout: '5m',
          bootstrap: { configRef: { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta1', kind: 'KubeadmConfigTemplate', name: 'demo-worker-kct' } },
          infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'HCSMachineTemplate', name: 'demo-worker-template' },
        },
      },
    },
  };
}

const IMAGE = { v1: 'alauda-os-v4.1-k8s-v1.31.6', v2: 'alauda-os-v4.2-k8s-v1.32.3' };
const FLAVORS = ['s6.large.2', 's6.xlarge.2'];

function mergePatch(spec: unknown): Record<string, unknown> {
  return { kubectl: `kubectl patch machinedeployment ${MD} -n ${NS} --type=merge -p='${JSON.stringify({ spec })}'`, expectOutput: ['patched'] };
}

/**
 * The scenario (as a plain object, to be written as YAML): the worker cluster
 * from the library (Cluster, HCSCluster, KubeadmConfigTemplate), a pool of
 * POOL_ENTRIES entries with a persistent disk each, the template and the
 * MachineDeployment; then each phase's steps and a wait. `expectViolations`:
 * the invariant rules the run is expected to break (a surge Machine that takes
 * a spare entry strands its predecessor's disk, MD-3: the differential driver
 * takes them from the model's run, and the other side must break them too).
 */
export function rolloutScenario(g: GeneratedRollout, name = `generated-rollout-${g.seed}`, expectViolations: readonly string[] = []): Record<string, unknown> {
  const steps: Record<string, unknown>[] = [
    { name: 'the worker cluster, a pool of 6 entries with persistent disks, the MachineDeployment', apply: ['library:worker-cluster/01-cluster.yaml', 'library:worker-cluster/04-worker-kct.yaml'] },
    { apply: [poolManifest(), templateManifest('demo-worker-template', IMAGE.v1, FLAVORS[0]!), mdManifest(g)] },
  ];
  let replicas = g.initial.replicas;
  let paused = false;
  let image = IMAGE.v1;
  let version = 'v1.31.6';
  let templates = 0;
  /** The template the MachineDeployment points at differs from the one its Machines were rolled to (paused). */
  let pending = false;
  const settle = (title: string): Record<string, unknown> => ({
    name: title,
    wait: [
      { machineDeployment: { name: MD, replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: paused && pending ? 0 : replicas } },
      { machines: { deployment: MD, phase: 'Running', count: replicas } },
      { machines: { deployment: MD, count: replicas } },
    ],
    timeout: '3h',
  });
  steps.push(settle(`${replicas} workers`));
  g.phases.forEach((phase, pi) => {
    const after: Record<string, unknown>[] = [];
    for (const o of phase) {
      switch (o.op) {
        case 'scale':
          replicas = o.replicas;
          steps.push({ kubectl: `kubectl scale machinedeployment ${MD} -n ${NS} --replicas=${o.replicas}` });
          break;
        case 'template': {
          templates++;
          const tpl = `demo-worker-template-g${templates}`;
          steps.push({ apply: [templateManifest(tpl, image, FLAVORS[templates % 2]!)] });
          steps.push(mergePatch({ template: { spec: { infrastructureRef: { name: tpl } } } }));
          pending = true;
          break;
        }
        case 'version': {
          templates++;
          image = IMAGE.v2;
          version = 'v1.32.3';
          const tpl = `demo-worker-template-g${templates}`;
          steps.push({ apply: [templateManifest(tpl, image, FLAVORS[templates % 2]!)] });
          steps.push(mergePatch({ template: { spec: { version, infrastructureRef: { name: tpl } } } }));
          pending = true;
          break;
        }
        case 'pause':
          paused = true;
          steps.push(mergePatch({ paused: true }));
          break;
        case 'resume':
          paused = false;
          steps.push(mergePatch({ paused: false }));
          break;
        case 'strategy':
          steps.push(mergePatch({ strategy: { rollingUpdate: { maxSurge: o.maxSurge, maxUnavailable: o.maxUnavailable } } }));
          break;
        case 'annotateDelete':
          steps.push({ kubectl: `kubectl annotate machines -n ${NS} -l cluster.x-k8s.io/deployment-name=${MD} cluster.x-k8s.io/delete-machine=yes --overwrite` });
          break;
        case 'fault':
          // Each holds one cloud call and then lets go by itself; the rule is cleared once the phase settled.
          if (o.fault === 'stuckCreate') steps.push({ fault: { service: 'ecs', operation: 'createServers', effect: { type: 'latency', ms: 240_000 }, count: 1 } });
          else if (o.fault === 'slowDelete') steps.push({ fault: { service: 'ecs', operation: 'deleteServers', effect: { type: 'latency', ms: 180_000 }, count: 1 } });
          else steps.push({ fault: { service: 'ecs', operation: 'detachVolume', effect: { type: 'timeout', ms: 120_000 }, count: 1 } });
          after.push({ fault: { clear: true } });
          break;
      }
    }
    if (!paused) pending = false;
    steps.push(settle(`phase ${pi + 1}: ${phase.map(describeOp).join(' + ')}`));
    steps.push(...after);
  });
  return {
    name,
    description: `Generated rollout (src/harness/explore/rollouts.ts, seed ${g.seed}): ${describeRollout(g)}`,
    rules: ['MD-1', 'MD-2', 'POOL-4', 'DISK-3'],
    seed: g.seed,
    ...(expectViolations.length ? { expectViolations: [...expectViolations] } : {}),
    steps,
  };
}
