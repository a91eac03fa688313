/**
 * Validation of a state document (a data file read at start, or a state
 * restored through the admin API): first its shape (validateDbData: every
 * collection, record and field of the right type, known statuses), then its
 * meaning against the cloud's configuration (checkIntegrity: known projects
 * and subnets, addresses inside their subnet and held once, attachments and
 * tasks naming resources that exist). A document with any problem is
 * refused, naming the problem; nothing is reset or repaired silently.
 */
import type { CloudConfig } from './config.js';
import { ipToInt, isHostInCidr, parseCidr } from './ip.js';
import { JOB_STATUSES, SERVER_STATUSES, TASK_KINDS, VOLUME_STATUSES, type DbData } from './state-data.js';

/** Largest valid JavaScript Date value. */
const MAX_TIME = 8.64e15;

function isTime(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_TIME;
}

/** Problems of a state document (empty when it is a valid version-1 document). */
export function validateDbData(d: unknown): string[] {
  const errs: string[] = [];
  if (typeof d !== 'object' || d === null || Array.isArray(d)) return ['state must be a JSON object'];
  const o = d as Record<string, unknown>;
  if (o.version !== 1) errs.push(`version must be 1 (got ${JSON.stringify(o.version)})`);
  for (const k of ['servers', 'volumes', 'jobs', 'tasks', 'clientTokens', 'ports', 'tokens'] as const) {
    const v = o[k];
    // ports and tokens came later: files without them are still version 1 documents.
    if (v === undefined && (k === 'ports' || k === 'tokens')) continue;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      errs.push(`${k} must be an object keyed by id`);
      continue;
    }
    for (const [id, rec] of Object.entries(v as Record<string, unknown>)) {
      if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) {
        errs.push(`${k}.${id} must be an object`);
        continue;
      }
      const r = rec as Record<string, unknown>;
      const need: Record<string, [string, string][]> = {
        servers: [['id', 'string'], ['projectId', 'string'], ['name', 'string'], ['status', 'string'], ['nics', 'array'], ['volumes', 'array'], ['metadata', 'object'], ['tags', 'array'], ['deleteJobs', 'array'], ['attaching', 'array'], ['created', 'number'], ['updated', 'number']],
        volumes: [['id', 'string'], ['projectId', 'string'], ['name', 'string'], ['size', 'number'], ['status', 'string'], ['metadata', 'object'], ['fs', 'object'], ['jobs', 'array'], ['az', 'string'], ['createdAt', 'number'], ['updatedAt', 'number']],
        jobs: [['job_id', 'string'], ['projectId', 'string'], ['job_type', 'string'], ['status', 'string'], ['begin_time', 'number'], ['entities', 'object']],
        tasks: [['seq', 'number'], ['kind', 'string'], ['due', 'number'], ['target', 'string']],
        clientTokens: [['projectId', 'string'], ['response', 'object']],
        ports: [['id', 'string'], ['projectId', 'string'], ['kind', 'string'], ['name', 'string'], ['subnetId', 'string'], ['ip', 'string'], ['mac', 'string'], ['deviceOwner', 'string'], ['deviceId', 'string'], ['securityGroups', 'array'], ['created', 'number']],
        tokens: [['userName', 'string'], ['userId', 'string'], ['domainId', 'string'], ['methods', 'array'], ['issuedAt', 'number'], ['expiresAt', 'number']],
      };
      for (const [field, type] of need[k]!) {
        const val = r[field];
        const ok = type === 'array' ? Array.isArray(val) : type === 'object' ? typeof val === 'object' && val !== null && !Array.isArray(val) : typeof val === type;
        if (!ok) errs.push(`${k}.${id}.${field} must be ${type === 'array' ? 'an array' : `a ${type}`}`);
        else if (type === 'number' && !isTime(val)) errs.push(`${k}.${id}.${field} must be a finite number between 0 and ${MAX_TIME}`);
      }
      for (const f of ['launchedAt', 'end_time']) if (r[f] !== undefined && !isTime(r[f])) errs.push(`${k}.${id}.${f} must be a finite number between 0 and ${MAX_TIME}`);
      if ((k === 'servers' || k === 'volumes') && r.id !== id) errs.push(`${k}.${id}.id must equal its key`);
      const each = (field: string, strings: string[]) => {
        const list = r[field];
        if (!Array.isArray(list)) return;
        list.forEach((e: unknown, i) => {
          const eo = e as Record<string, unknown> | null;
          if (typeof eo !== 'object' || eo === null || Array.isArray(eo)) errs.push(`${k}.${id}.${field}[${i}] must be an object`);
          else for (const f of strings) if (typeof eo[f] !== 'string') errs.push(`${k}.${id}.${field}[${i}].${f} must be a string`);
        });
      };
      const stringValues = (field: string, o: unknown) => {
        if (typeof o !== 'object' || o === null) return;
        for (const [mk, mv] of Object.entries(o)) if (typeof mv !== 'string') errs.push(`${k}.${id}.${field}.${mk} must be a string`);
      };
      if (k === 'servers') {
        each('nics', ['subnetId', 'ip', 'portId', 'mac']);
        each('volumes', ['volumeId', 'device']);
        each('tags', ['key', 'value']);
        each('attaching', ['volumeId', 'device']);
        stringValues('metadata', r.metadata);
        for (const f of ['flavorId', 'imageId', 'az', 'vpcId', 'instanceName', 'hostId', 'createJob'] as const) if (typeof r[f] !== 'string') errs.push(`servers.${id}.${f} must be a string`);
        if (Array.isArray(r.deleteJobs) && r.deleteJobs.some((j) => typeof j !== 'string')) errs.push(`servers.${id}.deleteJobs must hold job ids`);
      }
      if (k === 'volumes') {
        stringValues('metadata', r.metadata);
        const fs = r.fs as Record<string, unknown> | null;
        if (fs && typeof fs === 'object') {
          if (typeof fs.files !== 'object' || fs.files === null || Array.isArray(fs.files)) errs.push(`volumes.${id}.fs.files must be an object`);
          else stringValues('fs.files', fs.files);
        }
        if (typeof r.volumeType !== 'string') errs.push(`volumes.${id}.volumeType must be a string`);
        if (Array.isArray(r.jobs) && r.jobs.some((j) => typeof j !== 'string')) errs.push(`volumes.${id}.jobs must hold job ids`);
        if (r.attachment !== undefined) {
          const a = r.attachment as Record<string, unknown> | null;
          if (typeof a !== 'object' || a === null || typeof a.serverId !== 'string' || typeof a.device !== 'string' || typeof a.attachmentId !== 'string' || !isTime(a.attachedAt)) {
            errs.push(`volumes.${id}.attachment must have serverId, device, attachmentId and attachedAt`);
          }
        }
      }
      if (k === 'jobs' && r.sub_jobs !== undefined) {
        if (!Array.isArray(r.sub_jobs)) errs.push(`jobs.${id}.sub_jobs must be an array`);
        else
          r.sub_jobs.forEach((sj: unknown, i) => {
            const o = sj as Record<string, unknown> | null;
            if (
              typeof o !== 'object' ||
              o === null ||
              typeof o.job_id !== 'string' ||
              typeof o.status !== 'string' ||
              typeof o.entities !== 'object' ||
              o.entities === null ||
              !isTime(o.begin_time) ||
              (o.end_time !== undefined && !isTime(o.end_time))
            ) {
              errs.push(`jobs.${id}.sub_jobs[${i}] must have job_id, status and entities`);
            }
          });
      }
      if (k === 'clientTokens') {
        const resp = r.response as Record<string, unknown> | null;
        if (!resp || typeof resp.job_id !== 'string' || !Array.isArray(resp.serverIds) || resp.serverIds.some((x) => typeof x !== 'string')) {
          errs.push(`clientTokens.${id}.response must have job_id and serverIds`);
        }
      }
      if (k === 'ports') {
        if (r.id !== id) errs.push(`ports.${id}.id must equal its key`);
        if (r.kind !== 'port' && r.kind !== 'privateip') errs.push(`ports.${id}.kind must be "port" or "privateip"`);
        if (typeof r.adminStateUp !== 'boolean') errs.push(`ports.${id}.adminStateUp must be a boolean`);
        if (Array.isArray(r.securityGroups) && r.securityGroups.some((x) => typeof x !== 'string')) errs.push(`ports.${id}.securityGroups must hold strings`);
      }
      if (k === 'tokens') {
        if (r.projectId !== undefined && typeof r.projectId !== 'string') errs.push(`tokens.${id}.projectId must be a string`);
        if (Array.isArray(r.methods) && r.methods.some((x) => typeof x !== 'string')) errs.push(`tokens.${id}.methods must hold strings`);
      }
      if (k === 'servers' && r.fault !== undefined) {
        const f = r.fault as Record<string, unknown> | null;
        if (typeof f !== 'object' || f === null || typeof f.code !== 'number' || typeof f.message !== 'string' || !isTime(f.created)) errs.push(`servers.${id}.fault must have code, message and created`);
      }
      if (k === 'tasks' && !(TASK_KINDS as readonly string[]).includes(r.kind as string)) {
        errs.push(`tasks.${id}.kind is not a known transition`);
      }
      if (k === 'jobs' && r.job_id !== id) errs.push(`jobs.${id}.job_id must equal its key`);
      const statuses: Partial<Record<typeof k, readonly string[]>> = { servers: SERVER_STATUSES, volumes: VOLUME_STATUSES, jobs: JOB_STATUSES };
      const known = statuses[k];
      if (known && typeof r.status === 'string' && !known.includes(r.status)) errs.push(`${k}.${id}.status ${JSON.stringify(r.status)} is not a known status (${known.join(', ')})`);
      if (k === 'jobs' && Array.isArray(r.sub_jobs)) {
        r.sub_jobs.forEach((sj: unknown, i) => {
          const st = (sj as { status?: unknown } | null)?.status;
          if (typeof st === 'string' && !JOB_STATUSES.includes(st as never)) errs.push(`jobs.${id}.sub_jobs[${i}].status ${JSON.stringify(st)} is not a known status`);
        });
      }
      if (errs.length > 20) return [...errs, '...'];
    }
  }
  for (const k of ['taskSeq', 'instanceSeq'] as const) {
    if (typeof o[k] !== 'number' || !Number.isInteger(o[k])) errs.push(`${k} must be an integer`);
  }
  if (o.idEpoch !== undefined && (typeof o.idEpoch !== 'number' || !Number.isInteger(o.idEpoch) || o.idEpoch < 0)) errs.push('idEpoch must be a non-negative integer');
  if (o.savedAtMs !== undefined && !isTime(o.savedAtMs)) errs.push(`savedAtMs must be a finite number between 0 and ${MAX_TIME}`);
  return errs;
}

