"""Conformance suite: the official Huawei Cloud Python SDKs (huaweicloudsdk* pinned in
requirements.txt), used unchanged, against a listening mock-hcs (issue 13, HCS-5).

test/sdk/run.sh starts mock-hcs (HTTPS with --tls-dir, sped-up clock) and runs pytest
with MOCK_HCS_ENDPOINT (https://127.0.0.1:PORT) and REQUESTS_CA_BUNDLE / SSL_CERT_FILE
(the CA mock-hcs wrote). Credentials are those of mock-hcs's default cloud
(mock-hcs/src/config.ts). Each test is one SDK call (marker sdk_call); the per-call
results and the pass count are printed at the end (the SDK x call table in
mock-hcs/README.md).
"""
import os
import time

import pytest
from huaweicloudsdkcore.auth.credentials import BasicCredentials, GlobalCredentials
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkcore.http.http_config import HttpConfig
from huaweicloudsdkcore.signer.algorithm import SigningAlgorithm

PROJECT_ID = "0a1b2c3d4e5f40718293a4b5c6d7e8f9"
REGION_ID = "hcs-region-1"
AK, SK = "TESTBEDAK0000000000001", "testbed-secret-key-0000000000000000000001"
OTHER_AK, OTHER_SK = "OTHERAK00000000000002", "other-secret-key-0000000000000000000002"
OTHER_ID = "f9e8d7c6b5a449382716059483726150"
DOMAIN_ID, DOMAIN_NAME = "3c1d2e4f5a6b47c8d9e0f1a2b3c4d5e6", "testbed-account"
USER, PASSWORD = "testbed-admin", "Testbed@123"
VPC_ID = "3d6c4f0e-5b1a-4c8e-9f2d-7a1b2c3d4e5f"
WORKER_NET = "8a1f0c2e-1b1a-4c8e-9f2d-000000000010"
WORKER_V4_SUBNET = "5c2e9d1a-1b1a-4c8e-9f2d-000000000010"
IMAGE_V131 = "6b1e2a4c-31a0-4a6f-8d3e-1f0000000131"
MISSING = "00000000-0000-4000-8000-000000000000"

ENDPOINT = os.environ.get("MOCK_HCS_ENDPOINT", "")
CA_FILE = os.environ.get("REQUESTS_CA_BUNDLE") or None


def http_config(alg=SigningAlgorithm.HMAC_SHA256):
    c = HttpConfig.get_default_config()
    c.ssl_ca_cert = CA_FILE  # the SDK's documented CA setting (HttpConfig.ssl_ca_cert)
    c.signing_algorithm = alg
    c.timeout = (10, 20)
    return c


def build(client_cls, cred=None, alg=SigningAlgorithm.HMAC_SHA256):
    return (
        client_cls.new_builder()
        .with_http_config(http_config(alg))
        .with_credentials(cred or BasicCredentials(AK, SK, PROJECT_ID))
        .with_endpoints([ENDPOINT])
        .build()
    )


def global_cred():
    return GlobalCredentials(AK, SK, DOMAIN_ID)


def expect_error(fn, status, code):
    """The SDK raises ClientRequestException with status_code, error_code, error_msg and request_id set."""
    with pytest.raises(ClientRequestException) as info:
        fn()
    e = info.value
    assert (e.status_code, e.error_code) == (status, code), f"{e.status_code} {e.error_code} {e.error_msg}"
    assert e.error_msg and not e.error_msg.startswith("{"), e.error_msg
    assert e.request_id and len(e.request_id) == 32, e.request_id
    return e


def poll(what, done, timeout=30.0):
    """mock-hcs runs with a sped-up clock: jobs finish well under a second."""
    deadline = time.monotonic() + timeout
    while True:
        if done():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not done after {timeout}s")
        time.sleep(0.05)


# ---- per-call results

_results = []


def pytest_configure(config):
    config.addinivalue_line("markers", "sdk_call(name): the SDK call a test checks, e.g. ECS/CreateServers")
    if not ENDPOINT:
        raise pytest.UsageError("MOCK_HCS_ENDPOINT is not set: run test/sdk/run.sh (it starts mock-hcs and sets it)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    marker = item.get_closest_marker("sdk_call")
    if marker and (rep.when == "call" or (rep.when == "setup" and rep.outcome != "passed")):
        _results.append(("PASS" if rep.outcome == "passed" else "FAIL", marker.args[0]))


def pytest_terminal_summary(terminalreporter):
    passed = sum(1 for s, _ in _results if s == "PASS")
    failed = len(_results) - passed
    path = os.environ.get("SDK_RESULTS_FILE")
    if path:
        with open(path, "w") as f:
            f.write("".join(f"{s} {n}\n" for s, n in _results))
    terminalreporter.write_line(f"sdk-python: {passed} passed, {failed} failed ({len(_results)} SDK call checks)")


@pytest.fixture(scope="module")
def ecs():
    """An ECS client for the module's tests (the official huaweicloudsdkecs v2)."""
    from huaweicloudsdkecs.v2 import EcsClient
    return build(EcsClient)


@pytest.fixture(scope="module")
def evs():
    """An EVS client for the module's tests (the official huaweicloudsdkevs v2)."""
    from huaweicloudsdkevs.v2 import EvsClient
    return build(EvsClient)
