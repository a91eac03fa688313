/**
 * A server is what its HCSMachine asks for (issue 37: the server's flavor, image, root, data and persistent volumes
 * were written by the provider and read by no check). At every quiescent instant, for each HCSMachine that is not
 * being deleted and whose server (spec.serverId) exists, from the objects and the cloud only:
 *
 * - TPL-2: the server's flavor is the HCSMachine's `spec.flavorName` (the provider API value, passed as flavorRef);
 * - TPL-1/TPL-6: its image is the IMS image named `spec.imageName`;
 * - TPL-1: its root volume (boot index 0) has `spec.rootVolume`'s size and type, when the spec gives them;
 * - TPL-3: each of its `spec.dataVolumes` has a volume of that size and type attached, neither the root nor a
 *   persistent one (a volume attached by hand besides them is not judged);
 * - DISK-1/DISK-4: each persistent volume attached to it has the size and type of the disk its pool entry accepted
 *   for that slot (the accepted value stays in use when the spec changes it: DISK-4).
 *
 * Only ACTIVE servers are judged (a building one is still getting its volumes). An infrastructure upgrade replaces machines to change exactly these: a provider that builds a replacement with the
 * old flavor, image or volume sizes passes every other check. Judged where the cloud view shows them (a bundle from
 * a real HCS shows them all; a source that does not, is not judged on that field).
 */
import type { HCSMachine, HCSMachineConfigPool, PersistentDisk } from '../../product/api/hcs.js';
import { listShared } from '../../core/kube/client.js';
import { META_HOSTNAME, META_PERSISTENT, META_SLOT } from '../../product/api/metadata.js';
import { short, type ContractFinding } from './disk-reuse.js';
import type { StateSource } from './world.js';


export async function serverSpecFindings(w: StateSource): Promise<ContractFinding[]> {
  const out: ContractFinding[] = [];
  const hms = await listShared<HCSMachine>(w.mgmt, 'HCSMachine');
  if (!hms.length) return out;
  const volumes = new Map(w.cloud.listVolumes().map((v) => [v.id, v]));
  let imageNames: Map<string, string> | undefined;
  const imageName = (id: string): string | undefined => {
    imageNames ??= new Map(w.cloud.images().flatMap((i) => (i.id ? [[i.id, i.name] as [string, string]] : [])));
    return imageNames.get(id);
  };
  const pools = new Map((await listShared<HCSMachineConfigPool>(w.mgmt, 'HCSMachineConfigPool')).map((p) => [`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`, p]));
  for (const hm of hms) {
    const sid = hm.spec.serverId;
    if (!sid || hm.metadata.deletionTimestamp) continue;
    const s = w.cloud.server(sid);
    // ACTIVE: built, every volume it was created with attached (a BUILD server is still getting them).
    if (!s || s.status !== 'ACTIVE') continue;
    const ns = hm.metadata.namespace ?? 'default';
    const who = `server ${s.name} (${short(sid)}) of HCSMachine ${ns}/${hm.metadata.name}`;
    const add = (rule: string, what: string, message: string, refs: string[] = []): void => {
      out.push({ rule, key: `${rule}/server-spec/${sid}/${what}`, message: `${who} ${message}`, refs: [sid, hm.metadata.name, ...refs] });
    };
    if (s.flavorId !== undefined && hm.spec.flavorName && s.flavorId !== hm.spec.flavorName) {
      add('TPL-2', 'flavor', `runs flavor ${s.flavorId}, but the HCSMachine asks for ${hm.spec.flavorName}`);
    }
    if (s.imageId !== undefined && hm.spec.imageName) {
      const name = imageName(s.imageId);
      if (name !== undefined && name !== hm.spec.imageName) add('TPL-1', 'image', `was built from image ${name}, but the HCSMachine asks for ${hm.spec.imageName}`);
    }
    const attached = s.volumes.map((a) => ({ a, v: volumes.get(a.volumeId) }));
    const root = attached.find((x) => x.a.bootIndex === 0);
    const rv = hm.spec.rootVolume;
    if (root?.v && rv) {
      if (rv.size !== undefined && root.v.size !== undefined && root.v.size !== rv.size) add('TPL-1', 'root-size', `has a ${root.v.size} GiB root volume, but the HCSMachine asks for ${rv.size} GiB`, [root.a.volumeId]);
      if (rv.type && root.v.volumeType !== undefined && root.v.volumeType !== rv.type) add('TPL-1', 'root-type', `has a ${root.v.volumeType} root volume, but the HCSMachine asks for ${rv.type}`, [root.a.volumeId]);
    }
    // Data volumes: each of spec.dataVolumes has a volume of its size and type attached (neither the root nor a
    // persistent one); a volume attached by hand besides them is not judged.
    const spare = attached.filter((x) => x !== root && x.v && x.v.metadata[META_PERSISTENT] !== 'true');
    if (root && spare.every((x) => x.v!.size !== undefined && x.v!.volumeType !== undefined)) {
      const have = spare.map((x) => `${x.v!.size} GiB ${x.v!.volumeType}`);
      const missing: string[] = [];
      for (const d of hm.spec.dataVolumes ?? []) {
        const i = have.indexOf(`${d.size} GiB ${d.type}`);
        if (i >= 0) have.splice(i, 1);
        else missing.push(`${d.size} GiB ${d.type}`);
      }
      if (missing.length) {
        add('TPL-3', 'data-volumes', `lacks the data volume(s) [${missing.join(', ')}] of its HCSMachine's dataVolumes; its other volumes are [${spare.map((x) => `${x.v!.size} GiB ${x.v!.volumeType}`).sort().join(', ') || 'none'}]`, spare.map((x) => x.a.volumeId));
      }
    }
    // Persistent volumes: the size and type the pool entry accepted for their slot.
    const pool = hm.spec.configPoolRef?.name ? pools.get(`${ns}/${hm.spec.configPoolRef.name}`) : undefined;
    for (const x of attached) {
      if (!x.v || x.v.metadata[META_PERSISTENT] !== 'true') continue;
      const host = x.v.metadata[META_HOSTNAME];
      const slot = Number(x.v.metadata[META_SLOT]);
      const entry = pool?.status?.entries?.find((e) => e.hostname === host);
      const spec = pool?.spec.configs.find((c) => c.hostname === host)?.persistentDisks;
      const d: PersistentDisk | undefined = entry?.acceptedDisks?.find((a) => a.slot === slot) ?? spec?.find((a) => a.slot === slot);
      if (!d) continue; // undeclared disks are invariant:disk-reuse's (DISK-3)
      if (x.v.size !== undefined && d.size !== undefined && x.v.size !== d.size) add('DISK-4', `pd-size/${x.v.id}`, `has persistent volume ${x.v.name} (${short(x.v.id)}) of ${x.v.size} GiB, but pool ${ns}/${pool!.metadata.name} accepted ${d.size} GiB for ${host} slot ${slot}`, [x.v.id]);
      if (x.v.volumeType !== undefined && d.type && x.v.volumeType !== d.type) add('DISK-4', `pd-type/${x.v.id}`, `has persistent volume ${x.v.name} (${short(x.v.id)}) of type ${x.v.volumeType}, but pool ${ns}/${pool!.metadata.name} accepted ${d.type} for ${host} slot ${slot}`, [x.v.id]);
    }
  }
  return out;
}
