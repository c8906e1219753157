/* SPDX-License-Identifier: MIT */
/*
 * Containers and pods: identity from cgroup paths, names from the runtimes'
 * state files, and the attribution of devices' per-process figures to pods
 * and containers. See container.h.
 *
 * Identity from cgroup paths (see container.h for the layouts).
 * The parser walks the path's components once, left to right, and keeps
 * the innermost match of each kind: the last container component gives
 * the id and runtime, the last pod component the pod UID and QoS class, the
 * last *.service the unit. Walking every component rather than matching
 * fixed prefixes makes nested layouts work too: kind's
 * /kubelet.slice/kubelet-kubepods.slice/..., a monitor in its own cgroup
 * namespace seeing "/../../kubepods.slice/...", podman's
 * libpod-<id>.scope/container. Slurm's hierarchies are followed level by
 * level (slurm_component: a job_ directory counts only under Slurm's root
 * and, on v1, its uid_ directory), so a "job_1" elsewhere is no job.
 */
#include "container.h"
#include "../../common/util.h"
#include "../../common/hindex.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Copy src (n bytes) into dst[size] when it fits; false (dst untouched) when not. */
static bool copy_n(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		return false;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return true;
}

static bool is_hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

/* A container id: 12 to 64 hex digits (runtimes write 64; 12 is the short form some tools show). */
static bool is_container_id(const char *s, size_t n)
{
	return n >= 12 && n <= 64 && is_hex_run(s, n);
}

static bool has_prefix(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);

	return n >= k && memcmp(s, pre, k) == 0;
}

static bool has_suffix(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* The container-naming prefixes of systemd scopes and cgroupfs directories, and their runtime. */
static const struct {
	const char *prefix, *runtime;
} runtimes[] = {
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
	{ "docker-", "docker" },
	{ "libpod-", "podman" },
	{ "nerdctl-", "containerd" },
};

/* Monitor processes that sit beside a container, not in it: the pod (if any) is theirs, the container is not. */
static const struct {
	const char *prefix, *runtime;
} monitors[] = {
	{ "crio-conmon-", "cri-o" },
	{ "libpod-conmon-", "podman" },
};

struct walk {
	struct container_id *id;
	unsigned depth;     /* components seen so far (empty ones and "." aside) */
	bool in_kubepods;   /* a cgroupfs "kubepods" component was seen */
	bool in_ecs;        /* the ECS agent's cgroup v1 parent "ecs" was seen */
	bool after_up;      /* the previous component was ".." */
	bool after_pod;     /* the previous component was a cgroupfs pod<UID> */
	bool after_docker;  /* the previous component was a cgroupfs "docker" */
	char qos_dir[12];    /* a cgroupfs QoS directory seen since "kubepods", or "" */
	unsigned char slurm; /* where the walk is in a Slurm hierarchy: enum slurm_at */
	char slurm_uid[12];  /* cgroup v1's uid_<uid> seen just now, or "" */
};

/* Set the pod UID from s (n bytes), underscores turned back into dashes. false when it is no UID. */
static bool set_pod_uid(struct container_id *id, const char *s, size_t n)
{
	char uid[sizeof(id->pod_uid)];
	size_t digits = 0;

	if (n == 0 || n >= sizeof(uid))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '_' || c == '-') {
			uid[i] = '-';
			continue;
		}
		if (!is_hex_run(&c, 1))
			return false;
		uid[i] = (char)(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
		digits++;
	}
	/* Pod UIDs are UUIDs (32 hex digits, 4 dashes) or, for static pods, a 32-digit hash. */
	if (digits < 16)
		return false;
	uid[n] = '\0';
	memcpy(id->pod_uid, uid, n + 1);
	return true;
}

static void set_qos(struct container_id *id, const char *s, size_t n)
{
	if (n == 9 && memcmp(s, "burstable", 9) == 0)
		strcpy(id->qos, "burstable");
	else if (n == 10 && memcmp(s, "besteffort", 10) == 0)
		strcpy(id->qos, "besteffort");
	else
		id->qos[0] = '\0'; /* a level Kubernetes does not have: unknown */
}

/* A pod inside a container (kind's nodes are Docker containers): the container seen so far is the node's. */
static void enter_pod(struct container_id *id)
{
	id->id[0] = '\0';
	id->runtime[0] = '\0';
}

/* Set the container from a component's id part; the runtime only when the id is one. */
static bool set_container(struct container_id *id, const char *rt, const char *s, size_t n)
{
	if (!is_container_id(s, n) || !copy_n(id->id, sizeof(id->id), s, n))
		return false;
	strcpy(id->runtime, rt);
	return true;
}

/* An ECS task id: 32 hex digits, or (older tasks) a UUID; sep is the UUID's separator as written. */
static bool is_task_id(const char *s, size_t n, char sep)
{
	if (n == 32)
		return is_hex_run(s, n);
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != sep : !is_hex_run(&s[i], 1))
			return false;
	return true;
}

