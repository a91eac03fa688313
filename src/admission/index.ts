import { validateKcp } from '../capi/admission.js';
import type { EmbeddedStore } from '../kube/embedded-store.js';
import { defaultMachineDeployment, validateMachineDeployment } from './capi.js';
import { validateMachine, validateMachineTemplate, validatePool } from './hcs.js';

export { validateMachine, validateMachineTemplate, validatePool } from './hcs.js';
export { defaultMachineDeployment, validateMachineDeployment } from './capi.js';

/** Install the admission rules (defaulting and validation) on an embedded management cluster. */
export function installAdmission(store: EmbeddedStore): void {
  store.addValidator('HCSMachineConfigPool', validatePool);
  store.addValidator('HCSMachineTemplate', validateMachineTemplate);
  store.addValidator('HCSMachine', validateMachine);
  store.addDefaulter('MachineDeployment', defaultMachineDeployment);
  store.addValidator('MachineDeployment', validateMachineDeployment);
  store.addValidator('KubeadmControlPlane', validateKcp);
}
