/**
 * Admin API under /_admin (no AK/SK signature; only registered when the app is
 * created with `admin: true`, the default). Errors use the cloud's shape with
 * `Admin.0400` (bad input), `Admin.0404` (unknown fault rule), `Admin.0409`
 * (clock cannot be advanced).
 */
import type { FastifyInstance } from 'fastify';
import { CloudError, Codes, QUOTA_RESOURCES, type QuotaUsage } from './errors.js';
import type { FlavorAzStatus, QuotaConfig } from './config.js';
import type { FaultRule } from './faults.js';

export interface Catalog {
  /** TPL-2: these are the provider API values (flavorName, availabilityZone, imageName) users need from an administrator. */
  note: string;
  regions: string[];
  projects: { id: string; name: string; region: string; quotas: QuotaConfig; usage: QuotaUsage }[];
  availabilityZones: string[];
  flavors: {
    id: string;
    name: string;
    vcpus: number;
    ramMiB: number;
    availabilityZones: { name: string; soldOut: boolean; status: FlavorAzStatus; reason?: string; capacity?: { max: number; used: number } }[];
  }[];
  images: { id: string; name: string; kubernetesVersion: string; status: string }[];
  volumeTypes: string[];
  vpcs: { id: string; name: string; cidr: string }[];
  subnets: { id: string; name: string; cidr: string; gateway_ip: string; vpc_id: string; neutron_network_id: string; availability_zone?: string }[];
}

export interface StateDump {
  format: 'mock-hcs-state';
  version: 1;
  /** Injected-clock time of the dump. */
  nowMs: number;
  seed: number | null;
  data: unknown;
  faults: FaultRule[];
}

export interface AdminOps {
  catalog(): Catalog;
  dumpState(): StateDump;
  restoreState(dump: unknown): Promise<void>;
  reset(opts?: { keepFaults?: boolean }): Promise<void>;
  seed(): number | null;
  /** Replace a project's quotas (HCS-6); false when the project is unknown. */
  setQuotas(projectId: string, quotas: QuotaConfig): boolean;
  /** Undefined when the clock has no advanceBy (not a VirtualClock). */
  advanceClock?: (ms: number) => { nowMs: number; fired: number };
  faults: {
    add(rule: unknown): string;
    list(): FaultRule[];
    remove(id: string): boolean;
    clear(): number;
    releaseStuck(target?: string): number;
  };
}

const errorSchema = {
  type: 'object',
  properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, required: ['code', 'message'] } },
} as const;

/** The /_admin routes; each request reads the operations of the mock the app serves now (binding.ts). */
export function adminRoutes(binding: { adminOps: AdminOps | undefined }) {
  return async (app: FastifyInstance): Promise<void> => {
    const ops = {
      get current(): AdminOps {
        if (!binding.adminOps) throw new CloudError(404, Codes.adminNotFound, 'This mock-hcs has no admin API');
        return binding.adminOps;
      },
    };
    const config = { admin: true };
    const badRequest = (m: string): never => {
      throw new CloudError(400, Codes.adminBadRequest, m);
    };

    app.get('/_admin/catalog', { config, schema: { response: { '4xx': errorSchema } } }, async () => ops.current.catalog());
    app.get('/_admin/seed', { config, schema: { response: { 200: { type: 'object', properties: { seed: { type: ['integer', 'null'] } }, required: ['seed'] } } } }, async () => ({
      seed: ops.current.seed(),
    }));
    app.get('/_admin/state', { config }, async () => ops.current.dumpState());
    app.put('/_admin/state', { config, schema: { body: { type: 'object' } } }, async (req) => {
      await ops.current.restoreState(req.hcs.json);
      return { restored: true };
    });
    app.post('/_admin/reset', { config, schema: { body: { type: ['object', 'null'], additionalProperties: false, properties: { keepFaults: { type: 'boolean' } } } } }, async (req) => {
      const b = (req.hcs.json ?? {}) as { keepFaults?: unknown };
      if (b.keepFaults !== undefined && typeof b.keepFaults !== 'boolean') badRequest('keepFaults must be a boolean');
      await ops.current.reset({ keepFaults: b.keepFaults === true });
      return { reset: true };
    });
    app.post(
      '/_admin/clock/advance',
      { config, schema: { body: { type: 'object', additionalProperties: false, required: ['ms'], properties: { ms: { type: 'integer', minimum: 0, maximum: 365 * 24 * 3600_000 } } } } },
      async (req) => {
        const ms = (req.hcs.json as { ms?: unknown }).ms;
        // The schema coerces "100" to 100 on req.body only; read the raw JSON and insist on a number.
        if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0) badRequest('ms must be a non-negative integer');
        if (!ops.current.advanceClock) throw new CloudError(409, Codes.adminConflict, 'The clock of this mock-hcs is not a virtual clock (no advanceBy); it cannot be advanced');
        return ops.current.advanceClock(ms as number);
      },
    );

    const quotaProps = Object.fromEntries(QUOTA_RESOURCES.map((k) => [k, { type: 'integer', minimum: 0 }]));
    app.put(
      '/_admin/quotas/:project_id',
      { config, schema: { body: { type: 'object', additionalProperties: false, properties: quotaProps } } },
      async (req) => {
        const { project_id } = req.params as { project_id: string };
        const quotas = req.body as QuotaConfig;
        if (!ops.current.setQuotas(project_id, quotas)) throw new CloudError(404, Codes.adminNotFound, `Project ${project_id} is not a project of this cloud`);
        return { project_id, quotas };
      },
    );
    app.get('/_admin/faults', { config }, async () => ({ faults: ops.current.faults.list() }));
    app.post(
      '/_admin/faults',
      { config, schema: { body: { type: 'object', required: ['service', 'operation', 'effect'], properties: { service: { type: 'string' }, operation: { type: 'string' }, effect: { type: 'object' } } } } },
      async (req, reply) => {
        const id = ops.current.faults.add(req.hcs.json);
        void reply.code(201);
        return { id, fault: ops.current.faults.list().find((f) => f.id === id) };
      },
    );
    app.delete('/_admin/faults', { config }, async () => ({ removed: ops.current.faults.clear() }));
    app.delete(
      '/_admin/faults/:id',
      { config, schema: { params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 64 } } } } },
      async (req) => {
        const { id } = req.params as { id: string };
        if (!ops.current.faults.remove(id)) throw new CloudError(404, Codes.adminNotFound, `Fault rule ${id} does not exist`);
        return { removed: 1 };
      },
    );
    app.post(
      '/_admin/faults/release',
      { config, schema: { body: { type: ['object', 'null'], additionalProperties: false, properties: { target: { type: 'string', minLength: 1 } } } } },
      async (req) => {
        const t = (req.hcs.json ?? {}) as { target?: unknown };
        if (t.target !== undefined && typeof t.target !== 'string') badRequest('target must be a string');
        return { released: ops.current.faults.releaseStuck(t.target as string | undefined) };
      },
    );
  };
}
