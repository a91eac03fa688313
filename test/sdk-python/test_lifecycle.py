"""Every modelled ECS, EVS, VPC (v2 and v3), IMS and IAM call through the official Python SDKs,
in the order a provider uses them, with an error path each (status, error_code, error_msg and
request_id in the SDK's exception) and the typed response fields a provider relies on."""
import base64

import pytest
from huaweicloudsdkecs.v2 import model as ecsm
from huaweicloudsdkevs.v2 import model as evsm
from huaweicloudsdkiam.v3 import IamClient
from huaweicloudsdkiam.v3 import model as iamm
from huaweicloudsdkims.v2 import ImsClient
from huaweicloudsdkims.v2 import model as imsm
from huaweicloudsdkvpc.v2 import VpcClient
from huaweicloudsdkvpc.v2 import model as vpcm
from huaweicloudsdkvpc.v3 import VpcClient as VpcClientV3
from huaweicloudsdkvpc.v3 import model as vpc3m
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException

from conftest import (
    DOMAIN_ID, DOMAIN_NAME, IMAGE_V131, MISSING, PASSWORD, PROJECT_ID, REGION_ID, USER, VPC_ID,
    WORKER_NET, WORKER_V4_SUBNET, build, expect_error, global_cred, poll,
)

call = pytest.mark.sdk_call
S = {}  # state carried along the lifecycle (tests run in file order)
USER_DATA = base64.b64encode(b"#cloud-config\nhostname: py-0\n").decode()


@pytest.fixture(scope="module")
def vpc():
    return build(VpcClient)


def new_server(name, ip):
    return ecsm.PrePaidServer(
        name=name, image_ref=IMAGE_V131, flavor_ref="s6.large.2", vpcid=VPC_ID, availability_zone="az1",
        nics=[ecsm.PrePaidServerNic(subnet_id=WORKER_NET, ip_address=ip)],
        root_volume=ecsm.PrePaidServerRootVolume(volumetype="SSD", size=40),
        data_volumes=[ecsm.PrePaidServerDataVolume(volumetype="SSD", size=20)],
        user_data=USER_DATA, metadata={"cluster": "py"},
        server_tags=[ecsm.PrePaidServerTag(key="cluster", value="py")],
    )


def job_done(ecs, job_id):
    def done():
        r = ecs.show_job(ecsm.ShowJobRequest(job_id=job_id))
        assert r.status != "FAIL", f"job {job_id} failed: {r.error_code} {r.fail_reason}"
        return r.status == "SUCCESS"
    return done


def ids():
    return [ecsm.ServerId(id=S["server"])]


# ---------------------------------------------------------------- ECS

@call("ECS/CreateServers")
def test_create_servers(ecs):
    body = ecsm.CreateServersRequestBody(server=new_server("py-0", "192.168.10.80"))
    r = ecs.create_servers(ecsm.CreateServersRequest(x_client_token="py-token-1", body=body))
    assert r.job_id and len(r.server_ids) == 1
    S["server"], S["job"] = r.server_ids[0], r.job_id
    again = ecs.create_servers(ecsm.CreateServersRequest(x_client_token="py-token-1", body=body))
    assert again.server_ids == [S["server"]]
    clash = ecsm.CreateServersRequestBody(server=new_server("py-1", "192.168.10.80"))
    expect_error(lambda: ecs.create_servers(ecsm.CreateServersRequest(body=clash)), 400, "Ecs.0010")  # "The private IP address is already in use" (ECS API reference "Error Codes" ecs_07_0002)


@call("ECS/ShowJob")
def test_show_job(ecs):
    poll("create job", job_done(ecs, S["job"]))
    r = ecs.show_job(ecsm.ShowJobRequest(job_id=S["job"]))
    assert r.job_type == "createServer" and r.begin_time
    assert r.entities.sub_jobs[0].entities.server_id == S["server"]
    expect_error(lambda: ecs.show_job(ecsm.ShowJobRequest(job_id="f" * 32)), 400, "Common.0011")  # "Invalid job ID" (ECS API reference "Error Codes" ecs_07_0002; EVS evs_04_0038)


