#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""node_bench: what accel-monitor costs a whole inference node, as a report.

The real bin/accel-monitor runs for NODE_SECONDS (default 20) at a 1 s period on a node made of fixtures:
  - NODE_GPUS (8) NVIDIA H200s: the fake libnvidia-ml.so.1 (tests/helpers/fake_nvml.c) with its H200 cost model
    (FAKE_NVML_COST=h200: each NVML call spends the CPU and waits the time it does on a real H200), each GPU the
    scripted H200 of tests/fixtures/nvml/h200.nvml, every device group;
  - container_usage over NODE_CONTAINERS (200) containers: a cgroup v2 tree written by
    `containers_bench --write-tree` (--path.cgroupfs);
  - NODE_PROCS (300) GPU processes in NODE_PODS (50) pods: the GPUs' process lists name them, and a procfs
    tree written by `pods_bench --write-tree` gives each its stat and cgroup, the containerd state files their pod
    and container (--path.procfs, --path.rootfs); every other entry of that procfs is a link to the live /proc's
    (stat and meminfo for vcpu_usage and memory_info, net/tcp and the processes for the endpoints' listeners);
  - NODE_RUNTIMES (4) endpoint runtimes, each its own tests/helpers/fake_endpoint.py serving a Triton exposition
    of NODE_MODELS (20) models (bench/triton_metrics.py), execution_stats;
  - vcpu_usage and memory_info;
  - who holds each GPU: the kubelet's pod-resources API played by tests/helpers/podres_server.py (real gRPC on a
    unix socket in the bench's temporary directory) answering for the node's pods (podres_scenario below), asked
    by the producer (--pod-resources-socket) at most once per NODE_PODRES (30s; 0: no socket, no client); the
    report's "allocations".
Figures, CPU time (user + system, from /proc/PID/task/*/schedstat, nanoseconds):
  - start-up: the producer's thread from exec to the first report line (target <= 100 ms), and the process's;
  - steady state, over NODE_SECONDS after NODE_SKIP (5) reports (the event thread's registration at start is over
    by then): the process's CPU per second, its threads and child processes included (target <= 25 ms/s), and
    each part's share: every collector and group as the report's self-timing gives it (monitor.collectors ...
    cpu_seconds, the producer's thread), the rest of the producer's thread (the loop, pod attribution, the
    report written), and the other threads (the NVML event thread, the PCIe workers); and the median and worst
    cycle of the collectors (the slow reads' spread over the cycles);
  - the sinks on the window's reports: accel-prom's, accel-csv's and accel-cloudwatch's output for them as
    written and rewritten as report formats 2 and 1 must be the same (bench/sinks_same.sh);
  - the pod-resources client: the Lists answered in the window, and the last report's allocations (the GPUs'
    owners must be the scenario's containers, IDLE_PODS of the pods idle allocated);
  - the whole stream checked by tests/helpers/check_report.py.
A missed target still exits 0; exit 1 only when something could not be built, run or measured (or the GPUs' owners
are not the scenario's).

Environment (defaults in brackets): BUILD [build/release], BIN [bin], CC [cc], MAKE [make], NODE_SECONDS [20],
NODE_SKIP [5], NODE_GPUS [8], NODE_CONTAINERS [200], NODE_PROCS [300], NODE_PODS [50], NODE_RUNTIMES [4],
NODE_MODELS [20], NODE_PODRES [30s: the --kubelet-refresh; 0: no pod-resources server], TMPDIR; NODE_PERF=FILE
records the steady window with `perf record -g` (the figures then include perf's own cost), NODE_KEEP=FILE keeps
the reports (and the producer's stderr in FILE.err).
"""
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "helpers"))
from report_v2 import derive  # noqa: E402 (format 3's sums, as a sink derives them)
PY = "/usr/bin/python3"
TARGET_MS_PER_S = 25.0
TARGET_START_MS = 100.0
FIRST_PID = 20000  # pods_bench's first process


def env_int(name, default):
    return int(os.environ.get(name, default))


def fail(msg):
    print("node_bench: " + msg, file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, cwd=TOP, **kw)
    if r.returncode:
        fail("%s exited %d" % (" ".join(cmd), r.returncode))


def gpu_uuid(i):
    """GPU i's UUID in the fake NVML's script (nvml_script)."""
    return "GPU-7c9d2e41-3a5b-4c6d-8e7f-%012x" % (0x901A2B3C4D00 + i)


def nvml_script(gpus, procs):
    """tests/fixtures/nvml/h200.nvml's host lines, then its GPU `gpus` times, each its own identity and a share
    of the processes (pids FIRST_PID on, 1 GiB each: process p on GPU p % gpus)."""
    text = open(os.path.join(TOP, "tests/fixtures/nvml/h200.nvml")).read()
    head, gpu = text.split("\ngpu\n", 1)
    out = [head.rstrip("\n")]
    for i in range(gpus):
        lines = ["gpu"]
        for line in gpu.splitlines():
            k = line.split(" ", 1)[0]
            if k == "uuid":
                line = "uuid " + gpu_uuid(i)
            elif k == "serial":
                line = "serial %d" % (1655023009876 + i)
            elif k == "pci":
                line = "pci 00000000:%02X:00.0" % (0x1B + 0x10 * i)
            lines.append(line)
        lines += ["proc %d 1073741824" % (FIRST_PID + p) for p in range(i, procs, gpus)]
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


# Pods of the node that hold no device (daemon sets): the kubelet lists every pod, whatever it holds.
SYSTEM_PODS = [("kube-system", "kube-proxy-x7k2p", ["kube-proxy"]),
               ("kube-system", "nvidia-device-plugin-daemonset-4hq9d", ["nvidia-device-plugin"]),
               ("kube-system", "rdma-shared-dp-ds-8f2lm", ["rdma-shared-dp"]),
               ("kube-system", "kube-multus-ds-q7w4z", ["kube-multus"]),
               ("kube-system", "calico-node-m5k8t", ["calico-node"]),
               ("monitoring", "node-exporter-2v9cx", ["node-exporter", "kube-rbac-proxy"]),
               ("monitoring", "accel-monitor-6tqzn", ["accel-monitor", "accel-prom"])]
IDLE_PODS = 4   # pods holding a GPU with no process on it yet (idle allocated)
RDMA_EVERY = 5  # every fifth pod's first container also holds an RDMA id
RDMA_RES, RDMA_MAX = "rdma/hca_shared_devices_a", 1000  # the shared RDMA plugin's pool: ids "0" to rdmaHcaMax - 1


def podres_scenario(gpus, procs, pods):
    """What the kubelet's pod-resources API answers for this node (tests/helpers/podres_server.py's scenario).

    Each of pods_bench's pods (pod-P in namespace ns, containers cK, process FIRST_PID + i in pod i // per_pod,
    container c(i % per_pod)) holds, in each container, the GPU its process runs on (nvml_script: GPU i % gpus).
    The containers outnumber the GPUs (300 on 8 by default) and share them: NVIDIA's device plugin with
    time-slicing (or MPS) gives each container a replica, "<UUID>::<n>". Then IDLE_PODS pods idle-N holding a
    replica of a GPU and running nothing there, every RDMA_EVERY-th pod's first container an id of the shared
    RDMA plugin's pool, and SYSTEM_PODS. The allocatable list: every GPU's replicas (a multiple of 16 per GPU, as
    many as the busiest GPU needs) and the RDMA pool."""
    per_pod = max(1, -(-procs // pods))
    used = [0] * gpus

    def replica(g):
        used[g] += 1
        return "%s::%d" % (gpu_uuid(g), used[g] - 1)

    out, rdma = [], 0
    for p in range(pods):
        cont = []
        for k in range(per_pod):
            i = p * per_pod + k
            if i >= procs:
                break
            devs = [{"resource": "nvidia.com/gpu", "ids": [replica(i % gpus)]}]
            if k == 0 and p % RDMA_EVERY == 0:
                devs.append({"resource": RDMA_RES, "ids": [str(rdma)]})
                rdma += 1
            cont.append({"name": "c%d" % k, "devices": devs})
        out.append({"name": "pod-%d" % p, "namespace": "ns", "containers": cont})
    for j in range(IDLE_PODS):
        out.append({"name": "idle-%d" % j, "namespace": "ns", "containers": [
            {"name": "c0", "devices": [{"resource": "nvidia.com/gpu", "ids": [replica((gpus - 1 - j) % gpus)]}]}]})
    for ns, name, cont in SYSTEM_PODS:
        out.append({"name": name, "namespace": ns, "containers": [{"name": c, "devices": []} for c in cont]})
    per_gpu = -(-max(used) // 16) * 16
    alloc = [{"resource": "nvidia.com/gpu", "ids": ["%s::%d" % (gpu_uuid(g), n) for g in range(gpus)
                                                    for n in range(per_gpu)]},
             {"resource": RDMA_RES, "ids": [str(n) for n in range(RDMA_MAX)]}]
    return {"pods": out, "allocatable": alloc}


def count_calls(path, method):
    """Calls of method (".../List") in podres_server.py's log so far."""
    try:
        with open(path) as f:
            return sum(1 for line in f if line.rstrip("\n").endswith(method))
    except FileNotFoundError:
        return 0


def start_podres(work, refresh, scenario, servers):
    """tests/helpers/podres_server.py on work/kubelet.sock answering scenario, its calls logged in work/podres.log,
    appended to servers once it serves; the producer's options that ask it."""
    sock = work + "/kubelet.sock"
    with open(work + "/podres.json", "w") as f:
        json.dump(scenario, f)
    servers.append(subprocess.Popen([PY, os.path.join(TOP, "tests/helpers/podres_server.py"), "--proto",
                                     os.path.join(TOP, "monitor/host/podres_api.proto"), "--dir", work + "/py",
                                     "--socket", sock, "--scenario", work + "/podres.json", "--log",
                                     work + "/podres.log"]))
    end = time.monotonic() + 30
    while not os.path.exists(sock + ".ready"):
        if servers[-1].poll() is not None or time.monotonic() > end:
            fail("the pod-resources server (tests/helpers/podres_server.py) did not start")
        time.sleep(0.05)
    return ["--pod-resources-socket", sock, "--kubelet-refresh", refresh]


def podres_summary(last, refresh, lists, wall, want):
    """The report line on the pod-resources part: Lists in the window and the last report's "allocations"
    (identities already derived); and whether its GPUs' owners are the want containers the scenario gives."""
    if not refresh:
        return "  pod-resources: none (NODE_PODRES=0): no socket, no client, no \"allocations\"", True
    al = last.get("allocations") or {}
    nv = al.get("devices", {}).get("nvidia", {})
    held = [(o.get("namespace"), o.get("pod"), o.get("container")) for owners in nv.values() for o in owners]
    busy = {(p.get("namespace"), p.get("pod")) for p in last.get("identities", {}).get("pods", {}).values()}
    idle = {h[:2] for h in held} - busy
    line = ("  pod-resources, List at most once per %s: %d Lists in the window (%.2f a second); the last report's "
            "allocations: %d GPUs held by %d containers of %d pods, %d of those pods idle allocated (no process on "
            "the GPU); error: %s" % (refresh, lists, lists / wall, len(nv), len(held), len({h[:2] for h in held}),
                                      len(idle), json.dumps(al.get("error"))))
    return line, al.get("error") == "" and len(held) == want and len(idle) == IDLE_PODS


def overlay_procfs(proc):
    """Link every entry of the live /proc that the fixture procfs lacks (the fixture's pids win)."""
    for name in os.listdir("/proc"):
        path = os.path.join(proc, name)
        if not os.path.lexists(path):
            os.symlink(os.path.join("/proc", name), path)


def cpu_ns(pid, tid):
    """On-CPU time of thread tid of pid (schedstat, ns), or None when it is gone."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def children(pid):
    """The child processes of pid (from every live process's stat)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    st = f.read()
            except OSError:
                continue
            if int(st[st.rindex(")") + 2:].split()[1]) == pid:
                out.append(int(name))
    return out


def snapshot(pid):
    """{(pid, tid): ns} for every thread of pid and of its children."""
    snap = {}
    for p in [pid] + children(pid):
        try:
            tids = [int(t) for t in os.listdir("/proc/%d/task" % p)]
        except OSError:
            continue
        for t in tids:
            v = cpu_ns(p, t)
            if v is not None:
                snap[(p, t)] = v
    return snap


_COUNTED = {}  # path: (bytes read, lines in them)


def count_lines(path):
    """Lines in path (a file that only grows), reading only what was appended since the last call: the reports
    are read every 2 ms while they are written, and reading the whole file each time (tens of MB by the end of the
    window) took a CPU of the bench's, next to the producer it measures."""
    off, n = _COUNTED.get(path, (0, 0))
    with open(path, "rb") as f:
        f.seek(off)
        data = f.read()
    _COUNTED[path] = (off + len(data), n + data.count(b"\n"))
    return _COUNTED[path][1]


def wait_lines(path, n, proc, timeout):
    """Wait (polling every 2 ms) until path holds n lines; False when the process ended or time ran out."""
    end = time.monotonic() + timeout
    while count_lines(path) < n:
        if proc.poll() is not None or time.monotonic() > end:
            return False
        time.sleep(0.002)
    return True


def start(monitor, args, env, out, err):
    """accel-monitor -c args..., its reports into out, its stderr into err."""
    with open(out, "w") as fo, open(err, "w") as fe:
        return subprocess.Popen([monitor, "-c"] + args, stdout=fo, stderr=fe, env=env)


def main():
    # A SIGTERM (bench/node_pairs.sh stopped, a timeout) unwinds like an exception: the producer and the fakes are
    # stopped and the temporary tree removed, not left running beside the next measurement.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    build = os.environ.get("BUILD", "build/release")
    bindir = os.environ.get("BIN", "bin")
    seconds = env_int("NODE_SECONDS", 20)
    skip = env_int("NODE_SKIP", 5)
    gpus, ncont = env_int("NODE_GPUS", 8), env_int("NODE_CONTAINERS", 200)
    nprocs, npods = env_int("NODE_PROCS", 300), env_int("NODE_PODS", 50)
    nrt, nmodels = env_int("NODE_RUNTIMES", 4), env_int("NODE_MODELS", 20)
    refresh = os.environ.get("NODE_PODRES", "30s")
    refresh = "" if refresh in ("", "0") else refresh
    monitor = os.path.join(TOP, bindir, "accel-monitor")
    if not os.access(monitor, os.X_OK):
        fail("%s is missing; run make first (or set BIN)" % monitor)
    run([os.environ.get("MAKE", "make"), "-s", "--no-print-directory", "BUILD=" + build,
         build + "/bench/containers_bench", build + "/bench/pods_bench"])
    work = tempfile.mkdtemp(prefix="accel-node-bench.", dir=os.environ.get("TMPDIR") or "/tmp")
    atexit.register(shutil.rmtree, work, True)  # however main ends
    servers, mon = [], None
    try:
        # the fixtures
        os.mkdir(work + "/lib")
        run([os.environ.get("CC", "cc"), "-std=c11", "-O2", "-D_GNU_SOURCE", "-shared", "-fPIC", "-o",
             work + "/lib/libnvidia-ml.so.1", "tests/helpers/fake_nvml.c"])
        with open(work + "/gpus.nvml", "w") as f:
            f.write(nvml_script(gpus, nprocs))
        run([build + "/bench/containers_bench", "--write-tree", work + "/cg", "-c", str(ncont)])
        run([build + "/bench/pods_bench", "-p", str(max(1, -(-nprocs // npods))), "--write-tree", work + "/node",
             str(nprocs)])
        with open(work + "/metrics.txt", "w") as f:
            subprocess.run([PY, os.path.join(TOP, "bench/triton_metrics.py"), str(nmodels)], stdout=f, check=True)
        for i in range(nrt):
            # A server whose pid is one of the fixture's GPU processes would be hidden by it (the fixture's pids
            # win in the overlay) and its runtime would find no listening process: start it again, which takes
            # the next pid.
            while True:
                srv = subprocess.Popen([PY, os.path.join(TOP, "tests/helpers/fake_endpoint.py"), "--file",
                                        work + "/metrics.txt", "--port-file", "%s/port%d" % (work, i)])
                if not FIRST_PID <= srv.pid < FIRST_PID + npods * -(-nprocs // npods):
                    break
                srv.kill()
                srv.wait()
            servers.append(srv)
        ports = []
        for i in range(nrt):
            pf, end = "%s/port%d" % (work, i), time.monotonic() + 10
            while not (os.path.exists(pf) and os.path.getsize(pf)) and time.monotonic() < end:
                time.sleep(0.05)
            ports.append(open(pf).read().strip())
        podres_args = start_podres(work, refresh, podres_scenario(gpus, nprocs, npods), servers) if refresh else []
        overlay_procfs(work + "/node/proc")  # the servers' pids too: each runtime finds its listening process
        cfg = {
            "period": "1s",
            "system_metrics": [{"type": "vcpu_usage"}, {"type": "memory_info"}, {"type": "container_usage"}],
            "devices": [{"type": "nvidia", "select": "all"}],
            "runtimes": [{"address": "http://127.0.0.1:%s/metrics" % p, "server": "triton",
                          "metrics": [{"type": "execution_stats"}]} for p in ports],
        }
        with open(work + "/node.json", "w") as f:
            json.dump(cfg, f)

        # accel-monitor with the GPUs alone, to its first report; then the whole node, its start-up, its steady state
        env = dict(os.environ, FAKE_NVML_COST="h200", FAKE_NVML_SCRIPT=work + "/gpus.nvml",
                   ACCEL_NVML_LIBRARY=work + "/lib/libnvidia-ml.so.1", AWS_EC2_METADATA_DISABLED="true")
        with open(work + "/gpus.json", "w") as f:
            json.dump({"period": "1s", "devices": cfg["devices"]}, f)
        out = work + "/gpus.jsonl"
        mon = start(monitor, [work + "/gpus.json"], env, out, work + "/monitor.err")
        if not wait_lines(out, 1, mon, 30):
            fail("no report from accel-monitor; its stderr:\n" + open(work + "/monitor.err").read()[-3000:])
        gpu_thread, gpu_proc = cpu_ns(mon.pid, mon.pid), sum(snapshot(mon.pid).values())
        mon.kill()
        mon.wait()
        out = work + "/reports.jsonl"
        mon = start(monitor, [work + "/node.json", "--path.procfs", work + "/node/proc", "--path.rootfs",
                              work + "/node/rootfs", "--path.cgroupfs", work + "/cg"] + podres_args, env, out,
                    work + "/monitor.err")
        if not wait_lines(out, 1, mon, 30):
            fail("no report from accel-monitor; its stderr:\n" + open(work + "/monitor.err").read()[-3000:])
        start_thread = cpu_ns(mon.pid, mon.pid)
        start_proc = sum(snapshot(mon.pid).values())
        if not wait_lines(out, skip, mon, skip + 30):
            fail("accel-monitor stopped before report %d" % skip)
        perf = None
        if os.environ.get("NODE_PERF"):
            perf = subprocess.Popen(["perf", "record", "-q", "-g", "-o", os.environ["NODE_PERF"], "-p", str(mon.pid)])
        s0, t0, lists0 = snapshot(mon.pid), time.monotonic(), count_calls(work + "/podres.log", "/List")
        if not wait_lines(out, skip + seconds, mon, seconds + 30):
            fail("accel-monitor stopped before report %d" % (skip + seconds))
        s1, t1, lists1 = snapshot(mon.pid), time.monotonic(), count_calls(work + "/podres.log", "/List")
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait()
        if os.environ.get("NODE_KEEP"):
            shutil.copy(out, os.environ["NODE_KEEP"])
            shutil.copy(work + "/monitor.err", os.environ["NODE_KEEP"] + ".err")
        mon.send_signal(signal.SIGTERM)
        rc = mon.wait(30)
        mon = None
        if rc:
            fail("accel-monitor exited %d on SIGTERM" % rc)
    finally:
        if mon:
            mon.kill()
            mon.wait()
        for s in servers:
            s.terminate()
            s.wait()

    # the reports of the window: each part's CPU (the producer's thread), and what they hold
    with open(out) as f:
        lines = f.readlines()
    reports = [json.loads(line) for line in lines]
    line_kb = sum(len(line) for line in lines[skip:skip + seconds]) / 1024 / max(1, len(lines[skip:skip + seconds]))
    first, reports = reports[0], reports[skip:skip + seconds]
    with open(work + "/window.jsonl", "w") as f:
        f.writelines(lines[skip:skip + seconds])
    same = subprocess.run(["sh", os.path.join(TOP, "bench", "sinks_same.sh"), work + "/window.jsonl"],
                          env=dict(os.environ, BIN=os.path.abspath(bindir)), stdout=subprocess.PIPE, universal_newlines=True)
    checked = subprocess.run([PY, os.path.join(TOP, "tests/helpers/check_report.py"), out], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True)
    parts, errors, last = {}, set(), reports[-1]
    for r in reports:
        for coll, groups in r["monitor"]["collectors"].items():
            for g, t in groups.items():
                parts[(coll, g)] = parts.get((coll, g), 0.0) + t["cpu_seconds"] * 1e3
                if not t["success"]:
                    errors.add("%s/%s" % (coll, g))
    wall = t1 - t0
    total = sum(v - s0.get(k, 0) for k, v in s1.items()) / 1e6
    pid = next(iter(s1))[0]
    main_ms = (s1[(pid, pid)] - s0.get((pid, pid), 0)) / 1e6
    threads = {k: (v - s0.get(k, 0)) / 1e6 for k, v in s1.items() if k != (pid, pid)}
    other_ms = sum(v for k, v in threads.items() if k[0] == pid)
    child_ms = sum(v for k, v in threads.items() if k[0] != pid)
    coll_ms = sum(parts.values())
    devs = [e for e in last.get("device_data", []) if e.get("device_type") == "nvidia"]
    gpus_seen = len(devs[0]["report"]["device_power"]["devices"]) if devs else 0
    derive(last)
    pods = {p for e in devs for d in e["report"]["device_memory"]["devices"].values() for p in d.get("pods", {})}
    cont = len(last["system_data"]["container_usage"].get("containers", {}))
    rts = [r for r in last.get("runtime_data", []) if not r.get("error") and r.get("pid")]
    print("== the whole node: %d H200s (cost model), every device group, container_usage over %d containers, "
          "%d processes in %d pods, %d endpoint runtimes of %d models, vcpu_usage, memory_info; 1 s period"
          % (gpus, ncont, nprocs, npods, nrt, nmodels))
    print("  last report: %d GPUs, %d cgroups in container_usage, %d runtimes without error and with their "
          "listening process, processes in %d pods; groups with an error in the window: %s"
          % (gpus_seen, cont, len(rts), len(pods), ", ".join(sorted(errors)) or "none"))
    podres_line, podres_ok = podres_summary(last, refresh, lists1 - lists0, wall, nprocs + IDLE_PODS)
    print(podres_line)
    print("  start-up, the %d GPUs alone (every device group): %.1f ms CPU of the producer's thread from exec to the "
          "first report line (%.1f ms of the process)   target <= %.0f ms   %s"
          % (gpus, gpu_thread / 1e6, gpu_proc / 1e6, TARGET_START_MS,
             "PASS" if gpu_thread / 1e6 <= TARGET_START_MS else "FAIL"))
    print("  start-up, the whole node: %.1f ms CPU of the producer's thread from exec to the first report line "
          "(%.1f ms of the process)" % (start_thread / 1e6, start_proc / 1e6))
    firsts = {}
    for coll, groups in first["monitor"]["collectors"].items():
        firsts[coll] = sum(t["cpu_seconds"] for t in groups.values()) * 1e3
    print("  of which the first cycle's collectors: %s; the rest (opening the collectors, baselines, the loop): "
          "%.1f ms" % (", ".join("%s %.1f ms" % kv for kv in sorted(firsts.items(), key=lambda kv: -kv[1])),
                       start_thread / 1e6 - sum(firsts.values())))
    print("  steady state: %d reports (%.0f kB a line), %.2f s wall after report %d" % (len(reports), line_kb, wall,
                                                                                      skip))
    print("  %-52s %8s %7s" % ("part", "ms CPU/s", "share"))
    rows = sorted(parts.items(), key=lambda kv: -kv[1])
    for (coll, g), ms in rows:
        print("  %-52s %8.3f %6.1f%%" % ("%s %s" % (coll, g), ms / wall, 100 * ms / total))
    print("  %-52s %8.3f %6.1f%%" % ("producer's thread outside the collectors", (main_ms - coll_ms) / wall,
                                     100 * (main_ms - coll_ms) / total))
    print("  %-52s %8.3f %6.1f%%" % ("other threads (%d: NVML events, PCIe workers)" % sum(
        1 for k in threads if k[0] == pid), other_ms / wall, 100 * other_ms / total))
    per = sorted(sum(t["cpu_seconds"] for gr in r["monitor"]["collectors"].values() for t in gr.values()) * 1e3
                 for r in reports)
    per_nv = sorted(sum(t["cpu_seconds"] for t in r["monitor"]["collectors"].get("nvidia", {}).values()) * 1e3
                    for r in reports)
    print("  %-52s median %.1f ms, worst %.1f ms (of which nvidia: median %.1f ms, worst %.1f ms)"
          % ("one cycle's collectors, the producer's thread", per[len(per) // 2], per[-1], per_nv[len(per_nv) // 2],
             per_nv[-1]))
    if child_ms:
        print("  %-52s %8.3f %6.1f%%" % ("child processes", child_ms / wall, 100 * child_ms / total))
    verdict = "PASS" if total / wall <= TARGET_MS_PER_S else "FAIL"
    print("  %-52s %8.3f          target <= %.0f ms/s   %s" % ("total: accel-monitor's CPU per second", total / wall,
                                                              TARGET_MS_PER_S, verdict))
    print("  the sinks on the window's reports, as written (format 3) and rewritten as formats 2 and 1 "
          "(bench/sinks_same.sh): %s" % ("PASS" if same.returncode == 0 else "FAIL"))
    sys.stdout.write(same.stdout)
    print("  the whole stream against docs/report-format.md (tests/helpers/check_report.py): %s"
          % ("PASS" if checked.returncode == 0 else "FAIL\n" + checked.stdout[-3000:]))
    if gpus_seen != gpus or cont < ncont or len(rts) != nrt or not podres_ok:
        fail("the node was not measured as configured (see the report line above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
