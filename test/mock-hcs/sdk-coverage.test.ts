/**
 * Coverage of the ECS, VPC and IAM endpoints through the official Huawei
 * Cloud SDK clients (EcsClient, VpcClient v2, IamClient v3) against mock-hcs
 * listening on a real port: the SDKs must accept the fake cloud unchanged —
 * paths, bodies, signatures, status codes, response headers and errors
 * (ClientRequestException with errorCode).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicCredentials, GlobalCredentials } from '@huaweicloud/huaweicloud-sdk-core';
// Not re-exported by the package root.
import { ClientRequestException } from '@huaweicloud/huaweicloud-sdk-core/exception/ClientRequestException.js';
import {
  AttachServerVolumeOption,
  AttachServerVolumeRequest,
  AttachServerVolumeRequestBody,
  BatchRebootServersRequest,
  BatchRebootServersRequestBody,
  BatchRebootSeversOption,
  BatchStartServersOption,
  BatchStartServersRequest,
  BatchStartServersRequestBody,
  BatchStopServersOption,
  BatchStopServersRequest,
  BatchStopServersRequestBody,
  CreateServersRequest,
  CreateServersRequestBody,
  DeleteServersRequest,
  DeleteServersRequestBody,
  DetachServerVolumeRequest,
  EcsClient,
  ListFlavorsRequest,
  ListServerBlockDevicesRequest,
  ListServersDetailsRequest,
  PrePaidServer,
  PrePaidServerDataVolume,
  PrePaidServerNic,
  PrePaidServerRootVolume,
  ServerId,
  ShowJobRequest,
  ShowServerBlockDeviceRequest,
  ShowServerRequest,
} from '@huaweicloud/huaweicloud-sdk-ecs';
import {
  CreatePortOption,
  CreatePortRequest,
  CreatePortRequestBody,
  CreatePrivateipOption,
  CreatePrivateipRequest,
  CreatePrivateipRequestBody,
  DeletePortRequest,
  DeletePrivateipRequest,
  FixedIp,
  ListPortsRequest,
  ListPrivateipsRequest,
  ListSubnetsRequest,
  ShowPortRequest,
  ShowPrivateipRequest,
  ShowSubnetRequest,
  VpcClient,
} from '@huaweicloud/huaweicloud-sdk-vpc';
import {
  AuthScope,
  AuthScopeProject,
  IamClient,
  KeystoneCreateUserTokenByPasswordRequest,
  KeystoneCreateUserTokenByPasswordRequestBody,
  KeystoneCreateScopedTokenRequest,
  KeystoneCreateScopedTokenRequestBody,
  KeystoneListAuthDomainsRequest,
  KeystoneListAuthProjectsRequest,
  KeystoneListProjectsRequest,
  ScopedToken,
  ScopedTokenAuth,
  ScopedTokenIdentity,
  ScopeProjectOption,
  TokenSocpeOption,
  PwdAuth,
  PwdIdentity,
  PwdPassword,
  PwdPasswordUser,
  PwdPasswordUserDomain,
  // The package root also loads v5/public-api.js, which fails in 3.1.172 (it requires './GlobalCredentials,BasicCredentials'): import v3 directly.
} from '@huaweicloud/huaweicloud-sdk-iam/v3/public-api.js';
import { EventLog, SeededRng, VirtualClock } from '../../src/core/index.js';
import { createMockHcs, DEFAULT_DOMAIN, type MockHcs } from '../../mock-hcs/src/index.js';
import { fetchTransport, HcsClient } from '../../src/product/cloud/index.js';

/** SDK responses are the parsed wire JSON (snake_case keys kept) plus httpStatusCode. */
function wire<T>(sdkResponse: object): T {
  return sdkResponse as unknown as T;
}

async function sdkError(p: Promise<unknown>): Promise<ClientRequestException> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ClientRequestException);
  // Every SDK error carries the cloud's message and the request id (x-request-id), as the Go and Python suites check too.
  const c = e as ClientRequestException;
  expect(c.errorMsg).toBeTruthy();
  expect(c.errorMsg?.startsWith('{')).toBe(false);
  expect(c.requestId).toMatch(/^[0-9a-f]{32}$/);
  return c;
}

