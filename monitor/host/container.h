/* SPDX-License-Identifier: MIT */
/*
 * Which container, Kubernetes pod or systemd unit a process belongs to,
 * read from the kernel's own record: its cgroup path. No runtime API and no
 * kubelet is needed for the identity (ids, pod UID, QoS class, unit); the
 * names (pod, namespace, container) are resolved separately from the
 * runtimes' state files (containers_names; the host layer asks the kubelet
 * for what they do not say, host.h).
 *
 * Layouts recognised (cgroup v2, v1 and both hybrid layouts):
 *   systemd driver  /kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<UID>.slice/<runtime>-<ID>.scope
 *                   (Guaranteed pods: kubepods-pod<UID>.slice; the UID's dashes are underscores)
 *   cgroupfs driver /kubepods/<qos>/pod<UID>/<ID>, /kubepods/pod<UID>/<ID>
 *   containerd      cri-containerd-<ID>.scope (and containerd's "<slice>:cri-containerd:<ID>" on v1)
 *   CRI-O           crio-<ID>.scope, crio-<ID> (crio-conmon-<ID> is the monitor, not the container)
 *   Docker          docker-<ID>.scope, /docker/<ID>
 *   Podman/libpod   libpod-<ID>.scope, libpod-<ID> (libpod-conmon-<ID> skipped)
 *   Docker, parent /  /<ID> (a container started with --cgroup-parent=/: a 64-digit id at the root)
 *   Amazon ECS/EC2  v1 /ecs/<task id>/<ID> (and /ecs/<cluster>/<task id>/<ID>); v2 (systemd driver)
 *                   /ecstasks.slice/ecstasks-<task id>.slice/docker-<ID>.scope; task ids are 32 hex
 *                   digits, or a UUID on older tasks; the process's runtime is Docker's
 *   Fargate 1.4     /ecs/<task id>/<task id>-<digits> (also ECS Managed Instances): the container id is
 *                   "<task id>-<digits>", runtime "fargate"
 *   ECS task level  /ecs/<task id>, ecstasks-<task id>.slice: the task, no container (runtime "ecs")
 *   Slurm, v1       /slurm/uid_<uid>/job_<job>/step_<step>/task_<n> (each controller Slurm manages;
 *                   "slurm_<node>" with multiple slurmd): a job's process, runtime "slurm"
 *   Slurm, v2       /<slice>/slurmstepd.scope/job_<job>/step_<step>/user/task_<n> (task_special; the
 *                   step's slurmstepd in step_<step>/slurm; "<node>_slurmstepd.scope" with multiple
 *                   slurmd); from Slurm 26.05 the job's directory is its SLUID ("s" and 13 base-32
 *                   digits) unless cgroup.conf says CgroupJobIdPaths=yes. Steps: a number (and
 *                   "+<component>" in a heterogeneous job), "batch", "extern", "interactive"
 *   systemd         the innermost *.service when the process is in no container or pod
 *
 * Seen from inside a cgroup namespace (a monitor running as a sidecar in
 * its own container), a process in the monitor's own cgroup reads "0::/"
 * and one in a sibling cgroup "/../<sibling>": ns_root and ns_up say so,
 * and the host layer fills in the monitor's own identity (host.h).
 *
 * Nesting: the innermost thing wins. A container inside a Slurm job (a
 * runtime that makes its cgroup under the job's task) is the container and
 * keeps the job's fields (the container is wholly the job's). A Slurm job
 * inside a container or pod (slurmd run in a pod) is the job's: the
 * container seen further out is slurmd's, shared by every job it runs, so
 * its id is dropped; the pod stays.
 */
#ifndef ACCEL_CONTAINER_H
#define ACCEL_CONTAINER_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