/* Set the ECS task id (a UUID's underscores turned back into dashes); a container seen further out is not this one. */
static void enter_task(struct container_id *id, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		id->ecs_task[i] = s[i] == '_' ? '-' : (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] - 'A' + 'a' : s[i]);
	id->ecs_task[n] = '\0';
	id->id[0] = '\0';
	id->runtime[0] = '\0';
}

/*
 * Fargate's (platform 1.4, and ECS Managed Instances') container id: "<task id>-<digits>", the task id 32 hex
 * digits. true (the container and its task set) when c is one.
 */
static bool fargate_container(struct container_id *id, const char *c, size_t n)
{
	if (n < 34 || n > 32 + 1 + 20 || c[32] != '-' || !is_hex_run(c, 32))
		return false;
	for (size_t i = 33; i < n; i++)
		if (c[i] < '0' || c[i] > '9')
			return false;
	enter_task(id, c, 32);
	copy_n(id->id, sizeof(id->id), c, n);
	strcpy(id->runtime, "fargate");
	return true;
}

/*
 * A systemd-driver pod slice: "<...>kubepods[-<qos>]-pod<UID>.slice"
 * (kind's kubelet-kubepods-... too). true when c is one.
 */
static bool pod_slice(struct walk *w, const char *c, size_t n)
{
	const char *kp;
	size_t before;

	if (!has_suffix(c, n, ".slice"))
		return false;
	n -= 6;
	kp = NULL;
	for (size_t i = 0; i + 8 <= n; i++)
		if (memcmp(c + i, "kubepods", 8) == 0)
			kp = c + i;
	if (!kp)
		return false;
	before = (size_t)(kp - c) + 8; /* past "kubepods" */
	if (before + 4 <= n && memcmp(c + before, "-pod", 4) == 0) {
		if (!set_pod_uid(w->id, c + before + 4, n - before - 4))
			return false;
		enter_pod(w->id);
		strcpy(w->id->qos, "guaranteed");
		return true;
	}
	if (before < n && c[before] == '-') {
		const char *q = c + before + 1;
		const char *dash = memchr(q, '-', n - before - 1);

		if (!dash || (size_t)(c + n - dash) < 4 || memcmp(dash, "-pod", 4) != 0)
			return false;
		if (!set_pod_uid(w->id, dash + 4, (size_t)(c + n - dash - 4)))
			return false;
		enter_pod(w->id);
		set_qos(w->id, q, (size_t)(dash - q));
		return true;
	}
	return false;
}

/* ---- Slurm ------------------------------------------------------------------------------------------- */

/* The Slurm component the walk expects next (walk.slurm); SL_NONE: none, the walk is in no Slurm hierarchy. */
enum slurm_at { SL_NONE, SL_V1_ROOT, SL_V1_UID, SL_V2_ROOT, SL_JOB_V1, SL_JOB_V2, SL_STEP_V1, SL_STEP_V2, SL_LEAF };

/* s (n bytes) is a decimal number Slurm prints with %u: no leading zero, at most 4294967295. */
static bool is_u32(const char *s, size_t n)
{
	unsigned long long v = 0;

	if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v <= 0xffffffffULL;
}

/* A SLUID as Slurm prints it: "s" and 13 digits of Crockford's base 32 (no I, L, O, U), either case. */
static bool is_sluid(const char *s, size_t n)
{
	if (n != 14 || (s[0] != 's' && s[0] != 'S'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 'a' + 'A' : s[i]);

		if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')) || c == 'I' || c == 'L' || c == 'O' || c == 'U')
			return false;
	}
	return true;
}

/* A step as Slurm names its cgroup (log_build_step_id_str): a number, "<n>+<het component>", or a keyword. */
static bool is_step(const char *s, size_t n)
{
	const char *plus = memchr(s, '+', n);

	if ((n == 5 && !memcmp(s, "batch", 5)) || (n == 6 && !memcmp(s, "extern", 6)) ||
	    (n == 11 && !memcmp(s, "interactive", 11)))
		return true;
	if (plus)
		return is_u32(s, (size_t)(plus - s)) && is_u32(plus + 1, (size_t)(s + n - plus - 1));
	return is_u32(s, n);
}

/* A job's directory: its cgroup is the innermost thing now (a container seen further out is slurmd's). */
static void enter_job(struct walk *w, const char *job, size_t n)
{
	struct container_id *id = w->id;

	copy_n(id->hpc_job, sizeof(id->hpc_job), job, n);
	snprintf(id->hpc_uid, sizeof(id->hpc_uid), "%s", w->slurm_uid);
	id->hpc_step[0] = '\0';
	id->id[0] = '\0';
	id->runtime[0] = '\0';
}

