/* SPDX-License-Identifier: MIT */
/*
 * Container identity from cgroup paths (monitor/host/container.c): the layouts
 * real hosts write, copied from /proc/PID/cgroup on Kubernetes nodes
 * (systemd and cgroupfs drivers, containerd, CRI-O, Docker), Docker and
 * Podman hosts, cgroup v2, v1 and the two hybrid layouts, and odd input
 * that must neither crash nor overflow. Then the names from the runtimes'
 * state files (tests/fixtures/containers/), their cache and its retry, odd
 * state files (garbage, a FIFO, a directory), the report's container
 * object, the report's identities made from typed identities (their exact
 * text, and an unchanged entry taken over from the last report), and the
 * per-device attribution of processes to pods and containers through the
 * process table.
 */
#include "../../monitor/host/container.h"
#include "../../monitor/host/host.h"
#include "../../monitor/host/identities.h"
#include "../../common/derive.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FIXTURES
#define FIXTURES "tests/fixtures/containers"
#endif
#define SEC 1000000000LL

#define ID64 "4b8f0a7f3c2e1d6b9a8f7e6d5c4b3a291817161514131211100f0e0d0c0b0a09"
#define ID64B "e3c1f29a0d4b5c6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6"
#define UID_D "0a1b2c3d-4e5f-6789-abcd-ef0123456789"
#define UID_U "0a1b2c3d_4e5f_6789_abcd_ef0123456789"

struct want {
	int rc;
	const char *runtime, *id, *pod_uid, *qos, *unit;
	const char *ecs_task; /* NULL: "" */
	int ns_up, ns_root;
};

struct tcase {
	const char *name, *path;
	struct want w;
};

static void check(const char *name, int rc, const struct container_id *got, const struct want *w)
{
	char n[256];

	snprintf(n, sizeof(n), "%s: rc", name);
	is_int(rc, w->rc, n);
	snprintf(n, sizeof(n), "%s: runtime", name);
	is_str(got->runtime, w->runtime, n);
	snprintf(n, sizeof(n), "%s: id", name);
	is_str(got->id, w->id, n);
	snprintf(n, sizeof(n), "%s: pod_uid", name);
	is_str(got->pod_uid, w->pod_uid, n);
	snprintf(n, sizeof(n), "%s: qos", name);
	is_str(got->qos, w->qos, n);
	snprintf(n, sizeof(n), "%s: unit", name);
	is_str(got->unit, w->unit, n);
	snprintf(n, sizeof(n), "%s: ecs_task", name);
	is_str(got->ecs_task, w->ecs_task ? w->ecs_task : "", n);
	snprintf(n, sizeof(n), "%s: ns_up", name);
	is_int(got->ns_up, w->ns_up, n);
	snprintf(n, sizeof(n), "%s: ns_root", name);
	is_int(got->ns_root, w->ns_root, n);
}

#define HOST { -ENOENT, "", "", "", "", "", NULL, 0, 0 }
#define ROOT { -ENOENT, "", "", "", "", "", NULL, 0, 1 }
/* ECS task ids: the current form (32 hex digits) and the older UUID; a Fargate 1.4 container id. */
#define TASK "9f3c2a1b5d7e4f60a1b2c3d4e5f60718"
#define TASK_UUID "55a1c0d3-b8cf-4801-b527-f46017422a4d"
#define FARGATE_ID TASK "-2893511043"

