/**
 * mock-hcs: a fake Huawei Cloud Stack (ECS, EVS, VPC, IMS, AK/SK auth, jobs)
 * that the official SDKs accept unchanged. All services live on one fastify
 * app: use `app.inject()` in-process or `app.listen()` standalone.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { Clock, EventLog, Rng } from '../../src/core/index.js';
import { CloudEngine, type Hypervisor, type ServerChange, type VolumeChange } from './cloud.js';
import { defaultCloudConfig, type CloudConfig } from './config.js';
import { installHttpLayer } from './http.js';
import { ecsRoutes } from './routes/ecs.js';
import { evsRoutes } from './routes/evs.js';
import { imsRoutes } from './routes/ims.js';
import { vpcRoutes } from './routes/vpc.js';
import { Store } from './state.js';

export { defaultCloudConfig } from './config.js';
export type { CloudConfig, FlavorConfig, ImageConfig, ProjectConfig, SubnetConfig, TimingConfig, VpcConfig } from './config.js';
export type { Hypervisor, ServerChange, VolumeChange } from './cloud.js';
export type { VolumeFs } from './state.js';
export { CloudError } from './errors.js';

export interface MockHcsOptions {
  clock: Clock;
  rng: Rng;
  config?: CloudConfig;
  /** lowdb JSON file; omit for in-memory state. */
  dataFile?: string;
  events?: EventLog;
  /** Allowed |X-Sdk-Date - now| (default 15 minutes). */
  signatureSkewMs?: number;
}

export interface MockHcs {
  app: FastifyInstance;
  config: CloudConfig;
  hypervisor: Hypervisor;
  onServerChange(fn: (s: ServerChange) => void): () => void;
  onVolumeChange(fn: (v: VolumeChange) => void): () => void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_SIGNATURE_SKEW_MS = 15 * 60_000;

export async function createMockHcs(opts: MockHcsOptions): Promise<MockHcs> {
  const config = opts.config ?? defaultCloudConfig();
  const store = await Store.open(opts.dataFile);
  const engine = new CloudEngine(store, config, opts.clock, opts.rng, opts.events);
  const createdMs = opts.clock.now();
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  installHttpLayer(app, { engine, clock: opts.clock, rng: opts.rng, signatureSkewMs: opts.signatureSkewMs ?? DEFAULT_SIGNATURE_SKEW_MS });
  await app.register(ecsRoutes(engine, opts.clock));
  await app.register(evsRoutes(engine));
  await app.register(vpcRoutes(engine, createdMs));
  await app.register(imsRoutes(engine, createdMs));
  await app.ready();
  engine.start();
  let closed = false;
  return {
    app,
    config,
    hypervisor: engine,
    onServerChange: (fn) => engine.onServerChange(fn),
    onVolumeChange: (fn) => engine.onVolumeChange(fn),
    flush: () => store.flush(),
    close: async () => {
      if (closed) return;
      closed = true;
      engine.stop();
      await app.close();
      await store.flush();
    },
  };
}
