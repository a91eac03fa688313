package sdkgo

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/auth/signer/algorithm"
	ecs "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ecs/v2"
	ecsmodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ecs/v2/model"
	evs "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/evs/v2"
	evsmodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/evs/v2/model"
	iam "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/iam/v3"
	iammodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/iam/v3/model"
	ims "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ims/v2"
	imsmodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ims/v2/model"
	vpc2 "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/vpc/v2"
	vpc2model "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/vpc/v2/model"
	vpc3 "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/vpc/v3"
	vpc3model "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/vpc/v3/model"
)

func ecsClient(t *testing.T, alg algorithm.SigningAlgorithm) *ecs.EcsClient {
	c, err := ecs.EcsClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, ak, sk, projectID)).WithHttpConfig(httpConfig(alg)).SafeBuild()
	must(t, err, "ecs client")
	return ecs.NewEcsClient(c)
}

func jobStatus(t *testing.T, e *ecs.EcsClient, jobID string) func() (bool, error) {
	return func() (bool, error) {
		r, err := e.ShowJob(&ecsmodel.ShowJobRequest{JobId: jobID})
		if err != nil {
			return false, err
		}
		s := r.Status.Value()
		if s == "FAIL" {
			t.Fatalf("job %s failed: %s %s", jobID, str(r.ErrorCode), str(r.FailReason))
		}
		return s == "SUCCESS", nil
	}
}