struct container_id {
	char runtime[16];  /* "containerd", "cri-o", "docker", "podman", "systemd", "" (host or unknown) */
	char id[80];       /* container id (64 hex), "" when none */
	char pod_uid[48];  /* Kubernetes pod UID with dashes ("0a1b-..."; the cgroup's underscores turned back), "" */
	char qos[16];      /* "guaranteed", "burstable", "besteffort", "" */
	char unit[128];    /* systemd unit (e.g. "nginx.service") when the process is in one and not in a container */
	char ecs_task[40]; /* Amazon ECS task id (the last part of the task ARN: 32 hex digits or a UUID), "" */
	char hpc_job[16];  /* Slurm job id (decimal, at most 4294967295) or its SLUID ("s" + 13 digits), "" */
	char hpc_step[24]; /* Slurm step: "<n>", "<n>+<component>", "batch", "extern", "interactive"; "" */
	char hpc_uid[12];  /* the job's user id (cgroup v1's uid_<uid>; v2's path has none), "" */
	unsigned char ns_up;   /* leading ".." components: the path is relative to the reader's cgroup namespace */
	unsigned char ns_root; /* the path is "/" itself: the reader's own cgroup seen from inside a namespace, or
				* the host's root cgroup (kernel threads); set with -ENOENT */
};

/*
 * Parse one cgroup path ("/kubepods.slice/.../cri-containerd-<id>.scope")
 * into *id (always cleared first). 0 when it names a container, pod, ECS
 * task, Slurm job or unit, -ENOENT when it is the host (or the path is empty or NULL;
 * ns_root set when it is "/"). A
 * trailing " (deleted)" (a cgroup removed while the process is in it) is
 * ignored.
 */
int container_from_cgroup(const char *path, struct container_id *id);

/*
 * Parse /proc/PID/cgroup's whole text (v2 "0::/path", v1
 * "N:controllers:/path", hybrid: both) the same way. The line that says
 * the most wins: a container id over a pod, task or Slurm job over a unit; on a tie
 * the v2 line. 0 or -ENOENT as above; -ENOENT with ns_root set when every
 * line is "/" (the reader's own cgroup, or the host's root).
 */
int container_from_proc_cgroup(const char *text, struct container_id *id);

/* ---- names ------------------------------------------------------------------------------------------- */

/*
 * Where the host's trees are, and the kubelet (accel-monitor's --path.* and
 * --kubelet-* options, which the host layer holds). NULL and 0 fields take
 * the defaults below.
 */
/* The shortest time between two fetches of the kubelet's or ECS's names, unless the options say otherwise. */
#define CONTAINER_REFRESH_DEFAULT_NS (30 * 1000 * 1000 * 1000LL) /* ns */

struct container_opts {
	const char *rootfs;             /* the host's /: default "/" */
	const char *run;                /* the host's /run: default ROOTFS/run */
	const char *cgroupfs;           /* the host's /sys/fs/cgroup: default ROOTFS/sys/fs/cgroup */
	const char *kubelet_url;        /* e.g. "https://127.0.0.1:10250"; NULL: the kubelet is not asked */
	const char *kubelet_token_file; /* the bearer token (a service-account token) */
	const char *kubelet_ca_file;    /* the CA that signed the kubelet's serving certificate */
	int64_t kubelet_refresh_ns;     /* the shortest time between two /pods fetches; 0: 30 s */
	int kubelet_pod_labels;         /* --kubelet-pod-labels: the most labels kept per pod; 0: none */
	const char *ecs_agent_url;      /* the ECS agent's introspection API, e.g. "http://localhost:51678"; NULL: not asked */
	const char *ecs_metadata_url;   /* the task metadata endpoint v4 ($ECS_CONTAINER_METADATA_URI_V4); NULL: not asked */
	int64_t ecs_refresh_ns;         /* the shortest time between two ECS fetches; 0: 30 s */
};

/* The names of a container, as the runtime or the kubelet keeps them ("" when unknown). */
struct container_names {
	char pod[256];       /* pod name (Kubernetes names are at most 253 bytes) */
	char ns[64];         /* namespace (at most 63) */
	char name[256];      /* container name (Kubernetes: the spec's name; Docker: the container's name) */
	char runtime[16];    /* the runtime whose state named it, when the cgroup did not say */
	char ecs_cluster[256];      /* Amazon ECS: the cluster's name (at most 255) */
	char ecs_task_arn[256];     /* the task's ARN */
	char ecs_task_family[256];  /* the task definition's family (at most 255) */
	char ecs_task_revision[16]; /* and its revision */
};

