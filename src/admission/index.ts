import type { EmbeddedStore } from '../kube/embedded-store.js';
import { validateMachine, validateMachineTemplate, validatePool } from './hcs.js';

export { validateMachine, validateMachineTemplate, validatePool } from './hcs.js';

/** Install the admission rules on an embedded management cluster. */
export function installAdmission(store: EmbeddedStore): void {
  store.addValidator('HCSMachineConfigPool', validatePool);
  store.addValidator('HCSMachineTemplate', validateMachineTemplate);
  store.addValidator('HCSMachine', validateMachine);
}
