#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A kubelet pod-resources server for tests: real gRPC (Debian's python3-grpcio) on a unix socket.

The messages come from the project's own monitor/host/podres_api.proto, compiled at start with
python3 -m grpc_tools.protoc (python3-grpc-tools) into --dir; nothing generated is checked in.

Usage:
  podres_server.py --proto monitor/host/podres_api.proto --dir DIR --socket PATH --scenario FILE [--log L]
  podres_server.py --proto monitor/host/podres_api.proto --dir DIR --seeds OUTDIR   (fuzz seed corpus)

  --scenario FILE  JSON, read again at every call (so pods come and go between calls):
     {"pods": [{"name", "namespace", "containers": [{"name",
                  "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-..."]}],
                  "claims": [{"name", "namespace", "devices": [{"driver", "pool", "device"}]}]}]}],
      "allocatable": [{"resource", "ids": [...]}],
      "v1": true,                 false: the v1 service answers UNIMPLEMENTED (a kubelet before v1)
      "allocatable_unimplemented": false,
      "delay": 0,                 seconds to wait before answering
      "status": [code, "message"] every call ends with this gRPC status instead of an answer
      "garbage": "hex",           the answer's message is these bytes instead
      "pad": 0}                   bytes of an unknown field (a CPU id list) appended to a List answer
  --log L          one line per call, "<method path>", flushed at once.
  --socket PATH    the unix socket (a stale one is removed); PATH.ready is created once serving.
SIGTERM/SIGINT: exit 0.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time


def compile_proto(proto, outdir):
    os.makedirs(outdir, exist_ok=True)
    d, f = os.path.split(os.path.abspath(proto))
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I" + d, "--python_out=" + outdir, f], check=True)
    sys.path.insert(0, outdir)
    import podres_api_pb2  # noqa: E402  (generated just now)
    return podres_api_pb2


def devices(pb, cls, items):
    out = []
    for d in items:
        out.append(pb.ContainerDevices(resource_name=d.get("resource", ""), device_ids=d.get("ids", [])))
    return out


def list_answer(pb, sc):
    r = pb.ListPodResourcesResponse()
    for p in sc.get("pods", []):
        pr = r.pod_resources.add(name=p.get("name", ""), namespace=p.get("namespace", ""))
        for c in p.get("containers", []):
            cr = pr.containers.add(name=c.get("name", ""))
            cr.devices.extend(devices(pb, pb.ContainerDevices, c.get("devices", [])))
            for cl in c.get("claims", []):
                dr = cr.dynamic_resources.add(claim_name=cl.get("name", ""), claim_namespace=cl.get("namespace", ""))
                for d in cl.get("devices", []):
                    dr.claim_resources.add(driver_name=d.get("driver", ""), pool_name=d.get("pool", ""),
                                           device_name=d.get("device", ""))
    b = r.SerializeToString()
    pad = int(sc.get("pad", 0))
    if pad:
        # field 2 of the answer (not ours: unknown), length-delimited, pad bytes long
        n, v = pad, bytearray()
        while True:
            if n < 0x80:
                v.append(n)
                break
            v.append((n & 0x7F) | 0x80)
            n >>= 7
        b += bytes([0x12]) + bytes(v) + b"\0" * pad
    return b


def allocatable_answer(pb, sc):
    r = pb.AllocatableResourcesResponse()
    r.devices.extend(devices(pb, pb.ContainerDevices, sc.get("allocatable", [])))
    return r.SerializeToString()


def seeds(pb, outdir):
    """The fuzz target's seed corpus: whole answers (gRPC frame and message)."""
    os.makedirs(outdir, exist_ok=True)
    sc = {"pods": [{"name": "train-0", "namespace": "ml", "containers": [
        {"name": "main", "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-1", "GPU-2::3", "MIG-9"]}],
         "claims": [{"name": "c", "namespace": "ml", "devices": [{"driver": "gpu.nvidia.com", "pool": "n",
                                                                   "device": "gpu-0"}]}]}]}],
          "allocatable": [{"resource": "aws.amazon.com/neuroncore", "ids": ["0", "1"]}]}

    def frame(b):
        return b"\0" + len(b).to_bytes(4, "big") + b

    corpus = {"list": frame(list_answer(pb, sc)), "allocatable": frame(allocatable_answer(pb, sc)),
              "empty": frame(b""), "short": b"\0\0\0", "compressed": b"\1\0\0\0\0",
              "padded": frame(list_answer(pb, dict(sc, pad=300)))}
    for k, v in corpus.items():
        with open(os.path.join(outdir, k), "wb") as f:
            f.write(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--proto", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--socket")
    ap.add_argument("--scenario")
    ap.add_argument("--log")
    ap.add_argument("--seeds")
    o = ap.parse_args()
    pb = compile_proto(o.proto, o.dir)
    if o.seeds:
        seeds(pb, o.seeds)
        return 0
    import grpc  # python3-grpcio

    lock = threading.Lock()

    def log(path):
        if o.log:
            with lock, open(o.log, "a", encoding="utf-8") as f:
                f.write(path + "\n")

    def handler(path, build, unimplemented_key=None):
        def call(request, context):
            log(path)
            with open(o.scenario, encoding="utf-8") as f:
                sc = json.load(f)
            time.sleep(float(sc.get("delay", 0)))
            if (path.startswith("/v1.") and not sc.get("v1", True)) or \
                    (unimplemented_key and sc.get(unimplemented_key)):
                context.abort(grpc.StatusCode.UNIMPLEMENTED, "unknown method " + path.rsplit("/", 1)[1])
            if sc.get("status"):
                code, msg = sc["status"]
                st = next(s for s in grpc.StatusCode if s.value[0] == code)
                context.abort(st, msg)
            if sc.get("garbage") is not None:
                return bytes.fromhex(sc["garbage"])
            return build(pb, sc)
        return grpc.unary_unary_rpc_method_handler(call, request_deserializer=lambda b: b,
                                                   response_serializer=lambda b: b)

    services = {
        "v1.PodResourcesLister": {"List": handler("/v1.PodResourcesLister/List", list_answer),
                                  "GetAllocatableResources": handler(
                                      "/v1.PodResourcesLister/GetAllocatableResources", allocatable_answer,
                                      "allocatable_unimplemented")},
        "v1alpha1.PodResourcesLister": {"List": handler("/v1alpha1.PodResourcesLister/List", list_answer)},
    }
    from concurrent import futures
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    for name, methods in services.items():
        srv.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, methods),))
    for p in (o.socket, o.socket + ".ready"):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
    srv.add_insecure_port("unix:" + o.socket)
    srv.start()
    open(o.socket + ".ready", "w").close()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    while not stop.wait(0.2):
        pass
    srv.stop(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
