/**
 * What a continued incident ended in, from a bundle (test/realcluster/kind-incident.test.ts compares a live cluster's
 * with its embedded replay's): names that differ between two runs (a new Machine's random suffix, server and volume
 * ids) are left out; what the disk-reuse contract is about stays — per deployment, template, pool hostname and phase
 * the machines; per hostname the servers' states; per (hostname, slot) the persistent volumes' states and the
 * hostname of the server each is attached to.
 */
import type { Bundle } from '../../src/harness/capture/bundle.js';
import { ANNOTATION_CLONED_FROM_NAME, LABEL_DEPLOYMENT_NAME } from '../../src/product/api/capi.js';
import { META_HOSTNAME, META_PERSISTENT, META_SLOT } from '../../src/product/api/metadata.js';

export interface IncidentOutcome {
  machines: string[];
  servers: string[];
  volumes: string[];
}

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  spec?: { infrastructureRef?: { name: string } };
  status?: { phase?: string; hostname?: string };
}

export function incidentOutcome(b: Bundle): IncidentOutcome {
  const objs = b.management.objects as unknown as Obj[];
  const hms = new Map(objs.filter((o) => o.kind === 'HCSMachine').map((o) => [o.metadata.name, o]));
  const machines = objs
    .filter((o) => o.kind === 'Machine')
    .map((m) => {
      const hm = hms.get(m.spec?.infrastructureRef?.name ?? '');
      const template = hm ? (hm.metadata.annotations?.[ANNOTATION_CLONED_FROM_NAME] ?? '?') : 'no HCSMachine';
      return `${m.metadata.labels?.[LABEL_DEPLOYMENT_NAME] ?? 'control plane'} ${template} ${hm?.status?.hostname ?? '(no entry)'} ${m.status?.phase ?? '-'}${m.metadata.deletionTimestamp ? ' deleting' : ''}`;
    })
    .sort();
  const hostOf = new Map(b.cloud.servers.map((s) => [s.id, ((s.metadata ?? {}) as Record<string, string>)[META_HOSTNAME] ?? s.name]));
  const servers = b.cloud.servers.map((s) => `${hostOf.get(s.id)} ${s.status}`).sort();
  const volumes = b.cloud.volumes
    .filter((v) => v.metadata[META_PERSISTENT] === 'true')
    .map((v) => {
      const on = v.attachments[0]?.server_id;
      return `${v.metadata[META_HOSTNAME]}/${v.metadata[META_SLOT]} ${v.status}${on ? ` on ${hostOf.get(on) ?? on}` : ''}`;
    })
    .sort();
  return { machines, servers, volumes };
}