@call("ECS/ShowServer")
def test_show_server(ecs):
    s = ecs.show_server(ecsm.ShowServerRequest(server_id=S["server"])).server
    assert (s.status, s.name, s.os_ext_a_zavailability_zone) == ("ACTIVE", "py-0", "az1")
    assert (s.flavor.id, s.image.id, s.metadata["cluster"]) == ("s6.large.2", IMAGE_V131, "py")
    assert s.os_ext_srv_att_ruser_data == USER_DATA
    assert s.os_ext_st_spower_state == 1 and s.os_ext_srv_att_rinstance_name
    addr = s.addresses[VPC_ID][0]
    assert addr.addr == "192.168.10.80" and addr.os_ext_ip_sport_id
    vols = s.os_extended_volumesvolumes_attached
    assert [v.boot_index for v in vols] == ["0", "-1"]
    S["data_vol"] = vols[1].id
    expect_error(lambda: ecs.show_server(ecsm.ShowServerRequest(server_id=MISSING)), 404, "Ecs.0114")


@call("ECS/ListServersDetails")
def test_list_servers_details(ecs):
    r = ecs.list_servers_details(ecsm.ListServersDetailsRequest(name="py-0", limit=10, offset=1))
    assert r.count == 1 and r.servers[0].id == S["server"]
    expect_error(lambda: ecs.list_servers_details(ecsm.ListServersDetailsRequest(limit=5000)), 400, "Ecs.0005")


@call("ECS/ListCloudServers")
def test_list_cloud_servers(ecs):
    r = ecs.list_cloud_servers(ecsm.ListCloudServersRequest(name="py-0", limit=10))
    s = r.servers[0]
    assert (s.id, s.vm_state, s.flavor.vcpus) == (S["server"], "active", 2)
    assert s.volumes_attached[0].boot_index == "0" and s.addresses[VPC_ID][0].addr == "192.168.10.80"
    expect_error(lambda: ecs.list_cloud_servers(ecsm.ListCloudServersRequest(marker=MISSING)), 400, "Ecs.0005")


@call("ECS/ListFlavors")
def test_list_flavors(ecs):
    f = ecs.list_flavors(ecsm.ListFlavorsRequest(availability_zone="az1")).flavors[0]
    assert (f.id, f.ram, f.os_extra_specs.condoperationstatus) == ("s6.large.2", 4096, "normal")
    expect_error(lambda: ecs.list_flavors(ecsm.ListFlavorsRequest(availability_zone="nowhere")), 400, "Ecs.0005")


@call("ECS/ListServerBlockDevices")
def test_list_server_block_devices(ecs):
    d = ecs.list_server_block_devices(ecsm.ListServerBlockDevicesRequest(server_id=S["server"])).volume_attachments
    assert [(x.device, x.boot_index) for x in d] == [("/dev/vda", 0), ("/dev/vdb", -1)]
    assert d[1].volume_id == S["data_vol"]
    expect_error(lambda: ecs.list_server_block_devices(ecsm.ListServerBlockDevicesRequest(server_id=MISSING)), 404, "Ecs.0114")


@call("ECS/ShowServerBlockDevice")
def test_show_server_block_device(ecs):
    a = ecs.show_server_block_device(ecsm.ShowServerBlockDeviceRequest(server_id=S["server"], volume_id=S["data_vol"])).volume_attachment
    assert (a.server_id, a.size) == (S["server"], 20)
    expect_error(lambda: ecs.show_server_block_device(ecsm.ShowServerBlockDeviceRequest(server_id=S["server"], volume_id=MISSING)), 404, "Ecs.0111")  # "The disk is not in the attachment list" (ECS API reference "Error Codes" ecs_07_0002)


@call("ECS/BatchStopServers")
def test_batch_stop_servers(ecs):
    stop = lambda: ecs.batch_stop_servers(ecsm.BatchStopServersRequest(body=ecsm.BatchStopServersRequestBody(os_stop=ecsm.BatchStopServersOption(servers=ids(), type="SOFT"))))
    poll("stop job", job_done(ecs, stop().job_id))
    assert ecs.show_server(ecsm.ShowServerRequest(server_id=S["server"])).server.status == "SHUTOFF"
    expect_error(stop, 400, "Ecs.0100")  # "The ECS status does not meet requirements" (ECS API reference "Error Codes" ecs_07_0002)


@call("ECS/BatchStartServers")
def test_batch_start_servers(ecs):
    start = lambda: ecs.batch_start_servers(ecsm.BatchStartServersRequest(body=ecsm.BatchStartServersRequestBody(os_start=ecsm.BatchStartServersOption(servers=ids()))))
    poll("start job", job_done(ecs, start().job_id))
    expect_error(start, 400, "Ecs.0100")  # "The ECS status does not meet requirements" (ECS API reference "Error Codes" ecs_07_0002)


