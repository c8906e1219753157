/* SPDX-License-Identifier: MIT */
/*
 * Which container, Kubernetes pod or systemd unit a process belongs to,
 * read from the kernel's own record: its cgroup path. No runtime API and no
 * kubelet is needed for the identity (ids, pod UID, QoS class, unit); the
 * names (pod, namespace, container) are resolved separately from the
 * runtimes' state files and the kubelet (container_names_*).
 *
 * Layouts recognised (cgroup v2, v1 and both hybrid layouts):
 *   systemd driver  /kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<UID>.slice/<runtime>-<ID>.scope
 *                   (Guaranteed pods: kubepods-pod<UID>.slice; the UID's dashes are underscores)
 *   cgroupfs driver /kubepods/<qos>/pod<UID>/<ID>, /kubepods/pod<UID>/<ID>
 *   containerd      cri-containerd-<ID>.scope (and containerd's "<slice>:cri-containerd:<ID>" on v1)
 *   CRI-O           crio-<ID>.scope, crio-<ID> (crio-conmon-<ID> is the monitor, not the container)
 *   Docker          docker-<ID>.scope, /docker/<ID>
 *   Podman/libpod   libpod-<ID>.scope, libpod-<ID> (libpod-conmon-<ID> skipped)
 *   systemd         the innermost *.service when the process is in no container or pod
 */
#ifndef ACCEL_CONTAINER_H
#define ACCEL_CONTAINER_H

struct container_id {
	char runtime[16];  /* "containerd", "cri-o", "docker", "podman", "systemd", "" (host or unknown) */
	char id[80];       /* container id (64 hex), "" when none */
	char pod_uid[48];  /* Kubernetes pod UID with dashes ("0a1b-..."; the cgroup's underscores turned back), "" */
	char qos[16];      /* "guaranteed", "burstable", "besteffort", "" */
	char unit[128];    /* systemd unit (e.g. "nginx.service") when the process is in one and not in a container */
};

/*
 * Parse one cgroup path ("/kubepods.slice/.../cri-containerd-<id>.scope")
 * into *id (always cleared first). 0 when it names a container, pod or
 * unit, -ENOENT when it is the host (or the path is empty or NULL). A
 * trailing " (deleted)" (a cgroup removed while the process is in it) is
 * ignored.
 */
int container_from_cgroup(const char *path, struct container_id *id);

/*
 * Parse /proc/PID/cgroup's whole text (v2 "0::/path", v1
 * "N:controllers:/path", hybrid: both) the same way. The line that says
 * the most wins: a container id over a pod over a unit; on a tie the v2
 * line. 0 or -ENOENT as above.
 */
int container_from_proc_cgroup(const char *text, struct container_id *id);

#endif
