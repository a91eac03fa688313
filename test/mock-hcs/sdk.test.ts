/**
 * The official Huawei Cloud SDK (EcsClient, BasicCredentials, AK/SK signing)
 * against the fake cloud listening on a real port: the signature check and
 * the paths/bodies must be exactly what the SDK produces (HCS-5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicCredentials } from '@huaweicloud/huaweicloud-sdk-core';
import {
  CreateServersRequest,
  CreateServersRequestBody,
  DeleteServersRequest,
  DeleteServersRequestBody,
  EcsClient,
  ListServersDetailsRequest,
  PrePaidServer,
  PrePaidServerDataVolume,
  PrePaidServerNic,
  PrePaidServerRootVolume,
  PrePaidServerTag,
  ServerId,
  ShowJobRequest,
  ShowServerRequest,
  AttachServerVolumeRequest,
  AttachServerVolumeRequestBody,
  AttachServerVolumeOption,
  DetachServerVolumeRequest,
} from '@huaweicloud/huaweicloud-sdk-ecs';
import { EventLog, SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, type MockHcs } from '../../mock-hcs/src/index.js';

function wire<T>(sdkResponse: object): T {
  return sdkResponse as unknown as T;
}

// The SDK signs with the wall clock (moment()), so this fake cloud's virtual clock starts at "now".
const clock = new VirtualClock(Date.now());
let hcs: MockHcs;
let ecs: EcsClient;
let other: EcsClient;

beforeAll(async () => {
  hcs = await createMockHcs({ clock, rng: new SeededRng(1), events: new EventLog(clock) });
  const address = await hcs.app.listen({ port: 0, host: '127.0.0.1' });
  const [p0, p1] = hcs.config.projects;
  ecs = EcsClient.newBuilder()
    .withCredential(new BasicCredentials().withAk(p0!.ak).withSk(p0!.sk).withProjectId(p0!.id))
    .withEndpoint(address)
    .build();
  other = EcsClient.newBuilder()
    .withCredential(new BasicCredentials().withAk(p1!.ak).withSk(p1!.sk).withProjectId(p0!.id))
    .withEndpoint(address)
    .build();
});

afterAll(async () => {
  await hcs?.close();
});

describe('official EcsClient against mock-hcs', () => {
  it('creates, shows, lists, attaches/detaches and deletes servers', async () => {
    const cfg = hcs.config;
    const worker = cfg.subnets.find((s) => s.name === 'worker-subnet')!;
    const server = new PrePaidServer()
      .withName('sdk-worker-0')
      .withImageRef(cfg.images[1]!.id)
      .withFlavorRef('s6.large.2')
      .withAvailabilityZone('az1')
      .withVpcid(cfg.vpcs[0]!.id)
      .withNics([new PrePaidServerNic().withSubnetId(worker.id).withIpAddress('192.168.10.77')])
      .withRootVolume(new PrePaidServerRootVolume().withVolumetype('SSD').withSize(40))
      .withDataVolumes([new PrePaidServerDataVolume().withVolumetype('SSD').withSize(20)])
      .withUserData(Buffer.from('#cloud-config\n').toString('base64'))
      .withMetadata({ cluster: 'sdk' })
      .withServerTags([new PrePaidServerTag().withKey('cluster').withValue('sdk')]);
    const created = await ecs.createServers(
      new CreateServersRequest().withXClientToken('sdk-token-1').withBody(new CreateServersRequestBody().withServer(server)),
    );
    expect(created.httpStatusCode).toBe(200);
    expect(created.serverIds).toHaveLength(1);
    const id = created.serverIds![0]!;
    const again = await ecs.createServers(
      new CreateServersRequest().withXClientToken('sdk-token-1').withBody(new CreateServersRequestBody().withServer(server)),
    );
    expect(again.serverIds).toEqual([id]);

    const shown = await ecs.showServer(new ShowServerRequest().withServerId(id));
    expect(shown.server?.status).toBe('BUILD');
    expect(shown.server?.name).toBe('sdk-worker-0');

    clock.advanceBy(120_000);
    // SDK responses are the parsed wire JSON: fields keep their snake_case names.
    const jobId = wire<{ job_id: string }>(created).job_id;
    const job = wire<{ status: string; entities: { sub_jobs: { entities: { server_id: string } }[] } }>(await ecs.showJob(new ShowJobRequest().withJobId(jobId)));
    expect(job.status).toBe('SUCCESS');
    expect(job.entities.sub_jobs[0]?.entities.server_id).toBe(id);

    const listed = await ecs.listServersDetails(new ListServersDetailsRequest().withName('sdk-worker').withLimit(10).withOffset(1));
    expect(listed.count).toBe(1);
    expect(listed.servers?.[0]?.id).toBe(id);
    expect(listed.servers?.[0]?.status).toBe('ACTIVE');
    expect(listed.servers?.[0]?.addresses?.[cfg.vpcs[0]!.id]?.[0]?.addr).toBe('192.168.10.77');

    // Detach the data volume (DELETE with content-type json and no body) and attach it back.
    const dataVol = hcs.hypervisor.server(id)!.volumes.find((v) => v.bootIndex === undefined)!.volumeId;
    const det = await ecs.detachServerVolume(new DetachServerVolumeRequest().withServerId(id).withVolumeId(dataVol));
    expect(det.httpStatusCode).toBe(200);
    clock.advanceBy(60_000);
    expect(hcs.hypervisor.volume(dataVol)?.status).toBe('available');
    const att = await ecs.attachServerVolume(
      new AttachServerVolumeRequest().withServerId(id).withBody(new AttachServerVolumeRequestBody().withVolumeAttachment(new AttachServerVolumeOption().withVolumeId(dataVol))),
    );
    expect(att.httpStatusCode).toBe(200);
    clock.advanceBy(60_000);
    expect(hcs.hypervisor.volume(dataVol)?.status).toBe('in-use');

    const missing = await ecs.showServer(new ShowServerRequest().withServerId('00000000-0000-4000-8000-000000000000')).catch((e: unknown) => e);
    expect(missing).toMatchObject({ httpStatusCode: 404, errorCode: 'Ecs.0114' });

    const del = await ecs.deleteServers(
      new DeleteServersRequest().withBody(new DeleteServersRequestBody().withServers([new ServerId().withId(id)]).withDeleteVolume(false).withDeletePublicip(false)),
    );
    const delJobId = wire<{ job_id: string }>(del).job_id;
    expect(delJobId).toMatch(/^[0-9a-f]{32}$/);
    clock.advanceBy(60_000);
    const delJob = await ecs.showJob(new ShowJobRequest().withJobId(delJobId));
    expect(delJob.status).toBe('SUCCESS');
    const gone = await ecs.showServer(new ShowServerRequest().withServerId(id)).catch((e: unknown) => e);
    expect(gone).toMatchObject({ httpStatusCode: 404 });
  });

  it('refuses the SDK with credentials of another project (403) and a wrong SK (401)', async () => {
    const r = await other.listServersDetails(new ListServersDetailsRequest()).catch((e: unknown) => e);
    expect(r).toMatchObject({ httpStatusCode: 403 });
    const p0 = hcs.config.projects[0]!;
    const bad = EcsClient.newBuilder()
      .withCredential(new BasicCredentials().withAk(p0.ak).withSk('wrong-sk').withProjectId(p0.id))
      .withEndpoint(`http://127.0.0.1:${(hcs.app.server.address() as { port: number }).port}`)
      .build();
    const e = await bad.listServersDetails(new ListServersDetailsRequest()).catch((err: unknown) => err);
    expect(e).toMatchObject({ httpStatusCode: 401, errorCode: 'APIGW.0301' });
  });
});