@call("ECS/BatchRebootServers")
def test_batch_reboot_servers(ecs):
    reboot = lambda servers: ecs.batch_reboot_servers(ecsm.BatchRebootServersRequest(body=ecsm.BatchRebootServersRequestBody(reboot=ecsm.BatchRebootSeversOption(servers=servers, type="SOFT"))))
    poll("reboot job", job_done(ecs, reboot(ids()).job_id))
    expect_error(lambda: reboot([ecsm.ServerId(id=MISSING)]), 404, "Ecs.0114")


@call("ECS/DetachServerVolume")
def test_detach_server_volume(ecs):
    detach = lambda: ecs.detach_server_volume(ecsm.DetachServerVolumeRequest(server_id=S["server"], volume_id=S["data_vol"]))
    poll("detach job", job_done(ecs, detach().job_id))
    expect_error(detach, 400, "Ecs.0111")  # "The disk is not in the attachment list" (ECS API reference "Error Codes" ecs_07_0002)


@call("ECS/AttachServerVolume")
def test_attach_server_volume(ecs):
    attach = lambda vol: ecs.attach_server_volume(ecsm.AttachServerVolumeRequest(server_id=S["server"], body=ecsm.AttachServerVolumeRequestBody(volume_attachment=ecsm.AttachServerVolumeOption(volume_id=vol))))
    poll("attach job", job_done(ecs, attach(S["data_vol"]).job_id))
    expect_error(lambda: attach(MISSING), 400, "Ecs.0103")  # "The disk is unavailable" (ECS API reference "Error Codes" ecs_07_0002; Ecs.0104 is the slot limit)


# ---------------------------------------------------------------- EVS

@call("EVS/CreateVolume")
def test_create_volume(evs):
    opt = evsm.CreateVolumeOption(availability_zone="az1", name="py-pd", size=10, volume_type="SSD", metadata={"owner": "py"})
    r = evs.create_volume(evsm.CreateVolumeRequest(body=evsm.CreateVolumeRequestBody(volume=opt)))
    assert r.job_id and len(r.volume_ids) == 1
    S["vol"], S["vol_job"] = r.volume_ids[0], r.job_id
    bad = evsm.CreateVolumeOption(availability_zone="az1", size=10, volume_type="SSD", count=0)
    expect_error(lambda: evs.create_volume(evsm.CreateVolumeRequest(body=evsm.CreateVolumeRequestBody(volume=bad))), 400, "EVS.5400")


@call("EVS/ShowJob")
def test_evs_show_job(evs):
    def done():
        r = evs.show_job(evsm.ShowJobRequest(job_id=S["vol_job"]))
        assert r.status != "FAIL"
        return r.status == "SUCCESS"
    poll("volume create job", done)
    assert evs.show_job(evsm.ShowJobRequest(job_id=S["vol_job"])).job_type == "createVolume"
    expect_error(lambda: evs.show_job(evsm.ShowJobRequest(job_id="f" * 32)), 400, "Common.0011")  # "Invalid job ID" (ECS API reference "Error Codes" ecs_07_0002; EVS evs_04_0038)


@call("EVS/ShowVolume")
def test_show_volume(evs):
    v = evs.show_volume(evsm.ShowVolumeRequest(volume_id=S["vol"])).volume
    assert (v.name, v.size, v.availability_zone, v.status, v.metadata["owner"]) == ("py-pd", 10, "az1", "available", "py")
    expect_error(lambda: evs.show_volume(evsm.ShowVolumeRequest(volume_id=MISSING)), 404, "EVS.5404")


@call("EVS/ListVolumes")
def test_list_volumes(evs):
    r = evs.list_volumes(evsm.ListVolumesRequest(server_id=S["server"]))
    assert r.count == 2 and r.volumes[1].attachments[0].server_id == S["server"]
    expect_error(lambda: evs.list_volumes(evsm.ListVolumesRequest(metadata="not-json")), 400, "EVS.5400")


@call("EVS/UpdateVolume")
def test_update_volume(evs):
    r = evs.update_volume(evsm.UpdateVolumeRequest(volume_id=S["vol"], body=evsm.UpdateVolumeRequestBody(volume=evsm.UpdateVolumeOption(name="py-pd-2", description="renamed"))))
    assert (r.id, r.name, r.status, r.size) == (S["vol"], "py-pd-2", "available", 10)
    expect_error(lambda: evs.update_volume(evsm.UpdateVolumeRequest(volume_id=MISSING, body=evsm.UpdateVolumeRequestBody(volume=evsm.UpdateVolumeOption(name="x")))), 404, "EVS.5404")


