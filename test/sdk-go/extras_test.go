package sdkgo

import (
	"testing"

	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/auth/signer/algorithm"
	ecsmodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ecs/v2/model"
	evs "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/evs/v2"
	evsmodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/evs/v2/model"
)

// TestExtras (issue 24): the ECS calls a provider commonly makes besides the lifecycle, paging by
// marker, and their documented error codes (each assertion cites the reference page). It deletes
// what it creates, so TestLifecycle sees the cloud as before.
func TestExtras(t *testing.T) {
	e := ecsClient(t, algorithm.HmacSHA256)
	srv := func(name, ip string) *ecsmodel.PrePaidServer {
		return &ecsmodel.PrePaidServer{
			Name: name, ImageRef: imageV131, FlavorRef: "s6.large.2", Vpcid: vpcID, AvailabilityZone: ptr("az1"),
			Nics:       []ecsmodel.PrePaidServerNic{{SubnetId: ptr(workerNet), IpAddress: ptr(ip)}},
			RootVolume: &ecsmodel.PrePaidServerRootVolume{Volumetype: ecsmodel.GetPrePaidServerRootVolumeVolumetypeEnum().SSD, Size: ptr(int32(40))},
			ServerTags: &[]ecsmodel.PrePaidServerTag{{Key: "cluster", Value: "extras"}},
		}
	}
	var s1, s2 string

	call(t, "ECS/ShowServerTags + BatchCreateServerTags + BatchDeleteServerTags", func(t *testing.T) {
		r, err := e.CreateServers(&ecsmodel.CreateServersRequest{Body: &ecsmodel.CreateServersRequestBody{Server: srv("go-x", "192.168.10.160")}})
		must(t, err, "CreateServers")
		s1 = (*r.ServerIds)[0]
		_, err = e.BatchCreateServerTags(&ecsmodel.BatchCreateServerTagsRequest{ServerId: s1, Body: &ecsmodel.BatchCreateServerTagsRequestBody{
			Action: ecsmodel.GetBatchCreateServerTagsRequestBodyActionEnum().CREATE, Tags: []ecsmodel.BatchAddServerTag{{Key: "role", Value: ptr("worker")}}}})
		must(t, err, "BatchCreateServerTags")
		tags, err := e.ShowServerTags(&ecsmodel.ShowServerTagsRequest{ServerId: s1})
		must(t, err, "ShowServerTags")
		eq(t, "tags", len(*tags.Tags), 2)
		_, err = e.BatchDeleteServerTags(&ecsmodel.BatchDeleteServerTagsRequest{ServerId: s1, Body: &ecsmodel.BatchDeleteServerTagsRequestBody{
			Action: ecsmodel.GetBatchDeleteServerTagsRequestBodyActionEnum().DELETE, Tags: []ecsmodel.ServerTag{{Key: "role"}}}})
		must(t, err, "BatchDeleteServerTags")
		tags, err = e.ShowServerTags(&ecsmodel.ShowServerTagsRequest{ServerId: s1})
		must(t, err, "ShowServerTags")
		eq(t, "tags after delete", len(*tags.Tags), 1)
		eq(t, "tag", (*tags.Tags)[0].Key, "cluster")
		// Ecs.0908 "Duplicate tag key." (ECS API reference "Error Codes", ecs_07_0002)
		_, err = e.BatchCreateServerTags(&ecsmodel.BatchCreateServerTagsRequest{ServerId: s1, Body: &ecsmodel.BatchCreateServerTagsRequestBody{
			Action: ecsmodel.GetBatchCreateServerTagsRequestBodyActionEnum().CREATE, Tags: []ecsmodel.BatchAddServerTag{{Key: "k", Value: ptr("1")}, {Key: "k", Value: ptr("2")}}}})
		wantErr(t, err, 400, "Ecs.0908")
	})

	call(t, "ECS/UpdateServerMetadata", func(t *testing.T) {
		r, err := e.UpdateServerMetadata(&ecsmodel.UpdateServerMetadataRequest{ServerId: s1, Body: &ecsmodel.UpdateServerMetadataRequestBody{Metadata: map[string]string{"owner": "team-a"}}})
		must(t, err, "UpdateServerMetadata")
		eq(t, "owner", r.Metadata["owner"], "team-a")
		// Ecs.0114 "The ECS cannot be detected." (ecs_07_0002)
		_, err = e.UpdateServerMetadata(&ecsmodel.UpdateServerMetadataRequest{ServerId: missing, Body: &ecsmodel.UpdateServerMetadataRequestBody{Metadata: map[string]string{"a": "b"}}})
		wantErr(t, err, 404, "Ecs.0114")
	})

	// ecs_02_0702: DELETE .../metadata/{key}, synchronous, no body either way (the SDK's
	// DeleteServerMetadataResponse carries only HttpStatusCode); the key is gone from ShowServer.
	call(t, "ECS/DeleteServerMetadata", func(t *testing.T) {
		_, err := e.UpdateServerMetadata(&ecsmodel.UpdateServerMetadataRequest{ServerId: s1, Body: &ecsmodel.UpdateServerMetadataRequestBody{Metadata: map[string]string{"scratch": "x", "app:role.v1": "web"}}})
		must(t, err, "UpdateServerMetadata")
		r, err := e.DeleteServerMetadata(&ecsmodel.DeleteServerMetadataRequest{ServerId: s1, Key: "scratch"})
		must(t, err, "DeleteServerMetadata")
		eq(t, "status", r.HttpStatusCode, 204)
		// ':' and '.' are allowed in keys (ecs_02_0701); the SDK puts the key in the path.
		_, err = e.DeleteServerMetadata(&ecsmodel.DeleteServerMetadataRequest{ServerId: s1, Key: "app:role.v1"})
		must(t, err, "DeleteServerMetadata app:role.v1")
		s, err := e.ShowServer(&ecsmodel.ShowServerRequest{ServerId: s1})
		must(t, err, "ShowServer")
		_, scratch := s.Server.Metadata["scratch"]
		_, role := s.Server.Metadata["app:role.v1"]
		eq(t, "scratch shown after delete", scratch, false)
		eq(t, "app:role.v1 shown after delete", role, false)
		eq(t, "owner kept", s.Server.Metadata["owner"], "team-a")
		// Ecs.0114 "The ECS cannot be detected." (ecs_07_0002), as ShowServer answers an unknown server.
		_, err = e.DeleteServerMetadata(&ecsmodel.DeleteServerMetadataRequest{ServerId: missing, Key: "owner"})
		wantErr(t, err, 404, "Ecs.0114")
	})

	call(t, "ECS/ListServerInterfaces", func(t *testing.T) {
		r, err := e.ListServerInterfaces(&ecsmodel.ListServerInterfacesRequest{ServerId: s1})
		must(t, err, "ListServerInterfaces")
		eq(t, "nics", len(*r.InterfaceAttachments), 1)
		nic := (*r.InterfaceAttachments)[0]
		eq(t, "ip", str((*nic.FixedIps)[0].IpAddress), "192.168.10.160")
		nonEmpty(t, "port_id", str(nic.PortId))
		nonEmpty(t, "mac_addr", str(nic.MacAddr))
	})

	call(t, "ECS/NovaListAvailabilityZones", func(t *testing.T) {
		r, err := e.NovaListAvailabilityZones(&ecsmodel.NovaListAvailabilityZonesRequest{})
		must(t, err, "NovaListAvailabilityZones")
		eq(t, "zones", len(*r.AvailabilityZoneInfo), 2)
		eq(t, "az1", (*r.AvailabilityZoneInfo)[0].ZoneName, "az1")
		eq(t, "available", (*r.AvailabilityZoneInfo)[0].ZoneState.Available, true)
	})

	// ecs_02_0607: PUT .../block_device/{volume_id} changes only delete_on_termination, "system disks cannot be
	// modified", and DeleteServers then removes the data disk with its server.
	call(t, "ECS/UpdateServerBlockDevice", func(t *testing.T) {
		body := srv("go-bd", "192.168.10.162")
		body.DataVolumes = &[]ecsmodel.PrePaidServerDataVolume{{Volumetype: ecsmodel.GetPrePaidServerDataVolumeVolumetypeEnum().SSD, Size: 10}}
		r, err := e.CreateServers(&ecsmodel.CreateServersRequest{Body: &ecsmodel.CreateServersRequestBody{Server: body}})
		must(t, err, "CreateServers")
		sid := (*r.ServerIds)[0]
		poll(t, "go-bd ACTIVE", func() (bool, error) {
			s, err := e.ShowServer(&ecsmodel.ShowServerRequest{ServerId: sid})
			if err != nil {
				return false, err
			}
			return s.Server.Status == "ACTIVE", nil
		})
		devs, err := e.ListServerBlockDevices(&ecsmodel.ListServerBlockDevicesRequest{ServerId: sid})
		must(t, err, "ListServerBlockDevices")
		var root, data string
		for _, d := range *devs.VolumeAttachments {
			if d.BootIndex != nil && *d.BootIndex == 0 {
				root = str(d.VolumeId)
			} else {
				data = str(d.VolumeId)
			}
		}
		update := func(volumeID string, value bool) error {
			_, err := e.UpdateServerBlockDevice(&ecsmodel.UpdateServerBlockDeviceRequest{ServerId: sid, VolumeId: volumeID,
				Body: &ecsmodel.UpdateServerBlockDeviceReq{BlockDevice: &ecsmodel.UpdateServerBlockDeviceOption{DeleteOnTermination: value}}})
			return err
		}
		flag := func(volumeID string) string {
			s, err := e.ShowServer(&ecsmodel.ShowServerRequest{ServerId: sid})
			must(t, err, "ShowServer")
			for _, v := range s.Server.OsExtendedVolumesvolumesAttached {
				if v.Id == volumeID {
					return v.DeleteOnTermination
				}
			}
			return "(not attached)"
		}
		eq(t, "data disk delete_on_termination before", flag(data), "false")
		// The system disk: no ECS code names the case, so Ecs.0005 "Invalid parameters" (ecs_07_0002).
		wantErr(t, update(root, false), 400, "Ecs.0005")
		must(t, update(data, true), "UpdateServerBlockDevice")
		eq(t, "data disk delete_on_termination after", flag(data), "true")
		_, err = e.DeleteServers(&ecsmodel.DeleteServersRequest{Body: &ecsmodel.DeleteServersRequestBody{Servers: []ecsmodel.ServerId{{Id: sid}}}})
		must(t, err, "DeleteServers")
		evsC, err := evs.EvsClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, ak, sk, projectID)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
		must(t, err, "evs client")
		v := evs.NewEvsClient(evsC)
		poll(t, "go-bd's data disk deleted with its server (delete_volume unset)", func() (bool, error) {
			_, err := v.ShowVolume(&evsmodel.ShowVolumeRequest{VolumeId: data})
			return err != nil, nil
		})
	})

	call(t, "ECS/ListServersDetails paging by marker", func(t *testing.T) {
		r, err := e.CreateServers(&ecsmodel.CreateServersRequest{Body: &ecsmodel.CreateServersRequestBody{Server: srv("go-y", "192.168.10.161")}})
		must(t, err, "CreateServers")
		s2 = (*r.ServerIds)[0]
		seen := map[string]bool{}
		var marker *string
		for i := 0; i < 20; i++ { // bounded: an ignored marker would repeat the first page
			page, err := e.ListServersDetails(&ecsmodel.ListServersDetailsRequest{Limit: ptr(int32(1)), Marker: marker})
			must(t, err, "ListServersDetails")
			if page.Servers == nil || len(*page.Servers) == 0 {
				break
			}
			id := (*page.Servers)[0].Id
			if seen[id] {
				t.Fatalf("page after marker %s repeats server %s", str(marker), id)
			}
			seen[id] = true
			marker = ptr(id)
		}
		eq(t, "both servers paged", seen[s1] && seen[s2], true)
		_, err = e.DeleteServers(&ecsmodel.DeleteServersRequest{Body: &ecsmodel.DeleteServersRequestBody{Servers: []ecsmodel.ServerId{{Id: s1}, {Id: s2}}, DeleteVolume: ptr(true)}})
		must(t, err, "DeleteServers")
		poll(t, "extras servers deleted", func() (bool, error) {
			l, err := e.ListServersDetails(&ecsmodel.ListServersDetailsRequest{})
			if err != nil {
				return false, err
			}
			for _, s := range *l.Servers {
				if s.Id == s1 || s.Id == s2 {
					return false, nil
				}
			}
			return true, nil
		})
	})
}