/*
 * Look at component c (n bytes) as part of a Slurm hierarchy: v1's
 * slurm[_<node>]/uid_<uid>/job_<job>/step_<step>/task_<n>, v2's
 * [<node>_]slurmstepd.scope/{job_<job>,<SLUID>}/step_<step>/{user,slurm}/task_<n>.
 * true when it was a job's, step's or task's part (the walk takes the next
 * component); false when it is anything else, a hierarchy's root included,
 * and the walk is in no Slurm hierarchy any more unless it was a root (what
 * it found stays: a directory below a task or step is still the job's).
 */
static bool slurm_component(struct walk *w, const char *c, size_t n)
{
	struct container_id *id = w->id;
	enum slurm_at at = (enum slurm_at)w->slurm;

	w->slurm = SL_NONE;
	if (at == SL_V1_ROOT && has_prefix(c, n, "uid_") && is_u32(c + 4, n - 4)) {
		copy_n(w->slurm_uid, sizeof(w->slurm_uid), c + 4, n - 4);
		w->slurm = SL_V1_UID;
	} else if ((at == SL_V1_UID || at == SL_V2_ROOT) && has_prefix(c, n, "job_") && is_u32(c + 4, n - 4)) {
		enter_job(w, c + 4, n - 4);
		w->slurm = at == SL_V1_UID ? SL_JOB_V1 : SL_JOB_V2;
	} else if (at == SL_V2_ROOT && is_sluid(c, n)) {
		enter_job(w, c, n);
		w->slurm = SL_JOB_V2;
	} else if ((at == SL_JOB_V1 || at == SL_JOB_V2) && has_prefix(c, n, "step_") && is_step(c + 5, n - 5)) {
		copy_n(id->hpc_step, sizeof(id->hpc_step), c + 5, n - 5);
		w->slurm = at == SL_JOB_V1 ? SL_STEP_V1 : SL_STEP_V2;
	} else if (at == SL_STEP_V2 && ((n == 4 && !memcmp(c, "user", 4)) || (n == 5 && !memcmp(c, "slurm", 5)))) {
		w->slurm = SL_STEP_V1; /* the step's user processes or its slurmstepd: the tasks next */
	} else if (at == SL_STEP_V1 && has_prefix(c, n, "task_") &&
		   ((n == 12 && !memcmp(c + 5, "special", 7)) || is_u32(c + 5, n - 5))) {
		w->slurm = SL_LEAF;
	} else {
		/* A hierarchy's root is looked at as any other component too ("slurm_exporter.service" is a unit). */
		if ((n == 5 && !memcmp(c, "slurm", 5)) || has_prefix(c, n, "slurm_"))
			w->slurm = SL_V1_ROOT; /* cgroup.conf's CgroupPrepend: "/slurm", "/slurm_<node>" (multiple slurmd) */
		else if ((n == 16 && !memcmp(c, "slurmstepd.scope", 16)) ||
			 (n > 17 && has_suffix(c, n, "_slurmstepd.scope")))
			w->slurm = SL_V2_ROOT;
		w->slurm_uid[0] = '\0';
		return false;
	}
	return true;
}