# "Expanding Capacity of an EVS Disk" (evs_04_2004): os-extend answers the extendVolume job (evs_04_0054);
# the disk is extending, then available with the new size.
@call("EVS/ResizeVolume")
def test_resize_volume(evs):
    def resize(volume_id, size):
        body = evsm.ResizeVolumeRequestBody(os_extend=evsm.OsExtend(new_size=size))
        return evs.resize_volume(evsm.ResizeVolumeRequest(volume_id=volume_id, body=body))
    r = resize(S["vol"], 20)
    assert evs.show_job(evsm.ShowJobRequest(job_id=r.job_id)).job_type == "extendVolume"

    def extended():
        v = evs.show_volume(evsm.ShowVolumeRequest(volume_id=S["vol"])).volume
        return (v.status, v.size) == ("available", 20)
    poll("volume extended", extended)
    # The new size must be greater than the disk's (evs_04_2004); EVS documents no code for it: EVS.5400.
    expect_error(lambda: resize(S["vol"], 20), 400, "EVS.5400")
    expect_error(lambda: resize(MISSING, 30), 404, "EVS.5404")


@call("EVS/DeleteVolume")
def test_delete_volume(evs):
    expect_error(lambda: evs.delete_volume(evsm.DeleteVolumeRequest(volume_id=S["data_vol"])), 400, "EVS.1046")
    r = evs.delete_volume(evsm.DeleteVolumeRequest(volume_id=S["vol"]))
    assert evs.show_job(evsm.ShowJobRequest(job_id=r.job_id)).job_type == "deleteVolume"

    def gone():
        try:
            evs.show_volume(evsm.ShowVolumeRequest(volume_id=S["vol"]))
            return False
        except ClientRequestException as e:
            return e.error_code == "EVS.5404"
    poll("volume gone", gone)


# ---------------------------------------------------------------- VPC v2

@call("VPC/ListSubnets")
def test_list_subnets(vpc):
    r = vpc.list_subnets(vpcm.ListSubnetsRequest(vpc_id=VPC_ID))
    assert [s.cidr for s in r.subnets] == ["192.168.1.0/24", "192.168.10.0/24"]
    expect_error(lambda: vpc.list_subnets(vpcm.ListSubnetsRequest(marker=MISSING)), 400, "VPC.0001")


@call("VPC/ShowSubnet")
def test_show_subnet(vpc):
    s = vpc.show_subnet(vpcm.ShowSubnetRequest(subnet_id=WORKER_NET)).subnet
    assert (s.gateway_ip, s.neutron_subnet_id) == ("192.168.10.1", WORKER_V4_SUBNET)
    expect_error(lambda: vpc.show_subnet(vpcm.ShowSubnetRequest(subnet_id=MISSING)), 404, "VPC.0202")


@call("VPC/CreatePort")
def test_create_port(vpc):
    opt = vpcm.CreatePortOption(network_id=WORKER_NET, name="py-vip", device_owner="neutron:VIP_PORT", fixed_ips=[vpcm.FixedIp(ip_address="192.168.10.81")])
    p = vpc.create_port(vpcm.CreatePortRequest(body=vpcm.CreatePortRequestBody(port=opt))).port
    assert (p.status, p.fixed_ips[0].ip_address) == ("DOWN", "192.168.10.81")
    S["port"] = p.id
    expect_error(lambda: vpc.create_port(vpcm.CreatePortRequest(body=vpcm.CreatePortRequestBody(port=vpcm.CreatePortOption(network_id=MISSING)))), 404, "VPC.0202")
    # An address outside the subnet: CreatePort's "Param is invalid." (vpc_api_0003: 400 VPC.2500).
    outside = vpcm.CreatePortOption(network_id=WORKER_NET, fixed_ips=[vpcm.FixedIp(ip_address="10.9.9.9")])
    expect_error(lambda: vpc.create_port(vpcm.CreatePortRequest(body=vpcm.CreatePortRequestBody(port=outside))), 400, "VPC.2500")