/**
 * Problems of a structurally valid document against the cloud's
 * configuration (empty when it is consistent): records of unknown projects,
 * NICs and ports in unknown subnets or outside them, an address held twice,
 * attachments naming missing servers or volumes, tasks for missing
 * resources, jobs a resource waits for that do not exist.
 */
export function checkIntegrity(d: DbData, config: CloudConfig): string[] {
  const errs: string[] = [];
  const add = (m: string) => {
    if (errs.length <= 20) errs.push(m);
  };
  const projects = new Set(config.projects.map((p) => p.id));
  const subnets = new Map(config.subnets.map((s) => [s.id, { cfg: s, cidr: parseCidr(s.cidr), gateway: ipToInt(s.gateway_ip) }]));
  const holders = new Map<string, string>();
  const hold = (subnetId: string, ip: string, who: string) => {
    const key = `${subnetId}|${ip}`;
    const prev = holders.get(key);
    if (prev !== undefined) add(`${who} holds IP ${ip} of subnet ${subnetId}, already held by ${prev} (an address is held once, NET-7)`);
    else holders.set(key, who);
  };
  const checkIp = (subnetId: string, ip: string, who: string) => {
    const sn = subnets.get(subnetId);
    if (!sn) return add(`${who} is in subnet ${subnetId}, which is not a subnet of this cloud's configuration`);
    const n = ipToInt(ip);
    if (n === undefined || !isHostInCidr(n, sn.cidr) || n === sn.gateway) add(`${who} has IP ${ip}, which is not a usable address of subnet ${sn.cfg.name} (${sn.cfg.cidr})`);
    hold(subnetId, ip, who);
  };
  const project = (what: string, id: string | undefined) => {
    if (id !== undefined && !projects.has(id)) add(`${what}: project ${id} is not a project of this cloud's configuration`);
  };
  for (const s of Object.values(d.servers)) {
    project(`servers.${s.id}`, s.projectId);
    s.nics.forEach((n, i) => checkIp(n.subnetId, n.ip, `servers.${s.id}.nics[${i}]`));
    s.volumes.forEach((sv, i) => {
      const v = d.volumes[sv.volumeId];
      if (!Object.hasOwn(d.volumes, sv.volumeId) || !v) add(`servers.${s.id}.volumes[${i}] names volume ${sv.volumeId}, which does not exist`);
      else if (v.attachment?.serverId !== s.id && v.status !== 'creating') add(`servers.${s.id}.volumes[${i}] names volume ${sv.volumeId}, which is not attached to it`);
    });
    s.attaching.forEach((a, i) => {
      if (!Object.hasOwn(d.volumes, a.volumeId)) add(`servers.${s.id}.attaching[${i}] names volume ${a.volumeId}, which does not exist`);
    });
    // createJob is not checked: finished jobs are pruned, a running one is named by the sub-job's server.
    for (const j of [...s.deleteJobs, ...(s.actionJob !== undefined ? [s.actionJob] : [])]) {
      if (!Object.hasOwn(d.jobs, j)) add(`servers.${s.id} waits for job ${j}, which does not exist`);
    }
  }
  for (const v of Object.values(d.volumes)) {
    project(`volumes.${v.id}`, v.projectId);
    if (v.attachment && !Object.hasOwn(d.servers, v.attachment.serverId)) add(`volumes.${v.id}.attachment names server ${v.attachment.serverId}, which does not exist`);
    if (v.pendingServerId !== undefined && !Object.hasOwn(d.servers, v.pendingServerId)) add(`volumes.${v.id}.pendingServerId names server ${v.pendingServerId}, which does not exist`);
    if (v.status === 'in-use' && !v.attachment) add(`volumes.${v.id} is in-use but has no attachment`);
    for (const j of v.jobs) if (!Object.hasOwn(d.jobs, j)) add(`volumes.${v.id} waits for job ${j}, which does not exist`);
  }
  for (const p of Object.values(d.ports)) {
    project(`ports.${p.id}`, p.projectId);
    checkIp(p.subnetId, p.ip, `ports.${p.id}`);
  }
  for (const j of Object.values(d.jobs)) project(`jobs.${j.job_id}`, j.projectId);
  for (const [k, t] of Object.entries(d.tokens)) project(`tokens.${k}`, t.projectId);
  for (const [k, c] of Object.entries(d.clientTokens)) project(`clientTokens.${k}`, c.projectId);
  for (const [k, t] of Object.entries(d.tasks)) {
    const servers = t.kind.startsWith('server.');
    if (!Object.hasOwn(servers ? d.servers : d.volumes, t.target)) add(`tasks.${k} (${t.kind}) acts on ${servers ? 'server' : 'volume'} ${t.target}, which does not exist`);
    if (String(t.seq) !== k) add(`tasks.${k}.seq must equal its key`);
    if (t.seq > d.taskSeq) add(`tasks.${k}.seq is above taskSeq ${d.taskSeq}`);
  }
  if (errs.length > 20) errs.push('...');
  return errs;
}
