/* SPDX-License-Identifier: MIT */
/*
 * Container identity from cgroup paths (see container.h for the layouts).
 * The parser walks the path's components once, left to right, and keeps
 * the innermost match of each kind: the last container component gives
 * the id and runtime, the last pod component the pod UID and QoS class, the
 * last *.service the unit. Walking every component rather than matching
 * fixed prefixes makes nested layouts work too: kind's
 * /kubelet.slice/kubelet-kubepods.slice/..., a monitor in its own cgroup
 * namespace seeing "/../../kubepods.slice/...", podman's
 * libpod-<id>.scope/container.
 */
#include "container.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

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
	bool in_kubepods;   /* a cgroupfs "kubepods" component was seen */
	bool after_pod;     /* the previous component was a cgroupfs pod<UID> */
	bool after_docker;  /* the previous component was a cgroupfs "docker" */
	char qos_dir[12];    /* a cgroupfs QoS directory seen since "kubepods", or "" */
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
		strcpy(id->qos, "guaranteed");
}

/* Set the container from a component's id part; the runtime only when the id is one. */
static bool set_container(struct container_id *id, const char *rt, const char *s, size_t n)
{
	if (!is_container_id(s, n) || !copy_n(id->id, sizeof(id->id), s, n))
		return false;
	strcpy(id->runtime, rt);
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
		set_qos(w->id, q, (size_t)(dash - q));
		return true;
	}
	return false;
}

/* Look at one path component c (n bytes). */
static void component(struct walk *w, const char *c, size_t n)
{
	struct container_id *id = w->id;
	bool after_pod = w->after_pod, after_docker = w->after_docker;
	const char *colon;

	w->after_pod = w->after_docker = false;
	if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
		return;
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
	for (p = path; p < end;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *e = slash ? slash : end;

		component(&w, p, (size_t)(e - p));
		p = slash ? slash + 1 : end;
	}
	if (id->id[0] || id->pod_uid[0]) {
		/* The unit is for processes in no container: a pod's process in a .service (kubelet nested) is not. */
		id->unit[0] = '\0';
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

/* How much a parsed identity says: a container over a pod over a monitor over a unit over nothing. */
static int rank(int rc, const struct container_id *id)
{
	if (rc)
		return 0;
	if (id->id[0])
		return 4;
	if (id->pod_uid[0])
		return 3;
	return strcmp(id->runtime, "systemd") ? 2 : 1;
}

int container_from_proc_cgroup(const char *text, struct container_id *id)
{
	struct container_id cur;
	int best = 0, best_v2 = 0;

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
	return best ? 0 : -ENOENT;
}
