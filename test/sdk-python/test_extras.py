"""Issue 24 with the official Python SDKs: the calls a provider commonly makes besides the
lifecycle (server tags, metadata, interfaces, availability zones), paging by marker, and the
error codes the API references document (each assertion cites its page). Everything this
file creates it deletes again, so test_lifecycle.py sees the cloud as before."""
import pytest
from huaweicloudsdkecs.v2 import model as ecsm
from huaweicloudsdkevs.v2 import model as evsm

from conftest import IMAGE_V131, VPC_ID, WORKER_NET, expect_error, poll

call = pytest.mark.sdk_call
X = {}


def server(name, ip):
    return ecsm.PrePaidServer(
        name=name, image_ref=IMAGE_V131, flavor_ref="s6.large.2", vpcid=VPC_ID, availability_zone="az1",
        nics=[ecsm.PrePaidServerNic(subnet_id=WORKER_NET, ip_address=ip)],
        root_volume=ecsm.PrePaidServerRootVolume(volumetype="SSD", size=40),
        server_tags=[ecsm.PrePaidServerTag(key="cluster", value="extras")],
    )


@call("ECS/ShowServerTags + BatchCreateServerTags + BatchDeleteServerTags")
def test_server_tags(ecs):
    r = ecs.create_servers(ecsm.CreateServersRequest(body=ecsm.CreateServersRequestBody(server=server("py-x", "192.168.10.150"))))
    X["server"] = r.server_ids[0]
    sid = X["server"]
    ecs.batch_create_server_tags(ecsm.BatchCreateServerTagsRequest(server_id=sid, body=ecsm.BatchCreateServerTagsRequestBody(
        action="create", tags=[ecsm.BatchAddServerTag(key="role", value="worker")])))
    tags = ecs.show_server_tags(ecsm.ShowServerTagsRequest(server_id=sid)).tags
    assert sorted((t.key, t.value) for t in tags) == [("cluster", "extras"), ("role", "worker")]
    ecs.batch_delete_server_tags(ecsm.BatchDeleteServerTagsRequest(server_id=sid, body=ecsm.BatchDeleteServerTagsRequestBody(
        action="delete", tags=[ecsm.ServerTag(key="role")])))
    assert [t.key for t in ecs.show_server_tags(ecsm.ShowServerTagsRequest(server_id=sid)).tags] == ["cluster"]
    # Ecs.0908 "Duplicate tag key." (ECS API reference "Error Codes", ecs_07_0002)
    dup = [ecsm.BatchAddServerTag(key="k", value="1"), ecsm.BatchAddServerTag(key="k", value="2")]
    expect_error(lambda: ecs.batch_create_server_tags(ecsm.BatchCreateServerTagsRequest(
        server_id=sid, body=ecsm.BatchCreateServerTagsRequestBody(action="create", tags=dup))), 400, "Ecs.0908")
    # Ecs.0905 "The number of tags exceeds the maximum number allowed." (ecs_07_0002): 10 at most.
    many = [ecsm.BatchAddServerTag(key=f"k{i}", value="v") for i in range(10)]
    expect_error(lambda: ecs.batch_create_server_tags(ecsm.BatchCreateServerTagsRequest(
        server_id=sid, body=ecsm.BatchCreateServerTagsRequestBody(action="create", tags=many))), 400, "Ecs.0905")


@call("ECS/UpdateServerMetadata")
def test_update_server_metadata(ecs):
    r = ecs.update_server_metadata(ecsm.UpdateServerMetadataRequest(
        server_id=X["server"], body=ecsm.UpdateServerMetadataRequestBody(metadata={"owner": "team-a"})))
    assert r.metadata["owner"] == "team-a"
    # Ecs.0114 "The ECS cannot be detected." (ecs_07_0002)
    expect_error(lambda: ecs.update_server_metadata(ecsm.UpdateServerMetadataRequest(
        server_id="00000000-0000-4000-8000-000000000000", body=ecsm.UpdateServerMetadataRequestBody(metadata={"a": "b"}))), 404, "Ecs.0114")


@call("ECS/DeleteServerMetadata")
def test_delete_server_metadata(ecs):
    """ecs_02_0702: DELETE .../metadata/{key}, synchronous, no body either way; the key is gone from ShowServer."""
    sid = X["server"]
    ecs.update_server_metadata(ecsm.UpdateServerMetadataRequest(
        server_id=sid, body=ecsm.UpdateServerMetadataRequestBody(metadata={"scratch": "x", "app:role.v1": "web"})))
    r = ecs.delete_server_metadata(ecsm.DeleteServerMetadataRequest(server_id=sid, key="scratch"))
    assert r.status_code == 204
    # ':' is allowed in keys (ecs_02_0701). This SDK sends it as %3A and signs the decoded path encoded once;
    # mock-hcs's verifier decodes each segment before encoding it (src/core/sdk-signing.ts canonicalUri), as
    # for the Go and Node SDKs, which send ':' as it is.
    ecs.delete_server_metadata(ecsm.DeleteServerMetadataRequest(server_id=sid, key="app:role.v1"))
    meta = ecs.show_server(ecsm.ShowServerRequest(server_id=sid)).server.metadata
    assert "scratch" not in meta and "app:role.v1" not in meta
    assert meta["owner"] == "team-a"
    # Ecs.0114 "The ECS cannot be detected." (ecs_07_0002), as ShowServer answers an unknown server.
    expect_error(lambda: ecs.delete_server_metadata(ecsm.DeleteServerMetadataRequest(
        server_id="00000000-0000-4000-8000-000000000000", key="owner")), 404, "Ecs.0114")


