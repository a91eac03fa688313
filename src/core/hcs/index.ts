/**
 * The HCS wire format, one file per service: what the cloud (mock-hcs) and
 * every client (the provider's HcsClient, the official SDKs) agree on — the
 * operations (method, path, job or not), request and response bodies, and
 * the error shape.
 */
import { ECS } from './ecs.js';
import { EVS } from './evs.js';
import { IAM } from './iam.js';
import { IMS } from './ims.js';
import type { HcsOperation, HcsService } from './operation.js';
import { VPC } from './vpc.js';

export * from './operation.js';
export * from './errors.js';
export * from './ecs.js';
export * from './evs.js';
export * from './vpc.js';
export * from './ims.js';
export * from './iam.js';

/** Every operation, by service, in declaration order. */
export const HCS_OPERATIONS: { readonly [S in HcsService]: readonly HcsOperation[] } = {
  ecs: Object.values(ECS),
  evs: Object.values(EVS),
  vpc: Object.values(VPC),
  ims: Object.values(IMS),
  iam: Object.values(IAM),
};
