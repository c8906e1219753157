/* SPDX-License-Identifier: MIT */
/*
 * Container identity from cgroup paths (monitor/container.c): the layouts
 * real hosts write, copied from /proc/PID/cgroup on Kubernetes nodes
 * (systemd and cgroupfs drivers, containerd, CRI-O, Docker), Docker and
 * Podman hosts, cgroup v2, v1 and the two hybrid layouts, and odd input
 * that must neither crash nor overflow.
 */
#include "../../monitor/container.h"
#include "tap.h"

#include <errno.h>
#include <stdlib.h>

#define ID64 "4b8f0a7f3c2e1d6b9a8f7e6d5c4b3a291817161514131211100f0e0d0c0b0a09"
#define ID64B "e3c1f29a0d4b5c6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6"
#define UID_D "0a1b2c3d-4e5f-6789-abcd-ef0123456789"
#define UID_U "0a1b2c3d_4e5f_6789_abcd_ef0123456789"

struct want {
	int rc;
	const char *runtime, *id, *pod_uid, *qos, *unit;
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
}

#define HOST { -ENOENT, "", "", "", "", "" }

static const struct tcase paths[] = {
	/* cgroup v2, systemd driver: the three QoS classes, each runtime. */
	{ "v2 systemd burstable containerd",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_U ".slice/cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, UID_D, "burstable", "" } },
	{ "v2 systemd besteffort cri-o",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_U ".slice/crio-" ID64 ".scope",
	  { 0, "cri-o", ID64, UID_D, "besteffort", "" } },
	{ "v2 systemd guaranteed (no QoS level) docker",
	  "/kubepods.slice/kubepods-pod" UID_U ".slice/docker-" ID64 ".scope",
	  { 0, "docker", ID64, UID_D, "guaranteed", "" } },
	{ "v2 systemd cri-o conmon: the pod, not the container",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_U ".slice/crio-conmon-" ID64 ".scope",
	  { 0, "cri-o", "", UID_D, "burstable", "" } },
	{ "v2 systemd pod-level cgroup (no container)",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_U ".slice",
	  { 0, "", "", UID_D, "burstable", "" } },
	{ "v2 static pod (hash UID)",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6a8ae5c8f0e6b0bc5ab4d8d4e2ef2b79.slice/"
	  "cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, "6a8ae5c8f0e6b0bc5ab4d8d4e2ef2b79", "burstable", "" } },
	{ "kind node (kubelet.slice nesting)",
	  "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	  "kubelet-kubepods-besteffort-pod" UID_U ".slice/cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, UID_D, "besteffort", "" } },
	{ "monitor in its own cgroup namespace",
	  "/../../kubepods.slice/kubepods-pod" UID_U ".slice/cri-containerd-" ID64 ".scope",
	  { 0, "containerd", ID64, UID_D, "guaranteed", "" } },
	{ "deleted cgroup",
	  "/kubepods.slice/kubepods-pod" UID_U ".slice/cri-containerd-" ID64 ".scope (deleted)",
	  { 0, "containerd", ID64, UID_D, "guaranteed", "" } },
	{ "uppercase UID is lowered",
	  "/kubepods.slice/kubepods-pod0A1B2C3D_4E5F_6789_ABCD_EF0123456789.slice",
	  { 0, "", "", UID_D, "guaranteed", "" } },
	/* cgroup v1, cgroupfs driver. */
	{ "v1 cgroupfs burstable",
	  "/kubepods/burstable/pod" UID_D "/" ID64,
	  { 0, "", ID64, UID_D, "burstable", "" } },
	{ "v1 cgroupfs besteffort",
	  "/kubepods/besteffort/pod" UID_D "/" ID64B,
	  { 0, "", ID64B, UID_D, "besteffort", "" } },
	{ "v1 cgroupfs guaranteed",
	  "/kubepods/pod" UID_D "/" ID64,
	  { 0, "", ID64, UID_D, "guaranteed", "" } },
	{ "v1 cgroupfs cri-o",
	  "/kubepods/burstable/pod" UID_D "/crio-" ID64,
	  { 0, "cri-o", ID64, UID_D, "burstable", "" } },
	{ "v1 cgroupfs cri-o conmon",
	  "/kubepods/burstable/pod" UID_D "/crio-conmon-" ID64,
	  { 0, "cri-o", "", UID_D, "burstable", "" } },
	{ "v1 containerd systemd driver (slice:prefix:id)",
	  "/system.slice/containerd.service/kubepods-burstable-pod" UID_U ".slice:cri-containerd:" ID64,
	  { 0, "containerd", ID64, UID_D, "burstable", "" } },
	{ "v1 cgroupfs pod-level",
	  "/kubepods/besteffort/pod" UID_D,
	  { 0, "", "", UID_D, "besteffort", "" } },
	/* Docker and Podman outside Kubernetes. */
	{ "docker systemd", "/system.slice/docker-" ID64 ".scope", { 0, "docker", ID64, "", "", "" } },
	{ "docker cgroupfs", "/docker/" ID64, { 0, "docker", ID64, "", "", "" } },
	{ "docker-in-docker (innermost)", "/docker/" ID64 "/docker/" ID64B, { 0, "docker", ID64B, "", "", "" } },
	{ "podman rootless",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID64 ".scope/container",
	  { 0, "podman", ID64, "", "", "" } },
	{ "podman machine.slice", "/machine.slice/libpod-" ID64 ".scope", { 0, "podman", ID64, "", "", "" } },
	{ "podman cgroupfs", "/libpod_parent/libpod-" ID64, { 0, "podman", ID64, "", "", "" } },
	{ "podman conmon", "/machine.slice/libpod-conmon-" ID64 ".scope", { 0, "podman", "", "", "", "" } },
	/* systemd services and the host. */
	{ "systemd service", "/system.slice/nginx.service", { 0, "systemd", "", "", "", "nginx.service" } },
	{ "systemd template service", "/system.slice/system-getty.slice/getty@tty1.service",
	  { 0, "systemd", "", "", "", "getty@tty1.service" } },
	{ "user manager's app (innermost service)",
	  "/user.slice/user-1000.slice/user@1000.service/app.slice/dbus.service",
	  { 0, "systemd", "", "", "", "dbus.service" } },
	{ "session scope is the host", "/user.slice/user-1000.slice/session-3.scope", HOST },
	{ "root is the host", "/", HOST },
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
	{ "bare id outside kubepods", "/" ID64, HOST },
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
	  { 0, "containerd", ID64, UID_D, "burstable", "" } },
	{ "v1 file (docker cgroupfs)",
	  "12:pids:/docker/" ID64 "\n11:memory:/docker/" ID64 "\n10:cpu,cpuacct:/docker/" ID64
	  "\n1:name=systemd:/docker/" ID64 "\n",
	  { 0, "docker", ID64, "", "", "" } },
	{ "v1 file (kubernetes cgroupfs)",
	  "12:hugetlb:/kubepods/burstable/pod" UID_D "/" ID64 "\n4:memory:/kubepods/burstable/pod" UID_D "/" ID64
	  "\n1:name=systemd:/kubepods/burstable/pod" UID_D "/" ID64 "\n",
	  { 0, "", ID64, UID_D, "burstable", "" } },
	/* systemd's "hybrid": v1 controllers plus a v2 hierarchy at /sys/fs/cgroup/unified. */
	{ "hybrid, container in the v1 lines, v2 at /",
	  "11:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_U ".slice/crio-" ID64
	  ".scope\n1:name=systemd:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_U
	  ".slice/crio-" ID64 ".scope\n0::/\n",
	  { 0, "cri-o", ID64, UID_D, "besteffort", "" } },
	{ "hybrid, container in the v2 line only",
	  "5:memory:/\n4:cpu,cpuacct:/\n1:name=systemd:/system.slice/docker.service\n0::/system.slice/docker-" ID64
	  ".scope\n",
	  { 0, "docker", ID64, "", "", "" } },
	{ "hybrid, v2 wins a tie",
	  "1:name=systemd:/system.slice/a.service\n0::/system.slice/b.service\n",
	  { 0, "systemd", "", "", "", "b.service" } },
	{ "v1 host", "12:pids:/user.slice/user-1000.slice/session-2.scope\n1:name=systemd:/user.slice\n0::/\n", HOST },
	{ "v2 host, no newline", "0::/init.scope", HOST },
	{ "garbage", "garbage\n\n\n::\n0:\n:::::\n", HOST },
	{ "empty file", "", HOST },
	{ "path of 5000 bytes skipped, next line read",
	  NULL /* built at run time */, { 0, "docker", ID64, "", "", "" } },
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

int main(void)
{
	test_paths();
	test_files();
	test_odd();
	return done_testing();
}
