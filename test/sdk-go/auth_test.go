package sdkgo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/huaweicloud/huaweicloud-sdk-go-v3/core/auth/signer/algorithm"
	ecs "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ecs/v2"
	ecsmodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ecs/v2/model"
	ecsregion "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/ecs/v2/region"
	evs "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/evs/v2"
	evsmodel "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/evs/v2/model"
	evsregion "github.com/huaweicloud/huaweicloud-sdk-go-v3/services/evs/v2/region"
)

// TestSigning: every signing algorithm the Go SDK offers, as HttpConfig.WithSigningAlgorithm selects it (HCS-5).
func TestSigning(t *testing.T) {
	for _, alg := range []algorithm.SigningAlgorithm{algorithm.HmacSHA256, algorithm.HmacSM3, algorithm.EcdsaP256SHA256} {
		alg := alg
		call(t, "Auth/Sign"+string(alg), func(t *testing.T) {
			e := ecsClient(t, alg)
			// A GET with a query, and a POST with a body (the payload hash of the algorithm).
			_, err := e.ListFlavors(&ecsmodel.ListFlavorsRequest{AvailabilityZone: ptr("az1"), Limit: ptr(int32(2))})
			must(t, err, "ListFlavors signed with "+string(alg))
			_, err = e.ListServersDetails(&ecsmodel.ListServersDetailsRequest{Name: ptr("a b+c/ü"), Tags: ptr("k=v")})
			must(t, err, "ListServersDetails (encoded query) signed with "+string(alg))
			_, err = e.BatchStartServers(&ecsmodel.BatchStartServersRequest{Body: &ecsmodel.BatchStartServersRequestBody{OsStart: &ecsmodel.BatchStartServersOption{Servers: []ecsmodel.ServerId{{Id: missing}}}}})
			wantErr(t, err, 404, "Ecs.0114") // authenticated: the body reached the ECS rules
		})
	}
	call(t, "Auth/SignSM2SM3", func(t *testing.T) {
		// SDK-SM2-SM3 is not verifiable here: refused by name, in the cloud's error shape.
		_, err := ecsClient(t, algorithm.SM2SM3).ListFlavors(&ecsmodel.ListFlavorsRequest{})
		se := wantErr(t, err, 401, "APIGW.0301")
		if !strings.Contains(se.ErrorMessage, "unsupported signing algorithm SDK-SM2-SM3") {
			t.Fatalf("message: %s", se.ErrorMessage)
		}
	})
	call(t, "Auth/Rejections", func(t *testing.T) {
		bad, err := ecs.EcsClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, ak, "wrong-sk", projectID)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
		must(t, err, "client")
		_, err = ecs.NewEcsClient(bad).ListFlavors(&ecsmodel.ListFlavorsRequest{})
		wantErr(t, err, 401, "APIGW.0301")
		// Another project's AK with this project's id (path and X-Project-Id): 403.
		other, err := ecs.EcsClientBuilder().WithEndpoints([]string{endpoint}).WithCredential(basicCred(t, otherAK, otherSK, projectID)).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
		must(t, err, "client")
		_, err = ecs.NewEcsClient(other).ListServersDetails(&ecsmodel.ListServersDetailsRequest{})
		wantErr(t, err, 403, "Ecs.0003")
	})
}

// TestRegionOverrides: the SDK's documented endpoint overrides against mock-hcs over TLS, with the
// project found by the SDK itself (credentials without a project id: GET /v3/projects?name=<region>).
//
//	HUAWEICLOUD_SDK_REGION_ECS_HCS_REGION_1=https://127.0.0.1:PORT   (core/region/env_region.go)
//	HUAWEICLOUD_SDK_REGIONS_FILE=regions.yaml                         (core/region/profile_region.go)
//	HUAWEICLOUD_SDK_IAM_ENDPOINT=https://127.0.0.1:PORT               (core/auth/internal/iam_helper.go)
func TestRegionOverrides(t *testing.T) {
	t.Setenv("HUAWEICLOUD_SDK_IAM_ENDPOINT", endpoint)
	call(t, "Region/EnvEndpointAndProjectDiscovery", func(t *testing.T) {
		t.Setenv("HUAWEICLOUD_SDK_REGION_ECS_HCS_REGION_1", endpoint)
		reg, err := ecsregion.SafeValueOf(regionID)
		must(t, err, "region from HUAWEICLOUD_SDK_REGION_ECS_HCS_REGION_1")
		c, err := ecs.EcsClientBuilder().WithRegion(reg).WithCredential(basicCred(t, otherAK, otherSK, "")).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
		must(t, err, "client by region (project discovered through IAM)")
		r, err := ecs.NewEcsClient(c).ListServersDetails(&ecsmodel.ListServersDetailsRequest{})
		must(t, err, "ListServersDetails with the discovered project")
		eq(t, "count", *r.Count, int32(0))
	})
	call(t, "Region/RegionsFile", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "regions.yaml")
		must(t, os.WriteFile(file, []byte("EVS:\n  - id: "+regionID+"\n    endpoint: '"+endpoint+"'\n"), 0o644), "regions file")
		t.Setenv("HUAWEICLOUD_SDK_REGIONS_FILE", file)
		reg, err := evsregion.SafeValueOf(regionID)
		must(t, err, "region from HUAWEICLOUD_SDK_REGIONS_FILE")
		c, err := evs.EvsClientBuilder().WithRegion(reg).WithCredential(basicCred(t, ak, sk, "")).WithHttpConfig(httpConfig(algorithm.HmacSHA256)).SafeBuild()
		must(t, err, "client by region")
		_, err = evs.NewEvsClient(c).ListVolumes(&evsmodel.ListVolumesRequest{Limit: ptr(int32(1))})
		must(t, err, "ListVolumes with the discovered project")
	})
}