// TestLifecycle drives every modelled call in the order a provider uses them.
func TestLifecycle(t *testing.T) {
	e := ecsClient(t, algorithm.HmacSHA256)
	userData := base64.StdEncoding.EncodeToString([]byte("#cloud-config\nhostname: go-0\n"))
	var serverID, jobID, dataVol, portV2, volID, ipID string
	newServer := func(name, ip string) *ecsmodel.PrePaidServer {
		nic := ecsmodel.PrePaidServerNic{SubnetId: ptr(workerNet)}
		if ip != "" {
			nic.IpAddress = ptr(ip)
		}
		return &ecsmodel.PrePaidServer{
			Name: name, ImageRef: imageV131, FlavorRef: "s6.large.2", Vpcid: vpcID,
			AvailabilityZone: ptr("az1"),
			Nics:             []ecsmodel.PrePaidServerNic{nic},
			RootVolume:       &ecsmodel.PrePaidServerRootVolume{Volumetype: ecsmodel.GetPrePaidServerRootVolumeVolumetypeEnum().SSD, Size: ptr(int32(40))},
			DataVolumes:      &[]ecsmodel.PrePaidServerDataVolume{{Volumetype: ecsmodel.GetPrePaidServerDataVolumeVolumetypeEnum().SSD, Size: 20}},
			UserData:         ptr(userData),
			Metadata:         map[string]string{"cluster": "go"},
			ServerTags:       &[]ecsmodel.PrePaidServerTag{{Key: "cluster", Value: "go"}},
		}
	}

	// ---------------- ECS
	call(t, "ECS/CreateServers", func(t *testing.T) {
		r, err := e.CreateServers(&ecsmodel.CreateServersRequest{XClientToken: ptr("go-token-1"), Body: &ecsmodel.CreateServersRequestBody{Server: newServer("go-0", "192.168.10.90")}})
		must(t, err, "CreateServers")
		nonEmpty(t, "job_id", str(r.JobId))
		eq(t, "serverIds", len(*r.ServerIds), 1)
		serverID, jobID = (*r.ServerIds)[0], *r.JobId
		again, err := e.CreateServers(&ecsmodel.CreateServersRequest{XClientToken: ptr("go-token-1"), Body: &ecsmodel.CreateServersRequestBody{Server: newServer("go-0", "192.168.10.90")}})
		must(t, err, "CreateServers replay")
		eq(t, "idempotent replay", (*again.ServerIds)[0], serverID)
		// Same IP again without the token: the SDK exception carries code, message and request id.
		_, err = e.CreateServers(&ecsmodel.CreateServersRequest{Body: &ecsmodel.CreateServersRequestBody{Server: newServer("go-1", "192.168.10.90")}})
		// 400 Ecs.0010 "The private IP address is already in use" (ECS API reference "Error Codes" ecs_07_0002).
		wantErr(t, err, 400, "Ecs.0010")
	})
	call(t, "ECS/ShowJob", func(t *testing.T) {
		poll(t, "create job", jobStatus(t, e, jobID))
		r, err := e.ShowJob(&ecsmodel.ShowJobRequest{JobId: jobID})
		must(t, err, "ShowJob")
		eq(t, "job_type", str(r.JobType), "createServer")
		subs := *r.Entities.SubJobs
		eq(t, "sub job server", str(subs[0].Entities.ServerId), serverID)
		nonEmpty(t, "begin_time", str(r.BeginTime))
		_, err = e.ShowJob(&ecsmodel.ShowJobRequest{JobId: "ffffffffffffffffffffffffffffffff"})
		// 400 Common.0011 "Invalid job ID" (ECS API reference "Error Codes" ecs_07_0002).
		wantErr(t, err, 400, "Common.0011")
	})
	call(t, "ECS/ShowServer", func(t *testing.T) {
		r, err := e.ShowServer(&ecsmodel.ShowServerRequest{ServerId: serverID})
		must(t, err, "ShowServer")
		s := r.Server
		eq(t, "status", s.Status, "ACTIVE")
		eq(t, "name", s.Name, "go-0")
		eq(t, "az", s.OSEXTAZavailabilityZone, "az1")
		eq(t, "flavor", s.Flavor.Id, "s6.large.2")
		eq(t, "image", s.Image.Id, imageV131)
		eq(t, "user_data", str(s.OSEXTSRVATTRuserData), userData)
		eq(t, "power_state", s.OSEXTSTSpowerState, int32(1))
		eq(t, "metadata", s.Metadata["cluster"], "go")
		nonEmpty(t, "instance_name", s.OSEXTSRVATTRinstanceName)
		addrs := s.Addresses[vpcID]
		eq(t, "ip", addrs[0].Addr, "192.168.10.90")
		nonEmpty(t, "port id", str(addrs[0].OSEXTIPSportId))
		vols := s.OsExtendedVolumesvolumesAttached
		eq(t, "volumes", len(vols), 2)
		eq(t, "system disk bootIndex", str(vols[0].BootIndex), "0")
		eq(t, "data disk bootIndex", str(vols[1].BootIndex), "-1")
		dataVol = vols[1].Id
		_, err = e.ShowServer(&ecsmodel.ShowServerRequest{ServerId: missing})
		wantErr(t, err, 404, "Ecs.0114")
	})
	call(t, "ECS/ListServersDetails", func(t *testing.T) {
		r, err := e.ListServersDetails(&ecsmodel.ListServersDetailsRequest{Name: ptr("go-0"), Limit: ptr(int32(10)), Offset: ptr(int32(1))})
		must(t, err, "ListServersDetails")
		eq(t, "count", *r.Count, int32(1))
		eq(t, "id", (*r.Servers)[0].Id, serverID)
		_, err = e.ListServersDetails(&ecsmodel.ListServersDetailsRequest{Limit: ptr(int32(5000))})
		wantErr(t, err, 400, "Ecs.0005")
	})
	call(t, "ECS/ListCloudServers", func(t *testing.T) {
		r, err := e.ListCloudServers(&ecsmodel.ListCloudServersRequest{Name: ptr("go-0"), Limit: ptr(int32(10))})
		must(t, err, "ListCloudServers")
		s := (*r.Servers)[0]
		eq(t, "id", s.Id, serverID)
		eq(t, "vm_state", s.VmState, "active")
		eq(t, "vcpus", *s.Flavor.Vcpus, int32(2))
		eq(t, "system disk", str((*s.VolumesAttached)[0].BootIndex), "0")
		eq(t, "ip", s.Addresses[vpcID][0].Addr, "192.168.10.90")
		_, err = e.ListCloudServers(&ecsmodel.ListCloudServersRequest{Marker: ptr(missing)})
		wantErr(t, err, 400, "Ecs.0005")
	})
	call(t, "ECS/ListFlavors", func(t *testing.T) {
		r, err := e.ListFlavors(&ecsmodel.ListFlavorsRequest{AvailabilityZone: ptr("az1")})
		must(t, err, "ListFlavors")
		f := (*r.Flavors)[0]
		eq(t, "flavor", f.Id, "s6.large.2")
		eq(t, "ram", f.Ram, int32(4096))
		eq(t, "status", str(f.OsExtraSpecs.Condoperationstatus), "normal")
		_, err = e.ListFlavors(&ecsmodel.ListFlavorsRequest{AvailabilityZone: ptr("nowhere")})
		wantErr(t, err, 400, "Ecs.0005")
	})
	call(t, "ECS/ListServerBlockDevices", func(t *testing.T) {
		r, err := e.ListServerBlockDevices(&ecsmodel.ListServerBlockDevicesRequest{ServerId: serverID})
		must(t, err, "ListServerBlockDevices")
		d := *r.VolumeAttachments
		eq(t, "devices", len(d), 2)
		eq(t, "vda", str(d[0].Device), "/dev/vda")
		eq(t, "bootIndex", *d[0].BootIndex, int32(0))
		eq(t, "data volume", str(d[1].VolumeId), dataVol)
		_, err = e.ListServerBlockDevices(&ecsmodel.ListServerBlockDevicesRequest{ServerId: missing})
		wantErr(t, err, 404, "Ecs.0114")
	})
	call(t, "ECS/ShowServerBlockDevice", func(t *testing.T) {
		r, err := e.ShowServerBlockDevice(&ecsmodel.ShowServerBlockDeviceRequest{ServerId: serverID, VolumeId: dataVol})
		must(t, err, "ShowServerBlockDevice")
		eq(t, "server", str(r.VolumeAttachment.ServerId), serverID)
		eq(t, "size", *r.VolumeAttachment.Size, int32(20))
		_, err = e.ShowServerBlockDevice(&ecsmodel.ShowServerBlockDeviceRequest{ServerId: serverID, VolumeId: missing})
		// Ecs.0111 "The disk is not in the attachment list" (ECS API reference "Error Codes" ecs_07_0002), 404 on this GET.
		wantErr(t, err, 404, "Ecs.0111")
	})
	ids := []ecsmodel.ServerId{{Id: serverID}}
	call(t, "ECS/BatchStopServers", func(t *testing.T) {
		r, err := e.BatchStopServers(&ecsmodel.BatchStopServersRequest{Body: &ecsmodel.BatchStopServersRequestBody{OsStop: &ecsmodel.BatchStopServersOption{Servers: ids, Type: ptr(ecsmodel.GetBatchStopServersOptionTypeEnum().SOFT)}}})
		must(t, err, "BatchStopServers")
		poll(t, "stop job", jobStatus(t, e, str(r.JobId)))
		s, err := e.ShowServer(&ecsmodel.ShowServerRequest{ServerId: serverID})
		must(t, err, "ShowServer")
		eq(t, "status", s.Server.Status, "SHUTOFF")
		_, err = e.BatchStopServers(&ecsmodel.BatchStopServersRequest{Body: &ecsmodel.BatchStopServersRequestBody{OsStop: &ecsmodel.BatchStopServersOption{Servers: ids}}})
		// 400 Ecs.0100 "The ECS status does not meet requirements" (ECS API reference "Error Codes" ecs_07_0002).
		wantErr(t, err, 400, "Ecs.0100")
	})
	call(t, "ECS/BatchStartServers", func(t *testing.T) {
		r, err := e.BatchStartServers(&ecsmodel.BatchStartServersRequest{Body: &ecsmodel.BatchStartServersRequestBody{OsStart: &ecsmodel.BatchStartServersOption{Servers: ids}}})
		must(t, err, "BatchStartServers")
		poll(t, "start job", jobStatus(t, e, str(r.JobId)))
		_, err = e.BatchStartServers(&ecsmodel.BatchStartServersRequest{Body: &ecsmodel.BatchStartServersRequestBody{OsStart: &ecsmodel.BatchStartServersOption{Servers: ids}}})
		// 400 Ecs.0100 "The ECS status does not meet requirements" (ECS API reference "Error Codes" ecs_07_0002).
		wantErr(t, err, 400, "Ecs.0100")
	})
	call(t, "ECS/BatchRebootServers", func(t *testing.T) {
		r, err := e.BatchRebootServers(&ecsmodel.BatchRebootServersRequest{Body: &ecsmodel.BatchRebootServersRequestBody{Reboot: &ecsmodel.BatchRebootSeversOption{Servers: ids, Type: ecsmodel.GetBatchRebootSeversOptionTypeEnum().SOFT}}})
		must(t, err, "BatchRebootServers")
		poll(t, "reboot job", jobStatus(t, e, str(r.JobId)))
		_, err = e.BatchRebootServers(&ecsmodel.BatchRebootServersRequest{Body: &ecsmodel.BatchRebootServersRequestBody{Reboot: &ecsmodel.BatchRebootSeversOption{Servers: []ecsmodel.ServerId{{Id: missing}}, Type: ecsmodel.GetBatchRebootSeversOptionTypeEnum().HARD}}})
		wantErr(t, err, 404, "Ecs.0114")
	})
	call(t, "ECS/DetachServerVolume", func(t *testing.T) {
		r, err := e.DetachServerVolume(&ecsmodel.DetachServerVolumeRequest{ServerId: serverID, VolumeId: dataVol})
		must(t, err, "DetachServerVolume")
		poll(t, "detach job", jobStatus(t, e, str(r.JobId)))
		_, err = e.DetachServerVolume(&ecsmodel.DetachServerVolumeRequest{ServerId: serverID, VolumeId: dataVol})
		// 400 Ecs.0111 "The disk is not in the attachment list" (ECS API reference "Error Codes" ecs_07_0002).
		wantErr(t, err, 400, "Ecs.0111")
	})
	call(t, "ECS/AttachServerVolume", func(t *testing.T) {
		r, err := e.AttachServerVolume(&ecsmodel.AttachServerVolumeRequest{ServerId: serverID, Body: &ecsmodel.AttachServerVolumeRequestBody{VolumeAttachment: &ecsmodel.AttachServerVolumeOption{VolumeId: dataVol}}})
		must(t, err, "AttachServerVolume")
		poll(t, "attach job", jobStatus(t, e, str(r.JobId)))
		_, err = e.AttachServerVolume(&ecsmodel.AttachServerVolumeRequest{ServerId: serverID, Body: &ecsmodel.AttachServerVolumeRequestBody{VolumeAttachment: &ecsmodel.AttachServerVolumeOption{VolumeId: missing}}})
		// 400 Ecs.0103 "The disk is unavailable" (ECS API reference "Error Codes" ecs_07_0002; Ecs.0104 is the attach-slot limit).
		wantErr(t, err, 400, "Ecs.0103")
	})

	// ---------------- EVS
	evsC, err := evs.EvsClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, ak, sk, projectID)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
	must(t, err, "evs client")
	v := evs.NewEvsClient(evsC)
	call(t, "EVS/CreateVolume", func(t *testing.T) {
		r, err := v.CreateVolume(&evsmodel.CreateVolumeRequest{Body: &evsmodel.CreateVolumeRequestBody{Volume: &evsmodel.CreateVolumeOption{
			AvailabilityZone: "az1", Name: ptr("go-pd"), Size: 10, VolumeType: evsmodel.GetCreateVolumeOptionVolumeTypeEnum().SSD, Metadata: map[string]string{"owner": "go"},
		}}})
		must(t, err, "CreateVolume")
		volID = (*r.VolumeIds)[0]
		nonEmpty(t, "job_id", str(r.JobId))
		_, err = v.CreateVolume(&evsmodel.CreateVolumeRequest{Body: &evsmodel.CreateVolumeRequestBody{Volume: &evsmodel.CreateVolumeOption{AvailabilityZone: "az1", Size: 10, VolumeType: evsmodel.GetCreateVolumeOptionVolumeTypeEnum().SSD, Count: ptr(int32(0))}}})
		wantErr(t, err, 400, "EVS.5400")
	})
	call(t, "EVS/ShowJob", func(t *testing.T) {
		// The EVS client's own ShowJob (same /v1/{project_id}/jobs path as ECS).
		poll(t, "volume available", func() (bool, error) {
			r, err := v.ShowVolume(&evsmodel.ShowVolumeRequest{VolumeId: volID})
			if err != nil {
				return false, err
			}
			return r.Volume.Status == "available", nil
		})
		lr, err := v.ListVolumes(&evsmodel.ListVolumesRequest{Name: ptr("go-pd")})
		must(t, err, "ListVolumes")
		_ = lr
		_, err = v.ShowJob(&evsmodel.ShowJobRequest{JobId: "ffffffffffffffffffffffffffffffff"})
		// 400 Common.0011 "Invalid job ID" (EVS "Error Codes" evs_04_0038, ECS API reference "Error Codes" ecs_07_0002).
		wantErr(t, err, 400, "Common.0011")
	})
	call(t, "EVS/ShowVolume", func(t *testing.T) {
		r, err := v.ShowVolume(&evsmodel.ShowVolumeRequest{VolumeId: volID})
		must(t, err, "ShowVolume")
		eq(t, "name", r.Volume.Name, "go-pd")
		eq(t, "size", r.Volume.Size, int32(10))
		eq(t, "az", r.Volume.AvailabilityZone, "az1")
		eq(t, "metadata", r.Volume.Metadata["owner"], interface{}("go"))
		_, err = v.ShowVolume(&evsmodel.ShowVolumeRequest{VolumeId: missing})
		wantErr(t, err, 404, "EVS.5404")
	})
	call(t, "EVS/ListVolumes", func(t *testing.T) {
		r, err := v.ListVolumes(&evsmodel.ListVolumesRequest{ServerId: ptr(serverID)})
		must(t, err, "ListVolumes")
		eq(t, "count", *r.Count, int32(2))
		att := (*r.Volumes)[1].Attachments
		eq(t, "attached to", att[0].ServerId, serverID)
		_, err = v.ListVolumes(&evsmodel.ListVolumesRequest{Metadata: ptr("not-json")})
		wantErr(t, err, 400, "EVS.5400")
	})
	call(t, "EVS/UpdateVolume", func(t *testing.T) {
		r, err := v.UpdateVolume(&evsmodel.UpdateVolumeRequest{VolumeId: volID, Body: &evsmodel.UpdateVolumeRequestBody{Volume: &evsmodel.UpdateVolumeOption{Name: ptr("go-pd-2"), Description: ptr("renamed")}}})
		must(t, err, "UpdateVolume")
		eq(t, "id", str(r.Id), volID)
		eq(t, "name", str(r.Name), "go-pd-2")
		eq(t, "status", str(r.Status), "available")
		_, err = v.UpdateVolume(&evsmodel.UpdateVolumeRequest{VolumeId: missing, Body: &evsmodel.UpdateVolumeRequestBody{Volume: &evsmodel.UpdateVolumeOption{Name: ptr("x")}}})
		wantErr(t, err, 404, "EVS.5404")
	})
	// "Expanding Capacity of an EVS Disk" (evs_04_2004): os-extend answers the extendVolume job (evs_04_0054);
	// the disk is extending, then available with the new size.
	call(t, "EVS/ResizeVolume", func(t *testing.T) {
		r, err := v.ResizeVolume(&evsmodel.ResizeVolumeRequest{VolumeId: volID, Body: &evsmodel.ResizeVolumeRequestBody{OsExtend: &evsmodel.OsExtend{NewSize: 20}}})
		must(t, err, "ResizeVolume")
		jr, err := v.ShowJob(&evsmodel.ShowJobRequest{JobId: str(r.JobId)})
		must(t, err, "EVS ShowJob")
		eq(t, "job type", str(jr.JobType), "extendVolume")
		poll(t, "volume extended", func() (bool, error) {
			r, err := v.ShowVolume(&evsmodel.ShowVolumeRequest{VolumeId: volID})
			if err != nil {
				return false, err
			}
			return r.Volume.Status == "available" && r.Volume.Size == 20, nil
		})
		// The new size must be greater than the disk's (evs_04_2004); EVS documents no code for it: EVS.5400.
		_, err = v.ResizeVolume(&evsmodel.ResizeVolumeRequest{VolumeId: volID, Body: &evsmodel.ResizeVolumeRequestBody{OsExtend: &evsmodel.OsExtend{NewSize: 20}}})
		wantErr(t, err, 400, "EVS.5400")
		_, err = v.ResizeVolume(&evsmodel.ResizeVolumeRequest{VolumeId: missing, Body: &evsmodel.ResizeVolumeRequestBody{OsExtend: &evsmodel.OsExtend{NewSize: 30}}})
		wantErr(t, err, 404, "EVS.5404")
	})
	call(t, "EVS/DeleteVolume", func(t *testing.T) {
		_, err := v.DeleteVolume(&evsmodel.DeleteVolumeRequest{VolumeId: dataVol})
		wantErr(t, err, 400, "EVS.1046")
		r, err := v.DeleteVolume(&evsmodel.DeleteVolumeRequest{VolumeId: volID})
		must(t, err, "DeleteVolume")
		jr, err := v.ShowJob(&evsmodel.ShowJobRequest{JobId: str(r.JobId)})
		must(t, err, "EVS ShowJob")
		eq(t, "job type", str(jr.JobType), "deleteVolume")
		poll(t, "volume gone", func() (bool, error) {
			_, err := v.ShowVolume(&evsmodel.ShowVolumeRequest{VolumeId: volID})
			if err != nil && strings.Contains(err.Error(), "EVS.5404") {
				return true, nil
			}
			return false, nil
		})
	})

	// ---------------- VPC v2
	vc, err := vpc2.VpcClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, ak, sk, projectID)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
	must(t, err, "vpc client")
	n := vpc2.NewVpcClient(vc)
	call(t, "VPC/ListSubnets", func(t *testing.T) {
		r, err := n.ListSubnets(&vpc2model.ListSubnetsRequest{VpcId: ptr(vpcID)})
		must(t, err, "ListSubnets")
		eq(t, "subnets", len(*r.Subnets), 2)
		eq(t, "worker cidr", (*r.Subnets)[1].Cidr, "192.168.10.0/24")
		_, err = n.ListSubnets(&vpc2model.ListSubnetsRequest{Marker: ptr(missing)})
		wantErr(t, err, 400, "VPC.0001")
	})
	call(t, "VPC/ShowSubnet", func(t *testing.T) {
		r, err := n.ShowSubnet(&vpc2model.ShowSubnetRequest{SubnetId: workerNet})
		must(t, err, "ShowSubnet")
		eq(t, "gateway", r.Subnet.GatewayIp, "192.168.10.1")
		eq(t, "neutron subnet", r.Subnet.NeutronSubnetId, workerV4Sub)
		_, err = n.ShowSubnet(&vpc2model.ShowSubnetRequest{SubnetId: missing})
		wantErr(t, err, 404, "VPC.0202")
	})
	call(t, "VPC/CreatePort", func(t *testing.T) {
		r, err := n.CreatePort(&vpc2model.CreatePortRequest{Body: &vpc2model.CreatePortRequestBody{Port: &vpc2model.CreatePortOption{
			NetworkId: workerNet, Name: ptr("go-vip"), DeviceOwner: ptr("neutron:VIP_PORT"), FixedIps: &[]vpc2model.FixedIp{{IpAddress: ptr("192.168.10.91")}},
		}}})
		must(t, err, "CreatePort")
		portV2 = r.Port.Id
		eq(t, "status", r.Port.Status.Value(), "DOWN")
		eq(t, "ip", str(r.Port.FixedIps[0].IpAddress), "192.168.10.91")
		_, err = n.CreatePort(&vpc2model.CreatePortRequest{Body: &vpc2model.CreatePortRequestBody{Port: &vpc2model.CreatePortOption{NetworkId: missing}}})
		wantErr(t, err, 404, "VPC.0202")
		// An address outside the subnet: CreatePort's "Param is invalid." (vpc_api_0003: 400 VPC.2500).
		_, err = n.CreatePort(&vpc2model.CreatePortRequest{Body: &vpc2model.CreatePortRequestBody{Port: &vpc2model.CreatePortOption{
			NetworkId: workerNet, FixedIps: &[]vpc2model.FixedIp{{IpAddress: ptr("10.9.9.9")}},
		}}})
		wantErr(t, err, 400, "VPC.2500")
	})
	call(t, "VPC/ListPorts", func(t *testing.T) {
		r, err := n.ListPorts(&vpc2model.ListPortsRequest{FixedIps: &[]string{"ip_address=192.168.10.91"}})
		must(t, err, "ListPorts")
		eq(t, "ports", len(*r.Ports), 1)
		eq(t, "id", (*r.Ports)[0].Id, portV2)
		srv, err := n.ListPorts(&vpc2model.ListPortsRequest{DeviceId: ptr(serverID)})
		must(t, err, "ListPorts by server")
		eq(t, "server NIC", str((*srv.Ports)[0].FixedIps[0].IpAddress), "192.168.10.90")
		_, err = n.ListPorts(&vpc2model.ListPortsRequest{Limit: ptr(int32(0))})
		wantErr(t, err, 400, "VPC.0001")
	})
	call(t, "VPC/ShowPort", func(t *testing.T) {
		r, err := n.ShowPort(&vpc2model.ShowPortRequest{PortId: portV2})
		must(t, err, "ShowPort")
		eq(t, "name", r.Port.Name, "go-vip")
		_, err = n.ShowPort(&vpc2model.ShowPortRequest{PortId: missing})
		wantErr(t, err, 404, "VPC.2501")
	})
	call(t, "VPC/CreatePrivateip", func(t *testing.T) {
		r, err := n.CreatePrivateip(&vpc2model.CreatePrivateipRequest{Body: &vpc2model.CreatePrivateipRequestBody{Privateips: []vpc2model.CreatePrivateipOption{{SubnetId: workerNet, IpAddress: ptr("192.168.10.92")}}}})
		must(t, err, "CreatePrivateip")
		ipID = (*r.Privateips)[0].Id
		eq(t, "ip", (*r.Privateips)[0].IpAddress, "192.168.10.92")
		_, err = n.CreatePrivateip(&vpc2model.CreatePrivateipRequest{Body: &vpc2model.CreatePrivateipRequestBody{Privateips: []vpc2model.CreatePrivateipOption{{SubnetId: workerNet, IpAddress: ptr("192.168.10.92")}}}})
		// 409 VPC.0701: the IP address is in use (VPC API reference "Error Codes" vpc_api_0003).
		wantErr(t, err, 409, "VPC.0701")
	})
	call(t, "VPC/ListPrivateips", func(t *testing.T) {
		r, err := n.ListPrivateips(&vpc2model.ListPrivateipsRequest{SubnetId: workerNet, Limit: ptr(int32(100))})
		must(t, err, "ListPrivateips")
		found := false
		for _, p := range *r.Privateips {
			found = found || p.Id == ipID
		}
		eq(t, "listed", found, true)
		_, err = n.ListPrivateips(&vpc2model.ListPrivateipsRequest{SubnetId: missing})
		wantErr(t, err, 404, "VPC.0202")
	})
	call(t, "VPC/ShowPrivateip", func(t *testing.T) {
		r, err := n.ShowPrivateip(&vpc2model.ShowPrivateipRequest{PrivateipId: ipID})
		must(t, err, "ShowPrivateip")
		eq(t, "subnet", r.Privateip.SubnetId, workerNet)
		_, err = n.ShowPrivateip(&vpc2model.ShowPrivateipRequest{PrivateipId: missing})
		// 404 VPC.0702: stand-in (mock-hcs/README.md "Error codes").
		wantErr(t, err, 404, "VPC.0702")
	})

	// ---------------- VPC v3 (read-only ports)
	vc3, err := vpc3.VpcClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, ak, sk, projectID)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
	must(t, err, "vpc v3 client")
	n3 := vpc3.NewVpcClient(vc3)
	call(t, "VPCv3/ListPorts", func(t *testing.T) {
		r, err := n3.ListPorts(&vpc3model.ListPortsRequest{DeviceId: &[]string{serverID}})
		must(t, err, "v3 ListPorts")
		p := (*r.Ports)[0]
		eq(t, "virsubnet_id", p.VirsubnetId, workerNet)
		eq(t, "vpc_id", p.VpcId, vpcID)
		eq(t, "ip", p.PrivateIps[0].IpAddress, "192.168.10.90")
		eq(t, "instance", p.InstanceId, serverID)
		nonEmpty(t, "request_id", str(r.RequestId))
		_, err = n3.ListPorts(&vpc3model.ListPortsRequest{AdminStateUp: nil, Status: ptr("ACTIVE"), Id: &[]string{missing}})
		must(t, err, "v3 ListPorts (none)")
	})
	call(t, "VPCv3/ShowPort", func(t *testing.T) {
		r, err := n3.ShowPort(&vpc3model.ShowPortRequest{PortId: portV2})
		must(t, err, "v3 ShowPort")
		eq(t, "name", r.Port.Name, "go-vip")
		eq(t, "ip", r.Port.PrivateIps[0].IpAddress, "192.168.10.91")
		_, err = n3.ShowPort(&vpc3model.ShowPortRequest{PortId: missing})
		wantErr(t, err, 404, "VPC.2501")
	})
	call(t, "VPC/DeletePort", func(t *testing.T) {
		_, err := n.DeletePort(&vpc2model.DeletePortRequest{PortId: portV2})
		must(t, err, "DeletePort")
		_, err = n.DeletePort(&vpc2model.DeletePortRequest{PortId: portV2})
		wantErr(t, err, 404, "VPC.2501")
	})
	call(t, "VPC/DeletePrivateip", func(t *testing.T) {
		_, err := n.DeletePrivateip(&vpc2model.DeletePrivateipRequest{PrivateipId: ipID})
		must(t, err, "DeletePrivateip")
		_, err = n.DeletePrivateip(&vpc2model.DeletePrivateipRequest{PrivateipId: ipID})
		// 404 VPC.0702: stand-in, no VPC reference page documents a code for a missing private IP (mock-hcs/README.md "Error codes").
		wantErr(t, err, 404, "VPC.0702")
	})

	// ---------------- IMS
	ic, err := ims.ImsClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, ak, sk, projectID)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
	must(t, err, "ims client")
	im := ims.NewImsClient(ic)
	call(t, "IMS/ListImages", func(t *testing.T) {
		r, err := im.ListImages(&imsmodel.ListImagesRequest{Name: ptr("alauda-os-v4.1-k8s-v1.31.6")})
		must(t, err, "ListImages")
		img := (*r.Images)[0]
		eq(t, "id", img.Id, imageV131)
		eq(t, "status", img.Status.Value(), "active")
		eq(t, "min_disk", img.MinDisk, int32(40))
		all, err := im.ListImages(&imsmodel.ListImagesRequest{})
		must(t, err, "ListImages all")
		eq(t, "images", len(*all.Images), 3)
		_, err = im.ListImages(&imsmodel.ListImagesRequest{Limit: ptr(int32(-1))})
		wantErr(t, err, 400, "IMG.0001")
	})

	// ---------------- ECS delete last (frees the IP and the volumes)
	call(t, "ECS/DeleteServers", func(t *testing.T) {
		r, err := e.DeleteServers(&ecsmodel.DeleteServersRequest{Body: &ecsmodel.DeleteServersRequestBody{Servers: ids, DeleteVolume: ptr(true), DeletePublicip: ptr(false)}})
		must(t, err, "DeleteServers")
		poll(t, "delete job", jobStatus(t, e, str(r.JobId)))
		_, err = e.ShowServer(&ecsmodel.ShowServerRequest{ServerId: serverID})
		wantErr(t, err, 404, "Ecs.0114")
		_, err = e.DeleteServers(&ecsmodel.DeleteServersRequest{Body: &ecsmodel.DeleteServersRequestBody{Servers: []ecsmodel.ServerId{{Id: missing}}}})
		wantErr(t, err, 404, "Ecs.0114")
	})
}

