/**
 * Admission rules for the HCS provider's resources, as the documents state
 * them (SPEC NET-1/2/3/6, DISK-1/2/4, TPL-3/4, POOL-1), beside their
 * description (hcs.ts): the fields a rule makes mandatory are the ones the
 * description marks `assured`. Each rejection names the field and the rule; a
 * rejected write changes nothing (the store validates before it stores).
 */
import { dataVolume, hcsMachineSpec, persistentDisk, poolNetwork, type HCSMachineConfigPool, type HCSMachineSpec, type HCSMachineTemplate, type PersistentDisk } from './hcs.js';
import type { FieldCause } from '../../core/kube/errors.js';
import type { KubeObject } from '../../core/kube/types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
// The mandatory fields and the known NIC fields are the description's (hcs.ts: the `assured` keys, the properties).
const DISK_FIELDS = persistentDisk.assured;
const NETWORK_FIELDS = poolNetwork.keys;
const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const HOSTNAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function validatePool(op: 'CREATE' | 'UPDATE', obj: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = obj.spec as Obj | undefined;
  if (!isObj(spec) || !Array.isArray(spec.configs)) {
    return [{ field: 'spec.configs', message: 'Required value: a list with one entry per machine', rule: 'POOL-1' }];
  }
  const seenHost = new Map<string, number>();
  spec.configs.forEach((raw, i) => {
    const f = `spec.configs[${i}]`;
    if (!isObj(raw)) return causes.push({ field: f, message: 'must be an object', rule: 'POOL-1' });
    const host = raw.hostname;
    if (typeof host !== 'string' || !HOSTNAME.test(host)) causes.push({ field: `${f}.hostname`, message: `Invalid value: ${JSON.stringify(host)}: a lowercase RFC 1123 hostname is required`, rule: 'POOL-1' });
    else if (seenHost.has(host)) causes.push({ field: `${f}.hostname`, message: `Duplicate value: "${host}" is already used by spec.configs[${seenHost.get(host)}]`, rule: 'POOL-1' });
    else seenHost.set(host, i);
    if (!Array.isArray(raw.networks) || raw.networks.length === 0) {
      causes.push({ field: `${f}.networks`, message: 'Required value: at least one network (subnet selector + ipAddress)', rule: 'POOL-1' });
    } else {
      raw.networks.forEach((n, j) => {
        const nf = `${f}.networks[${j}]`;
        if (!isObj(n)) return causes.push({ field: nf, message: 'must be an object', rule: 'NET-6' });
        for (const k of Object.keys(n)) {
          if (!NETWORK_FIELDS.includes(k)) causes.push({ field: `${nf}.${k}`, message: `Forbidden: per-NIC "${k}" is not supported; an entry is one subnet selector plus one static IP`, rule: 'NET-6' });
        }
        const { subnetName, subenetName, subnetId, ipAddress } = n;
        if (subnetName !== undefined && subnetId !== undefined) causes.push({ field: `${nf}.subnetId`, message: 'Forbidden: set subnetName or subnetId, not both', rule: 'NET-1' });
        if (subenetName !== undefined && subnetName !== undefined && subenetName !== subnetName) {
          causes.push({ field: `${nf}.subnetName`, message: `Invalid value: "${String(subnetName)}": must equal the legacy subenetName "${String(subenetName)}"`, rule: 'NET-2' });
        }
        if (subenetName !== undefined && subnetId !== undefined) causes.push({ field: `${nf}.subnetId`, message: 'Forbidden: conflicting subnet selectors (subenetName and subnetId)', rule: 'NET-3' });
        if (subnetName === undefined && subenetName === undefined && subnetId === undefined) causes.push({ field: nf, message: 'Required value: one subnet selector (subnetName or subnetId)', rule: 'NET-1' });
        if (typeof ipAddress !== 'string' || !IPV4.test(ipAddress)) causes.push({ field: `${nf}.ipAddress`, message: `Invalid value: ${JSON.stringify(ipAddress)}: a static IPv4 address is required`, rule: 'NET-7' });
      });
    }
    if (raw.persistentDisks !== undefined) {
      if (!Array.isArray(raw.persistentDisks)) return causes.push({ field: `${f}.persistentDisks`, message: 'must be a list', rule: 'DISK-1' });
      const slots: number[] = [];
      raw.persistentDisks.forEach((d, j) => {
        const df = `${f}.persistentDisks[${j}]`;
        if (!isObj(d)) return causes.push({ field: df, message: 'must be an object', rule: 'DISK-1' });
        for (const k of DISK_FIELDS) if (d[k] === undefined || d[k] === '') causes.push({ field: `${df}.${k}`, message: 'Required value', rule: 'DISK-1' });
        if (d.slot !== undefined && (!Number.isInteger(d.slot) || (d.slot as number) < 0)) causes.push({ field: `${df}.slot`, message: `Invalid value: ${JSON.stringify(d.slot)}: a non-negative integer`, rule: 'DISK-2' });
        else if (typeof d.slot === 'number') slots.push(d.slot);
        if (d.size !== undefined && (!Number.isInteger(d.size) || (d.size as number) <= 0)) causes.push({ field: `${df}.size`, message: `Invalid value: ${JSON.stringify(d.size)}: size in GiB must be a positive integer`, rule: 'DISK-1' });
        if (typeof d.mountPath === 'string' && !d.mountPath.startsWith('/')) causes.push({ field: `${df}.mountPath`, message: `Invalid value: "${d.mountPath}": must be an absolute path`, rule: 'DISK-1' });
      });
      const sorted = [...slots].sort((a, b) => a - b);
      const dup = sorted.find((s, k) => k > 0 && sorted[k - 1] === s);
      if (dup !== undefined) causes.push({ field: `${f}.persistentDisks`, message: `Duplicate value: slot ${dup} is used twice for hostname ${String(host)}`, rule: 'DISK-2' });
      else if (sorted.some((s, k) => s !== k)) causes.push({ field: `${f}.persistentDisks`, message: `Invalid value: slots [${slots.join(', ')}] must be contiguous from 0 for hostname ${String(host)}`, rule: 'DISK-2' });
    }
  });
  if (op === 'UPDATE' && old) causes.push(...immutableAcceptedDisks(obj as HCSMachineConfigPool, old as HCSMachineConfigPool));
  return causes;
}