/* Look at one path component c (n bytes). */
static void component(struct walk *w, const char *c, size_t n)
{
	struct container_id *id = w->id;
	bool after_pod = w->after_pod, after_docker = w->after_docker, after_up = w->after_up;
	unsigned depth;
	const char *colon;

	w->after_pod = w->after_docker = w->after_up = false;
	if (n == 0 || (n == 1 && c[0] == '.'))
		return;
	depth = w->depth++;
	if (slurm_component(w, c, n))
		return;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		/* Leading ".."s: a path seen from inside a cgroup namespace, above its root. */
		if (depth == id->ns_up && id->ns_up < 255)
			id->ns_up++;
		w->after_up = true;
		return;
	}
	/* containerd's systemd driver on cgroup v1 names a whole cgroup "<slice>:<prefix>:<id>". */
	colon = memchr(c, ':', n);
	if (colon) {
		const char *second = memchr(colon + 1, ':', (size_t)(c + n - colon - 1));

		component(w, c, (size_t)(colon - c));
		if (second) {
			const char *pre = colon + 1, *rest = second + 1;
			size_t npre = (size_t)(second - pre), nrest = (size_t)(c + n - rest);

			for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
				if (npre + 1 == strlen(runtimes[i].prefix) &&
				    memcmp(pre, runtimes[i].prefix, npre) == 0)
					set_container(id, runtimes[i].runtime, rest, nrest);
		}
		return;
	}
	if (has_suffix(c, n, ".slice")) {
		/* The ECS agent's task slice on cgroup v2: ecstasks-<task id>.slice (a UUID's dashes escaped). */
		if (has_prefix(c, n, "ecstasks-") && is_task_id(c + 9, n - 9 - 6, '_'))
			enter_task(id, c + 9, n - 9 - 6);
		else
			pod_slice(w, c, n);
		return;
	}
	if (has_suffix(c, n, ".service")) {
		if (!copy_n(id->unit, sizeof(id->unit), c, n))
			id->unit[0] = '\0';
		return;
	}
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++)
		if (has_prefix(c, n, monitors[i].prefix)) {
			/* The monitor's pod stays; a container seen further out is not this process's. */
			id->id[0] = '\0';
			strcpy(id->runtime, monitors[i].runtime);
			return;
		}
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
		size_t k = strlen(runtimes[i].prefix);

		if (has_prefix(c, n, runtimes[i].prefix)) {
			size_t m = n - k;

			if (has_suffix(c + k, m, ".scope"))
				m -= 6;
			if (set_container(id, runtimes[i].runtime, c + k, m))
				return;
		}
	}
	/* ECS on cgroup v1: /ecs[/<cluster>]/<task id>/<Docker ID or Fargate's id>; a sibling seen as /../<id>. */
	if (n == 3 && memcmp(c, "ecs", 3) == 0) {
		w->in_ecs = true;
		return;
	}
	if ((w->in_ecs || after_up) && fargate_container(id, c, n))
		return;
	if (w->in_ecs && is_task_id(c, n, '-')) {
		enter_task(id, c, n);
		return;
	}
	if (w->in_ecs && id->ecs_task[0] && n == 64 && set_container(id, "docker", c, n))
		return;
	/* Docker with --cgroup-parent=/: the id is the first component. */
	if ((depth == 0 || (after_up && depth == id->ns_up)) && n == 64 && set_container(id, "docker", c, n))
		return;
	/* cgroupfs driver: /kubepods[/<qos>]/pod<UID>/<ID>; Docker: /docker/<ID>. */
	if (n == 8 && memcmp(c, "kubepods", 8) == 0) {
		w->in_kubepods = true;
		w->qos_dir[0] = '\0';
		return;
	}
	if (w->in_kubepods && ((n == 9 && memcmp(c, "burstable", 9) == 0) ||
			       (n == 10 && memcmp(c, "besteffort", 10) == 0))) {
		copy_n(w->qos_dir, sizeof(w->qos_dir), c, n);
		return;
	}
	if (w->in_kubepods && has_prefix(c, n, "pod") && set_pod_uid(id, c + 3, n - 3)) {
		enter_pod(id);
		if (w->qos_dir[0])
			set_qos(id, w->qos_dir, strlen(w->qos_dir));
		else
			strcpy(id->qos, "guaranteed");
		w->after_pod = true;
		return;
	}
	if (n == 6 && memcmp(c, "docker", 6) == 0) {
		w->after_docker = true;
		return;
	}
	if (after_docker && n == 64 && set_container(id, "docker", c, n))
		return;
	/* Under a cgroupfs pod the runtime is not in the name: a bare id, runtime unknown here. */
	if (after_pod && n == 64 && is_container_id(c, n))
		set_container(id, "", c, n);
}

int container_from_cgroup(const char *path, struct container_id *id)
{
	struct walk w = { .id = id };
	const char *p, *end;
	size_t len;

	if (!id)
		return -EINVAL;
	memset(id, 0, sizeof(*id));
	if (!path)
		return -ENOENT;
	len = strcspn(path, "\n");
	if (len >= 10 && memcmp(path + len - 10, " (deleted)", 10) == 0)
		len -= 10;
	end = path + len;
	if (len == 1 && path[0] == '/')
		id->ns_root = 1;
	for (p = path; p < end;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *e = slash ? slash : end;

		component(&w, p, (size_t)(e - p));
		p = slash ? slash + 1 : end;
	}
	if (id->id[0] || id->pod_uid[0] || id->ecs_task[0] || id->hpc_job[0]) {
		/* The unit is for processes in no container: a pod's process in a .service (kubelet nested) is not. */
		id->unit[0] = '\0';
		if (!id->id[0] && id->hpc_job[0])
			strcpy(id->runtime, "slurm"); /* a job's process (a pod's too when slurmd runs in one) */
		else if (!id->id[0] && !id->pod_uid[0] && !id->runtime[0])
			strcpy(id->runtime, "ecs"); /* in the task's cgroup, in none of its containers */
		return 0;
	}
	if (id->runtime[0]) /* a conmon outside any pod */
		return 0;
	if (id->unit[0]) {
		strcpy(id->runtime, "systemd");
		return 0;
	}
	id->qos[0] = '\0';
	return -ENOENT;
}

/* How much a parsed identity says: a container over a pod, task or job over a monitor over a unit over nothing. */
static int rank(int rc, const struct container_id *id)
{
	if (rc)
		return 0;
	if (id->id[0])
		return 4;
	if (id->pod_uid[0] || id->ecs_task[0] || id->hpc_job[0])
		return 3;
	return strcmp(id->runtime, "systemd") ? 2 : 1;
}

