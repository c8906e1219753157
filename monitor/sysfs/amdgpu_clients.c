/* SPDX-License-Identifier: MIT */
/*
 * The amdgpu collector's DRM clients (amdgpu_clients.h): every process's
 * open DRM files read from /proc/PID/fdinfo once per cycle.
 */
#include "amdgpu_clients.h"
#include "../host/host.h"
#include "../../common/util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What one fdinfo file says (docs: Documentation/gpu/drm-usage-stats.rst). */
struct fdinfo {
	bool amdgpu;
	char pdev[16];
	uint64_t id;
	bool have_id;
	uint64_t vram;
	int vram_rank; /* 0 none; 1 drm-total-vram; 2 drm-resident-vram; 3 drm-memory-vram */
	uint64_t ns[AMD_ENGINES];
	uint32_t engines;
};

/* A size with its unit ("1024 KiB"): bytes. */
static bool parse_size(const char *v, uint64_t *bytes)
{
	uint64_t n = 0;
	const char *p = v;

	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		n = n * 10 + (uint64_t)(*p++ - '0');
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "KiB", 3))
		n <<= 10;
	else if (!strncmp(p, "MiB", 3))
		n <<= 20;
	else if (!strncmp(p, "GiB", 3))
		n <<= 30;
	*bytes = n;
	return true;
}

/* The index of engine name in s->eng, added when new; -1 when the table is full. */
static int engine_index(struct amd_clients *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->neng; i++)
		if (strlen(s->eng[i]) == len && !memcmp(s->eng[i], name, len))
			return (int)i;
	if (s->neng == AMD_ENGINES || len >= sizeof(s->eng[0]))
		return -1;
	memcpy(s->eng[s->neng], name, len);
	s->eng[s->neng][len] = '\0';
	return (int)s->neng++;
}

static void parse_fdinfo(struct amd_clients *s, char *text, struct fdinfo *fi)
{
	memset(fi, 0, sizeof(*fi));
	for (char *line = text, *next; line && *line; line = next) {
		char *colon, *v;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		if (!strcmp(line, "drm-driver")) {
			fi->amdgpu = !strcmp(v, "amdgpu");
		} else if (!strcmp(line, "drm-pdev")) {
			snprintf(fi->pdev, sizeof(fi->pdev), "%s", v);
		} else if (!strcmp(line, "drm-client-id")) {
			fi->have_id = sysfs_parse_u64(v, &fi->id) == 0;
		} else if (!strcmp(line, "drm-memory-vram") || !strcmp(line, "drm-resident-vram") ||
			   !strcmp(line, "drm-total-vram")) {
			int rank = line[4] == 'm' ? 3 : line[4] == 'r' ? 2 : 1;
			uint64_t b;

			if (rank > fi->vram_rank && parse_size(v, &b)) {
				fi->vram = b;
				fi->vram_rank = rank;
			}
		} else if (!strncmp(line, "drm-engine-", 11) && strncmp(line + 11, "capacity-", 9)) {
			int e = engine_index(s, line + 11, strlen(line + 11));
			uint64_t n = 0;
			const char *p = v;

			if (e < 0 || *p < '0' || *p > '9')
				continue;
			while (*p >= '0' && *p <= '9')
				n = n * 10 + (uint64_t)(*p++ - '0');
			/* amdgpu names two IP blocks "dec" (UVD and VCN): they add up. */
			fi->ns[e] += n;
			fi->engines |= 1u << e;
		}
	}
}

/* Read /proc/PID/fdinfo/FD into fi. 0 when it is an amdgpu client, else -1. */
static int read_client(struct amd_clients *s, int piddir, const char *fd, struct fdinfo *fi)
{
	char path[48];

	snprintf(path, sizeof(path), "fdinfo/%s", fd);
	if (read_file_at(piddir, path, s->fdinfo, sizeof(s->fdinfo)) < 0)
		return -1;
	parse_fdinfo(s, s->fdinfo, fi);
	return fi->amdgpu && fi->have_id && fi->pdev[0] ? 0 : -1;
}

struct scan_ctx {
	struct amd_clients *s;
	int64_t now;
};

static int on_drm_fd(pid_t pid, int piddir, const char *fd, const char *target, void *ud)
{
	struct scan_ctx *c = ud;
	struct amd_clients *s = c->s;
	struct drm_client *cl = NULL;
	struct fdinfo fi;

	(void)target;
	if (read_client(s, piddir, fd, &fi))
		return 0;
	for (size_t i = 0; i < s->ncl; i++)
		if (s->cl[i].pid == pid && s->cl[i].id == fi.id && !strcmp(s->cl[i].pdev, fi.pdev)) {
			cl = &s->cl[i];
			break;
		}
	if (cl && cl->gen == s->gen)
		return 0; /* the same client through another fd (dup, fork) */
	if (!cl) {
		if (s->ncl == s->acl) {
			s->acl = s->acl ? s->acl * 2 : 16;
			s->cl = xrealloc(s->cl, s->acl * sizeof(*s->cl));
		}
		cl = &s->cl[s->ncl++];
		memset(cl, 0, sizeof(*cl));
		cl->pid = pid;
		cl->id = fi.id;
		snprintf(cl->pdev, sizeof(cl->pdev), "%s", fi.pdev);
		/* Its baseline: busy time from now on. */
		memcpy(cl->prev_ns, fi.ns, sizeof(cl->prev_ns));
		cl->prev_t = c->now;
		for (size_t e = 0; e < AMD_ENGINES; e++)
			cl->energy_ns += fi.ns[e];
		cl->engines = fi.engines;
	}
	cl->gen = s->gen;
	cl->t = c->now;
	cl->vram = fi.vram;
	cl->have_vram = fi.vram_rank > 0;
	for (size_t e = 0; e < AMD_ENGINES; e++)
		if (fi.engines & (1u << e) && !(cl->engines & (1u << e))) {
			cl->prev_ns[e] = fi.ns[e]; /* an engine it had not used yet starts here */
			cl->energy_ns += fi.ns[e];
		}
	memcpy(cl->ns, fi.ns, sizeof(cl->ns));
	cl->engines |= fi.engines;
	return 0;
}

/* Scan every process's DRM fds (b's procfd, opened on first use). */
static void amd_scan_clients(struct amd_clients *s, struct sysfs_coll *b, int64_t now)
{
	struct scan_ctx c = { s, now };
	size_t keep = 0;

	s->ok = false;
	if (b->procfd < 0) {
		b->procfd = open(host_procfs(b->env->host), O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (b->procfd < 0)
			return;
	}
	s->gen++;
	s->ok = procfd_scan(b->procfd, "/dev/dri/", on_drm_fd, &c) == 0;
	if (!s->ok)
		return;
	for (size_t i = 0; i < s->ncl; i++)
		if (s->cl[i].gen == s->gen)
			s->cl[keep++] = s->cl[i];
	s->ncl = keep;
}

void amd_clients_for_cycle(struct amd_clients *s, struct sysfs_coll *b, const struct cycle *cy)
{
	if (s->cycle != cy->mono_ns) {
		s->cycle = cy->mono_ns;
		amd_scan_clients(s, b, cy->mono_ns);
	}
}

void amd_clients_free(struct amd_clients *s)
{
	free(s->cl);
	s->cl = NULL;
	s->ncl = s->acl = 0;
}
