"""A minimal HCS infrastructure provider in Python, written from docs/provider.md
"The contract" (issue 22): the official `kubernetes` client and the official
Huawei Cloud SDKs (huaweicloudsdkecs/evs/vpc/ims), nothing of the TypeScript
provider. Workers only: it reconciles HCSCluster (subnets -> ready),
HCSMachineConfigPool (status) and HCSMachine (pool entry, persistent disks by
(hostname, slot), server with cloud-init, attach, providerID, ready; deletion:
detach, delete, release).

It is deliberately different from the reference provider wherever the
contract leaves room: it polls instead of watching, names servers
<hostname>-<uid> instead of after the HCSMachine, writes no log wording the
library knows, no rule annotations, no MD-3 flagging and only the contract's
conditions and Event reasons.

Started from the run's provider.env (docs/real-clusters.md §7). Planted bugs
(the conformance test's negative cases):
  PYHCS_BUG_FRESH_VOLUME=1   a replacement gets a fresh volume instead of its
                             hostname's existing one (DISK-8)
  PYHCS_BUG_DELETE_VOLUMES=1 servers are deleted with their persistent volumes
                             still attached, delete_volume=true (DISK-9)
"""
import base64
import copy
import datetime
import http.server
import ipaddress
import json
import os
import re
import signal
import sys
import threading
import time
import traceback
import uuid

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa, padding
from cryptography.x509.oid import NameOID
from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkcore.http.http_config import HttpConfig
from huaweicloudsdkecs.v2 import EcsClient
from huaweicloudsdkecs.v2 import model as ecsm
from huaweicloudsdkevs.v2 import EvsClient
from huaweicloudsdkevs.v2 import model as evsm
from huaweicloudsdkims.v2 import ImsClient
from huaweicloudsdkims.v2 import model as imsm
from huaweicloudsdkvpc.v2 import VpcClient
from huaweicloudsdkvpc.v2 import model as vpcm
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException

GROUP, VERSION = "infrastructure.cluster.x-k8s.io", "v1beta1"
FINALIZER = "hcsmachine.infrastructure.cluster.x-k8s.io"
COMPONENT = "hcs-controller-manager"
BUG_FRESH = os.environ.get("PYHCS_BUG_FRESH_VOLUME") == "1"
BUG_DELETE = os.environ.get("PYHCS_BUG_DELETE_VOLUMES") == "1"


def log(msg):
    print(json.dumps({"t": datetime.datetime.now(datetime.timezone.utc).isoformat(), "msg": msg}), flush=True)


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Cloud:
    """The signed HCS API through the official SDKs (AK/SK, project, CA from provider.env)."""

    def __init__(self, env):
        cfg = HttpConfig.get_default_config()
        cfg.ssl_ca_cert = env.get("HCS_CA_FILE")
        cfg.timeout = (10, 30)
        cred = BasicCredentials(env["HCS_AK"], env["HCS_SK"], env["HCS_PROJECT_ID"])
        build = lambda cls: cls.new_builder().with_http_config(cfg).with_credentials(cred).with_endpoints([env["HCS_CLOUD_URL"]]).build()
        self.ecs, self.evs, self.vpc, self.ims = build(EcsClient), build(EvsClient), build(VpcClient), build(ImsClient)

    def server(self, sid):
        try:
            return self.ecs.show_server(ecsm.ShowServerRequest(server_id=sid)).server
        except ClientRequestException as e:
            if e.status_code == 404:
                return None
            raise

    def volumes(self, meta):
        return self.evs.list_volumes(evsm.ListVolumesRequest(metadata=json.dumps(meta))).volumes or []

    def volume(self, vid):
        try:
            return self.evs.show_volume(evsm.ShowVolumeRequest(volume_id=vid)).volume
        except ClientRequestException as e:
            if e.status_code == 404:
                return None
            raise


def attached_to(v):
    return [a.server_id for a in (v.attachments or [])]


# The documented words for an EVS volume status in the pool's disk records (docs/provider.md, POOL-5).
PHASES = {"creating": "Creating", "available": "Available", "attaching": "Attaching", "in-use": "Attached", "detaching": "Detaching"}