static const struct tcase paths[] = {
	/* cgroup v2, systemd driver: the three QoS classes, each runtime. */
	{ "v2 systemd burstable containerd",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_U ".slice/cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v2 systemd besteffort cri-o",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_U ".slice/crio-" ID64 ".scope",
	  { 0, "cri-o", ID64, UID_D, "besteffort", "", NULL, 0, 0 } },
	{ "v2 systemd guaranteed (no QoS level) docker",
	  "/kubepods.slice/kubepods-pod" UID_U ".slice/docker-" ID64 ".scope",
	  { 0, "docker", ID64, UID_D, "guaranteed", "", NULL, 0, 0 } },
	{ "v2 systemd cri-o conmon: the pod, not the container",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_U ".slice/crio-conmon-" ID64 ".scope",
	  { 0, "cri-o", "", UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v2 systemd pod-level cgroup (no container)",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_U ".slice",
	  { 0, "", "", UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v2 static pod (hash UID)",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6a8ae5c8f0e6b0bc5ab4d8d4e2ef2b79.slice/"
	  "cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, "6a8ae5c8f0e6b0bc5ab4d8d4e2ef2b79", "burstable", "", NULL, 0, 0 } },
	{ "kind node (kubelet.slice nesting)",
	  "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_U ".slice/cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, UID_D, "besteffort", "", NULL, 0, 0 } },
	{ "kind node in Docker, pod-level process: the pod, not the node's container",
	  "/docker/" ID64 "/kubepods/burstable/pod" UID_D,
	  { 0, "", "", UID_D, "burstable", "", NULL, 0, 0 } },
	{ "kind node in Docker, a container of the pod",
	  "/system.slice/docker-" ID64 ".scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" UID_U
	  ".slice/cri-containerd-" ID64B ".scope",
	  { 0, "containerd", ID64B, UID_D, "guaranteed", "", NULL, 0, 0 } },
	{ "a QoS level Kubernetes does not have",
	  "/kubepods.slice/kubepods-foo-pod" UID_U ".slice",
	  { 0, "", "", UID_D, "", "", NULL, 0, 0 } },
	{ "monitor in its own cgroup namespace",
	  "/../../kubepods.slice/kubepods-pod" UID_U ".slice/cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, UID_D, "guaranteed", "", NULL, 2, 0 } },
	{ "deleted cgroup",
	  "/kubepods.slice/kubepods-pod" UID_U ".slice/cri-containerd-" ID64 ".scope (deleted)",
	  { 0, "containerd", ID64, UID_D, "guaranteed", "", NULL, 0, 0 } },
	{ "uppercase UID is lowered",
	  "/kubepods.slice/kubepods-pod0A1B2C3D_4E5F_6789_ABCD_EF0123456789.slice",
	  { 0, "", "", UID_D, "guaranteed", "", NULL, 0, 0 } },
	/* cgroup v1, cgroupfs driver. */
	{ "v1 cgroupfs burstable",
	  "/kubepods/burstable/pod" UID_D "/" ID64,
	  { 0, "", ID64, UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v1 cgroupfs besteffort",
	  "/kubepods/besteffort/pod" UID_D "/" ID64B,
	  { 0, "", ID64B, UID_D, "besteffort", "", NULL, 0, 0 } },
	{ "v1 cgroupfs guaranteed",
	  "/kubepods/pod" UID_D "/" ID64,
	  { 0, "", ID64, UID_D, "guaranteed", "", NULL, 0, 0 } },
	{ "v1 cgroupfs cri-o",
	  "/kubepods/burstable/pod" UID_D "/crio-" ID64,
	  { 0, "cri-o", ID64, UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v1 cgroupfs cri-o conmon",
	  "/kubepods/burstable/pod" UID_D "/crio-conmon-" ID64,
	  { 0, "cri-o", "", UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v1 containerd systemd driver (slice:prefix:id)",
	  "/system.slice/containerd.service/kubepods-burstable-pod" UID_U ".slice:cri-containerd:" ID64,
	  { 0, "containerd", ID64, UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v1 cgroupfs pod-level",
	  "/kubepods/besteffort/pod" UID_D,
	  { 0, "", "", UID_D, "besteffort", "", NULL, 0, 0 } },
	/* Docker and Podman outside Kubernetes. */
	{ "docker systemd", "/system.slice/docker-" ID64 ".scope", { 0, "docker", ID64, "", "", "", NULL, 0, 0 } },
	{ "docker cgroupfs", "/docker/" ID64, { 0, "docker", ID64, "", "", "", NULL, 0, 0 } },
	{ "docker-in-docker (innermost)", "/docker/" ID64 "/docker/" ID64B, { 0, "docker", ID64B, "", "", "", NULL, 0, 0 } },
	{ "podman rootless",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID64 ".scope/container",
	  { 0, "podman", ID64, "", "", "", NULL, 0, 0 } },
	{ "podman machine.slice", "/machine.slice/libpod-" ID64 ".scope", { 0, "podman", ID64, "", "", "", NULL, 0, 0 } },
	{ "podman cgroupfs", "/libpod_parent/libpod-" ID64, { 0, "podman", ID64, "", "", "", NULL, 0, 0 } },
	{ "podman conmon", "/machine.slice/libpod-conmon-" ID64 ".scope", { 0, "podman", "", "", "", "", NULL, 0, 0 } },
	/* Amazon ECS on EC2: the agent's cgroup parent per task (v1), its task slices (v2 systemd driver). */
	{ "ecs v1 task id and docker id", "/ecs/" TASK "/" ID64, { 0, "docker", ID64, "", "", "", TASK, 0, 0 } },
	{ "ecs v1 older UUID task id", "/ecs/" TASK_UUID "/" ID64, { 0, "docker", ID64, "", "", "", TASK_UUID, 0, 0 } },
	{ "ecs v1 with a cluster component", "/ecs/prod-inference/" TASK "/" ID64,
	  { 0, "docker", ID64, "", "", "", TASK, 0, 0 } },
	{ "ecs v1 task level (no container)", "/ecs/" TASK, { 0, "ecs", "", "", "", "", TASK, 0, 0 } },
	{ "ecs v2 task slice, docker scope",
	  "/ecstasks.slice/ecstasks-" TASK ".slice/docker-" ID64 ".scope", { 0, "docker", ID64, "", "", "", TASK, 0, 0 } },
	{ "ecs v2 task slice, UUID task id escaped",
	  "/ecstasks.slice/ecstasks-55a1c0d3_b8cf_4801_b527_f46017422a4d.slice/docker-" ID64 ".scope",
	  { 0, "docker", ID64, "", "", "", TASK_UUID, 0, 0 } },
	{ "ecs v2 task slice alone", "/ecstasks.slice/ecstasks-" TASK ".slice", { 0, "ecs", "", "", "", "", TASK, 0, 0 } },
	{ "ecs without task limits: plain docker", "/docker/" ID64, { 0, "docker", ID64, "", "", "", NULL, 0, 0 } },
	/* Fargate platform 1.4 (and ECS Managed Instances): "<task>-<digits>" under the task. */
	{ "fargate 1.4", "/ecs/" TASK "/" FARGATE_ID, { 0, "fargate", FARGATE_ID, "", "", "", TASK, 0, 0 } },
	{ "fargate 1.4, nine digits", "/ecs/" TASK "/" TASK "-123456789",
	  { 0, "fargate", TASK "-123456789", "", "", "", TASK, 0, 0 } },
	{ "fargate 1.3 (64-digit id under a UUID task)", "/ecs/" TASK_UUID "/" ID64,
	  { 0, "docker", ID64, "", "", "", TASK_UUID, 0, 0 } },
	{ "fargate sibling seen from a sidecar's namespace", "/../" FARGATE_ID,
	  { 0, "fargate", FARGATE_ID, "", "", "", TASK, 1, 0 } },
	{ "ecs v2 sibling seen from a sidecar's namespace", "/../docker-" ID64 ".scope",
	  { 0, "docker", ID64, "", "", "", NULL, 1, 0 } },
	{ "fargate id with letters in the digits", "/ecs/" TASK "/" TASK "-12a4", { 0, "ecs", "", "", "", "", TASK, 0, 0 } },
	{ "fargate id outside /ecs", "/system.slice/" FARGATE_ID, HOST },
	{ "ecs with a non-id task", "/ecs/notatask/" ID64, HOST },
	{ "ecstasks slice with a short task id", "/ecstasks.slice/ecstasks-abc.slice", HOST },
	/* Docker with the root as cgroup parent. */
	{ "docker at the cgroup root", "/" ID64, { 0, "docker", ID64, "", "", "", NULL, 0, 0 } },
	{ "docker at the root, sibling in a namespace", "/../" ID64, { 0, "docker", ID64, "", "", "", NULL, 1, 0 } },
	{ "64 hex deeper than the root is no container", "/system.slice/" ID64, HOST },
	/* systemd services and the host. */
	{ "systemd service", "/system.slice/nginx.service", { 0, "systemd", "", "", "", "nginx.service", NULL, 0, 0 } },
	{ "systemd template service", "/system.slice/system-getty.slice/getty@tty1.service",
	  { 0, "systemd", "", "", "", "getty@tty1.service", NULL, 0, 0 } },
	{ "user manager's app (innermost service)",
	  "/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.service",
	  { 0, "systemd", "", "", "", "dbus.service", NULL, 0, 0 } },
	{ "session scope is the host", "/user.slice/user-1000.slice/session-3.scope", HOST },
	{ "root: the host's, or the reader's own in a namespace", "/", ROOT },
	{ "init.scope is the host", "/init.scope", HOST },
	{ "kubepods QoS slice alone is the host", "/kubepods.slice/kubepods-burstable.slice", HOST },
	/* Odd input. */
	{ "empty", "", HOST },
	{ "no slashes", "kubepods", HOST },
	{ "docker- with a short id", "/system.slice/docker-abc.scope", HOST },
	{ "docker- with a 65-digit id", "/system.slice/docker-" ID64 "0.scope", HOST },
	{ "docker- with non-hex", "/system.slice/docker-" "zz" ID64 ".scope", HOST },
	{ "pod slice with no UID", "/kubepods.slice/kubepods-pod.slice", HOST },
	{ "pod slice with a non-hex UID", "/kubepods.slice/kubepods-burstable-podXYZ.slice", HOST },
	{ "pod UID too long",
	  "/kubepods.slice/kubepods-pod" UID_U UID_U ".slice", HOST },
	{ "only colons", "/a:b:c:d", HOST },
	{ "slashes", "////", HOST },
	{ "just (deleted)", " (deleted)", HOST },
};

static void test_paths(void)
{
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct container_id id;
		int rc = container_from_cgroup(paths[i].path, &id);

		check(paths[i].name, rc, &id, &paths[i].w);
	}
}

static const struct tcase files[] = {
	{ "v2 file", "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_U
		     ".slice/cri-containerd-" ID64 ".scope\n",
	  { 0, "containerd", ID64, UID_D, "burstable", "", NULL, 0, 0 } },
	{ "v1 file (docker cgroupfs)",
	  "12:pids:/docker/" ID64 "\n11:memory:/docker/" ID64 "\n10:cpu,cpuacct:/docker/" ID64
	  "\n1:name=systemd:/docker/" ID64 "\n",
	  { 0, "docker", ID64, "", "", "", NULL, 0, 0 } },
	{ "v1 file (kubernetes cgroupfs)",
	  "12:hugetlb:/kubepods/burstable/pod" UID_D "/" ID64 "\n4:memory:/kubepods/burstable/pod" UID_D "/" ID64
	  "\n1:name=systemd:/kubepods/burstable/pod" UID_D "/" ID64 "\n",
	  { 0, "", ID64, UID_D, "burstable", "", NULL, 0, 0 } },
	/* systemd's "hybrid": v1 controllers plus a v2 hierarchy at /sys/fs/cgroup/unified. */
	{ "hybrid, container in the v1 lines, v2 at /",
	  "11:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_U ".slice/crio-" ID64
	  ".scope\n1:name=systemd:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_U
	  ".slice/crio-" ID64 ".scope\n0::/\n",
	  { 0, "cri-o", ID64, UID_D, "besteffort", "", NULL, 0, 0 } },
	{ "hybrid, container in the v2 line only",
	  "5:memory:/\n4:cpu,cpuacct:/\n1:name=systemd:/system.slice/docker.service\n0::/system.slice/docker-" ID64
	  ".scope\n",
	  { 0, "docker", ID64, "", "", "", NULL, 0, 0 } },
	{ "hybrid, v2 wins a tie",
	  "1:name=systemd:/system.slice/a.service\n0::/system.slice/b.service\n",
	  { 0, "systemd", "", "", "", "b.service", NULL, 0, 0 } },
	{ "v1 host", "12:pids:/user.slice/user-1000.slice/session-2.scope\n1:name=systemd:/user.slice\n0::/\n", HOST },
	{ "v2 host, no newline", "0::/init.scope", HOST },
	{ "v2 root: the reader's own cgroup in a namespace", "0::/\n", ROOT },
	{ "v1 all roots", "3:memory:/\n2:cpu:/\n1:name=systemd:/\n0::/\n", ROOT },
	{ "ecs v1 file, every controller", "11:memory:/ecs/" TASK "/" ID64 "\n4:cpu,cpuacct:/ecs/" TASK "/" ID64
	  "\n1:name=systemd:/ecs/" TASK "/" ID64 "\n0::/\n",
	  { 0, "docker", ID64, "", "", "", TASK, 0, 0 } },
	{ "ecs v2 file", "0::/ecstasks.slice/ecstasks-" TASK ".slice/docker-" ID64 ".scope\n",
	  { 0, "docker", ID64, "", "", "", TASK, 0, 0 } },
	{ "fargate 1.4 file", "11:memory:/ecs/" TASK "/" FARGATE_ID "\n1:name=systemd:/ecs/" TASK "/" FARGATE_ID
	  "\n0::/ecs/" TASK "/" FARGATE_ID "\n",
	  { 0, "fargate", FARGATE_ID, "", "", "", TASK, 0, 0 } },
	{ "garbage", "garbage\n\n\n::\n0:\n:::::\n", HOST },
	{ "empty file", "", HOST },
	{ "path of 5000 bytes skipped, next line read",
	  NULL /* built at run time */, { 0, "docker", ID64, "", "", "", NULL, 0, 0 } },
};

static void test_files(void)
{
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct container_id id;
		char *built = NULL;
		const char *text = files[i].path;
		int rc;

		if (!text) {
			built = malloc(6000);
			memcpy(built, "0::/", 4);
			memset(built + 4, 'a', 5000);
			strcpy(built + 5004, "\n3:memory:/docker/" ID64 "\n");
			text = built;
		}
		rc = container_from_proc_cgroup(text, &id);
		check(files[i].name, rc, &id, &files[i].w);
		free(built);
	}
}

/*
 * Slurm's hierarchies, as its cgroup plugins write them (src/plugins/cgroup/v1/xcgroup.c, v2/cgroup_v2.c):
 * a case is a cgroup path, or a /proc/PID/cgroup text when it has a newline.
 */
struct slurm_case {
	const char *name, *text;
	struct want w;
	const char *job, *step, *uid; /* NULL: "" */
};

#define SLURM(job, step, uid) { 0, "slurm", "", "", "", "", NULL, 0, 0 }, job, step, uid
#define NOT_SLURM HOST, NULL, NULL, NULL
#define SLUID "sEKNKTV3WPV500"
#define V2SCOPE "/system.slice/slurmstepd.scope"

static const struct slurm_case slurm_cases[] = {
	/* cgroup v1: /slurm/uid_<uid>/job_<job>/step_<step>/task_<n>, in each controller Slurm manages. */
	{ "slurm v1 task", "/slurm/uid_1000/job_4242/step_0/task_3", SLURM("4242", "0", "1000") },
	{ "slurm v1 batch step", "/slurm/uid_1000/job_4242/step_batch/task_0", SLURM("4242", "batch", "1000") },
	{ "slurm v1 extern step", "/slurm/uid_1000/job_4242/step_extern", SLURM("4242", "extern", "1000") },
	{ "slurm v1 interactive step", "/slurm/uid_1000/job_4242/step_interactive/task_0",
	  SLURM("4242", "interactive", "1000") },
	{ "slurm v1 heterogeneous job's component", "/slurm/uid_0/job_77/step_1+2/task_0", SLURM("77", "1+2", "0") },
	{ "slurm v1 job level", "/slurm/uid_1000/job_4242", SLURM("4242", NULL, "1000") },
	{ "slurm v1 step level", "/slurm/uid_1000/job_4242/step_12", SLURM("4242", "12", "1000") },
	{ "slurm v1 multiple slurmd (slurm_<node>)", "/slurm_node07/uid_1000/job_4242/step_0/task_0",
	  SLURM("4242", "0", "1000") },
	{ "slurm v1 largest job id", "/slurm/uid_4294967295/job_4294967295/step_4294967295+4294967295/task_0",
	  SLURM("4294967295", "4294967295+4294967295", "4294967295") },
	{ "slurm v1 file: every controller, name=systemd is slurmd's unit",
	  "12:pids:/system.slice/slurmd.service\n11:memory:/slurm/uid_1000/job_4242/step_0/task_1\n"
	  "8:devices:/slurm/uid_1000/job_4242/step_0\n6:cpuset:/slurm/uid_1000/job_4242/step_0\n"
	  "4:freezer:/slurm/uid_1000/job_4242/step_0\n3:cpu,cpuacct:/slurm/uid_1000/job_4242/step_0/task_1\n"
	  "1:name=systemd:/system.slice/slurmd.service\n",
	  SLURM("4242", "0", "1000") },
	/* cgroup v2: <slice>/slurmstepd.scope/job_<job>/step_<step>/{user/task_<n>,slurm}; no uid in the path. */
	{ "slurm v2 task", V2SCOPE "/job_4242/step_0/user/task_0", SLURM("4242", "0", NULL) },
	{ "slurm v2 task_special", V2SCOPE "/job_4242/step_0/user/task_special", SLURM("4242", "0", NULL) },
	{ "slurm v2 the step's slurmstepd", V2SCOPE "/job_4242/step_batch/slurm", SLURM("4242", "batch", NULL) },
	{ "slurm v2 extern step", V2SCOPE "/job_4242/step_extern/user/task_0", SLURM("4242", "extern", NULL) },
	{ "slurm v2 multiple slurmd (<node>_slurmstepd.scope)",
	  "/system.slice/node07_slurmstepd.scope/job_4242/step_3/user/task_1", SLURM("4242", "3", NULL) },
	{ "slurm v2 another CgroupSlice", "/hpc.slice/slurmstepd.scope/job_9/step_0/user/task_0",
	  SLURM("9", "0", NULL) },
	{ "slurm v2 26.05: the SLUID", V2SCOPE "/" SLUID "/step_0/user/task_0", SLURM(SLUID, "0", NULL) },
	{ "slurm v2 file", "0::" V2SCOPE "/job_4242/step_0/user/task_0\n", SLURM("4242", "0", NULL) },
	{ "slurm v2 seen from a cgroup namespace", "/../../slurmstepd.scope/job_5/step_0/user/task_0",
	  { 0, "slurm", "", "", "", "", NULL, 2, 0 }, "5", "0", NULL },
	{ "slurm v2 the stepds' waiting area", V2SCOPE "/system", NOT_SLURM },
	{ "slurmd's own unit", "/system.slice/slurmd.service",
	  { 0, "systemd", "", "", "", "slurmd.service", NULL, 0, 0 }, NULL, NULL, NULL },
	{ "a unit named slurm_*", "/system.slice/slurm_exporter.service",
	  { 0, "systemd", "", "", "", "slurm_exporter.service", NULL, 0, 0 }, NULL, NULL, NULL },
	/* Nesting: the innermost wins; a container keeps the job it is in, a job drops slurmd's container. */
	{ "a container in a job's task keeps the job", V2SCOPE "/job_4242/step_0/user/task_0/libpod-" ID64 ".scope",
	  { 0, "podman", ID64, "", "", "", NULL, 0, 0 }, "4242", "0", NULL },
	{ "a job in a pod's container (slurmd in a pod): the job and the pod",
	  "/kubepods/burstable/pod" UID_D "/" ID64 "/slurm/uid_1000/job_4242/step_0/task_0",
	  { 0, "slurm", "", UID_D, "burstable", "", NULL, 0, 0 }, "4242", "0", "1000" },
	{ "a job in a pod, v2 systemd driver",
	  "/kubepods.slice/kubepods-pod" UID_U ".slice/cri-containerd-" ID64 ".scope/system.slice/slurmstepd.scope/"
	  "job_8/step_0/user/task_0",
	  { 0, "slurm", "", UID_D, "guaranteed", "", NULL, 0, 0 }, "8", "0", NULL },
	{ "v1 file: a job's line over a container's unit line",
	  "4:memory:/slurm/uid_1/job_2/step_0/task_0\n1:name=systemd:/system.slice/slurmd.service\n",
	  SLURM("2", "0", "1") },
	/* Malformed: no job, or the job without what is not Slurm's. */
	{ "job_ with no number", "/slurm/uid_1000/job_/step_0/task_0", NOT_SLURM },
	{ "job_ with letters", "/slurm/uid_1000/job_12a/step_0", NOT_SLURM },
	{ "job id with a leading zero", "/slurm/uid_1000/job_0042/step_0", NOT_SLURM },
	{ "job id past 32 bits", "/slurm/uid_1000/job_4294967296/step_0", NOT_SLURM },
	{ "job id of 40 digits", "/slurm/uid_1000/job_1234567890123456789012345678901234567890/step_0", NOT_SLURM },
	{ "v1 job without uid_", "/slurm/job_4242/step_0/task_0", NOT_SLURM },
	{ "uid_ garbage", "/slurm/uid_x/job_4242/step_0", NOT_SLURM },
	{ "v1 job not under slurm", "/uid_1000/job_4242/step_0", NOT_SLURM },
	{ "v2 job not under the stepds' scope", "/system.slice/job_4242/step_0/user/task_0", NOT_SLURM },
	{ "a SLUID one digit short", V2SCOPE "/sEKNKTV3WPV50/step_0", NOT_SLURM },
	{ "a SLUID with a letter base 32 leaves out", V2SCOPE "/sEKNKTV3WPVI00/step_0", NOT_SLURM },
	{ "step_ garbage: the job, no step", "/slurm/uid_1000/job_4242/step_zz/task_0", SLURM("4242", NULL, "1000") },
	{ "step_ empty", V2SCOPE "/job_4242/step_/user/task_0", SLURM("4242", NULL, NULL) },
	{ "step_ half a heterogeneous id", V2SCOPE "/job_4242/step_1+/user/task_0", SLURM("4242", NULL, NULL) },
	{ "step_ of 300 bytes", "/slurm/uid_1/job_2/step_"
	  "111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111"
	  "111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111"
	  "1111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111111",
	  SLURM("2", NULL, "1") },
};

static void test_slurm(void)
{
	for (size_t i = 0; i < sizeof(slurm_cases) / sizeof(slurm_cases[0]); i++) {
		const struct slurm_case *c = &slurm_cases[i];
		struct container_id id;
		char n[256];
		int rc = strchr(c->text, '\n') ? container_from_proc_cgroup(c->text, &id)
					       : container_from_cgroup(c->text, &id);

		check(c->name, rc, &id, &c->w);
		snprintf(n, sizeof(n), "%s: hpc_job", c->name);
		is_str(id.hpc_job, c->job ? c->job : "", n);
		snprintf(n, sizeof(n), "%s: hpc_step", c->name);
		is_str(id.hpc_step, c->step ? c->step : "", n);
		snprintf(n, sizeof(n), "%s: hpc_uid", c->name);
		is_str(id.hpc_uid, c->uid ? c->uid : "", n);
	}
}

/* NULL arguments and random bytes: no crash, every field NUL-terminated within its size. */
static void test_odd(void)
{
	struct container_id id;
	static const char alphabet[] = "/-_.:0123456789abcdefkubepods.slicepodcri-containerd-crio-docker.scope \n";
	char buf[512];
	unsigned seed = 13;
	int bad = 0;

	is_int(container_from_cgroup(NULL, &id), -ENOENT, "NULL path is the host");
	is_int(container_from_cgroup("/", NULL), -EINVAL, "NULL id is -EINVAL");
	is_int(container_from_proc_cgroup(NULL, &id), -ENOENT, "NULL text is the host");
	is_int(container_from_proc_cgroup("0::/", NULL), -EINVAL, "NULL id is -EINVAL (file)");
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(rand_r(&seed) % (sizeof(buf) - 1));

		for (size_t k = 0; k < n; k++)
			buf[k] = (i & 1) ? (char)(rand_r(&seed) & 0xff) : alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		buf[n] = '\0';
		if (i & 2)
			container_from_proc_cgroup(buf, &id);
		else
			container_from_cgroup(buf, &id);
		if (!memchr(id.runtime, 0, sizeof(id.runtime)) || !memchr(id.id, 0, sizeof(id.id)) ||
		    !memchr(id.pod_uid, 0, sizeof(id.pod_uid)) || !memchr(id.qos, 0, sizeof(id.qos)) ||
		    !memchr(id.unit, 0, sizeof(id.unit)))
			bad++;
	}
	is_int(bad, 0, "20000 random paths: every field terminated");
}

static void names_of(struct containers *c, const char *runtime, const char *cid, const char *uid, int64_t now,
		     struct container_names *n)
{
	struct container_id id = { 0 };

	snprintf(id.runtime, sizeof(id.runtime), "%s", runtime);
	snprintf(id.id, sizeof(id.id), "%s", cid);
	snprintf(id.pod_uid, sizeof(id.pod_uid), "%s", uid);
	containers_names(c, &id, now, n);
}

static void is_names(const struct container_names *n, const char *ns, const char *pod, const char *name,
		     const char *what)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s: namespace", what);
	is_str(n->ns, ns, buf);
	snprintf(buf, sizeof(buf), "%s: pod", what);
	is_str(n->pod, pod, buf);
	snprintf(buf, sizeof(buf), "%s: container name", what);
	is_str(n->name, name, buf);
}

#define A_UID "7c1e3a52-8f0b-4d6e-9a21-3b5c7d9e1f20"
#define B_UID "2b4d6f80-1a3c-4e5f-8a7b-9c0d1e2f3a4b"
#define C_UID "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
#define HEX32(x) x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x x

/* Names from the fixture trees' state files. */
static void test_names(void)
{
	struct containers *c;
	struct container_names n;

	c = containers_new(&(struct container_opts){ .rootfs = FIXTURES "/v2-systemd/rootfs" });
	is_str(containers_opts(c)->run, FIXTURES "/v2-systemd/rootfs/run", "--path.run defaults to ROOTFS/run");
	is_str(containers_opts(c)->cgroupfs, FIXTURES "/v2-systemd/rootfs/sys/fs/cgroup",
	       "--path.cgroupfs defaults to ROOTFS/sys/fs/cgroup");
	names_of(c, "containerd", HEX32("a1"), A_UID, 0, &n);
	is_names(&n, "ml", "trainer-0", "pytorch", "containerd task bundle annotations");
	names_of(c, "cri-o", HEX32("b2"), B_UID, 0, &n);
	is_names(&n, "serving", "infer-7d9f", "triton", "CRI-O userdata config.json annotations");
	names_of(c, "docker", HEX32("c4"), C_UID, 0, &n);
	is_names(&n, "research", "notebook", "jupyter", "Docker config.v2.json dockershim labels");
	names_of(c, "cri-o", "", B_UID, 0, &n);
	is_names(&n, "serving", "infer-7d9f", "", "a pod's process in no container (conmon): the pod's names");
	names_of(c, "containerd", HEX32("d5"), "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9", 0, &n);
	is_names(&n, "", "", "", "a deleted container: no names");
	names_of(c, "podman", HEX32("a1"), "", 0, &n);
	is_names(&n, "ml", "trainer-0", "pytorch", "cached by container id");
	containers_free(c);

	c = containers_new(&(struct container_opts){ .rootfs = FIXTURES "/v1-cgroupfs/rootfs/" });
	names_of(c, "", HEX32("3c"), "11111111-2222-4333-8444-555555555555", 0, &n);
	is_names(&n, "jobs", "batch-job-x7k2p", "worker", "cgroupfs bare id: found in containerd's bundles");
	is_str(n.runtime, "containerd", "cgroupfs bare id: the runtime that has it");
	names_of(c, "", HEX32("4d"), "66666666-7777-4888-9999-aaaaaaaaaaaa", 0, &n);
	is_names(&n, "serving", "llm-0", "engine", "cgroupfs bare id: CRI-O's storage root");
	is_str(n.runtime, "cri-o", "cgroupfs bare id: CRI-O");
	names_of(c, "docker", HEX32("5e"), "", 0, &n);
	is_names(&n, "", "", "web", "plain Docker: the container's name");
	containers_free(c);
}

/* Make dir (and parents) under root; write text to root/rel. */
static void put_file(const char *root, const char *rel, const char *text)
{
	char path[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		printf("# cannot write %s\n", path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

/* A container whose state appears later: looked at again only after 10 s. Odd state files: no names, no hang. */
static void test_retry_and_odd_files(void)
{
	char root[] = "/tmp/accel-ctr.XXXXXX", path[1024];
	struct containers *c;
	struct container_names n;
	const char *bundle = "run/containerd/io.containerd.runtime.v2.task/k8s.io/" HEX32("ab") "/config.json";

	if (!mkdtemp(root)) {
		printf("# mkdtemp: %s\n", strerror(errno));
		exit(2);
	}
	c = containers_new(&(struct container_opts){ .rootfs = root });
	names_of(c, "containerd", HEX32("ab"), A_UID, 100 * SEC, &n);
	is_names(&n, "", "", "", "no state file yet: no names");
	put_file(root, bundle, "{\"annotations\": {\"io.kubernetes.cri.sandbox-name\": \"late\", "
			       "\"io.kubernetes.cri.sandbox-namespace\": \"ns\", "
			       "\"io.kubernetes.cri.container-name\": \"c\"}}");
	names_of(c, "containerd", HEX32("ab"), A_UID, 105 * SEC, &n);
	is_names(&n, "", "", "", "5 s later: not looked at again yet");
	names_of(c, "containerd", HEX32("ab"), A_UID, 110 * SEC, &n);
	is_names(&n, "ns", "late", "c", "10 s later: found");

	/* Garbage, a FIFO, a directory, a JSON array: none names anything, none hangs. */
	put_file(root, "run/containers/storage/overlay-containers/" HEX32("cd") "/userdata/config.json", "{not json");
	names_of(c, "cri-o", HEX32("cd"), "", 0, &n);
	is_names(&n, "", "", "", "garbage config.json: no names");
	put_file(root, "var/lib/docker/containers/" HEX32("ef") "/x", "");
	snprintf(path, sizeof(path), "%s/var/lib/docker/containers/%s/config.v2.json", root, HEX32("ef"));
	ok(mkfifo(path, 0600) == 0, "a FIFO where config.v2.json belongs");
	names_of(c, "docker", HEX32("ef"), "", 0, &n);
	is_names(&n, "", "", "", "a FIFO: refused at once, no names");
	snprintf(path, sizeof(path), "%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json", root,
		 HEX32("fe"));
	put_file(root, "run/containerd/io.containerd.runtime.v2.task/k8s.io/" HEX32("fe") "/config.json/x", "");
	names_of(c, "containerd", HEX32("fe"), "", 0, &n);
	is_names(&n, "", "", "", "a directory: no names");
	put_file(root, "var/lib/docker/containers/" HEX32("99") "/config.v2.json", "[1, 2]");
	names_of(c, "docker", HEX32("99"), "", 0, &n);
	is_names(&n, "", "", "", "a JSON array: no names");
	/* Read into room for its size: one just under the 4 MiB cap is read whole, one over it refused. */
	for (int over = 0; over <= 1; over++) {
		const char *id = over ? HEX32("77") : HEX32("66");
		char rel[256];
		size_t pad = (4u << 20) - 200 + (over ? 400 : 0);
		char *text = xmalloc(pad + 200);
		int len = snprintf(text, 200, "{\"annotations\": {\"io.kubernetes.cri.sandbox-name\": \"big%d\", "
					      "\"io.kubernetes.cri.sandbox-namespace\": \"ns\"}",
				   over);

		memset(text + len, ' ', pad - (size_t)len);
		snprintf(text + pad, 200, "}");
		snprintf(rel, sizeof(rel), "run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json", id);
		put_file(root, rel, text);
		free(text);
		names_of(c, "containerd", id, "", 0, &n);
		if (over)
			is_names(&n, "", "", "", "a state file over 4 MiB: refused, no names");
		else
			is_names(&n, "ns", "big0", "", "a state file just under 4 MiB: read whole");
	}
	containers_free(c);
	snprintf(path, sizeof(path), "rm -rf -- '%s'", root);
	if (system(path) != 0)
		printf("# could not remove %s\n", root);
}

static void test_json(void)
{
	struct container_id id;
	struct container_names n = { 0 };
	json_t *o, *labels;
	char *s;

	container_from_cgroup("/system.slice/nginx.service", &id);
	o = container_json(&id, &n);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"runtime\":\"systemd\",\"unit\":\"nginx.service\"}", "a unit: runtime and unit only");
	free(s);
	json_decref(o);
	container_from_cgroup("/kubepods/burstable/pod" UID_D "/" ID64, &id);
	snprintf(n.runtime, sizeof(n.runtime), "containerd");
	snprintf(n.pod, sizeof(n.pod), "p");
	o = container_json(&id, &n);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"id\":\"" ID64 "\",\"pod\":\"p\",\"pod_uid\":\"" UID_D "\",\"qos\":\"burstable\","
		  "\"runtime\":\"containerd\"}",
	       "cgroupfs id: the runtime from its state; unknown names absent");
	free(s);
	json_decref(o);

	/* ECS: the agent's Docker labels name the container and its task; a cluster ARN becomes its name. */
	memset(&n, 0, sizeof(n));
	labels = json_pack("{s:s, s:s, s:s, s:s, s:s}", "com.amazonaws.ecs.cluster",
			   "arn:aws:ecs:us-west-2:111122223333:cluster/ml", "com.amazonaws.ecs.container-name", "app",
			   "com.amazonaws.ecs.task-arn", "arn:aws:ecs:us-west-2:111122223333:task/ml/" TASK,
			   "com.amazonaws.ecs.task-definition-family", "infer", "com.amazonaws.ecs.task-definition-version",
			   "12");
	container_names_ecs_labels(labels, &n);
	container_names_ecs_labels(NULL, &n); /* no labels: nothing changes */
	container_from_cgroup("/ecs/" TASK "/" ID64, &id);
	o = container_json(&id, &n);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"ecs_cluster\":\"ml\",\"ecs_task_arn\":\"arn:aws:ecs:us-west-2:111122223333:task/ml/" TASK "\","
		  "\"ecs_task_family\":\"infer\",\"ecs_task_id\":\"" TASK "\",\"ecs_task_revision\":\"12\",\"id\":\"" ID64
		  "\",\"name\":\"app\",\"runtime\":\"docker\"}",
	       "ecs: the labels' names and task, the cluster's name from its ARN");
	free(s);
	json_decref(o);
	/* A container the agent started without a task cgroup (/docker/<id>): its task id from the ARN. */
	container_from_cgroup("/docker/" ID64, &id);
	o = container_json(&id, &n);
	is_str(json_string_value(json_object_get(o, "ecs_task_id")), TASK, "ecs without a task cgroup: the ARN's task id");
	json_decref(o);
	json_decref(labels);

	/* Slurm: the job's fields, no names (the path says all there is). */
	container_from_cgroup("/slurm/uid_1000/job_4242/step_batch/task_0", &id);
	o = container_json(&id, NULL);
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"hpc_job\":\"4242\",\"hpc_step\":\"batch\",\"hpc_uid\":\"1000\",\"runtime\":\"slurm\"}",
	       "slurm: runtime, job, step and uid");
	free(s);
	json_decref(o);
}

/* Whether any device object (or MIG device) of group g has a "pods" or "containers" sum. */
static int has_sums(json_t *g)
{
	const char *k, *mk;
	json_t *dev, *mig;

	json_object_foreach(json_object_get(g, "devices"), k, dev) {
		if (json_object_get(dev, "pods") || json_object_get(dev, "containers"))
			return 1;
		json_object_foreach(json_object_get(dev, "mig_devices"), mk, mig)
			if (json_object_get(mig, "pods") || json_object_get(mig, "containers"))
				return 1;
	}
	return 0;
}

/* The pids group g's devices (and MIG devices) name, as a device collector hands them over: at most 64. */
static size_t named_pids(json_t *g, pid_t pids[64])
{
	const char *k, *mk, *pk;
	json_t *dev, *mig, *v;
	size_t n = 0, i;

	json_object_foreach(json_object_get(g, "devices"), k, dev) {
		json_t *objs[8] = { dev };
		size_t nobj = 1;

		json_object_foreach(json_object_get(dev, "mig_devices"), mk, mig)
			if (nobj < 8)
				objs[nobj++] = mig;
		for (size_t o = 0; o < nobj; o++) {
			json_object_foreach(json_object_get(objs[o], "processes"), pk, v)
				if (n < 64)
					pids[n++] = (pid_t)atoi(pk);
			json_array_foreach(json_object_get(objs[o], "pids"), i, v)
				if (n < 64)
					pids[n++] = (pid_t)json_integer_value(v);
		}
	}
	return n;
}

/*
 * One report with group g: the producer's part (the report's identities of
 * the pids g names, a new reference; g itself gains no sums), then the
 * reader's (*read: the group as a sink reads the line, with the sums
 * report_derive makes).
 */
static json_t *annotate(struct host *h, json_t *g, json_t **read)
{
	json_t *dd = json_pack("[{s:s, s:{s:O}}]", "device_type", "gpu", "report", "g", g), *line, *ids;
	pid_t pids[64];
	size_t n = named_pids(g, pids);

	ids = host_identities(h, pids, n);
	ok(!has_sums(g), "the producer writes no sums into the group (format 3)");
	/* the line as a sink parses it: its own objects */
	line = json_pack("{s:{s:i}, s:o, s:o*}", "monitor", "format_version", 3, "device_data", json_deep_copy(dd),
			 "identities", json_deep_copy(ids));
	report_derive(line);
	*read = json_incref(json_object_get(json_object_get(json_array_get(json_object_get(line, "device_data"), 0),
							    "report"), "g"));
	json_decref(line);
	json_decref(dd);
	return ids ? ids : json_pack("{s:{}, s:{}, s:{}}", "containers", "pods", "processes");
}

/*
 * The per-device attribution on the v2 fixture's /proc: each identity
 * once, in the report's identities; and the sums the reader derives from
 * it: sums, engines, pids, and no stale entry.
 */
static void test_annotate(void)
{
	struct host *h = host_new(&(struct host_opts){ .procfs = FIXTURES "/v2-systemd/proc",
						       .ctr = { .rootfs = FIXTURES "/v2-systemd/rootfs" } },
				  NULL);
	json_t *g, *dev, *pods, *ids, *r;
	char *s;

	g = json_pack("{s:{s:{s:{s:I, s:I, s:I, s:I, s:I}}, s:{s:{s:{s:f, s:f}, s:{s:f}}}, s:{s:[i, i, i]}}}",
		      "devices", "0", "processes", "1001", (json_int_t)4000, "1002", (json_int_t)2000, "1006",
		      (json_int_t)10, "1004", (json_int_t)300, "1099", (json_int_t)7, "1",
		      "processes", "1002", "gfx", 12.5, "compute", 50.0, "1006", "gfx", 1.5, "2", "pids", 1005, 1003, 1099);
	host_snapshot(h, &(struct cycle){ .mono_ns = 1 });
	ids = annotate(h, g, &r);
	dev = json_object_get(json_object_get(r, "devices"), "0");
	pods = json_object_get(dev, "pods");
	is_int(json_object_size(pods), 2, "memory: two pods (the host process and the exited one in none)");
	is_int(json_integer_value(json_object_get(json_object_get(pods, B_UID), "memory_bytes")), 2010,
	       "memory: a pod sums its container's process and its conmon");
	is_int(json_object_size(json_object_get(dev, "containers")), 2, "memory: two containers (conmon is in none)");
	ok(!json_object_get(dev, "process_containers"), "memory: no identity on the device (format 2)");
	s = json_dumps(ids, JSON_COMPACT | JSON_SORT_KEYS);
	ok(s && strstr(s, "[1001]") && strstr(s, "1006") && !strstr(s, "1004") && !strstr(s, "1099") &&
		   !strstr(s, "\"id\""),
	   "identities: the pods' processes only, each container keyed by its id (%s)", s ? s : "");
	free(s);
	s = json_dumps(json_object_get(json_object_get(ids, "pods"), B_UID), JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"namespace\":\"serving\",\"pod\":\"infer-7d9f\",\"qos\":\"besteffort\"}",
	       "identities: a pod's names once");
	free(s);
	{
		const char *cid;
		json_t *c;
		int n = 0, named = 0;

		json_object_foreach(json_object_get(ids, "containers"), cid, c) {
			n++;
			named += json_object_get(c, "pod") || json_object_get(c, "namespace") || json_object_get(c, "qos");
		}
		ok(n == 3 && !named, "identities: a container names its pod by UID only (%d of %d named)", named, n);
	}
	dev = json_object_get(json_object_get(r, "devices"), "1");
	s = json_dumps(json_object_get(json_object_get(dev, "pods"), B_UID), JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"engines\":{\"compute\":50.0,\"gfx\":14.0},\"pids\":[1002,1006]}",
	       "engines: summed per engine over the pod's processes, no names");
	free(s);
	dev = json_object_get(json_object_get(r, "devices"), "2");
	s = json_dumps(json_object_get(json_object_get(ids, "processes"), "1005"), JSON_COMPACT | JSON_SORT_KEYS);
	ok(s && strstr(s, "nginx.service") && !json_object_get(dev, "pods") && !json_object_get(dev, "process_containers"),
	   "pids (ncs2): a unit's process in identities.processes, no sums (%s)", s ? s : "");
	free(s);
	json_decref(ids);
	json_decref(r);
	/* device_power's split: the processes' joules summed as energy_joules (not memory_bytes). */
	json_object_set_new(json_object_get(g, "devices"), "3",
			    json_pack("{s:s, s:{s:f, s:f, s:f}}", "energy_attribution", "utilization", "processes", "1001",
				      2.5, "1002", 1.25, "1006", 0.5));
	json_decref(annotate(h, g, &r));
	dev = json_object_get(json_object_get(r, "devices"), "3");
	s = json_dumps(json_object_get(json_object_get(dev, "pods"), B_UID), JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"energy_joules\":1.75,\"pids\":[1002,1006]}", "energy: a pod's joules are its processes' sum");
	free(s);
	json_decref(r);
	/* The collector keeps its device objects: the next cycle's sums and members are that cycle's alone. */
	dev = json_object_get(json_object_get(g, "devices"), "0");
	json_object_set_new(dev, "processes", json_pack("{s:I, s:I}", "1002", (json_int_t)500, "1004", (json_int_t)1));
	host_snapshot(h, &(struct cycle){ .mono_ns = 2 });
	json_decref(annotate(h, g, &r));
	pods = json_object_get(json_object_get(json_object_get(r, "devices"), "0"), "pods");
	s = json_dumps(json_object_get(pods, B_UID), JSON_COMPACT | JSON_SORT_KEYS);
	is_str(s, "{\"memory_bytes\":500,\"pids\":[1002]}", "next cycle: the pod's sum and members are this cycle's only");
	free(s);
	is_int(json_object_size(pods), 1, "next cycle: a pod none of whose processes is left is gone");
	is_int(json_object_size(json_object_get(json_object_get(json_object_get(r, "devices"), "0"), "containers")), 1,
	       "next cycle: one container left");
	json_decref(r);
	/* A later cycle without those processes leaves nothing stale. */
	json_object_set_new(dev, "processes", json_pack("{s:I}", "1004", (json_int_t)1));
	host_snapshot(h, &(struct cycle){ .mono_ns = 3 });
	json_decref(annotate(h, g, &r));
	dev = json_object_get(json_object_get(r, "devices"), "0");
	ok(!json_object_get(dev, "pods") && !json_object_get(dev, "containers") &&
	   !json_object_get(dev, "process_containers"), "a later cycle with no pod's process: no sums");
	json_decref(r);
	json_decref(g);
	host_free(h);
}

/* An identity and its names, for struct ident_cb's lookup. */
struct ident {
	struct container_id id;
	struct container_names n;
	int have; /* table_ident: the process has this identity */
};

/* struct ident_cb's lookup over one identity the test replaces (process 7 only). */
static int one_ident(void *ud, pid_t pid, const struct container_id **id, const struct container_names **n)
{
	struct ident *one = ud;

	*id = &one->id;
	*n = &one->n;
	return pid == 7;
}

/* one = a container c1 of pod u1 (containerd), the pod named ns/web. */
static void pod_ident(struct ident *one, const char *ns)
{
	memset(one, 0, sizeof(*one));
	snprintf(one->id.runtime, sizeof(one->id.runtime), "containerd");
	snprintf(one->id.id, sizeof(one->id.id), "c1");
	snprintf(one->id.pod_uid, sizeof(one->id.pod_uid), "u1");
	snprintf(one->n.pod, sizeof(one->n.pod), "web");
	snprintf(one->n.ns, sizeof(one->n.ns), "%s", ns);
}

/* struct ident_cb's pod: what it was told, in pod_seen, and a mark in the entry. */
static char pod_seen[128];

static void seen_pod(void *ud, const char *uid, const char *ns, const char *name, json_t *entry)
{
	size_t n = strlen(pod_seen);

	(void)ud;
	snprintf(pod_seen + n, sizeof(pod_seen) - n, "%s%s %s/%s", n ? "; " : "", uid, ns, name);
	json_object_set_new(entry, "told", json_true());
}

/*
 * The report's identities are each report's: a pod renamed between two
 * reports has its new names in the next one.
 */
static void test_annotate_renamed(void)
{
	struct ident ident;
	const pid_t seven[] = { 7 };
	struct ident_cb cb = { .lookup = one_ident, .pod = seen_pod, .ud = &ident };
	struct ident_last *last = ident_last_new();
	json_t *ids;
	char *s;

	pod_seen[0] = 0;
	pod_ident(&ident, "old");
	ids = containers_identities(seven, 1, &cb, NULL);
	is_str(json_string_value(json_object_get(json_object_get(json_object_get(ids, "pods"), "u1"), "namespace")),
	       "old", "renamed: the first report's namespace");
	is_str(pod_seen, "u1 old/web", "pod: told of the pod entry with its UID and names");
	ok(json_is_true(json_object_get(json_object_get(json_object_get(ids, "pods"), "u1"), "told")),
	   "pod: what it adds to the entry is in the identities");
	ok(cb.new_containers == 1, "a container the last report did not have: new_containers");
	json_decref(ids);
	pod_ident(&ident, "new");
	ids = containers_identities(seven, 1, &cb, last);
	is_str(json_string_value(json_object_get(json_object_get(json_object_get(ids, "pods"), "u1"), "namespace")),
	       "new", "renamed: the next report's pod, its new namespace");
	ok(!json_object_get(json_object_get(json_object_get(ids, "containers"), "c1"), "namespace"),
	   "renamed: the container names its pod by UID only");
	{
		/* The next report from this one: the unchanged container's entry is taken over, its pids afresh. */
		json_t *prev = ids, *c = json_object_get(json_object_get(prev, "containers"), "c1");

		ids = containers_identities(seven, 1, &cb, last);
		ok(json_object_get(json_object_get(ids, "containers"), "c1") == c, "unchanged: the last report's entry");
		ok(cb.new_containers == 0, "unchanged: no new container");
		s = json_dumps(json_object_get(c, "pids"), JSON_COMPACT);
		is_str(s, "[7]", "unchanged: its pids this report's (once)");
		free(s);
		json_decref(prev);
		prev = ids;
		pod_ident(&ident, "third");
		ids = containers_identities(seven, 1, &cb, last);
		c = json_object_get(json_object_get(ids, "containers"), "c1");
		ok(c != json_object_get(json_object_get(prev, "containers"), "c1") &&
			   !strcmp(json_string_value(json_object_get(json_object_get(json_object_get(ids, "pods"), "u1"),
								     "namespace")), "third"),
		   "changed: a new entry, the pod's new names");
		json_decref(prev);
	}
	json_decref(ids);
	ident_last_free(last);
}

/* struct ident_cb's lookup over a table of identities: process pid is idents[pid - 10], when there is one. */
static struct ident idents[8];

static int table_ident(void *ud, pid_t pid, const struct container_id **id, const struct container_names **n)
{
	(void)ud;
	if (pid < 10 || pid >= 10 + (pid_t)ARRAY_SIZE(idents) || !idents[pid - 10].have)
		return 0;
	*id = &idents[pid - 10].id;
	*n = &idents[pid - 10].n;
	return 1;
}

/* idents[i] = the identity described, every field "" that is not given. */
static struct ident *set_ident(int i, const char *runtime, const char *id, const char *pod_uid, const char *qos)
{
	struct ident *x = &idents[i];

	memset(x, 0, sizeof(*x));
	snprintf(x->id.runtime, sizeof(x->id.runtime), "%s", runtime);
	snprintf(x->id.id, sizeof(x->id.id), "%s", id);
	snprintf(x->id.pod_uid, sizeof(x->id.pod_uid), "%s", pod_uid);
	snprintf(x->id.qos, sizeof(x->id.qos), "%s", qos);
	x->have = 1;
	return x;
}

/*
 * The identities of a mix of processes, as exact text (the keys in the
 * report's order): an ECS container (its task id from the ARN, no task
 * cgroup), two processes of one pod's container, another container of that
 * pod whose names disagree with the pod's entry (it keeps the one that
 * differs), a unit's process, a pod's own process, a Slurm job's process
 * with a value that is not UTF-8 (left out), a process on the host, and
 * pids repeated or out of range (passed over).
 */
static void test_identities_text(void)
{
	const pid_t pids[] = { 10, 11, 12, 11, 0, -3, 13, 14, 15, 16, 17, 0x40000000 };
	struct ident_cb cb = { .lookup = table_ident, .pod = seen_pod };
	struct ident *x;
	json_t *ids;
	char *s;

	memset(idents, 0, sizeof(idents));
	x = set_ident(0, "docker", ID64, "", "");
	snprintf(x->n.name, sizeof(x->n.name), "app");
	snprintf(x->n.ecs_cluster, sizeof(x->n.ecs_cluster), "ml");
	snprintf(x->n.ecs_task_arn, sizeof(x->n.ecs_task_arn), "arn:aws:ecs:us-west-2:111122223333:task/ml/" TASK);
	snprintf(x->n.ecs_task_family, sizeof(x->n.ecs_task_family), "infer");
	snprintf(x->n.ecs_task_revision, sizeof(x->n.ecs_task_revision), "12");
	x = set_ident(1, "", ID64B, UID_D, "burstable"); /* the runtime from the names */
	snprintf(x->n.runtime, sizeof(x->n.runtime), "containerd");
	snprintf(x->n.pod, sizeof(x->n.pod), "web");
	snprintf(x->n.ns, sizeof(x->n.ns), "prod");
	snprintf(x->n.name, sizeof(x->n.name), "app");
	x = set_ident(2, "containerd", "c2", UID_D, "burstable");
	snprintf(x->n.pod, sizeof(x->n.pod), "web");
	snprintf(x->n.ns, sizeof(x->n.ns), "other");
	idents[3] = idents[1];
	set_ident(4, "systemd", "", "", "");
	snprintf(idents[4].id.unit, sizeof(idents[4].id.unit), "nginx.service");
	x = set_ident(5, "", "", "u2", "besteffort");
	snprintf(x->n.pod, sizeof(x->n.pod), "solo");
	snprintf(x->n.ns, sizeof(x->n.ns), "default");
	x = set_ident(6, "slurm", "", "", "");
	snprintf(x->id.hpc_job, sizeof(x->id.hpc_job), "42");
	snprintf(x->id.hpc_step, sizeof(x->id.hpc_step), "bad\xff");
	pod_seen[0] = 0;
	ids = containers_identities(pids, ARRAY_SIZE(pids), &cb, NULL);
	s = json_dumps(ids, JSON_COMPACT);
	is_str(s,
	       "{\"containers\":{"
	       "\"" ID64 "\":{\"runtime\":\"docker\",\"name\":\"app\",\"ecs_cluster\":\"ml\",\"ecs_task_arn\":"
	       "\"arn:aws:ecs:us-west-2:111122223333:task/ml/" TASK "\",\"ecs_task_id\":\"" TASK "\","
	       "\"ecs_task_family\":\"infer\",\"ecs_task_revision\":\"12\",\"pids\":[10]},"
	       "\"" ID64B "\":{\"runtime\":\"containerd\",\"pod_uid\":\"" UID_D "\",\"name\":\"app\",\"pids\":[11,13]},"
	       "\"c2\":{\"runtime\":\"containerd\",\"pod_uid\":\"" UID_D "\",\"namespace\":\"other\",\"pids\":[12]}},"
	       "\"pods\":{"
	       "\"" UID_D "\":{\"pod\":\"web\",\"namespace\":\"prod\",\"qos\":\"burstable\",\"told\":true},"
	       "\"u2\":{\"pod\":\"solo\",\"namespace\":\"default\",\"qos\":\"besteffort\",\"told\":true}},"
	       "\"processes\":{"
	       "\"14\":{\"runtime\":\"systemd\",\"unit\":\"nginx.service\"},"
	       "\"15\":{\"pod_uid\":\"u2\",\"pod\":\"solo\",\"namespace\":\"default\",\"qos\":\"besteffort\"},"
	       "\"16\":{\"runtime\":\"slurm\",\"hpc_job\":\"42\"}}}",
	       "identities: each entry's fields in the report's order, the empty and the non-UTF-8 left out");
	free(s);
	is_str(pod_seen, UID_D " prod/web; u2 default/solo", "identities: each pod told once, with its first names");
	ok(cb.new_containers == 1, "identities: containers new to the last report");
	json_decref(ids);
	ok(!containers_identities((const pid_t[]){ 17, 9, 0 }, 3, &(struct ident_cb){ .lookup = table_ident }, NULL),
	   "identities: no process with an identity: none");
}

/*
 * A report's entry is the last report's object while its values are the
 * same (a container's pids afresh), a new one when a value changed; a
 * container gone from one report is new again in the next.
 */
static void test_identities_reuse(void)
{
	const pid_t pids[] = { 10, 11, 14 };
	struct ident_cb cb = { .lookup = table_ident };
	struct ident_last *last = ident_last_new();
	json_t *a, *b, *c, *ctr, *proc, *ctr2;
	char *s;

	memset(idents, 0, sizeof(idents));
	snprintf(set_ident(0, "containerd", "c1", "u1", "guaranteed")->n.name, sizeof(idents[0].n.name), "app");
	set_ident(1, "containerd", "c2", "u1", "guaranteed");
	snprintf(set_ident(4, "systemd", "", "", "")->id.unit, sizeof(idents[4].id.unit), "a.service");
	a = containers_identities(pids, 3, &cb, last);
	ctr = json_object_get(json_object_get(a, "containers"), "c1");
	ctr2 = json_object_get(json_object_get(a, "containers"), "c2");
	proc = json_object_get(json_object_get(a, "processes"), "14");
	b = containers_identities((const pid_t[]){ 11, 14, 10 }, 3, &cb, last);
	ok(json_object_get(json_object_get(b, "containers"), "c1") == ctr &&
		   json_object_get(json_object_get(b, "containers"), "c2") == ctr2,
	   "reuse: unchanged containers: the last report's entries");
	ok(json_object_get(json_object_get(b, "processes"), "14") == proc, "reuse: an unchanged process: its entry");
	ok(cb.new_containers == 0, "reuse: no new container");
	s = json_dumps(b, JSON_COMPACT);
	is_str(s,
	       "{\"containers\":{\"c2\":{\"runtime\":\"containerd\",\"pod_uid\":\"u1\",\"pids\":[11]},"
	       "\"c1\":{\"runtime\":\"containerd\",\"pod_uid\":\"u1\",\"name\":\"app\",\"pids\":[10]}},"
	       "\"pods\":{\"u1\":{\"qos\":\"guaranteed\"}},"
	       "\"processes\":{\"14\":{\"runtime\":\"systemd\",\"unit\":\"a.service\"}}}",
	       "reuse: the entries as made afresh, in this report's order");
	free(s);
	json_decref(a);
	snprintf(idents[0].n.name, sizeof(idents[0].n.name), "app2");
	c = containers_identities((const pid_t[]){ 10, 14 }, 2, &cb, last);
	ok(json_object_get(json_object_get(c, "containers"), "c1") != ctr, "reuse: a container renamed: a new entry");
	is_str(json_string_value(json_object_get(json_object_get(json_object_get(c, "containers"), "c1"), "name")),
	       "app2", "reuse: the new entry has the new name");
	ok(json_object_get(json_object_get(c, "processes"), "14") == proc, "reuse: the unchanged process's entry kept");
	ok(cb.new_containers == 0, "reuse: a renamed container is not new");
	json_decref(b);
	json_decref(c);
	c = containers_identities((const pid_t[]){ 10, 11 }, 2, &cb, last);
	ok(cb.new_containers == 1 && json_object_get(json_object_get(c, "containers"), "c2") != ctr2,
	   "reuse: a container gone from the last report is new again, its entry made again");
	ctr = json_object_get(json_object_get(c, "containers"), "c1");
	json_incref(ctr);
	json_decref(c);
	/* A report with no process named (a node without device processes): nothing, and every entry let go. */
	ok(!containers_identities(NULL, 0, &cb, last) && cb.new_containers == 0, "reuse: no pid: no identities");
	c = containers_identities((const pid_t[]){ 10 }, 1, &cb, last);
	ok(cb.new_containers == 1 && json_object_get(json_object_get(c, "containers"), "c1") != ctr,
	   "reuse: after a report without it, a container is new again");
	json_decref(ctr);
	json_decref(c);
	ident_last_free(last);
}

/* A process's identity is parsed once while it lives (pid and start time), again for a reused pid. */
static void test_memo(void)
{
	char root[] = "/tmp/accel-memo.XXXXXX", cmd[128];
	const char *stat1 = "4242 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5000 1 1 1 1 1 0 0 0 0 0 0 0 0 17 0\n";
	const char *stat2 = "4242 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 9000 1 1 1 1 1 0 0 0 0 0 0 0 0 17 0\n";
	struct host *h;
	json_t *c, *first;

	if (!mkdtemp(root)) {
		printf("# mkdtemp: %s\n", strerror(errno));
		exit(2);
	}
	put_file(root, "4242/stat", stat1);
	put_file(root, "4242/cgroup", "0::/system.slice/docker-" ID64 ".scope\n");
	h = host_new(&(struct host_opts){ .procfs = root }, NULL);
	host_snapshot(h, &(struct cycle){ .mono_ns = 1 });
	c = host_container_json(h, 4242);
	is_str(json_string_value(json_object_get(c, "id")), ID64, "memo: the first cycle parses the cgroup file");
	first = c;
	c = host_container_json(h, 4242);
	ok(c == first, "memo: asked again in the snapshot: the same object");
	json_decref(c); /* first's reference is kept, so that its address is not another's below */
	put_file(root, "4242/cgroup", "0::/system.slice/docker-" ID64B ".scope\n");
	host_snapshot(h, &(struct cycle){ .mono_ns = 2 });
	c = host_container_json(h, 4242);
	is_str(json_string_value(json_object_get(c, "id")), ID64, "memo: the same process later: not read again");
	ok(c == first, "memo: the same identity in the next snapshot: the same object again");
	json_decref(c);
	put_file(root, "4242/stat", stat2);
	host_snapshot(h, &(struct cycle){ .mono_ns = 3 });
	c = host_container_json(h, 4242);
	is_str(json_string_value(json_object_get(c, "id")), ID64B, "memo: a reused pid (another start time): read afresh");
	ok(c != first, "memo: another identity: a new object");
	json_decref(c);
	json_decref(first);
	put_file(root, "4242/stat", "");
	host_snapshot(h, &(struct cycle){ .mono_ns = 4 });
	ok(!host_container_json(h, 4242), "memo: a process gone: no identity");
	host_free(h);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
}

/* The identities as text, keys sorted ("null" for none). */
static char *ids_text(json_t *ids)
{
	return ids ? json_dumps(ids, JSON_COMPACT | JSON_SORT_KEYS) : strdup("null");
}

/* The identities of pids[0..n) as a host that never made any makes them: what a reused object must equal. */
static char *ids_fresh(const char *root, const pid_t *pids, size_t n)
{
	struct host *h = host_new(&(struct host_opts){ .procfs = root }, NULL);
	json_t *ids;
	char *s;

	host_snapshot(h, &(struct cycle){ .mono_ns = 1 });
	ids = host_identities(h, pids, n);
	s = ids_text(ids);
	json_decref(ids);
	host_free(h);
	return s;
}

/*
 * A report's identities are handed out again while the same pids have the
 * same identities, and made again when the pids, their order or an
 * identity changed: each answer is what a new host would make.
 */
static void test_identities_reused(void)
{
	char root[] = "/tmp/accel-ids.XXXXXX", cmd[128];
#define STAT_OF(pid, start) #pid " (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 " #start " 1 1 1 1 1 0 0 0 0 0 0 0 0 17 0\n"
	const pid_t ab[] = { 4242, 4343 }, ba[] = { 4343, 4242 }, b[] = { 4343 };
	struct {
		const pid_t *pids;
		size_t n;
		int same;         /* the answer is the last one's object */
		const char *what;
	} steps[] = {
		{ ab, 2, 0, "first" },
		{ ab, 2, 1, "the same pids and identities" },
		{ ba, 2, 0, "the same pids in another order" },
		{ ba, 2, 1, "that order again" },
		{ ba, 2, 0, "a reused pid, now a unit's process" },
		{ ba, 2, 1, "unchanged since" },
		{ b, 1, 0, "one pid fewer" },
		{ NULL, 0, 0, "no pid" },
		{ NULL, 0, 1, "no pid again" },
		{ b, 1, 0, "a pid again" },
	};
	struct host *h;
	json_t *last = NULL;
	int64_t snap = 1;
	char text[256];

	if (!mkdtemp(root)) {
		printf("# mkdtemp: %s\n", strerror(errno));
		exit(2);
	}
	put_file(root, "4242/stat", STAT_OF(4242, 5000));
	put_file(root, "4242/cgroup", "0::/system.slice/docker-" ID64 ".scope\n");
	put_file(root, "4343/stat", STAT_OF(4343, 6000));
	put_file(root, "4343/cgroup", "0::/system.slice/docker-" ID64B ".scope\n");
	h = host_new(&(struct host_opts){ .procfs = root }, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		json_t *ids;
		char *got, *want;

		if (i == 4) { /* pid 4242 exited and was reused by a process in a systemd unit */
			put_file(root, "4242/stat", STAT_OF(4242, 9000));
			put_file(root, "4242/cgroup", "0::/system.slice/nginx.service\n");
		}
		host_snapshot(h, &(struct cycle){ .mono_ns = snap++ });
		ids = host_identities(h, steps[i].pids, steps[i].n);
		ok(steps[i].same ? ids == last : !ids || ids != last, "identities reused: %s: %s", steps[i].what,
		   steps[i].same ? "the same object" : "made again");
		got = ids_text(ids);
		want = ids_fresh(root, steps[i].pids, steps[i].n);
		snprintf(text, sizeof(text), "identities reused: %s: what a new host makes", steps[i].what);
		is_str(got, want, text);
		if (i == 2) { /* as written: the containers in the order their pids came */
			char *w = json_dumps(ids, JSON_COMPACT);

			ok(w && strstr(w, ID64B) && strstr(w, ID64) && strstr(w, ID64B) < strstr(w, ID64),
			   "identities reused: in the pids' order");
			free(w);
		}
		free(got);
		free(want);
		json_decref(last);
		last = ids;
	}
	json_decref(last);
	host_free(h);
#undef STAT_OF
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
}

/*
 * A settled identity (its state file named it) is not worked out again
 * while its process lives, until the names change: here a second
 * container of the same pod names the pod, which the first one's file
 * did not.
 */
static void test_memo_settled(void)
{
	char root[] = "/tmp/accel-settled.XXXXXX", cmd[128];
	const char *bundle = "rootfs/run/containerd/io.containerd.runtime.v2.task/k8s.io/";
	const char *cg = "0::/kubepods.slice/kubepods-pod7c1e3a52_8f0b_4d6e_9a21_3b5c7d9e1f20.slice/cri-containerd-";
	char path[256], text[512], procfs[64], rootfs[64];
	struct host *h;
	json_t *c;

	if (!mkdtemp(root)) {
		printf("# mkdtemp: %s\n", strerror(errno));
		exit(2);
	}
	snprintf(procfs, sizeof(procfs), "%s/proc", root);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", root);
	put_file(root, "proc/4242/stat", "4242 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5000 1 1 1 1 1 0 0 0 0 0 0 0 0 17 0\n");
	snprintf(text, sizeof(text), "%s%s.scope\n", cg, HEX32("a1"));
	put_file(root, "proc/4242/cgroup", text);
	snprintf(path, sizeof(path), "%s%s/config.json", bundle, HEX32("a1"));
	put_file(root, path, "{\"annotations\": {\"io.kubernetes.cri.container-name\": \"worker\"}}");
	h = host_new(&(struct host_opts){ .procfs = procfs, .ctr = { .rootfs = rootfs } }, NULL);
	for (int64_t snap = 1; snap <= 3; snap++) {
		host_snapshot(h, &(struct cycle){ .mono_ns = snap });
		c = host_container_json(h, 4242);
		ok(c && !json_object_get(c, "pod") && !strcmp(json_string_value(json_object_get(c, "name")), "worker"),
		   "settled: snapshot %d: the container's name, no pod's yet", (int)snap);
		json_decref(c);
	}
	/* Another container of the pod, whose file names the pod: the first one's names change with it. */
	put_file(root, "proc/4343/stat", "4343 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 6000 1 1 1 1 1 0 0 0 0 0 0 0 0 17 0\n");
	snprintf(text, sizeof(text), "%s%s.scope\n", cg, HEX32("b2"));
	put_file(root, "proc/4343/cgroup", text);
	snprintf(path, sizeof(path), "%s%s/config.json", bundle, HEX32("b2"));
	put_file(root, path, "{\"annotations\": {\"io.kubernetes.cri.sandbox-name\": \"infer-0\", "
			     "\"io.kubernetes.cri.sandbox-namespace\": \"serving\", "
			     "\"io.kubernetes.cri.container-name\": \"sidecar\"}}");
	host_snapshot(h, &(struct cycle){ .mono_ns = 4 });
	json_decref(host_container_json(h, 4242)); /* asked in each snapshot, so its entry is kept */
	json_decref(host_container_json(h, 4343));
	host_snapshot(h, &(struct cycle){ .mono_ns = 5 });
	c = host_container_json(h, 4242);
	is_str(json_string_value(json_object_get(c, "pod")), "infer-0", "settled: the pod named since: worked out again");
	is_str(json_string_value(json_object_get(c, "namespace")), "serving", "settled: and its namespace");
	json_decref(c);
	/* The pid reused by a process of the other container: another start time, worked out again. */
	put_file(root, "proc/4242/stat", "4242 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 7000 1 1 1 1 1 0 0 0 0 0 0 0 0 17 0\n");
	snprintf(text, sizeof(text), "%s%s.scope\n", cg, HEX32("b2"));
	put_file(root, "proc/4242/cgroup", text);
	host_snapshot(h, &(struct cycle){ .mono_ns = 6 });
	c = host_container_json(h, 4242);
	is_str(json_string_value(json_object_get(c, "name")), "sidecar", "settled: a reused pid: the new process's");
	json_decref(c);
	host_free(h);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", root);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", root);
}

int main(void)
{
	test_paths();
	test_files();
	test_slurm();
	test_odd();
	test_names();
	test_retry_and_odd_files();
	test_json();
	test_annotate();
	test_annotate_renamed();
	test_identities_text();
	test_identities_reuse();
	test_memo();
	test_identities_reused();
	test_memo_settled();
	return done_testing();
}