int container_from_proc_cgroup(const char *text, struct container_id *id)
{
	struct container_id cur;
	int best = 0, best_v2 = 0, lines = 0, roots = 0;

	if (!id)
		return -EINVAL;
	memset(id, 0, sizeof(*id));
	if (!text)
		return -ENOENT;
	for (const char *line = text; *line;) {
		size_t n = strcspn(line, "\n");
		const char *c1 = memchr(line, ':', n);
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(line + n - c1 - 1)) : NULL;

		if (c2 && (size_t)(line + n - c2 - 1) < 4096) {
			char path[4096];
			size_t plen = (size_t)(line + n - c2 - 1);
			/* v2's line is "0::path" (hierarchy 0, no controllers). */
			int v2 = c1 == line + 1 && line[0] == '0' && c2 == c1 + 1;
			int r;

			memcpy(path, c2 + 1, plen);
			path[plen] = '\0';
			r = rank(container_from_cgroup(path, &cur), &cur);
			lines++;
			roots += cur.ns_root;
			if (r > best || (r == best && r > 0 && v2 && !best_v2)) {
				*id = cur;
				best = r;
				best_v2 = v2;
			}
		}
		line += n;
		if (*line == '\n')
			line++;
	}
	if (!best && lines && roots == lines)
		id->ns_root = 1;
	return best ? 0 : -ENOENT;
}

/* ---- names from the runtimes' state files --------------------------------------------------------------- */

#define STATE_FILE_MAX (4u << 20)       /* an OCI config.json is tens of KiB; a runaway file is refused */
#define RETRY_NS (10 * 1000 * 1000 * 1000LL) /* a container with no state file: look again after 10 s */
#define CACHE_MAX 4096                  /* entries kept; past that the cache starts over */

struct ctr_entry {
	char id[80];
	char pod_uid[48];
	struct container_names n;
	int found;          /* a state file named it */
	int64_t checked_ns; /* when the files were last read */
};

struct pod_entry {
	char uid[48];
	char pod[256], ns[64];
};

struct containers {
	struct container_opts o; /* the options, defaults filled in; its strings are strs[] */
	char *strs[9];           /* owned */
	size_t nstrs;
	struct ctr_entry *c;
	size_t nc, ac;
	struct hindex ci;        /* c by id */
	struct pod_entry *p;
	size_t np, ap;
	struct hindex pi;        /* p by uid */
	uint64_t gen;            /* containers_gen */
};

static uint64_t key_hash(const char *s)
{
	return hash_bytes(0, s, strlen(s));
}

/*
 * A JSON file (at most STATE_FILE_MAX bytes) as a new object, or NULL when
 * it is missing or not JSON. Most lookups miss (each runtime's places are
 * tried in turn): a missing file costs its openat, nothing allocated; a
 * file found is read into room for its size and 4 KiB of growth.
 */
static json_t *load_json(const char *path)
{
	int fd = open_regular(path, O_RDONLY);
	struct stat st;
	size_t size = STATE_FILE_MAX;
	char *text;
	ssize_t n;
	json_t *o = NULL;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size >= 0 && (uint64_t)st.st_size < STATE_FILE_MAX - 4096)
		size = (size_t)st.st_size + 4096;
	text = xmalloc(size);
	n = read_fd_all(fd, text, size);

	if (n > 0)
		o = json_loadb(text, (size_t)n, 0, NULL);
	free(text);
	if (o && !json_is_object(o)) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static void take(char *dst, size_t size, json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));

	if (v && *v && !*dst) {
		snprintf(dst, size, "%s", v);
		utf8_sanitize(dst);
	}
}

/* Kubernetes' names from an annotation or label object; 1 when it named anything. */
static int from_annotations(json_t *a, struct container_names *n)
{
	if (!json_is_object(a))
		return 0;
	/* containerd's CRI plugin */
	take(n->pod, sizeof(n->pod), a, "io.kubernetes.cri.sandbox-name");
	take(n->ns, sizeof(n->ns), a, "io.kubernetes.cri.sandbox-namespace");
	take(n->name, sizeof(n->name), a, "io.kubernetes.cri.container-name");
	/* CRI-O, and the dockershim's labels */
	take(n->pod, sizeof(n->pod), a, "io.kubernetes.pod.name");
	take(n->ns, sizeof(n->ns), a, "io.kubernetes.pod.namespace");
	take(n->name, sizeof(n->name), a, "io.kubernetes.container.name");
	/* nerdctl (containerd without Kubernetes) */
	take(n->name, sizeof(n->name), a, "nerdctl/name");
	return n->pod[0] || n->ns[0] || n->name[0];
}

void container_names_ecs_labels(json_t *labels, struct container_names *n)
{
	const char *cl = json_string_value(json_object_get(labels, "com.amazonaws.ecs.cluster"));

	if (!json_is_object(labels))
		return;
	take(n->name, sizeof(n->name), labels, "com.amazonaws.ecs.container-name");
	take(n->ecs_task_arn, sizeof(n->ecs_task_arn), labels, "com.amazonaws.ecs.task-arn");
	take(n->ecs_task_family, sizeof(n->ecs_task_family), labels, "com.amazonaws.ecs.task-definition-family");
	take(n->ecs_task_revision, sizeof(n->ecs_task_revision), labels, "com.amazonaws.ecs.task-definition-version");
	if (cl && *cl && !n->ecs_cluster[0]) {
		/* Fargate's label is the cluster's ARN (arn:aws:ecs:<region>:<account>:cluster/<name>). */
		const char *slash = strrchr(cl, '/');

		snprintf(n->ecs_cluster, sizeof(n->ecs_cluster), "%s", slash ? slash + 1 : cl);
		utf8_sanitize(n->ecs_cluster);
	}
}

