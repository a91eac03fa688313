/** Schema pieces shared by the HCS kinds (src/product/api/hcs.ts) and the Cluster API kinds (definitions.ts). */
import * as s from '../../../core/kube/schema-dsl.js';
import type { Condition } from '../capi.js';

/** Cluster API v1beta1 conditions (read as capi.ts Condition: its status and severity are the enum Cluster API writes). */
export const conditions = s.as<Condition[]>(
  s.array(
    s.object(
      {
        type: s.string('Type of condition in CamelCase.'),
        status: s.string('Status of the condition, one of True, False, Unknown.'),
        severity: s.string('Severity of a False condition: Error, Warning or Info.'),
        reason: s.string('The reason for the last transition, in CamelCase.'),
        message: s.string('A human readable message about the last transition.'),
        lastTransitionTime: s.dateTime(),
      },
      { required: ['type', 'status'] },
    ),
    'Conditions of the resource (Cluster API v1beta1 style).',
  ),
);

/** metadata of a template: labels and annotations copied to the created objects. */
export const objectMetaTemplate = s.object({ labels: s.stringMap(), annotations: s.stringMap() }, { description: 'Labels and annotations copied to the created objects.' });

/** v1beta1 FailureDomains: a map of failure domain name -> {controlPlane, attributes}. */
export const failureDomains = s.map(
  s.object({ controlPlane: s.bool('Determines if this failure domain is suitable for use by control plane machines.'), attributes: s.stringMap('Arbitrary data for use by the infrastructure provider.') }),
  'FailureDomains is a slice of failure domain objects synced from the infrastructure provider.',
);