// The SDK signs with the wall clock; the X-Sdk-Date check uses wall time too (authNow), so the
// virtual clock can be moved freely (jobs, token expiry) without breaking signatures.
const clock = new VirtualClock(Date.now());
let hcs: MockHcs;
let endpoint: string;
let ecs: EcsClient;
let vpc: VpcClient;
let iam: IamClient;

const MISSING = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  hcs = await createMockHcs({ clock, rng: new SeededRng(7), events: new EventLog(clock), authNow: () => Date.now() });
  endpoint = await hcs.app.listen({ port: 0, host: '127.0.0.1' });
  const p0 = hcs.config.projects[0]!;
  const basic = () => new BasicCredentials().withAk(p0.ak).withSk(p0.sk).withProjectId(p0.id);
  ecs = EcsClient.newBuilder().withCredential(basic()).withEndpoint(endpoint).build();
  vpc = VpcClient.newBuilder().withCredential(basic()).withEndpoint(endpoint).build();
  iam = IamClient.newBuilder().withCredential(new GlobalCredentials().withAk(p0.ak).withSk(p0.sk).withDomainId(DEFAULT_DOMAIN.id)).withEndpoint(endpoint).build();
});

afterAll(async () => {
  await hcs?.close();
});

describe('official SDK clients against a listening mock-hcs', () => {
  it('ECS: create -> job -> show -> block devices -> stop/start/reboot -> detach/attach -> delete, flavors, errors', async () => {
    const cfg = hcs.config;
    const worker = cfg.subnets.find((s) => s.name === 'worker-subnet')!;
    const server = new PrePaidServer()
      .withName('cov-0')
      .withImageRef(cfg.images[2]!.id)
      .withFlavorRef('s6.large.2')
      .withAvailabilityZone('az1')
      .withVpcid(cfg.vpcs[0]!.id)
      .withNics([new PrePaidServerNic().withSubnetId(worker.id).withIpAddress('192.168.10.60')])
      .withRootVolume(new PrePaidServerRootVolume().withVolumetype('SSD').withSize(40))
      .withDataVolumes([new PrePaidServerDataVolume().withVolumetype('SSD').withSize(20)]);
    const created = await ecs.createServers(new CreateServersRequest().withBody(new CreateServersRequestBody().withServer(server)));
    const id = created.serverIds![0]!;
    clock.advanceBy(120_000);
    const job = wire<{ status: string; job_type: string }>(await ecs.showJob(new ShowJobRequest().withJobId(wire<{ job_id: string }>(created).job_id)));
    expect([job.status, job.job_type]).toEqual(['SUCCESS', 'createServer']);
    expect((await ecs.showServer(new ShowServerRequest().withServerId(id))).server?.status).toBe('ACTIVE');

    const devices = await ecs.listServerBlockDevices(new ListServerBlockDevicesRequest().withServerId(id));
    expect(devices.volumeAttachments?.map((d) => d.device)).toEqual(['/dev/vda', '/dev/vdb']);
    const dataVol = devices.volumeAttachments![1]!.volumeId!;
    const one = await ecs.showServerBlockDevice(new ShowServerBlockDeviceRequest().withServerId(id).withVolumeId(dataVol));
    expect(one.volumeAttachment?.serverId).toBe(id);

    const stop = await ecs.batchStopServers(
      new BatchStopServersRequest().withBody(new BatchStopServersRequestBody().withOsStop(new BatchStopServersOption().withServers([new ServerId().withId(id)]).withType('SOFT'))),
    );
    clock.advanceBy(30_000);
    expect((await ecs.showJob(new ShowJobRequest().withJobId(wire<{ job_id: string }>(stop).job_id))).status).toBe('SUCCESS');
    expect((await ecs.showServer(new ShowServerRequest().withServerId(id))).server?.status).toBe('SHUTOFF');
    // Stopping a stopped server: 409 with an error code.
    const e409 = await sdkError(
      ecs.batchStopServers(new BatchStopServersRequest().withBody(new BatchStopServersRequestBody().withOsStop(new BatchStopServersOption().withServers([new ServerId().withId(id)])))),
    );
    // 400 Ecs.0100 "The ECS status does not meet requirements" (ecs_07_0002).
    expect([e409.httpStatusCode, e409.errorCode]).toEqual([400, 'Ecs.0100']);
    await ecs.batchStartServers(
      new BatchStartServersRequest().withBody(new BatchStartServersRequestBody().withOsStart(new BatchStartServersOption().withServers([new ServerId().withId(id)]))),
    );
    clock.advanceBy(30_000);
    await ecs.batchRebootServers(
      new BatchRebootServersRequest().withBody(new BatchRebootServersRequestBody().withReboot(new BatchRebootSeversOption().withServers([new ServerId().withId(id)]).withType('SOFT'))),
    );
    expect((await ecs.showServer(new ShowServerRequest().withServerId(id))).server?.status).toBe('REBOOT');
    clock.advanceBy(30_000);
    expect((await ecs.showServer(new ShowServerRequest().withServerId(id))).server?.status).toBe('ACTIVE');

    await ecs.detachServerVolume(new DetachServerVolumeRequest().withServerId(id).withVolumeId(dataVol));
    clock.advanceBy(30_000);
    await ecs.attachServerVolume(
      new AttachServerVolumeRequest().withServerId(id).withBody(new AttachServerVolumeRequestBody().withVolumeAttachment(new AttachServerVolumeOption().withVolumeId(dataVol))),
    );
    clock.advanceBy(30_000);
    expect((await ecs.listServerBlockDevices(new ListServerBlockDevicesRequest().withServerId(id))).volumeAttachments).toHaveLength(2);

    const flavors = await ecs.listFlavors(new ListFlavorsRequest().withAvailabilityZone('az2'));
    expect(flavors.flavors?.map((f) => f.id)).toEqual(['s6.large.2', 's6.xlarge.2', 's6.2xlarge.2']);
    const specs = wire<{ flavors: { os_extra_specs: Record<string, string> }[] }>(flavors).flavors[0]!.os_extra_specs;
    expect([specs['cond:operation:status'], specs['cond:operation:az']]).toEqual(['normal', 'az1(normal),az2(normal)']);

    const listed = await ecs.listServersDetails(new ListServersDetailsRequest().withName('cov-0'));
    expect(listed.servers?.map((s) => s.id)).toEqual([id]);
    const badLimit = await sdkError(ecs.listServersDetails(new ListServersDetailsRequest().withLimit(5000)));
    expect([badLimit.httpStatusCode, badLimit.errorCode]).toEqual([400, 'Ecs.0005']);
    const badAz = await sdkError(ecs.listFlavors(new ListFlavorsRequest().withAvailabilityZone('nowhere')));
    expect([badAz.httpStatusCode, badAz.errorCode]).toEqual([400, 'Ecs.0005']);
    const noJob = await sdkError(ecs.showJob(new ShowJobRequest().withJobId('f'.repeat(32))));
    expect([noJob.httpStatusCode, noJob.errorCode]).toEqual([400, 'Common.0011']); // ecs_07_0002 "Invalid job ID"
    const noDevices = await sdkError(ecs.listServerBlockDevices(new ListServerBlockDevicesRequest().withServerId(MISSING)));
    expect([noDevices.httpStatusCode, noDevices.errorCode]).toEqual([404, 'Ecs.0114']);

    const missing = await sdkError(ecs.showServer(new ShowServerRequest().withServerId(MISSING)));
    expect([missing.httpStatusCode, missing.errorCode]).toEqual([404, 'Ecs.0114']);
    const noDev = await sdkError(ecs.showServerBlockDevice(new ShowServerBlockDeviceRequest().withServerId(id).withVolumeId(MISSING)));
    expect([noDev.httpStatusCode, noDev.errorCode]).toEqual([404, 'Ecs.0111']); // ecs_07_0002 "The disk is not in the attachment list"
    // An IP conflict on create.
    const clash = await sdkError(ecs.createServers(new CreateServersRequest().withBody(new CreateServersRequestBody().withServer(server.withName('cov-1')))));
    expect([clash.httpStatusCode, clash.errorCode]).toEqual([400, 'Ecs.0010']);

    const del = await ecs.deleteServers(new DeleteServersRequest().withBody(new DeleteServersRequestBody().withServers([new ServerId().withId(id)]).withDeleteVolume(true)));
    clock.advanceBy(60_000);
    expect((await ecs.showJob(new ShowJobRequest().withJobId(wire<{ job_id: string }>(del).job_id))).status).toBe('SUCCESS');
  });

  it('VPC: subnets, ports and private IPs (create, list, show, delete, conflicts)', async () => {
    const worker = hcs.config.subnets.find((s) => s.name === 'worker-subnet')!;
    const subnets = await vpc.listSubnets(new ListSubnetsRequest().withVpcId(hcs.config.vpcs[0]!.id));
    expect(subnets.subnets?.map((s) => s.name)).toEqual(['cp-subnet', 'worker-subnet']);
    const shown = await vpc.showSubnet(new ShowSubnetRequest().withSubnetId(worker.id));
    expect(shown.subnet?.cidr).toBe('192.168.10.0/24');
    const noSubnet = await sdkError(vpc.showSubnet(new ShowSubnetRequest().withSubnetId(MISSING)));
    expect([noSubnet.httpStatusCode, noSubnet.errorCode]).toEqual([404, 'VPC.0202']);

    const ips = await vpc.createPrivateip(
      new CreatePrivateipRequest().withBody(
        new CreatePrivateipRequestBody().withPrivateips([new CreatePrivateipOption().withSubnetId(worker.id).withIpAddress('192.168.10.70'), new CreatePrivateipOption().withSubnetId(worker.id)]),
      ),
    );
    type Ips = { privateips: { id: string; ip_address: string; subnet_id: string }[] };
    expect(wire<Ips>(ips).privateips.map((x) => [x.ip_address, x.subnet_id])).toEqual([
      ['192.168.10.70', worker.id],
      ['192.168.10.4', worker.id],
    ]);
    const ipId = ips.privateips![0]!.id!;
    expect(wire<{ privateip: { ip_address: string } }>(await vpc.showPrivateip(new ShowPrivateipRequest().withPrivateipId(ipId))).privateip.ip_address).toBe('192.168.10.70');
    const inSubnet = await vpc.listPrivateips(new ListPrivateipsRequest().withSubnetId(worker.id).withLimit(10));
    expect(wire<Ips>(inSubnet).privateips.map((x) => x.ip_address)).toEqual(['192.168.10.70', '192.168.10.4']);
    const conflict = await sdkError(
      vpc.createPrivateip(new CreatePrivateipRequest().withBody(new CreatePrivateipRequestBody().withPrivateips([new CreatePrivateipOption().withSubnetId(worker.id).withIpAddress('192.168.10.70')]))),
    );
    // 409 VPC.0701, the address is in use (VPC error codes, vpc_api_0003).
    expect([conflict.httpStatusCode, conflict.errorCode]).toEqual([409, 'VPC.0701']);
    const outside = await sdkError(
      vpc.createPrivateip(new CreatePrivateipRequest().withBody(new CreatePrivateipRequestBody().withPrivateips([new CreatePrivateipOption().withSubnetId(worker.id).withIpAddress('10.0.0.9')]))),
    );
    expect([outside.httpStatusCode, outside.errorCode]).toEqual([400, 'VPC.0001']); // no VPC code documents it: the module's "param invalid" stand-in

    const port = await vpc.createPort(
      new CreatePortRequest().withBody(
        new CreatePortRequestBody().withPort(new CreatePortOption().withNetworkId(worker.id).withName('cov-vip').withDeviceOwner('neutron:VIP_PORT').withFixedIps([new FixedIp().withIpAddress('192.168.10.71')])),
      ),
    );
    const portId = port.port!.id!;
    expect(port.port?.status).toBe('DOWN');
    expect(wire<{ port: { fixed_ips: { ip_address: string }[] } }>(port).port.fixed_ips[0]!.ip_address).toBe('192.168.10.71');
    expect((await vpc.showPort(new ShowPortRequest().withPortId(portId))).port?.name).toBe('cov-vip');
    const listed = await vpc.listPorts(new ListPortsRequest().withFixedIps(['ip_address=192.168.10.71']));
    expect(listed.ports?.map((p) => p.id)).toEqual([portId]);
    const byName = await vpc.listPorts(new ListPortsRequest().withName('cov-vip').withLimit(5));
    expect(byName.ports?.map((p) => p.id)).toEqual([portId]);

    expect((await vpc.deletePort(new DeletePortRequest().withPortId(portId))).httpStatusCode).toBe(204);
    const gone = await sdkError(vpc.showPort(new ShowPortRequest().withPortId(portId)));
    expect([gone.httpStatusCode, gone.errorCode]).toEqual([404, 'VPC.2501']);
    for (const x of ips.privateips!) expect((await vpc.deletePrivateip(new DeletePrivateipRequest().withPrivateipId(x.id!))).httpStatusCode).toBe(204);
    const ipGone = await sdkError(vpc.deletePrivateip(new DeletePrivateipRequest().withPrivateipId(ipId)));
    expect([ipGone.httpStatusCode, ipGone.errorCode]).toEqual([404, 'VPC.0702']);
  });

  it('IAM: token by password (X-Subject-Token), projects, domains; the token authenticates ECS calls until it expires', async () => {
    const p0 = hcs.config.projects[0]!;
    const body = (password: string) =>
      new KeystoneCreateUserTokenByPasswordRequestBody().withAuth(
        new PwdAuth()
          .withIdentity(
            new PwdIdentity()
              .withMethods(['password'])
              .withPassword(new PwdPassword().withUser(new PwdPasswordUser().withName('testbed-admin').withPassword(password).withDomain(new PwdPasswordUserDomain().withName(DEFAULT_DOMAIN.name)))),
          )
          .withScope(new AuthScope().withProject(new AuthScopeProject().withId(p0.id))),
      );
    const res = await iam.keystoneCreateUserTokenByPassword(new KeystoneCreateUserTokenByPasswordRequest().withBody(body('Testbed@123')));
    expect(res.httpStatusCode).toBe(201);
    const token = res.xSubjectToken ?? wire<Record<string, string>>(res)['X-Subject-Token'];
    expect(token).toMatch(/^MII/);
    expect(res.token?.project?.id).toBe(p0.id);
    const expiresAt = wire<{ token: { expires_at: string } }>(res).token.expires_at;
    expect(new Date(expiresAt).getTime()).toBe(clock.now() + 24 * 3600_000);

    const wrong = await sdkError(iam.keystoneCreateUserTokenByPassword(new KeystoneCreateUserTokenByPasswordRequest().withBody(body('wrong'))));
    expect([wrong.httpStatusCode, wrong.errorCode]).toEqual([401, 'IAM.0001']);

    const projects = await iam.keystoneListProjects(new KeystoneListProjectsRequest().withName('testbed'));
    expect(projects.projects?.map((p) => [p.id, p.domainId ?? wire<{ domain_id: string }>(p).domain_id])).toEqual([[p0.id, DEFAULT_DOMAIN.id]]);
    const domains = await iam.keystoneListAuthDomains(new KeystoneListAuthDomainsRequest());
    expect(domains.domains?.map((d) => d.name)).toEqual([DEFAULT_DOMAIN.name]);
    const authProjects = await iam.keystoneListAuthProjects(new KeystoneListAuthProjectsRequest());
    expect(authProjects.projects?.map((p) => p.id)).toEqual([p0.id]);
    const badPage = await sdkError(iam.keystoneListProjects(new KeystoneListProjectsRequest().withPage(1)));
    expect([badPage.httpStatusCode, badPage.errorCode]).toEqual([400, 'IAM.0007']);

    // Re-scope by token (methods ["token"]).
    const scoped = (id: string) =>
      new KeystoneCreateScopedTokenRequest().withBody(
        new KeystoneCreateScopedTokenRequestBody().withAuth(
          new ScopedTokenAuth()
            .withIdentity(new ScopedTokenIdentity().withMethods(['token']).withToken(new ScopedToken().withId(id)))
            .withScope(new TokenSocpeOption().withProject(new ScopeProjectOption().withId(p0.id))),
        ),
      );
    const rescoped = await iam.keystoneCreateScopedToken(scoped(token!));
    expect(rescoped.httpStatusCode).toBe(201);
    expect(wire<{ token: { project: { id: string } } }>(rescoped).token.project.id).toBe(p0.id);
    const badToken = await sdkError(iam.keystoneCreateScopedToken(scoped('MIInot-a-token')));
    expect([badToken.httpStatusCode, badToken.errorCode]).toEqual([401, 'IAM.0001']);

    // The SDKs only sign with AK/SK: use the token through the provider's client over the same socket.
    const byToken = new HcsClient({ transport: fetchTransport(endpoint), token, projectId: p0.id, clock });
    expect(Array.isArray(await byToken.listServers())).toBe(true);
    clock.advanceBy(24 * 3600_000);
    const expired = await byToken.listServers().catch((e: unknown) => e);
    expect(expired).toMatchObject({ status: 401, code: 'APIGW.0301' });
    expect((expired as Error).message).toContain('token expires');
  });
});