@call("ECS/ListServerInterfaces")
def test_list_server_interfaces(ecs):
    nics = ecs.list_server_interfaces(ecsm.ListServerInterfacesRequest(server_id=X["server"])).interface_attachments
    assert [ip.ip_address for n in nics for ip in n.fixed_ips] == ["192.168.10.150"]
    assert nics[0].port_id and nics[0].mac_addr


@call("ECS/NovaListAvailabilityZones")
def test_nova_list_availability_zones(ecs):
    zones = ecs.nova_list_availability_zones(ecsm.NovaListAvailabilityZonesRequest()).availability_zone_info
    assert [z.zone_name for z in zones] == ["az1", "az2"]
    assert all(z.zone_state.available for z in zones)


@call("ECS/UpdateServerBlockDevice")
def test_update_server_block_device(ecs, evs):
    """ecs_02_0607: PUT .../block_device/{volume_id} changes only delete_on_termination; "system disks
    cannot be modified"; DeleteServers then removes the data disk with its server."""
    body = server("py-bd", "192.168.10.152")
    body.data_volumes = [ecsm.PrePaidServerDataVolume(volumetype="SSD", size=10)]
    sid = ecs.create_servers(ecsm.CreateServersRequest(body=ecsm.CreateServersRequestBody(server=body))).server_ids[0]
    poll("py-bd ACTIVE", lambda: ecs.show_server(ecsm.ShowServerRequest(server_id=sid)).server.status == "ACTIVE")
    devs = ecs.list_server_block_devices(ecsm.ListServerBlockDevicesRequest(server_id=sid)).volume_attachments
    root = next(d.volume_id for d in devs if d.boot_index == 0)
    data = next(d.volume_id for d in devs if d.boot_index != 0)

    def update(volume_id, value):
        return ecs.update_server_block_device(ecsm.UpdateServerBlockDeviceRequest(
            server_id=sid, volume_id=volume_id,
            body=ecsm.UpdateServerBlockDeviceReq(block_device=ecsm.UpdateServerBlockDeviceOption(delete_on_termination=value))))

    def flags():
        vols = ecs.show_server(ecsm.ShowServerRequest(server_id=sid)).server.os_extended_volumesvolumes_attached
        return {v.id: v.delete_on_termination for v in vols}

    assert flags()[data] == "false"  # a data disk is kept with its server unless asked (ecs_02_0101)
    # The system disk: refused (no ECS code names the case: Ecs.0005, "Invalid parameters", ecs_07_0002).
    expect_error(lambda: update(root, False), 400, "Ecs.0005")
    update(data, True)
    assert flags() == {root: "true", data: "true"}
    ecs.delete_servers(ecsm.DeleteServersRequest(body=ecsm.DeleteServersRequestBody(servers=[ecsm.ServerId(id=sid)])))
    poll("py-bd's data disk deleted with its server (delete_volume unset)", lambda: data not in {
        v.id for v in evs.list_volumes(evsm.ListVolumesRequest()).volumes})


@call("ECS/ListServersDetails paging by marker")
def test_list_servers_details_marker(ecs):
    r = ecs.create_servers(ecsm.CreateServersRequest(body=ecsm.CreateServersRequestBody(server=server("py-y", "192.168.10.151"))))
    X["server2"] = r.server_ids[0]
    seen, marker = [], None
    for _ in range(20):  # bounded: a marker that is ignored would repeat the first page
        page = ecs.list_servers_details(ecsm.ListServersDetailsRequest(limit=1, marker=marker)).servers
        if not page:
            break
        assert page[0].id not in seen
        seen.append(page[0].id)
        marker = page[0].id
    assert {X["server"], X["server2"]} <= set(seen)
    ecs.delete_servers(ecsm.DeleteServersRequest(body=ecsm.DeleteServersRequestBody(
        servers=[ecsm.ServerId(id=X["server"]), ecsm.ServerId(id=X["server2"])], delete_volume=True)))
    poll("extras servers deleted", lambda: not any(
        s.id in (X["server"], X["server2"]) for s in ecs.list_servers_details(ecsm.ListServersDetailsRequest()).servers))


@call("EVS/ListVolumes paging by marker (volumes_links)")
def test_list_volumes_marker(evs):
    r = evs.create_volume(evsm.CreateVolumeRequest(body=evsm.CreateVolumeRequestBody(volume=evsm.CreateVolumeOption(
        availability_zone="az1", size=10, volume_type="SSD", count=3, name="py-page"))))
    made = list(r.volume_ids)
    seen, marker, links = [], None, 0
    for _ in range(20):  # bounded
        resp = evs.list_volumes(evsm.ListVolumesRequest(limit=1, marker=marker, name="py-page"))
        if not resp.volumes:
            break
        assert resp.volumes[0].id not in seen
        seen.append(resp.volumes[0].id)
        marker = resp.volumes[0].id
        if resp.volumes_links:
            links += 1
            assert resp.volumes_links[0].rel == "next"
    assert sorted(seen) == sorted(made)
    assert links == 2  # "next" on the first two pages of three, none on the last
    poll("volumes available", lambda: all(
        evs.show_volume(evsm.ShowVolumeRequest(volume_id=v)).volume.status == "available" for v in made))
    for v in made:
        evs.delete_volume(evsm.DeleteVolumeRequest(volume_id=v))