/* containerd: the task bundle's OCI config.json, in the CRI namespace (k8s.io), Docker's (moby) or nerdctl's. */
static int names_containerd(const struct container_opts *o, const char *id, struct container_names *n)
{
	static const char *const spaces[] = { "k8s.io", "moby", "default" };

	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++) {
		char *path = xasprintf("%s/containerd/io.containerd.runtime.v2.task/%s/%s/config.json", o->run, spaces[i],
				       id);
		json_t *cfg = load_json(path);
		int found = cfg != NULL;

		free(path);
		if (cfg) {
			from_annotations(json_object_get(cfg, "annotations"), n);
			json_decref(cfg);
			snprintf(n->runtime, sizeof(n->runtime), "containerd");
			return found;
		}
	}
	return 0;
}

/* CRI-O: the container's config.json or state.json under its run root, else under the storage root. */
static int names_crio(const struct container_opts *o, const char *id, struct container_names *n)
{
	char *paths[3];
	int found = 0;

	paths[0] = xasprintf("%s/containers/storage/overlay-containers/%s/userdata/config.json", o->run, id);
	paths[1] = xasprintf("%s/containers/storage/overlay-containers/%s/userdata/state.json", o->run, id);
	paths[2] = xasprintf("%s%svar/lib/containers/storage/overlay-containers/%s/userdata/config.json", o->rootfs,
			     o->rootfs[strlen(o->rootfs) - 1] == '/' ? "" : "/", id);
	for (size_t i = 0; i < 3 && !found; i++) {
		json_t *cfg = load_json(paths[i]);

		if (cfg) {
			found = 1;
			from_annotations(json_object_get(cfg, "annotations"), n);
			json_decref(cfg);
			snprintf(n->runtime, sizeof(n->runtime), "cri-o");
		}
	}
	for (size_t i = 0; i < 3; i++)
		free(paths[i]);
	return found;
}

/* Docker: config.v2.json's Kubernetes labels (dockershim), else the container's own name. */
static int names_docker(const struct container_opts *o, const char *id, struct container_names *n)
{
	char *path = xasprintf("%s%svar/lib/docker/containers/%s/config.v2.json", o->rootfs,
			       o->rootfs[strlen(o->rootfs) - 1] == '/' ? "" : "/", id);
	json_t *cfg = load_json(path);
	const char *name;

	free(path);
	if (!cfg)
		return 0;
	from_annotations(json_object_get(json_object_get(cfg, "Config"), "Labels"), n);
	/* A container the ECS agent started: its labels name the container and its task. */
	container_names_ecs_labels(json_object_get(json_object_get(cfg, "Config"), "Labels"), n);
	name = json_string_value(json_object_get(cfg, "Name"));
	if (name && !n->name[0] && !n->pod[0]) {
		snprintf(n->name, sizeof(n->name), "%s", name[0] == '/' ? name + 1 : name);
		utf8_sanitize(n->name);
	}
	snprintf(n->runtime, sizeof(n->runtime), "docker");
	json_decref(cfg);
	return 1;
}

/* Read the state files of container id (runtime as the cgroup said, "" when it did not). */
static int names_from_state(const struct container_opts *o, const struct container_id *id,
			    struct container_names *n)
{
	const char *rt = id->runtime;

	memset(n, 0, sizeof(*n));
	if (!strcmp(rt, "containerd"))
		return names_containerd(o, id->id, n);
	if (!strcmp(rt, "cri-o"))
		return names_crio(o, id->id, n);
	if (!strcmp(rt, "docker"))
		return names_docker(o, id->id, n) || names_containerd(o, id->id, n);
	if (!*rt) /* the cgroupfs driver's bare id: whichever runtime has it */
		return names_containerd(o, id->id, n) || names_crio(o, id->id, n) || names_docker(o, id->id, n);
	return 0; /* podman keeps its names in a database: the id stands */
}

static struct pod_entry *pod_find(struct containers *c, const char *uid)
{
	uint64_t h = key_hash(uid);
	struct hindex_iter it;

	for (uint32_t i = hindex_first(&c->pi, h, &it); i != HINDEX_NONE; i = hindex_next(&c->pi, h, &it))
		if (!strcmp(c->p[i].uid, uid))
			return &c->p[i];
	return NULL;
}

