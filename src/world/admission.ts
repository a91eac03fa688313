/**
 * The admission of the management cluster: Cluster API's webhooks
 * (src/world/capi/admission.ts) and the HCS provider's (src/product/api/admission.ts)
 * in one table.
 */
import type { Defaulter, EmbeddedStore, Validator } from '../core/kube/embedded-store.js';
import { defaultMachineDeployment, validateCluster, validateKcp, validateMachineDeployment, validateMachineSet } from './capi/admission.js';
import { webhookDecode } from './webhook-decode.js';
import { validateMachine, validateMachineTemplate, validatePool } from '../product/api/admission.js';

export { validateMachine, validateMachineTemplate, validatePool } from '../product/api/admission.js';
export { defaultMachineDeployment, validateCluster, validateMachineDeployment } from './capi/admission.js';

/** The admission of one kind: defaulters run first (in order), then every validator sees the defaulted object. */
export interface KindAdmission {
  kind: string;
  defaulters: readonly Defaulter[];
  validators: readonly Validator[];
}

/**
 * The one table of admission rules (defaulting and validation). Both the
 * embedded management cluster (installAdmission) and the admission webhook
 * served to a real kube-apiserver (src/harness/realcluster/apiserver/webhook.ts) take their
 * rules from here.
 */
export const ADMISSION: readonly KindAdmission[] = [
  // Every webhook decodes the object into its Go type first (webhook-decode.ts): an int32 out of range is its 400.
  { kind: 'HCSMachineConfigPool', defaulters: [webhookDecode('HCSMachineConfigPool')], validators: [validatePool] },
  { kind: 'HCSMachineTemplate', defaulters: [webhookDecode('HCSMachineTemplate')], validators: [validateMachineTemplate] },
  { kind: 'HCSMachine', defaulters: [webhookDecode('HCSMachine')], validators: [validateMachine] },
  { kind: 'Cluster', defaulters: [webhookDecode('Cluster')], validators: [validateCluster] },
  { kind: 'MachineDeployment', defaulters: [webhookDecode('MachineDeployment'), defaultMachineDeployment], validators: [validateMachineDeployment] },
  // Cluster API's MachineSet webhooks (internal/webhooks/machineset.go): here the decode and the testbed's replicas limit.
  { kind: 'MachineSet', defaulters: [webhookDecode('MachineSet')], validators: [validateMachineSet] },
  { kind: 'KubeadmControlPlane', defaulters: [webhookDecode('KubeadmControlPlane')], validators: [validateKcp] },
];

/** The admission of `kind`, or undefined when no rule applies to it. */
export function admissionFor(kind: string): KindAdmission | undefined {
  return ADMISSION.find((a) => a.kind === kind);
}

/** Install the admission rules (defaulting and validation) on an embedded management cluster. */
export function installAdmission(store: EmbeddedStore): void {
  for (const a of ADMISSION) {
    for (const d of a.defaulters) store.addDefaulter(a.kind, d);
    for (const v of a.validators) store.addValidator(a.kind, v);
  }
}