@call("VPC/ListPorts")
def test_list_ports(vpc):
    assert [p.id for p in vpc.list_ports(vpcm.ListPortsRequest(fixed_ips=["ip_address=192.168.10.81"])).ports] == [S["port"]]
    nic = vpc.list_ports(vpcm.ListPortsRequest(device_id=S["server"])).ports
    assert nic[0].fixed_ips[0].ip_address == "192.168.10.80"
    expect_error(lambda: vpc.list_ports(vpcm.ListPortsRequest(limit=0)), 400, "VPC.0001")


@call("VPC/ShowPort")
def test_show_port(vpc):
    assert vpc.show_port(vpcm.ShowPortRequest(port_id=S["port"])).port.name == "py-vip"
    expect_error(lambda: vpc.show_port(vpcm.ShowPortRequest(port_id=MISSING)), 404, "VPC.2501")


@call("VPC/CreatePrivateip")
def test_create_privateip(vpc):
    body = vpcm.CreatePrivateipRequestBody(privateips=[vpcm.CreatePrivateipOption(subnet_id=WORKER_NET, ip_address="192.168.10.82")])
    r = vpc.create_privateip(vpcm.CreatePrivateipRequest(body=body))
    assert r.privateips[0].ip_address == "192.168.10.82"
    S["ip"] = r.privateips[0].id
    expect_error(lambda: vpc.create_privateip(vpcm.CreatePrivateipRequest(body=body)), 409, "VPC.0701")  # IP in use (VPC "Error Codes" vpc_api_0003)


@call("VPC/ListPrivateips")
def test_list_privateips(vpc):
    r = vpc.list_privateips(vpcm.ListPrivateipsRequest(subnet_id=WORKER_NET, limit=100))
    assert S["ip"] in [p.id for p in r.privateips]
    expect_error(lambda: vpc.list_privateips(vpcm.ListPrivateipsRequest(subnet_id=MISSING)), 404, "VPC.0202")


@call("VPC/ShowPrivateip")
def test_show_privateip(vpc):
    assert vpc.show_privateip(vpcm.ShowPrivateipRequest(privateip_id=S["ip"])).privateip.subnet_id == WORKER_NET
    expect_error(lambda: vpc.show_privateip(vpcm.ShowPrivateipRequest(privateip_id=MISSING)), 404, "VPC.0702")  # stand-in: no VPC page documents a missing private IP (mock-hcs/README.md "Error codes")


# ---------------------------------------------------------------- VPC v3 (ports, read-only)

@call("VPCv3/ListPorts")
def test_v3_list_ports():
    v3 = build(VpcClientV3)
    r = v3.list_ports(vpc3m.ListPortsRequest(device_id=[S["server"]]))
    p = r.ports[0]
    assert (p.virsubnet_id, p.vpc_id, p.private_ips[0].ip_address, p.instance_id) == (WORKER_NET, VPC_ID, "192.168.10.80", S["server"])
    assert r.request_id and r.page_info.current_count == 1
    page = v3.list_ports(vpc3m.ListPortsRequest(virsubnet_id=[WORKER_NET], limit=1))
    assert len(page.ports) == 1 and page.page_info.next_marker == page.ports[0].id
    expect_error(lambda: v3.list_ports(vpc3m.ListPortsRequest(marker=MISSING)), 400, "VPC.0001")


@call("VPCv3/ShowPort")
def test_v3_show_port():
    v3 = build(VpcClientV3)
    p = v3.show_port(vpc3m.ShowPortRequest(port_id=S["port"])).port
    assert (p.name, p.private_ips[0].ip_address) == ("py-vip", "192.168.10.81")
    expect_error(lambda: v3.show_port(vpc3m.ShowPortRequest(port_id=MISSING)), 404, "VPC.2501")


@call("VPC/DeletePort")
def test_delete_port(vpc):
    vpc.delete_port(vpcm.DeletePortRequest(port_id=S["port"]))
    expect_error(lambda: vpc.delete_port(vpcm.DeletePortRequest(port_id=S["port"])), 404, "VPC.2501")


@call("VPC/DeletePrivateip")
def test_delete_privateip(vpc):
    vpc.delete_privateip(vpcm.DeletePrivateipRequest(privateip_id=S["ip"]))
    expect_error(lambda: vpc.delete_privateip(vpcm.DeletePrivateipRequest(privateip_id=S["ip"])), 404, "VPC.0702")  # stand-in: no VPC page documents a missing private IP (mock-hcs/README.md "Error codes")


# ---------------------------------------------------------------- IMS