/* Remember a pod's names (from a container's state files): a process in the pod but in no container gets them. */
static void pod_learn(struct containers *c, const char *uid, const struct container_names *n)
{
	struct pod_entry *p;

	if (!*uid || (!n->pod[0] && !n->ns[0]))
		return;
	p = pod_find(c, uid);
	if (!p) {
		if (c->np >= CACHE_MAX) {
			c->np = 0;
			hindex_clear(&c->pi);
		}
		if (c->np == c->ap) {
			c->ap = c->ap ? c->ap * 2 : 16;
			c->p = xrealloc(c->p, c->ap * sizeof(*c->p));
		}
		p = &c->p[c->np];
		memset(p, 0, sizeof(*p));
		snprintf(p->uid, sizeof(p->uid), "%s", uid);
		hindex_put(&c->pi, key_hash(p->uid), (uint32_t)c->np++);
	}
	snprintf(p->pod, sizeof(p->pod), "%s", n->pod);
	snprintf(p->ns, sizeof(p->ns), "%s", n->ns);
}

static struct ctr_entry *ctr_find(struct containers *c, const char *id)
{
	uint64_t h = key_hash(id);
	struct hindex_iter it;

	for (uint32_t i = hindex_first(&c->ci, h, &it); i != HINDEX_NONE; i = hindex_next(&c->ci, h, &it))
		if (!strcmp(c->c[i].id, id))
			return &c->c[i];
	return NULL;
}

/* Keep s (owned, or NULL) among c's strings; returns it. */
static const char *keep(struct containers *c, char *s)
{
	if (s)
		c->strs[c->nstrs++] = s;
	return s;
}

char *container_root_path(const char *rootfs, const char *rel)
{
	const char *root = rootfs && *rootfs ? rootfs : "/";

	return xasprintf("%s%s%s", root, root[strlen(root) - 1] == '/' ? "" : "/", rel);
}

/* c->o: a copy of o with the defaults filled in, its strings c's. */
static void opts_copy(struct containers *c, const struct container_opts *o)
{
	const char *root = o->rootfs && *o->rootfs ? o->rootfs : "/";
	struct container_opts *e = &c->o;

	e->rootfs = keep(c, xstrdup(root));
	e->run = keep(c, o->run ? xstrdup(o->run) : container_root_path(root, "run"));
	e->cgroupfs = keep(c, o->cgroupfs ? xstrdup(o->cgroupfs) : container_root_path(root, "sys/fs/cgroup"));
	e->kubelet_url = keep(c, o->kubelet_url ? xstrdup(o->kubelet_url) : NULL);
	e->kubelet_token_file = keep(c, o->kubelet_token_file ? xstrdup(o->kubelet_token_file) : NULL);
	e->kubelet_ca_file = keep(c, o->kubelet_ca_file ? xstrdup(o->kubelet_ca_file) : NULL);
	e->kubelet_refresh_ns = o->kubelet_refresh_ns > 0 ? o->kubelet_refresh_ns : CONTAINER_REFRESH_DEFAULT_NS;
	e->kubelet_pod_labels = o->kubelet_pod_labels > 0 ? o->kubelet_pod_labels : 0;
	e->ecs_agent_url = keep(c, o->ecs_agent_url ? xstrdup(o->ecs_agent_url) : NULL);
	e->ecs_metadata_url = keep(c, o->ecs_metadata_url ? xstrdup(o->ecs_metadata_url) : NULL);
	e->ecs_refresh_ns = o->ecs_refresh_ns > 0 ? o->ecs_refresh_ns : CONTAINER_REFRESH_DEFAULT_NS;
}

struct containers *containers_new(const struct container_opts *o)
{
	struct containers *c = xcalloc(1, sizeof(*c));

	opts_copy(c, o);
	return c;
}

const struct container_opts *containers_opts(const struct containers *c)
{
	return &c->o;
}

void containers_free(struct containers *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nstrs; i++)
		free(c->strs[i]);
	free(c->c);
	free(c->p);
	hindex_free(&c->ci);
	hindex_free(&c->pi);
	free(c);
}

/*
 * *dst (zeroed) = *src, string by string: the bytes past each string's end
 * are left alone, so a cached entry costs its names' length, not 1.4 kB.
 */
static void names_copy(struct container_names *dst, const struct container_names *src)
{
#define COPY(f) memcpy(dst->f, src->f, strnlen(src->f, sizeof(src->f) - 1))
	COPY(pod), COPY(ns), COPY(name), COPY(runtime), COPY(ecs_cluster), COPY(ecs_task_arn), COPY(ecs_task_family),
		COPY(ecs_task_revision);
#undef COPY
}

uint64_t containers_gen(const struct containers *c)
{
	return c ? c->gen : 0;
}