// TestIAM: Keystone tokens and the project / domain discovery calls.
func TestIAM(t *testing.T) {
	c, err := iam.IamClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(globalCred(t)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
	must(t, err, "iam client")
	i := iam.NewIamClient(c)
	var token string
	pwd := func(password string) *iammodel.KeystoneCreateUserTokenByPasswordRequest {
		return &iammodel.KeystoneCreateUserTokenByPasswordRequest{Body: &iammodel.KeystoneCreateUserTokenByPasswordRequestBody{Auth: &iammodel.PwdAuth{
			Identity: &iammodel.PwdIdentity{
				Methods:  []iammodel.PwdIdentityMethods{iammodel.GetPwdIdentityMethodsEnum().PASSWORD},
				Password: &iammodel.PwdPassword{User: &iammodel.PwdPasswordUser{Name: userName, Password: password, Domain: &iammodel.PwdPasswordUserDomain{Name: domainName}}},
			},
			Scope: &iammodel.AuthScope{Project: &iammodel.AuthScopeProject{Id: ptr(projectID)}},
		}}}
	}
	call(t, "IAM/KeystoneCreateUserTokenByPassword", func(t *testing.T) {
		r, err := i.KeystoneCreateUserTokenByPassword(pwd(userPass))
		must(t, err, "token")
		token = str(r.XSubjectToken)
		if !strings.HasPrefix(token, "MII") {
			t.Fatalf("X-Subject-Token: %q", token)
		}
		eq(t, "project", r.Token.Project.Id, projectID)
		nonEmpty(t, "expires_at", r.Token.ExpiresAt)
		_, err = i.KeystoneCreateUserTokenByPassword(pwd("wrong"))
		wantErr(t, err, 401, "IAM.0001")
	})
	call(t, "IAM/KeystoneCreateScopedToken", func(t *testing.T) {
		r, err := i.KeystoneCreateScopedToken(&iammodel.KeystoneCreateScopedTokenRequest{Body: &iammodel.KeystoneCreateScopedTokenRequestBody{Auth: &iammodel.ScopedTokenAuth{
			Identity: &iammodel.ScopedTokenIdentity{Methods: []string{"token"}, Token: &iammodel.ScopedToken{Id: token}},
			Scope:    &iammodel.TokenSocpeOption{Project: &iammodel.ScopeProjectOption{Id: ptr(projectID)}},
		}}})
		must(t, err, "scoped token")
		nonEmpty(t, "X-Subject-Token", str(r.XSubjectToken))
		eq(t, "project", r.Token.Project.Id, projectID)
		_, err = i.KeystoneCreateScopedToken(&iammodel.KeystoneCreateScopedTokenRequest{Body: &iammodel.KeystoneCreateScopedTokenRequestBody{Auth: &iammodel.ScopedTokenAuth{
			Identity: &iammodel.ScopedTokenIdentity{Methods: []string{"token"}, Token: &iammodel.ScopedToken{Id: "MIInot-a-token"}},
			Scope:    &iammodel.TokenSocpeOption{Project: &iammodel.ScopeProjectOption{Id: ptr(projectID)}},
		}}})
		wantErr(t, err, 401, "IAM.0001")
	})
	call(t, "IAM/KeystoneListProjects", func(t *testing.T) {
		r, err := i.KeystoneListProjects(&iammodel.KeystoneListProjectsRequest{Name: ptr("testbed")})
		must(t, err, "projects")
		eq(t, "project", (*r.Projects)[0].Id, projectID)
		eq(t, "domain", (*r.Projects)[0].DomainId, domainID)
		byRegion, err := i.KeystoneListProjects(&iammodel.KeystoneListProjectsRequest{Name: ptr(regionID)})
		must(t, err, "projects by region")
		eq(t, "region's project", len(*byRegion.Projects), 1)
		eq(t, "region's project id", (*byRegion.Projects)[0].Id, projectID)
		_, err = i.KeystoneListProjects(&iammodel.KeystoneListProjectsRequest{Page: ptr(int32(1))})
		wantErr(t, err, 400, "IAM.0007")
	})
	call(t, "IAM/KeystoneListAuthProjects", func(t *testing.T) {
		r, err := i.KeystoneListAuthProjects(&iammodel.KeystoneListAuthProjectsRequest{})
		must(t, err, "auth projects")
		eq(t, "project", (*r.Projects)[0].Id, projectID)
	})
	call(t, "IAM/KeystoneListAuthDomains", func(t *testing.T) {
		r, err := i.KeystoneListAuthDomains(&iammodel.KeystoneListAuthDomainsRequest{})
		must(t, err, "auth domains")
		eq(t, "domain", (*r.Domains)[0].Id, domainID)
		eq(t, "name", (*r.Domains)[0].Name, domainName)
	})
}