/** DISK-4: once the provider accepted a disk (status.entries[].acceptedDisks), its slot, size, type, format and mountPath are fixed. */
function immutableAcceptedDisks(next: HCSMachineConfigPool, old: HCSMachineConfigPool): FieldCause[] {
  const causes: FieldCause[] = [];
  for (const entry of old.status?.entries ?? []) {
    const i = next.spec.configs.findIndex((c) => c.hostname === entry.hostname);
    for (const accepted of entry.acceptedDisks ?? []) {
      if (i < 0) {
        if (entry.machine) causes.push({ field: 'spec.configs', message: `Forbidden: entry ${entry.hostname} is in use by machine ${entry.machine} and its accepted persistent disks cannot be removed`, rule: 'DISK-4' });
        continue;
      }
      const disks: PersistentDisk[] = next.spec.configs[i]!.persistentDisks ?? [];
      const j = disks.findIndex((d) => d.slot === accepted.slot);
      if (j < 0) {
        causes.push({ field: `spec.configs[${i}].persistentDisks`, message: `Forbidden: accepted persistent disk slot ${accepted.slot} of ${entry.hostname} cannot be removed`, rule: 'DISK-4' });
        continue;
      }
      for (const k of ['size', 'type', 'format', 'mountPath'] as const) {
        if (disks[j]![k] !== accepted[k]) {
          causes.push({ field: `spec.configs[${i}].persistentDisks[${j}].${k}`, message: `Forbidden: field is immutable once the provider accepted the disk (was ${JSON.stringify(accepted[k])}, now ${JSON.stringify(disks[j]![k])}); only mountOptions may change`, rule: 'DISK-4' });
        }
      }
    }
  }
  return causes;
}

function validateMachineSpec(spec: HCSMachineSpec | undefined, f: string, inTemplate: boolean): FieldCause[] {
  const causes: FieldCause[] = [];
  if (!isObj(spec)) return [{ field: f, message: 'Required value', rule: 'TPL-1' }];
  for (const k of hcsMachineSpec.assured) {
    if (typeof spec[k] !== 'string' || !spec[k]) causes.push({ field: `${f}.${k}`, message: 'Required value', rule: 'TPL-1' });
  }
  if (inTemplate) {
    for (const k of ['providerID', 'serverId'] as const) {
      if (spec[k] !== undefined && spec[k] !== '') {
        causes.push({ field: `${f}.${k}`, message: `Forbidden: runtime identity field must be empty in a template (the provider sets it on each HCSMachine); remove it from the copied manifest`, rule: 'TPL-4' });
      }
    }
  }
  if (spec.dataVolumes !== undefined) {
    if (!Array.isArray(spec.dataVolumes)) causes.push({ field: `${f}.dataVolumes`, message: 'must be a list', rule: 'TPL-3' });
    else spec.dataVolumes.forEach((d, i) => {
      for (const k of dataVolume.assured) {
        if ((d as unknown as Obj)[k] === undefined || (d as unknown as Obj)[k] === '') causes.push({ field: `${f}.dataVolumes[${i}].${k}`, message: 'Required value (required when dataVolumes is given)', rule: 'TPL-3' });
      }
    });
  }
  return causes;
}

export function validateMachineTemplate(op: 'CREATE' | 'UPDATE', obj: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const t = obj as HCSMachineTemplate;
  const causes = validateMachineSpec(t.spec?.template?.spec, 'spec.template.spec', true);
  // TPL-5: templates are not edited in place; upgrades create a new template.
  if (op === 'UPDATE' && old && JSON.stringify((old as HCSMachineTemplate).spec) !== JSON.stringify(t.spec)) {
    causes.push({ field: 'spec.template.spec', message: 'Forbidden: HCSMachineTemplate spec is immutable; create a new template with a new metadata.name and point the MachineDeployment/KubeadmControlPlane at it', rule: 'TPL-5' });
  }
  return causes;
}

export function validateMachine(_op: 'CREATE' | 'UPDATE', obj: KubeObject): FieldCause[] {
  return validateMachineSpec(obj.spec as HCSMachineSpec | undefined, 'spec', false);
}
