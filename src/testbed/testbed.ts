/**
 * Assembles one complete embedded testbed: virtual clock, management cluster
 * (with admission), simulated workload clusters, the fake HCS cloud reached
 * over (in-process) signed HTTP, the simulated Cluster API core, the HCS
 * provider and the guests. One seed fixes the whole run.
 */
import { createMockHcs, type CloudConfig, type MockHcs } from '../../mock-hcs/src/index.js';
import { installAdmission } from '../admission/index.js';
import { setupCapiControllers } from '../capi/index.js';
import { HcsClient, injectTransport } from '../cloud/index.js';
import { GuestFleet } from '../guest/index.js';
import { setupProviderControllers, type DiskClaimer } from '../provider/index.js';
import type { TestbedFactory, TestbedHandle } from '../scenario/runner.js';
import type { World } from '../scenario/world.js';
import { createEmbeddedEnv, type EmbeddedEnv } from './embedded.js';

export interface TestbedOptions {
  seed: number;
  cloudConfig?: CloudConfig;
  /** Build the provider's DiskClaimer from the cloud client (tests swap in a broken one to prove the checks can fail). */
  diskClaimer?: (cloud: HcsClient) => DiskClaimer;
}

export interface Testbed extends TestbedHandle {
  env: EmbeddedEnv;
  cloud: MockHcs;
  hcs: HcsClient;
  guests: GuestFleet;
}

export async function createTestbed(opts: TestbedOptions): Promise<Testbed> {
  const env = createEmbeddedEnv({ seed: opts.seed });
  installAdmission(env.mgmt);
  const cloud = await createMockHcs({ clock: env.clock, rng: env.rng.fork('cloud'), events: env.events, ...(opts.cloudConfig ? { config: opts.cloudConfig } : {}) });
  const project = cloud.config.projects[0];
  if (!project) throw new Error('cloud config has no project');
  const hcs = new HcsClient({ transport: injectTransport(cloud.app), ak: project.ak, sk: project.sk, projectId: project.id, clock: env.clock });
  setupCapiControllers(env.ctx);
  setupProviderControllers(env.ctx, { cloud: hcs, ...(opts.diskClaimer ? { diskClaimer: opts.diskClaimer(hcs) } : {}) });
  const guests = new GuestFleet(env.ctx, { hypervisor: cloud.hypervisor, onServerChange: (fn) => cloud.onServerChange(fn) });
  guests.setup();
  const hv = cloud.hypervisor;
  const world: World = {
    clock: env.clock,
    mgmt: env.mgmt,
    workloads: env.workloads,
    cloud: {
      listServers: () => hv.listServers(),
      server: (id) => hv.server(id),
      listVolumes: () => hv.listVolumes(),
      readFile: (volumeId, path) => hv.readFile(volumeId, path),
    },
    guests,
    markers: [],
    controllerLog: (d) => env.logs.text(d),
  };
  return {
    env,
    cloud,
    hcs,
    guests,
    world,
    sim: env.sim,
    clock: env.clock,
    events: env.events,
    close: () => cloud.close(),
  };
}

/** The default backend of `hcs-testbed run`: a fresh embedded testbed per scenario. */
export function embeddedTestbedFactory(opts: Omit<TestbedOptions, 'seed'> = {}): TestbedFactory {
  return (seed) => createTestbed({ ...opts, seed });
}
