"""The cloud side of an incident, listed with the official Huawei Cloud Python SDKs (used unchanged), as a user
without hcs-testbed would: every list call paged by marker (limit = PAGE_SIZE, marker = the last id of the page
before), each page's wire JSON (the SDK response's raw_content) written to OUT/<list>-<n>.json for
`hcs-testbed capture --offline --cloud-json` (test/capture/sdk-python.test.ts, docs/incident.md).

Environment: MOCK_HCS_ENDPOINT, HCS_AK, HCS_SK, HCS_PROJECT_ID, OUT, PAGE_SIZE.
Prints one line per list: its name, pages and items.
"""
import json
import os

from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.http.http_config import HttpConfig
from huaweicloudsdkecs.v2 import EcsClient
from huaweicloudsdkecs.v2 import model as ecsm
from huaweicloudsdkevs.v2 import EvsClient
from huaweicloudsdkevs.v2 import model as evsm
from huaweicloudsdkims.v2 import ImsClient
from huaweicloudsdkims.v2 import model as imsm
from huaweicloudsdkvpc.v2 import VpcClient
from huaweicloudsdkvpc.v2 import model as vpcm

ENDPOINT = os.environ["MOCK_HCS_ENDPOINT"]
OUT = os.environ["OUT"]
PAGE = int(os.environ.get("PAGE_SIZE", "2"))


def build(cls):
    c = HttpConfig.get_default_config()
    c.timeout = (10, 60)
    cred = BasicCredentials(os.environ["HCS_AK"], os.environ["HCS_SK"], os.environ["HCS_PROJECT_ID"])
    return cls.new_builder().with_http_config(c).with_credentials(cred).with_endpoints([ENDPOINT]).build()


def pages(name, call, key):
    marker, n, items = None, 0, 0
    for _ in range(100000):  # bounded: a cloud that ignores the marker would repeat the first page for ever
        r = call(marker)
        body = json.loads(r.raw_content)
        got = body.get(key) or []
        n += 1
        items += len(got)
        with open(os.path.join(OUT, f"{name}-{n:04d}.json"), "w") as f:
            json.dump(body, f)
        if len(got) < PAGE:
            break
        marker = got[-1]["id"]
    print(f"{name} {n} pages {items} items")


ecs, evs, vpc, ims = build(EcsClient), build(EvsClient), build(VpcClient), build(ImsClient)
pages("servers", lambda m: ecs.list_servers_details(ecsm.ListServersDetailsRequest(limit=PAGE, marker=m)), "servers")
pages("volumes", lambda m: evs.list_volumes(evsm.ListVolumesRequest(limit=PAGE, marker=m)), "volumes")
pages("ports", lambda m: vpc.list_ports(vpcm.ListPortsRequest(limit=PAGE, marker=m)), "ports")
pages("subnets", lambda m: vpc.list_subnets(vpcm.ListSubnetsRequest(limit=PAGE, marker=m)), "subnets")
pages("images", lambda m: ims.list_images(imsm.ListImagesRequest(limit=PAGE, marker=m)), "images")
with open(os.path.join(OUT, "flavors.json"), "w") as f:
    json.dump(json.loads(ecs.list_flavors(ecsm.ListFlavorsRequest()).raw_content), f)
with open(os.path.join(OUT, "azs.json"), "w") as f:
    json.dump(json.loads(ecs.nova_list_availability_zones(ecsm.NovaListAvailabilityZonesRequest()).raw_content), f)
print("flavors, azs")
