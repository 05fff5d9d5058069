#!/usr/bin/python3
"""A client nobody here wrote: drive schedhostd's gRPC API from Python.

Starts schedhostd on a temporary Unix socket, generates the Python stubs from the .proto files
with Debian's grpc_tools, creates two nodes and a pod, watches until the pod is bound, and
checks health and reflection (listing the services).
Exit 0 on success, 77 (ctest SKIP_RETURN_CODE) when the Python gRPC packages are missing.

usage: api_client_test.py SCHEDHOSTD PROTO_DIR
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

try:
    import grpc
    from grpc_tools import protoc
except ImportError as e:  # python3-grpcio / python3-grpc-tools not installed
    print(f"skipped: {e}")
    sys.exit(77)

NODE = """apiVersion: v1
kind: Node
metadata: {{name: {name}}}
status: {{capacity: {{cpu: "{cpu}", memory: 8Gi, pods: "10"}}}}
"""
POD = json.dumps({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "py", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "i",
                             "resources": {"requests": {"cpu": "3"}}}]},
})


def main():
    schedhostd, proto_dir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="schedhost-py-") as tmp:
        out = os.path.join(tmp, "gen")
        os.makedirs(out)
        for name in ("cluster", "admin"):
            rc = protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={out}",
                              f"--grpc_python_out={out}", f"schedhost/v1/{name}.proto"])
            assert rc == 0, f"protoc failed on {name}.proto"
        sys.path.insert(0, out)
        from schedhost.v1 import cluster_pb2 as pb, cluster_pb2_grpc as rpc

        sock = os.path.join(tmp, "s.sock")
        config = os.path.join(tmp, "schedhost.toml")
        with open(config, "w") as f:
            # A state_dir of its own, never the machine's /var/lib/schedhost.
            f.write(f'[host]\nstate_dir = "{tmp}/state"\n'
                    f'[api]\nlisten = "unix://{sock}"\n[metrics]\nlisten = "127.0.0.1:0"\n')
        daemon = subprocess.Popen([schedhostd, "--config", config, "--log-level", "warn"])
        try:
            channel = grpc.insecure_channel(f"unix://{sock}")
            grpc.channel_ready_future(channel).result(timeout=30)
            cluster = rpc.ClusterStub(channel)
            for name, cpu in (("small", 2), ("big", 4)):
                r = cluster.Apply(pb.ApplyRequest(manifest=NODE.format(name=name, cpu=cpu)))
                assert r.result == pb.CREATED, r
            r = cluster.Apply(pb.ApplyRequest(manifest=POD))
            assert r.result == pb.CREATED and r.object.kind == pb.POD, r

            node = None
            for event in cluster.Watch(pb.WatchRequest(kinds=[pb.POD]), timeout=30):
                node = json.loads(event.object.manifest)["spec"].get("nodeName")
                if node:
                    break
            assert node == "big", f"pod bound to {node!r}, want 'big'"

            try:
                cluster.Get(pb.GetRequest(kind=pb.POD, namespace="default"))
                raise AssertionError("Get without a name succeeded")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
                assert "name: required" in e.details(), e.details()
            # Health and reflection, spoken as raw protobuf bytes so no extra package is needed:
            # HealthCheckResponse{status: SERVING} is 08 01; ServerReflectionRequest
            # {list_services: ""} is 3a 00.
            check = channel.unary_unary("/grpc.health.v1.Health/Check")
            assert check(b"", timeout=10) == b"\x08\x01", "health is not SERVING"
            reflect = channel.stream_stream(
                "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
            listing = b"".join(reflect(iter([b"\x3a\x00"]), timeout=10))
            for service in (b"schedhost.v1.Cluster", b"schedhost.v1.Admin",
                            b"grpc.health.v1.Health"):
                assert service in listing, f"reflection does not list {service}: {listing!r}"
            channel.close()
        finally:
            daemon.send_signal(signal.SIGTERM)
            rc = daemon.wait(timeout=30)
        assert rc == 0, f"schedhostd exited {rc} on SIGTERM"
    print("ok: python client created nodes and a pod and watched the binding")


if __name__ == "__main__":
    main()