int64_t containers_names(struct containers *c, const struct container_id *id, int64_t now, struct container_names *out)
{
	struct ctr_entry *e = NULL;

	memset(out, 0, sizeof(*out));
	if (!c)
		return INT64_MAX;
	if (id->id[0]) {
		e = ctr_find(c, id->id);
		if (!e) {
			if (c->nc >= CACHE_MAX) { /* a host does not run 4096 containers that touch devices: start over */
				c->nc = 0;
				hindex_clear(&c->ci);
				c->gen++;
			}
			if (c->nc == c->ac) {
				c->ac = c->ac ? c->ac * 2 : 16;
				c->c = xrealloc(c->c, c->ac * sizeof(*c->c));
			}
			e = &c->c[c->nc];
			memset(e, 0, sizeof(*e));
			snprintf(e->id, sizeof(e->id), "%s", id->id);
			hindex_put(&c->ci, key_hash(e->id), (uint32_t)c->nc++);
			e->checked_ns = INT64_MIN;
		}
		if (strcmp(e->pod_uid, id->pod_uid)) /* the same each cycle but for a moved container */
			snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", id->pod_uid);
		if (!e->found && (e->checked_ns == INT64_MIN || now - e->checked_ns >= RETRY_NS)) {
			e->checked_ns = now;
			e->found = names_from_state(&c->o, id, &e->n);
			if (e->found) {
				c->gen++;
				pod_learn(c, id->pod_uid, &e->n);
			}
		}
		names_copy(out, &e->n);
	}
	if (id->pod_uid[0] && (!out->pod[0] || !out->ns[0])) {
		struct pod_entry *p = pod_find(c, id->pod_uid);

		if (p) {
			snprintf(out->pod, sizeof(out->pod), "%s", p->pod);
			snprintf(out->ns, sizeof(out->ns), "%s", p->ns);
		}
	}
	return !e || e->found ? INT64_MAX : e->checked_ns + RETRY_NS;
}

const char *const container_field_keys[CF_COUNT] = {
	[CF_RUNTIME] = "runtime",
	[CF_ID] = "id",
	[CF_POD_UID] = "pod_uid",
	[CF_POD] = "pod",
	[CF_NAMESPACE] = "namespace",
	[CF_NAME] = "name",
	[CF_QOS] = "qos",
	[CF_UNIT] = "unit",
	[CF_ECS_CLUSTER] = "ecs_cluster",
	[CF_ECS_TASK_ARN] = "ecs_task_arn",
	[CF_ECS_TASK_ID] = "ecs_task_id",
	[CF_ECS_TASK_FAMILY] = "ecs_task_family",
	[CF_ECS_TASK_REVISION] = "ecs_task_revision",
	[CF_HPC_JOB] = "hpc_job",
	[CF_HPC_STEP] = "hpc_step",
	[CF_HPC_UID] = "hpc_uid",
};

/* Whether s can be a value of the report: not empty, and valid UTF-8 (what json_string takes). */
static bool field_text(const char *s)
{
	uint32_t cp;
	size_t k;

	if (!*s)
		return false;
	for (; *s; s += k)
		if (!(k = (unsigned char)*s < 0x80 ? 1 : utf8_char(s, &cp))) /* ids and names are mostly ASCII */
			return false;
	return true;
}

void container_fields(const struct container_id *id, const struct container_names *n, const char *val[CF_COUNT])
{
	static const struct container_names none;
	/* A container ECS started without a task cgroup: its task from the ARN the names carry. */
	const char *arn_slash = n && !id->ecs_task[0] ? strrchr(n->ecs_task_arn, '/') : NULL;

	if (!n)
		n = &none;
	val[CF_RUNTIME] = id->runtime[0] ? id->runtime : n->runtime;
	val[CF_ID] = id->id;
	val[CF_POD_UID] = id->pod_uid;
	val[CF_POD] = n->pod;
	val[CF_NAMESPACE] = n->ns;
	val[CF_NAME] = n->name;
	val[CF_QOS] = id->qos;
	val[CF_UNIT] = id->unit;
	val[CF_ECS_CLUSTER] = n->ecs_cluster;
	val[CF_ECS_TASK_ARN] = n->ecs_task_arn;
	val[CF_ECS_TASK_ID] = arn_slash ? arn_slash + 1 : id->ecs_task;
	val[CF_ECS_TASK_FAMILY] = n->ecs_task_family;
	val[CF_ECS_TASK_REVISION] = n->ecs_task_revision;
	val[CF_HPC_JOB] = id->hpc_job;
	val[CF_HPC_STEP] = id->hpc_step;
	val[CF_HPC_UID] = id->hpc_uid;
	for (size_t i = 0; i < CF_COUNT; i++)
		if (!field_text(val[i]))
			val[i] = NULL;
}

json_t *container_fields_json(const char *const val[CF_COUNT])
{
	json_t *o = json_object();

	for (size_t i = 0; i < CF_COUNT; i++)
		if (val[i])
			json_object_set_new(o, container_field_keys[i], json_string(val[i]));
	return o;
}

json_t *container_json(const struct container_id *id, const struct container_names *n)
{
	const char *val[CF_COUNT];

	container_fields(id, n, val);
	return container_fields_json(val);
}
