"""Signing algorithms the Python SDK offers (HttpConfig.signing_algorithm) and its documented
endpoint overrides against mock-hcs over TLS, with the project found by the SDK itself
(BasicCredentials without a project id: GET /v3/projects?name=<region id>):
  HUAWEICLOUD_SDK_REGION_ECS_HCS_REGION_1  (huaweicloudsdkcore/region/provider.py)
  HUAWEICLOUD_SDK_REGIONS_FILE             (huaweicloudsdkcore/region/cache.py)
  HUAWEICLOUD_SDK_IAM_ENDPOINT             (huaweicloudsdkcore/auth/internal.py)"""
import pytest
from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.signer.algorithm import SigningAlgorithm
from huaweicloudsdkecs.v2 import EcsClient
from huaweicloudsdkecs.v2 import model as ecsm
from huaweicloudsdkecs.v2.region.ecs_region import EcsRegion
from huaweicloudsdkevs.v2 import EvsClient
from huaweicloudsdkevs.v2 import model as evsm
from huaweicloudsdkevs.v2.region.evs_region import EvsRegion

from conftest import AK, ENDPOINT, MISSING, OTHER_AK, OTHER_SK, PROJECT_ID, REGION_ID, SK, build, expect_error, http_config

call = pytest.mark.sdk_call


@pytest.mark.parametrize("alg", [SigningAlgorithm.HMAC_SHA256, SigningAlgorithm.HMAC_SM3, SigningAlgorithm.ECDSA_P256_SHA256], ids=lambda a: a.name)
def test_signing(alg, request):
    request.node.add_marker(pytest.mark.sdk_call(f"Auth/Sign{alg.name}"))
    ecs = build(EcsClient, alg=alg)
    assert ecs.list_flavors(ecsm.ListFlavorsRequest(availability_zone="az1", limit=2)).flavors
    assert ecs.list_servers_details(ecsm.ListServersDetailsRequest(name="a b+c/ü", tags="k=v")).count == 0
    body = ecsm.BatchStartServersRequestBody(os_start=ecsm.BatchStartServersOption(servers=[ecsm.ServerId(id=MISSING)]))
    expect_error(lambda: ecs.batch_start_servers(ecsm.BatchStartServersRequest(body=body)), 404, "Ecs.0114")


@call("Auth/SignSM2_SM3")
def test_sm2_refused_by_name():
    e = expect_error(lambda: build(EcsClient, alg=SigningAlgorithm.SM2_SM3).list_flavors(ecsm.ListFlavorsRequest()), 401, "APIGW.0301")
    assert "unsupported signing algorithm SDK-SM2-SM3" in e.error_msg


@call("Auth/Rejections")
def test_rejections():
    expect_error(lambda: build(EcsClient, BasicCredentials(AK, "wrong-sk", PROJECT_ID)).list_flavors(ecsm.ListFlavorsRequest()), 401, "APIGW.0301")
    expect_error(lambda: build(EcsClient, BasicCredentials(OTHER_AK, OTHER_SK, PROJECT_ID)).list_servers_details(ecsm.ListServersDetailsRequest()), 403, "Ecs.0003")


@call("Region/EnvEndpointAndProjectDiscovery")
def test_region_env(monkeypatch):
    monkeypatch.setenv("HUAWEICLOUD_SDK_IAM_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("HUAWEICLOUD_SDK_REGION_ECS_HCS_REGION_1", ENDPOINT)
    region = EcsRegion.value_of(REGION_ID)
    assert region.endpoints == [ENDPOINT]
    ecs = EcsClient.new_builder().with_http_config(http_config()).with_credentials(BasicCredentials(OTHER_AK, OTHER_SK)).with_region(region).build()
    assert ecs.list_servers_details(ecsm.ListServersDetailsRequest()).count == 0


@call("Region/RegionsFile")
def test_regions_file(monkeypatch, tmp_path):
    f = tmp_path / "regions.yaml"
    f.write_text(f"EVS:\n  - id: {REGION_ID}\n    endpoint: '{ENDPOINT}'\n")
    monkeypatch.setenv("HUAWEICLOUD_SDK_IAM_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("HUAWEICLOUD_SDK_REGIONS_FILE", str(f))
    region = EvsRegion.value_of(REGION_ID)
    evs = EvsClient.new_builder().with_http_config(http_config()).with_credentials(BasicCredentials(AK, SK)).with_region(region).build()
    assert evs.list_volumes(evsm.ListVolumesRequest(limit=1)).count == 0