/*
 * The ECS agent's Docker labels on a container (com.amazonaws.ecs.cluster,
 * .container-name, .task-arn, .task-definition-family, .task-definition-version;
 * labels borrowed): fill what *n lacks. A cluster given as an ARN is
 * turned into its name.
 */
void container_names_ecs_labels(json_t *labels, struct container_names *n);

struct containers;

/*
 * The default of a host path under rootfs (NULL or "": "/"): ROOTFS/rel,
 * e.g. rel "run" for run and "sys/fs/cgroup" for cgroupfs. A new string.
 */
char *container_root_path(const char *rootfs, const char *rel);

/*
 * The name resolver: reads the runtimes' state files under o's roots
 * (copied, the defaults filled in). Names are cached by container id and
 * pod UID.
 */
struct containers *containers_new(const struct container_opts *o);
void containers_free(struct containers *c); /* NULL-safe */
/* The resolver's options, the defaults filled in (borrowed; they live as long as c). */
const struct container_opts *containers_opts(const struct containers *c);

/*
 * The names of the container or pod id (from the cgroup) at now (CLOCK_MONOTONIC
 * ns): from the cache, else the state files (read once per container; a
 * container with no state file is looked up again at most every 10 s).
 * *out is always filled ("" where unknown). Returns until when (the same
 * clock) the same id gets the same names, as long as containers_gen(c)
 * stays the same: INT64_MAX when its state file named it or it has no
 * container id, the time of its next look at the files when it has none.
 */
int64_t containers_names(struct containers *c, const struct container_id *id, int64_t now, struct container_names *out);
/*
 * Counts the changes of c's names: a container's state file read with
 * names (and its pod's names learned from it), the cache started over
 * (NULL: 0).
 */
uint64_t containers_gen(const struct containers *c);

/* The keys of the report's "container" object, in its order (container_field_keys names them). */
enum container_field {
	CF_RUNTIME,
	CF_ID,
	CF_POD_UID,
	CF_POD,
	CF_NAMESPACE,
	CF_NAME,
	CF_QOS,
	CF_UNIT,
	CF_ECS_CLUSTER,
	CF_ECS_TASK_ARN,
	CF_ECS_TASK_ID,
	CF_ECS_TASK_FAMILY,
	CF_ECS_TASK_REVISION,
	CF_HPC_JOB,
	CF_HPC_STEP,
	CF_HPC_UID,
	CF_COUNT
};
extern const char *const container_field_keys[CF_COUNT]; /* "runtime", "id", ... */

/*
 * The values of the report's "container" object for id and its names n
 * (NULL: none), by field: val[f] points into *id or *n (borrowed: as long
 * as they live), NULL when the object has no key f: the value is unknown
 * (""), or not valid UTF-8, which a JSON string cannot hold. "runtime" is
 * the names' runtime when the cgroup did not say; "ecs_task_id" the last
 * part of the names' task ARN when the cgroup named no task.
 */
void container_fields(const struct container_id *id, const struct container_names *n, const char *val[CF_COUNT]);

/*
 * An object of the values val (container_fields', or some of them: the
 * others NULL) under their keys, in the fields' order. A new reference.
 */
json_t *container_fields_json(const char *const val[CF_COUNT]);

/*
 * The report's "container" object for id and its names (new reference):
 * container_fields' values under their keys, in that order ("runtime",
 * "id", "pod_uid", "pod", "namespace", "name", "qos", "unit",
 * "ecs_cluster", "ecs_task_arn", "ecs_task_id", "ecs_task_family",
 * "ecs_task_revision", "hpc_job", "hpc_step", "hpc_uid"), each key absent
 * when its value is.
 */
json_t *container_json(const struct container_id *id, const struct container_names *n);

#endif
