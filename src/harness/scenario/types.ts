/** The scenario language (YAML). See docs/scenarios.md for the reference. */
import type { ScheduleItem } from './schedule.js';

export interface CheckSpec {
  /** Check type, e.g. "machines", "nodes", "persistentDisks". */
  type: string;
  params: Record<string, unknown>;
  /** Where it was written, for messages. */
  line: number;
}

interface StepBase {
  index: number;
  name?: string;
  line: number;
  /** SPEC rule IDs this step exercises. */
  rules?: string[];
}

export interface ApplyStep extends StepBase {
  kind: 'apply';
  /** Manifest files, resolved relative to the scenario file. */
  files: string[];
  /** Inline manifests (objects). */
  inline: unknown[];
  /** When set, the apply must be rejected and the error must contain this text (e.g. a rule ID). */
  expectError?: string;
}

export interface KubectlStep extends StepBase {
  kind: 'kubectl';
  command: string;
  /** Run the real kubectl against the testbed's HTTP facade instead of the built-in interpreter. */
  real?: boolean;
  /** Substrings that must appear in the command's output. */
  expectOutput?: string[];
  expectError?: string;
}

export interface WaitStep extends StepBase {
  kind: 'wait';
  checks: CheckSpec[];
  timeoutMs: number;
}

export interface ExpectStep extends StepBase {
  kind: 'expect';
  checks: CheckSpec[];
}

export interface WriteStep extends StepBase {
  kind: 'write';
  hostnames: string[];
  path: string;
  /** Content; "{hostname}" is replaced by each hostname. */
  content: string;
}

export interface AdvanceStep extends StepBase {
  kind: 'advance';
  ms: number;
}

export interface FaultStep extends StepBase {
  kind: 'fault';
  /** A mock-hcs fault rule (HCS-6), or a control action. */
  action: { add: Record<string, unknown> } | { clear: true } | { release: string | true };
}

export interface CrashStep extends StepBase {
  kind: 'crash';
  /** Controller names, or the groups "provider", "capi", "guest", "all". */
  controllers: string[];
  /** How long the controllers stay down (virtual time). */
  downForMs: number;
}

export interface EditStep extends StepBase {
  kind: 'edit';
  target: { kind: string; name: string; namespace: string };
  /** Dotted field path -> new value (null removes the field). */
  set: Record<string, unknown>;
}

export interface ReadStep extends StepBase {
  kind: 'read';
  hostname: string;
  path: string;
  /** Expected content; omitted with absent: true to expect no file. */
  content?: string;
  absent?: boolean;
}

export interface ServerStep extends StepBase {
  kind: 'server';
  /** The pool hostname whose live server the action is for (found through its HCSMachine). */
  hostname: string;
  /** ECS os-stop (HARD: the guest goes down, its Node NotReady) or os-start. */
  action: 'stop' | 'start';
}

export type Step = ApplyStep | KubectlStep | WaitStep | ExpectStep | WriteStep | AdvanceStep | FaultStep | CrashStep | EditStep | ReadStep | ServerStep;

export interface Scenario {
  file: string;
  name: string;
  description: string;
  rules: string[];
  seed: number;
  /** Invariant rules this scenario expects to be violated (bug reproductions, e.g. MD-3); others fail the run. */
  expectViolations: string[];
  steps: Step[];
  /** Faults and crashes anchored on call counts and events (written by `hcs-testbed explore`; docs/explore.md). */
  schedule?: ScheduleItem[];
  /**
   * `from:` — the run starts from this captured bundle (absolute path) instead of an empty testbed (issue 35,
   * docs/incident.md; src/harness/capture/replay.ts). Embedded testbeds only.
   */
  from?: string;
}