@call("IMS/ListImages")
def test_list_images():
    ims = build(ImsClient)
    img = ims.list_images(imsm.ListImagesRequest(name="alauda-os-v4.1-k8s-v1.31.6")).images[0]
    assert (img.id, img.status, img.min_disk) == (IMAGE_V131, "active", 40)
    assert len(ims.list_images(imsm.ListImagesRequest()).images) == 3
    expect_error(lambda: ims.list_images(imsm.ListImagesRequest(limit=-1)), 400, "IMG.0001")


# ---------------------------------------------------------------- ECS delete (frees the IP and the volumes)

@call("ECS/DeleteServers")
def test_delete_servers(ecs):
    r = ecs.delete_servers(ecsm.DeleteServersRequest(body=ecsm.DeleteServersRequestBody(servers=ids(), delete_volume=True, delete_publicip=False)))
    poll("delete job", job_done(ecs, r.job_id))
    expect_error(lambda: ecs.show_server(ecsm.ShowServerRequest(server_id=S["server"])), 404, "Ecs.0114")
    expect_error(lambda: ecs.delete_servers(ecsm.DeleteServersRequest(body=ecsm.DeleteServersRequestBody(servers=[ecsm.ServerId(id=MISSING)]))), 404, "Ecs.0114")


# ---------------------------------------------------------------- IAM

@pytest.fixture(scope="module")
def iam():
    return build(IamClient, global_cred())


def pwd_request(password):
    user = iamm.PwdPasswordUser(domain=iamm.PwdPasswordUserDomain(name=DOMAIN_NAME), name=USER, password=password)
    auth = iamm.PwdAuth(identity=iamm.PwdIdentity(methods=["password"], password=iamm.PwdPassword(user=user)), scope=iamm.AuthScope(project=iamm.AuthScopeProject(id=PROJECT_ID)))
    return iamm.KeystoneCreateUserTokenByPasswordRequest(body=iamm.KeystoneCreateUserTokenByPasswordRequestBody(auth=auth))


@call("IAM/KeystoneCreateUserTokenByPassword")
def test_token_by_password(iam):
    r = iam.keystone_create_user_token_by_password(pwd_request(PASSWORD))
    assert r.x_subject_token.startswith("MII") and r.token.project.id == PROJECT_ID and r.token.expires_at
    S["token"] = r.x_subject_token
    expect_error(lambda: iam.keystone_create_user_token_by_password(pwd_request("wrong")), 401, "IAM.0001")


@call("IAM/KeystoneCreateScopedToken")
def test_scoped_token(iam):
    def req(token):
        auth = iamm.ScopedTokenAuth(identity=iamm.ScopedTokenIdentity(methods=["token"], token=iamm.ScopedToken(id=token)), scope=iamm.TokenSocpeOption(project=iamm.ScopeProjectOption(id=PROJECT_ID)))
        return iamm.KeystoneCreateScopedTokenRequest(body=iamm.KeystoneCreateScopedTokenRequestBody(auth=auth))
    r = iam.keystone_create_scoped_token(req(S["token"]))
    assert r.x_subject_token and r.token.project.id == PROJECT_ID
    expect_error(lambda: iam.keystone_create_scoped_token(req("MIInot-a-token")), 401, "IAM.0001")


@call("IAM/KeystoneListProjects")
def test_list_projects(iam):
    p = iam.keystone_list_projects(iamm.KeystoneListProjectsRequest(name="testbed")).projects
    assert [(x.id, x.domain_id) for x in p] == [(PROJECT_ID, DOMAIN_ID)]
    assert [x.id for x in iam.keystone_list_projects(iamm.KeystoneListProjectsRequest(name=REGION_ID)).projects] == [PROJECT_ID]
    expect_error(lambda: iam.keystone_list_projects(iamm.KeystoneListProjectsRequest(page=1)), 400, "IAM.0007")


@call("IAM/KeystoneListAuthProjects")
def test_list_auth_projects(iam):
    assert [p.id for p in iam.keystone_list_auth_projects(iamm.KeystoneListAuthProjectsRequest()).projects] == [PROJECT_ID]


@call("IAM/KeystoneListAuthDomains")
def test_list_auth_domains(iam):
    d = iam.keystone_list_auth_domains(iamm.KeystoneListAuthDomainsRequest()).domains
    assert [(x.id, x.name) for x in d] == [(DOMAIN_ID, DOMAIN_NAME)]