def disk_phase(vol):
    if vol is None or vol.status in ("deleting", "deleted"):
        return "Pending"
    return PHASES.get(vol.status, "Error" if vol.status.startswith("error") else vol.status)


class Provider:
    def __init__(self, env):
        self.ns = env.get("HCS_NAMESPACE", "cpaas-system")
        k8s_config.load_kube_config(config_file=env["KUBECONFIG"], context=env.get("KUBE_CONTEXT") or None)
        self.co = k8s.CustomObjectsApi()
        self.core = k8s.CoreV1Api()
        self.cloud = Cloud(env)
        self.reported = {}  # (object, reason) -> message already given as an Event

    # ------------------------------------------------------------ Kubernetes helpers
    def list(self, plural, group=GROUP, version=VERSION):
        return self.co.list_namespaced_custom_object(group, version, self.ns, plural)["items"]

    def get(self, plural, name, group=GROUP, version=VERSION):
        try:
            return self.co.get_namespaced_custom_object(group, version, self.ns, plural, name)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def patch(self, plural, name, body, status=False):
        fn = self.co.patch_namespaced_custom_object_status if status else self.co.patch_namespaced_custom_object
        return fn(GROUP, VERSION, self.ns, plural, name, body)

    def event(self, obj, reason, message):
        """A Warning Event on the object (contract: the reason), once per (object, reason, message)."""
        key = (obj["metadata"]["uid"], reason)
        if self.reported.get(key) == message:
            return
        self.reported[key] = message
        md = obj["metadata"]
        ev = k8s.CoreV1Event(
            metadata=k8s.V1ObjectMeta(name=f"{md['name']}.{uuid.uuid4().hex[:10]}", namespace=self.ns),
            involved_object=k8s.V1ObjectReference(api_version=obj["apiVersion"], kind=obj["kind"], name=md["name"], namespace=self.ns, uid=md["uid"]),
            reason=reason, message=message, type="Warning", source=k8s.V1EventSource(component=COMPONENT),
            first_timestamp=now_rfc3339(), last_timestamp=now_rfc3339(), count=1,
        )
        self.core.create_namespaced_event(self.ns, ev)

    def conditions(self, hm, ready, reason=None, message="", bound=True):
        """The contract's HCSMachine conditions: Ready, and PoolEntryBound while waiting for an entry."""
        t = now_rfc3339()
        conds = [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": t, **({"reason": reason, "message": message} if reason else {})}]
        conds.append({"type": "PoolEntryBound", "status": "True" if bound else "False", "lastTransitionTime": t, **({} if bound else {"reason": "NoFreePoolEntry", "message": message})})
        old = {c["type"]: (c["status"], c.get("reason")) for c in hm.get("status", {}).get("conditions", [])}
        if old == {c["type"]: (c["status"], c.get("reason")) for c in conds}:
            return
        self.patch("hcsmachines", hm["metadata"]["name"], {"status": {"conditions": conds}}, status=True)

    # ------------------------------------------------------------ HCSCluster
    def reconcile_cluster(self, hc):
        if hc.get("status", {}).get("ready"):
            return
        subnets = self.cloud.vpc.list_subnets(vpcm.ListSubnetsRequest()).subnets or []
        out = []
        for want in hc["spec"].get("network", {}).get("subnets", []):
            s = next((x for x in subnets if x.id == want.get("id") or (not want.get("id") and x.name == want.get("name"))), None)
            if not s:
                self.patch("hcsclusters", hc["metadata"]["name"], {"status": {"ready": False, "conditions": [{"type": "NetworkReady", "status": "False", "reason": "SubnetNotFound", "message": f"subnet {want} not found", "lastTransitionTime": now_rfc3339()}]}}, status=True)
                return
            out.append({"name": s.name, "id": s.id, "cidr": s.cidr})
        self.patch("hcsclusters", hc["metadata"]["name"], {"status": {"ready": True, "network": {"subnets": out}, "conditions": [
            {"type": "NetworkReady", "status": "True", "lastTransitionTime": now_rfc3339()}, {"type": "Ready", "status": "True", "lastTransitionTime": now_rfc3339()}]}}, status=True)
        log(f"HCSCluster {hc['metadata']['name']} ready")

    # ------------------------------------------------------------ pool
    def pool_status(self, pool, machines):
        """Recompute total/available and one entry per hostname; bindings to machines that are gone are dropped."""
        live = {m["metadata"]["name"] for m in machines}
        old = {e["hostname"]: e for e in pool.get("status", {}).get("entries", [])}
        entries = []
        for c in pool["spec"]["configs"]:
            e = dict(old.get(c["hostname"], {"hostname": c["hostname"]}))
            if e.get("machine") and e["machine"] not in live:
                e.pop("machine")
            if "acceptedDisks" not in e:
                e["acceptedDisks"] = c.get("persistentDisks", [])
            entries.append(e)
        # entries removed from the spec stay while a machine holds them
        for h, e in old.items():
            if h not in {c["hostname"] for c in pool["spec"]["configs"]} and e.get("machine") in live:
                entries.append(e)
        return {"total": len(pool["spec"]["configs"]), "available": sum(1 for e in entries if not e.get("machine")), "entries": entries}

    def refresh_disks(self, st):
        """POOL-5: every recorded disk's phase and attachment as EVS shows them now (the status is the runtime state)."""
        for e in st["entries"]:
            for d in e.get("persistentDisks", []):
                vol = self.cloud.volume(d["volumeId"]) if d.get("volumeId") else None
                d["phase"] = disk_phase(vol)
                holders = attached_to(vol) if vol is not None and d["phase"] != "Pending" else []
                if holders:
                    d["attachedServerId"] = holders[0]
                else:
                    d.pop("attachedServerId", None)

    def write_pool(self, pool, status):
        """Replace the pool status with optimistic concurrency (resourceVersion): two machines never take one entry (POOL-4)."""
        body = dict(pool)
        body["status"] = status
        return self.co.replace_namespaced_custom_object_status(GROUP, VERSION, self.ns, "hcsmachineconfigpools", pool["metadata"]["name"], body)

    def bind(self, hm, pool_name, machines):
        name = hm["metadata"]["name"]
        for _ in range(5):
            pool = self.get("hcsmachineconfigpools", pool_name)
            if not pool:
                return None, None
            st = self.pool_status(pool, machines)
            mine = next((e for e in st["entries"] if e.get("machine") == name), None)
            if not mine and hm.get("status", {}).get("hostname"):
                mine = next((e for e in st["entries"] if e["hostname"] == hm["status"]["hostname"] and not e.get("machine")), None)
            if not mine:
                mine = next((e for e in st["entries"] if not e.get("machine") and e["hostname"] in {c["hostname"] for c in pool["spec"]["configs"]}), None)
            if not mine:
                return pool, None
            if mine.get("machine") == name:
                return pool, mine
            mine["machine"] = name
            st["available"] = sum(1 for e in st["entries"] if not e.get("machine"))
            try:
                pool = self.write_pool(pool, st)
                log(f"{name}: took pool entry {mine['hostname']}")
                return pool, mine
            except ApiException as e:
                if e.status != 409:
                    raise
        return None, None

    def release(self, hm_name, pool_name, machines):
        for _ in range(5):
            pool = self.get("hcsmachineconfigpools", pool_name)
            if not pool:
                return
            st = self.pool_status(pool, [m for m in machines if m["metadata"]["name"] != hm_name])
            try:
                self.write_pool(pool, st)
                return
            except ApiException as e:
                if e.status != 409:
                    raise

    def set_disk(self, pool_name, hostname, slot, volume_id, phase, machines):
        for _ in range(5):
            pool = self.get("hcsmachineconfigpools", pool_name)
            st = self.pool_status(pool, machines)
            e = next(x for x in st["entries"] if x["hostname"] == hostname)
            disks = [d for d in e.get("persistentDisks", []) if d["slot"] != slot]
            disks.append({"slot": slot, "volumeId": volume_id, "phase": phase})
            e["persistentDisks"] = sorted(disks, key=lambda d: d["slot"])
            if pool.get("status") == st:
                return
            try:
                self.write_pool(pool, st)
                return
            except ApiException as ex:
                if ex.status != 409:
                    raise

    # ------------------------------------------------------------ persistent disks
    def claim(self, cluster, entry, disk, hm_uid):
        """The EVS volume of (hostname, slot), found by its metadata or created once (DISK-3)."""
        meta = {"hcs.io/cluster": cluster, "hcs.io/hostname": entry["hostname"], "hcs.io/slot": str(disk["slot"])}
        found = [v for v in self.cloud.volumes(meta) if v.status not in ("deleting", "deleted", "error")]
        if BUG_FRESH:
            # Planted bug: only a volume this very machine created counts; a replacement gets a fresh, empty one.
            found = [v for v in found if (v.metadata or {}).get("pyhcs/creator") == hm_uid]
        if found:
            return sorted(found, key=lambda v: v.created_at or "")[-1 if BUG_FRESH else 0]
        opt = evsm.CreateVolumeOption(
            availability_zone=self.az, name=f"{cluster}-{entry['hostname']}-pd{disk['slot']}" + (f"-{hm_uid[:5]}" if BUG_FRESH else ""), size=disk["size"], volume_type=disk["type"],
            metadata={**meta, "hcs.io/persistent": "true", "hcs.io/namespace": self.ns, **({"pyhcs/creator": hm_uid} if BUG_FRESH else {})},
        )
        r = self.cloud.evs.create_volume(evsm.CreateVolumeRequest(body=evsm.CreateVolumeRequestBody(volume=opt)))
        log(f"volume {r.volume_ids[0]} for {entry['hostname']}/slot{disk['slot']}")
        return self.cloud.volume(r.volume_ids[0])

    # ------------------------------------------------------------ cloud-init
    def user_data(self, cluster, hm, machine, entry, disks, ips, data_volumes):
        secret = self.core.read_namespaced_secret(machine["spec"]["bootstrap"]["dataSecretName"], self.ns)
        doc = yaml.safe_load(base64.b64decode(secret.data["value"]).decode())
        host = entry["hostname"]
        provider_id = f"hcs://{cluster}/{hm['metadata']['name']}"
        files = doc.setdefault("write_files", [])
        for f in files:
            if f.get("path") in ("/run/kubeadm/kubeadm-join-config.yaml", "/run/kubeadm/kubeadm.yaml"):
                docs = list(yaml.safe_load_all(f["content"]))
                for d in docs:
                    if isinstance(d, dict) and d.get("kind") in ("JoinConfiguration", "InitConfiguration"):
                        nr = d.setdefault("nodeRegistration", {})
                        nr["name"] = host
                        args = nr.get("kubeletExtraArgs")
                        if isinstance(args, list):  # kubeadm v1beta4
                            nr["kubeletExtraArgs"] = [a for a in args if a.get("name") != "provider-id"] + [{"name": "provider-id", "value": provider_id}]
                        else:
                            nr["kubeletExtraArgs"] = {**(args or {}), "provider-id": provider_id}
                f["content"] = yaml.safe_dump_all(docs, sort_keys=False)
        crt, key = self.kubelet_cert(cluster, host, ips)
        files.append({"path": "/etc/kubernetes/pki/kubelet.crt", "permissions": "0644", "content": crt})
        files.append({"path": "/etc/kubernetes/pki/kubelet.key", "permissions": "0600", "content": key})
        doc["hostname"], doc["fqdn"] = host, host
        disk_setup, fs_setup, mounts = doc.setdefault("disk_setup", {}), doc.setdefault("fs_setup", []), doc.setdefault("mounts", [])
        for i, dv in enumerate(data_volumes):
            dev = f"/dev/vd{chr(ord('b') + i)}"
            disk_setup[dev] = {"table_type": "gpt", "layout": False, "overwrite": False}
            fs_setup.append({"label": f"dv{i}", "filesystem": dv.get("format", "xfs"), "device": dev, "overwrite": False})
            mounts.append([dev, dv["mountPath"], dv.get("format", "xfs"), "defaults,nofail", "0", "2"])
        for d, vol in disks:
            dev = f"/dev/disk/by-id/virtio-{vol.id[:20]}"
            disk_setup[dev] = {"table_type": "gpt", "layout": False, "overwrite": False}
            fs_setup.append({"label": f"pd{d['slot']}", "filesystem": d.get("format", "xfs"), "device": dev, "overwrite": False})
            mounts.append([dev, d["mountPath"], d.get("format", "xfs"), f"{d.get('mountOptions') or 'defaults'},nofail", "0", "2"])
        return "#cloud-config\n" + yaml.safe_dump(doc, sort_keys=False, width=1 << 20)

    def kubelet_cert(self, cluster, host, ips):
        """A fresh P-256 key and a certificate CN=system:node:<host>, SANs host and IPs, signed by the cluster CA (BOOT-2)."""
        ca = self.core.read_namespaced_secret(f"{cluster}-ca", self.ns)
        ca_cert = x509.load_pem_x509_certificate(base64.b64decode(ca.data["tls.crt"]))
        ca_key = serialization.load_pem_private_key(base64.b64decode(ca.data["tls.key"]), password=None)
        key = ec.generate_private_key(ec.SECP256R1())
        t = datetime.datetime.now(datetime.timezone.utc)
        b = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "system:nodes"), x509.NameAttribute(NameOID.COMMON_NAME, f"system:node:{host}")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(t - datetime.timedelta(minutes=5)).not_valid_after(t + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]), critical=False)
            .add_extension(x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        )
        cert = b.sign(ca_key, hashes.SHA256()) if not isinstance(ca_key, rsa.RSAPrivateKey) else b.sign(ca_key, hashes.SHA256(), rsa_padding=padding.PKCS1v15())
        return cert.public_bytes(serialization.Encoding.PEM).decode(), key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()

    # ------------------------------------------------------------ HCSMachine
    def reconcile_machine(self, hm, machines, hcsclusters):
        name = hm["metadata"]["name"]
        md = hm["metadata"]
        spec = hm["spec"]
        pool_name = (spec.get("configPoolRef") or {}).get("name")
        if md.get("deletionTimestamp"):
            return self.delete_machine(hm, pool_name, machines)
        if FINALIZER not in (md.get("finalizers") or []):
            self.patch("hcsmachines", name, {"metadata": {"finalizers": (md.get("finalizers") or []) + [FINALIZER]}})
            return
        owner = next((o for o in md.get("ownerReferences", []) if o["kind"] == "Machine"), None)
        machine = owner and self.get("machines", owner["name"], group="cluster.x-k8s.io")
        cluster = md.get("labels", {}).get("cluster.x-k8s.io/cluster-name")
        hc = next((c for c in hcsclusters if c["metadata"]["name"] == cluster), None)
        if not machine or not cluster or not hc or not hc.get("status", {}).get("ready"):
            return
        if not machine["spec"].get("bootstrap", {}).get("dataSecretName"):
            return
        self.az = spec.get("availabilityZone", "az1")
        pool, entry = self.bind(hm, pool_name, machines)
        if not entry:
            msg = f"no free config pool entry in {pool_name}: every entry is held by another HCSMachine"
            self.conditions(hm, False, "NoFreePoolEntry", msg, bound=False)
            self.event(hm, "NoFreePoolEntry", msg)
            return
        host = entry["hostname"]
        if hm.get("status", {}).get("hostname") != host:
            hm = self.patch("hcsmachines", name, {"status": {"hostname": host}}, status=True)
        config = next((c for c in pool["spec"]["configs"] if c["hostname"] == host), None) or {}
        accepted = entry.get("acceptedDisks") or []
        server = self.cloud.server(spec["serverId"]) if spec.get("serverId") else None
        if spec.get("serverId") and not server:
            return  # gone under us: Cluster API's MachineHealthCheck business, not ours
        disks = []
        in_cloud_init = set((server.metadata or {}).get("hcs.io/persistent-volumes", "").split(",")) if server else None
        for d in accepted:
            rec = next((x for x in entry.get("persistentDisks", []) if x["slot"] == d["slot"]), None)
            vol = self.cloud.volume(rec["volumeId"]) if rec and rec.get("volumeId") and server else None
            if not vol:
                vol = self.claim(cluster, entry, d, md["uid"])
            disks.append((d, vol))
            if not rec or rec.get("volumeId") != vol.id:
                self.set_disk(pool_name, host, d["slot"], vol.id, "Available" if vol.status == "available" else "Creating", machines)
        ips = [n["ipAddress"] for n in config.get("networks", []) if n.get("ipAddress")]
        if not server:
            server = self.create_server(hm, machine, cluster, hc, config, entry, disks, ips)
            if not server:
                return
            self.patch("hcsmachines", name, {"spec": {"serverId": server.id, "providerID": f"hcs://{cluster}/{name}"}})
            log(f"{name}: server {server.id} for {host}")
            return
        if server.status != "ACTIVE":
            return
        ready = True
        for d, vol in disks:
            if in_cloud_init is not None and vol.id not in in_cloud_init:
                continue  # appended after the server was created: not hot-attached (DISK-6)
            vol = self.cloud.volume(vol.id)
            holders = attached_to(vol)
            if server.id in holders and vol.status == "in-use":
                self.set_disk(pool_name, host, d["slot"], vol.id, "Attached", machines)
                continue
            ready = False
            if vol.status == "available" and not holders:
                self.cloud.ecs.attach_server_volume(ecsm.AttachServerVolumeRequest(server_id=server.id, body=ecsm.AttachServerVolumeRequestBody(volume_attachment=ecsm.AttachServerVolumeOption(volume_id=vol.id))))
                self.set_disk(pool_name, host, d["slot"], vol.id, "Attaching", machines)
        if ready and not hm.get("status", {}).get("ready"):
            addresses = [{"type": "InternalIP", "address": ip} for ip in ips] + [{"type": "Hostname", "address": host}]
            self.patch("hcsmachines", name, {"status": {"ready": True, "addresses": addresses}}, status=True)
            self.conditions(self.get("hcsmachines", name), True)
            log(f"{name}: ready on {host}")

    def create_server(self, hm, machine, cluster, hc, config, entry, disks, ips):
        spec = hm["spec"]
        uid = hm["metadata"]["uid"]
        existing = self.cloud.ecs.list_servers_details(ecsm.ListServersDetailsRequest(name=f"{entry['hostname']}-{uid[:8]}")).servers or []
        mine = [s for s in existing if (s.metadata or {}).get("hcs.io/machine-uid") == uid]
        if mine:
            return mine[0]
        images = self.cloud.ims.list_images(imsm.ListImagesRequest(name=spec["imageName"])).images or []
        if not images:
            return None
        image = images[0]
        m = re.search(r"Kubernetes (v[0-9.]+)", image.os_version or "")
        subnets = {s["name"]: s for s in hc["status"].get("network", {}).get("subnets", [])}
        all_subnets = {s.id: s for s in (self.cloud.vpc.list_subnets(vpcm.ListSubnetsRequest()).subnets or [])}
        nics, vpc_id = [], None
        for n in config.get("networks", []):
            sid = n.get("subnetId") or subnets.get(n.get("subnetName") or n.get("subenetName"), {}).get("id")
            if not sid:
                return None
            vpc_id = all_subnets[sid].vpc_id
            nics.append(ecsm.PrePaidServerNic(subnet_id=sid, ip_address=n.get("ipAddress")))
        root = spec.get("rootVolume") or {"type": "SSD", "size": 40}
        data = spec.get("dataVolumes") or []
        ud = self.user_data(cluster, hm, machine, entry, disks, ips, data)
        metadata = {
            "hcs.io/cluster": cluster, "hcs.io/namespace": self.ns, "hcs.io/hostname": entry["hostname"], "hcs.io/machine-uid": uid,
            "hcs.io/persistent-volumes": ",".join(v.id for _, v in disks), "hcs.io/kubernetes-version": machine["spec"].get("version", ""),
            "hcs.io/image": image.name, "hcs.io/image-kubernetes-version": m.group(1) if m else "",
        }
        body = ecsm.CreateServersRequestBody(server=ecsm.PrePaidServer(
            name=f"{entry['hostname']}-{uid[:8]}", image_ref=image.id, flavor_ref=spec["flavorName"], vpcid=vpc_id, availability_zone=spec.get("availabilityZone"),
            nics=nics, root_volume=ecsm.PrePaidServerRootVolume(volumetype=root["type"], size=root["size"]),
            data_volumes=[ecsm.PrePaidServerDataVolume(volumetype=d["type"], size=d["size"]) for d in data] or None,
            user_data=base64.b64encode(ud.encode()).decode(), metadata=metadata,
        ))
        r = self.cloud.ecs.create_servers(ecsm.CreateServersRequest(x_client_token=f"pyhcs-{uid}", body=body))
        return self.cloud.server(r.server_ids[0])

    def delete_machine(self, hm, pool_name, machines):
        name = hm["metadata"]["name"]
        sid = hm["spec"].get("serverId")
        server = self.cloud.server(sid) if sid else None
        if server and server.status != "DELETED":
            persistent = [v for v in self.cloud.volumes({"hcs.io/persistent": "true"}) if sid in attached_to(v)]
            if persistent and not BUG_DELETE:
                for v in persistent:
                    if v.status == "in-use":
                        self.cloud.ecs.detach_server_volume(ecsm.DetachServerVolumeRequest(server_id=sid, volume_id=v.id))
                return  # wait until they are available: delete_volume=true would delete them (DISK-9)
            if not getattr(self, "deleting", {}).get(sid):
                self.__dict__.setdefault("deleting", {})[sid] = True
                self.cloud.ecs.delete_servers(ecsm.DeleteServersRequest(body=ecsm.DeleteServersRequestBody(servers=[ecsm.ServerId(id=sid)], delete_volume=True, delete_publicip=False)))
                log(f"{name}: deleting server {sid}")
            return
        if pool_name:
            self.release(name, pool_name, machines)
        fins = [f for f in hm["metadata"].get("finalizers", []) if f != FINALIZER]
        self.patch("hcsmachines", name, {"metadata": {"finalizers": fins or None}})
        log(f"{name}: deleted")

    # ------------------------------------------------------------ loop
    def tick(self):
        hcsclusters = self.list("hcsclusters")
        for hc in hcsclusters:
            self.reconcile_cluster(hc)
        machines = self.list("hcsmachines")
        for hm in sorted(machines, key=lambda m: m["metadata"]["creationTimestamp"]):
            try:
                self.reconcile_machine(hm, machines, hcsclusters)
            except (ApiException, ClientRequestException) as e:
                log(f"{hm['metadata']['name']}: {type(e).__name__}: {str(e)[:300]}")
        for pool in self.list("hcsmachineconfigpools"):
            st = copy.deepcopy({**pool.get("status", {}), **self.pool_status(pool, self.list("hcsmachines"))})
            self.refresh_disks(st)
            if st != pool.get("status", {}):
                try:
                    self.write_pool(pool, st)
                except ApiException as e:
                    if e.status != 409:
                        raise


def serve_health(addr, stopping):
    host, port = addr.rsplit(":", 1)

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            code = 503 if stopping.is_set() else 200
            self.send_response(code)
            self.end_headers()
            self.wfile.write(b"ok\n" if code == 200 else b"stopping\n")

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer((host, int(port)), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def main():
    env = os.environ
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    p = Provider(env)
    srv = serve_health(env.get("HCS_HEALTH_ADDR", "127.0.0.1:8081"), stopping)
    stop_file = env.get("HCS_STOP_FILE")
    log(f"started (health {env.get('HCS_HEALTH_ADDR')}, bugs: fresh-volume={BUG_FRESH} delete-volumes={BUG_DELETE})")
    while not stopping.is_set():
        if stop_file and os.path.exists(stop_file):
            break
        try:
            p.tick()
        except Exception:  # noqa: BLE001 - a controller keeps going; the error is logged
            log(traceback.format_exc()[-800:])
        stopping.wait(0.5)
    srv.shutdown()
    srv.server_close()
    log("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
