/* SPDX-License-Identifier: MIT */
/*
 * sysfs readers, per-period counters, the device table and the /proc fd
 * scan shared by the sysfs device collectors; see sysfs.h.
 */
#include "sysfs.h"
#include "../../common/log.h"
#include "../../common/util.h"
#include "../host/host.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Directories are listed with getdents64 into a buffer on the stack: no
 * DIR (and its 32 KiB buffer) per listing, and the /proc scan lists one
 * directory per process every cycle.
 */
struct dirents {
	int fd;
	long len, pos;
	char buf[4096] __attribute__((aligned(8)));
};

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The next entry's name ("." and ".." included), or NULL at the end or on an error (errno). */
static const char *dirents_next(struct dirents *d)
{
	const struct linux_dirent64 *e;

	if (d->pos >= d->len) {
		d->len = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));
		d->pos = 0;
		if (d->len <= 0)
			return NULL;
	}
	e = (const struct linux_dirent64 *)(d->buf + d->pos);
	d->pos += e->d_reclen;
	return e->d_name;
}

/* ---- attribute files ------------------------------------------------------ */

int sysfs_dir(int dirfd, const char *rel)
{
	int fd = openat(dirfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

ssize_t sysfs_read(int dirfd, const char *rel, char *buf, size_t size)
{
	ssize_t n = read_file_at(dirfd, rel, buf, size);

	if (n < 0)
		return n;
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return n;
}

int sysfs_parse_u64(const char *s, uint64_t *v)
{
	uint64_t n = 0;
	int base = 10, digits = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++, digits++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			break;
		if (n > (UINT64_MAX - d) / (uint64_t)base)
			return -EBADMSG;
		n = n * (uint64_t)base + d;
	}
	while (isspace((unsigned char)*s))
		s++;
	if (!digits || *s)
		return -EBADMSG;
	*v = n;
	return 0;
}

int sysfs_parse_s64(const char *s, int64_t *v)
{
	uint64_t u;
	int neg = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (sysfs_parse_u64(s, &u) || u > (uint64_t)INT64_MAX)
		return -EBADMSG;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return 0;
}

int sysfs_u64(int dirfd, const char *rel, uint64_t *v)
{
	char buf[64];
	ssize_t n = sysfs_read(dirfd, rel, buf, sizeof(buf));

	if (n == -EFBIG)
		return -EBADMSG;
	return n < 0 ? (int)n : sysfs_parse_u64(buf, v);
}

int sysfs_s64(int dirfd, const char *rel, int64_t *v)
{
	char buf[64];
	ssize_t n = sysfs_read(dirfd, rel, buf, sizeof(buf));

	if (n == -EFBIG)
		return -EBADMSG;
	return n < 0 ? (int)n : sysfs_parse_s64(buf, v);
}

int sysfs_counter(int dirfd, const char *rel, uint64_t *v)
{
	char path[256];
	int rc;

	snprintf(path, sizeof(path), "%s/total", rel);
	rc = sysfs_u64(dirfd, path, v);
	if (rc == -ENOTDIR)
		rc = sysfs_u64(dirfd, rel, v);
	return rc;
}

/* Copy the last component of path (trailing '/' removed) into buf. Length or -EFBIG. */
static ssize_t last_component(char *path, char *buf, size_t size)
{
	size_t n = strlen(path), len;
	const char *base;

	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	len = strlen(base);
	if (len >= size)
		return -EFBIG;
	memcpy(buf, base, len + 1);
	return (ssize_t)len;
}

ssize_t sysfs_link_name(int dirfd, const char *rel, char *buf, size_t size)
{
	char target[4096], self[64], tmp[64];
	ssize_t n = readlinkat(dirfd, rel, target, sizeof(target) - 1);
	int fd;

	if (n < 0)
		return -errno;
	target[n] = '\0';
	n = last_component(target, tmp, sizeof(tmp));
	if (n > 0 && strcmp(tmp, "..") && strcmp(tmp, ".")) {
		if ((size_t)n >= size)
			return -EFBIG;
		memcpy(buf, tmp, (size_t)n + 1);
		return n;
	}
	/* "../..": the name of the directory it resolves to, as the kernel sees it. */
	fd = openat(dirfd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = readlink(self, target, sizeof(target) - 1);
	n = n < 0 ? -errno : n;
	close(fd);
	if (n < 0)
		return n;
	target[n] = '\0';
	return last_component(target, buf, size);
}

ssize_t sysfs_uevent(int dirfd, const char *rel, const char *key, char *buf, size_t size)
{
	char path[256], text[4096];
	size_t klen = strlen(key);
	ssize_t n;

	snprintf(path, sizeof(path), "%s%suevent", rel && *rel ? rel : "", rel && *rel ? "/" : "");
	n = sysfs_read(dirfd, path, text, sizeof(text));
	if (n < 0)
		return n;
	for (char *line = text, *next; line && *line; line = next) {
		size_t len;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, key, klen) || line[klen] != '=')
			continue;
		len = strlen(line + klen + 1);
		if (len >= size)
			return -EFBIG;
		memcpy(buf, line + klen + 1, len + 1);
		return (ssize_t)len;
	}
	return -ENOENT;
}

ssize_t sysfs_driver(int dirfd, const char *rel, char *buf, size_t size)
{
	char path[256];
	ssize_t n;

	snprintf(path, sizeof(path), "%s%sdriver", rel && *rel ? rel : "", rel && *rel ? "/" : "");
	n = sysfs_link_name(dirfd, path, buf, size);
	return n >= 0 ? n : sysfs_uevent(dirfd, rel, "DRIVER", buf, size);
}

ssize_t sysfs_pci_address(int dirfd, const char *rel, char *buf, size_t size)
{
	char name[64];
	ssize_t n = sysfs_link_name(dirfd, rel, name, sizeof(name));

	if (n < 0 || !sysfs_is_pci_address(name))
		n = sysfs_uevent(dirfd, rel, "PCI_SLOT_NAME", name, sizeof(name));
	if (n < 0)
		return n;
	if (!sysfs_is_pci_address(name))
		return -ENOENT;
	if ((size_t)n >= size)
		return -EFBIG;
	memcpy(buf, name, (size_t)n + 1);
	return n;
}

/* qsort_r's comparison: two offsets into the pool of the names (arg). */
static int cmp_names(const void *a, const void *b, void *arg)
{
	const struct sysfs_names *names = arg;

	return strverscmp(names->pool + *(const size_t *)a, names->pool + *(const size_t *)b);
}

int sysfs_list(int dirfd, const char *rel, struct sysfs_names *names)
{
	struct dirents d;
	const char *name;
	int err;

	names->n = 0;
	names->pool_size = 0;
	d.fd = openat(dirfd, rel && *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0)
		return -errno;
	d.len = d.pos = 0;
	errno = 0;
	while ((name = dirents_next(&d))) {
		size_t len = strlen(name) + 1;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (names->pool_size + len > names->pool_alloc) {
			names->pool_alloc = (names->pool_size + len) * 2 + 256;
			names->pool = xrealloc(names->pool, names->pool_alloc);
		}
		if (names->n == names->off_alloc) {
			names->off_alloc = names->off_alloc ? names->off_alloc * 2 : 32;
			names->off = xrealloc(names->off, names->off_alloc * sizeof(*names->off));
		}
		memcpy(names->pool + names->pool_size, name, len);
		names->off[names->n++] = names->pool_size;
		names->pool_size += len;
	}
	err = d.len < 0 ? errno : 0;
	close(d.fd);
	if (err)
		return -err;
	qsort_r(names->off, names->n, sizeof(*names->off), cmp_names, names);
	return 0;
}

void sysfs_names_free(struct sysfs_names *names)
{
	free(names->pool);
	free(names->off);
	memset(names, 0, sizeof(*names));
}

char *sysfs_key(const char *label, const char *channel, char *dst, size_t size)
{
	size_t n = 0;

	for (const char *p = label; *p && n + 1 < size; p++) {
		unsigned char c = (unsigned char)*p;

		if (isalnum(c) && c < 0x80)
			dst[n++] = (char)tolower(c);
		else if (n && dst[n - 1] != '_')
			dst[n++] = '_';
	}
	while (n && dst[n - 1] == '_')
		n--;
	dst[n] = '\0';
	if (!n || (dst[0] >= '0' && dst[0] <= '9'))
		snprintf(dst, size, "%s", channel);
	return dst;
}

bool sysfs_is_pci_address(const char *s)
{
	/* dddd:bb:dd.f, hex digits */
	static const char shape[] = "xxxx:xx:xx.x";

	for (size_t i = 0; i < sizeof(shape) - 1; i++)
		if (shape[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != shape[i])
			return false;
	return s[sizeof(shape) - 1] == '\0';
}

/* ---- u64 values in the report ---------------------------------------------- */

void json_set_u64(json_t *obj, const char *key, uint64_t v)
{
	json_object_set_new(obj, key, json_u64(v));
}

/* ---- per-period counters ---------------------------------------------------- */

bool counter_step(struct counter *c, uint64_t now, uint64_t *delta)
{
	bool had = c->have;

	*delta = now >= c->last ? now - c->last : now;
	c->last = now;
	c->have = true;
	return had;
}

/* ---- the device table ---------------------------------------------------------- */

void devtab_init(struct devtab *t, const struct cfg_device *cfg, uint32_t supported, void (*free_priv)(void *priv))
{
	memset(t, 0, sizeof(*t));
	t->free_priv = free_priv;
	t->cycle_ns = -1;
	for (size_t i = 0; cfg && i < cfg->ngroups; i++)
		t->groups |= 1u << cfg->groups[i].id;
	t->groups &= supported;
}

bool devtab_new_cycle(struct devtab *t, const struct cycle *cy)
{
	if (t->cycle_ns == cy->mono_ns)
		return false;
	t->cycle_ns = cy->mono_ns;
	return true;
}

void devtab_begin(struct devtab *t)
{
	t->gen++;
}

static bool index_taken(const struct devtab *t, unsigned index)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->slot[i]->index == index)
			return true;
	return false;
}

static void slot_reset(struct devtab *t, struct devslot *s)
{
	if (s->priv && t->free_priv)
		t->free_priv(s->priv);
	s->priv = NULL;
	s->gone = false;
	s->selected = false;
	s->told = 0;
	s->uuid[0] = s->pci[0] = s->model[0] = '\0';
}

struct devslot *devtab_find(const struct devtab *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->slot[i]->key, key))
			return t->slot[i];
	return NULL;
}

struct devslot *devtab_see(struct devtab *t, const char *key, long hint, bool *fresh)
{
	struct devslot *s;
	unsigned index = 0;
	size_t at;

	for (size_t i = 0; i < t->n; i++) {
		s = t->slot[i];
		if (strcmp(s->key, key))
			continue;
		*fresh = s->gone;
		if (s->gone)
			slot_reset(t, s);
		s->seen = t->gen;
		return s;
	}
	if (hint >= 0 && hint <= 0xffffff && !index_taken(t, (unsigned)hint))
		index = (unsigned)hint;
	else
		while (index_taken(t, index))
			index++;
	s = xcalloc(1, sizeof(*s));
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->index = index;
	s->seen = t->gen;
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? t->alloc * 2 : 8;
		t->slot = xrealloc(t->slot, t->alloc * sizeof(*t->slot));
	}
	for (at = t->n; at > 0 && t->slot[at - 1]->index > index; at--)
		t->slot[at] = t->slot[at - 1];
	t->slot[at] = s;
	t->n++;
	*fresh = true;
	return s;
}

static void slot_free(struct devtab *t, struct devslot *s)
{
	if (s->priv && t->free_priv)
		t->free_priv(s->priv);
	free(s);
}

void devtab_end(struct devtab *t)
{
	size_t keep = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct devslot *s = t->slot[i];

		if (s->seen != t->gen) {
			if (!s->gone) {
				s->gone = true;
				s->told = 0;
			} else if (!s->selected || (s->told & t->groups) == t->groups) {
				slot_free(t, s);
				continue;
			}
		}
		t->slot[keep++] = s;
	}
	t->n = keep;
}

void devtab_clear(struct devtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		slot_free(t, t->slot[i]);
	t->n = 0;
}

void devtab_free(struct devtab *t)
{
	devtab_clear(t);
	free(t->slot);
	t->slot = NULL;
	t->alloc = 0;
}

size_t devtab_present(const struct devtab *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += t->slot[i]->selected && !t->slot[i]->gone;
	return n;
}

void devtab_group(json_t *group)
{
	if (!json_object_get(group, "devices"))
		json_object_set_new(group, "devices", json_object());
}

json_t *devtab_entry(json_t *group, struct devslot *s, enum group_id id)
{
	json_t *d = device_entry(group, s->index, s->uuid[0] ? s->uuid : NULL, s->pci[0] ? s->pci : NULL,
				 s->model[0] ? s->model : NULL);

	if (!s->gone)
		return d;
	set_error(d, "the device disappeared (%s is no longer there); it is dropped from the next report",
		  s->key);
	s->told |= 1u << id;
	return NULL;
}

/* ---- reading one device's files for one group ----------------------------------- */

static bool warn_first(struct warnset *w, const char *file)
{
	if (!w)
		return false;
	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(w->name[i], file))
			return false;
	if (w->n < WARN_MAX)
		snprintf(w->name[w->n++], sizeof(w->name[0]), "%s", file);
	return true;
}

int rd_check(struct rdctx *r, const char *file, int rc)
{
	if (rc >= 0)
		return 1;
	for (const int *f = r->fatal; f && *f; f++)
		if (-rc == *f) {
			if (!r->err) {
				r->err = -rc;
				snprintf(r->file, sizeof(r->file), "%s", file);
			}
			return -1;
		}
	switch (-rc) {
	case ENOENT: /* not on this device or this driver version */
	case ENOTDIR:
	case EOPNOTSUPP:
	case ENODATA:
	case EINVAL: /* drivers answer EINVAL for a sensor the chip lacks */
	case ENXIO:
	case EAGAIN:
		return 0;
	case EBADMSG:
		if (warn_first(r->warned, file))
			log_warn("%s %s: %s does not hold what the driver writes; it is left out", r->type, r->key, file);
		return 0;
	default:
		if (warn_first(r->warned, file))
			log_warn("%s %s: cannot read %s: %s; it is left out", r->type, r->key, file, strerror(-rc));
		return 0;
	}
}

int rd_u64(struct rdctx *r, int dirfd, const char *file, uint64_t *v)
{
	int rc = r->err ? -1 : rd_check(r, file, sysfs_u64(dirfd, file, v));

	return rc == 1 && *v == SYSFS_U64_NA ? 0 : rc;
}

int rd_s64(struct rdctx *r, int dirfd, const char *file, int64_t *v)
{
	return r->err ? -1 : rd_check(r, file, sysfs_s64(dirfd, file, v));
}

int rd_counter(struct rdctx *r, int dirfd, const char *file, uint64_t *v)
{
	int rc = r->err ? -1 : rd_check(r, file, sysfs_counter(dirfd, file, v));

	return rc == 1 && *v == SYSFS_U64_NA ? 0 : rc;
}

int rd_text(struct rdctx *r, int dirfd, const char *file, char *buf, size_t size)
{
	ssize_t n;

	if (r->err)
		return -1;
	n = sysfs_read(dirfd, file, buf, size);
	if (n == -EFBIG)
		n = -EBADMSG;
	return rd_check(r, file, n < 0 ? (int)n : 0);
}

int rd_finish(struct rdctx *r, json_t *dev)
{
	static const char *const identity[] = { "index", "uuid", "pci_bus_id", "model", "error" };
	const char *k;
	json_t *v;
	void *tmp;

	if (!r->err)
		return 0;
	json_object_foreach_safe(dev, tmp, k, v) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(identity) && strcmp(k, identity[i]); i++)
			;
		if (i == ARRAY_SIZE(identity))
			json_object_del(dev, k);
	}
	if (r->err == EPERM || r->err == EBUSY)
		set_error(dev, "cannot read %s: %s (the device is resetting or suspended)", r->file, strerror(r->err));
	else if (r->err == ENODEV)
		set_error(dev, "cannot read %s: %s (the device went away)", r->file, strerror(r->err));
	else
		set_error(dev, "cannot read %s: %s", r->file, strerror(r->err));
	return -1;
}

/* ---- what every sysfs collector's state starts with ----------------------------- */

void sysfs_coll_init(struct sysfs_coll *c, const struct mon_env *env, const struct cfg_device *cfg,
		     uint32_t supported, void (*free_priv)(void *priv))
{
	c->env = env;
	c->cfg = cfg;
	c->sysfd = c->procfd = -1;
	c->error[0] = '\0';
	devtab_init(&c->tab, cfg, supported, free_priv);
}

int sysfs_coll_list(struct sysfs_coll *c, const char *dir)
{
	int rc;

	c->error[0] = '\0';
	if (c->sysfd < 0) {
		c->sysfd = open(host_sysfs(c->env->host), O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c->sysfd < 0) {
			snprintf(c->error, sizeof(c->error), "cannot open the sysfs root %s: %s", host_sysfs(c->env->host),
				 strerror(errno));
			devtab_clear(&c->tab);
			return -1;
		}
	}
	rc = sysfs_list(c->sysfd, dir, &c->names);
	if (rc == -ENOENT)
		return 0; /* sysfs_list left names empty */
	if (rc) {
		snprintf(c->error, sizeof(c->error), "cannot list %s/%s: %s", host_sysfs(c->env->host), dir,
			 strerror(-rc));
		devtab_clear(&c->tab);
		return -1;
	}
	return 1;
}

bool sysfs_coll_begin(struct sysfs_coll *c, const struct cycle *cy, json_t *group, void (*scan)(void *state))
{
	if (devtab_new_cycle(&c->tab, cy))
		scan(c);
	devtab_group(group);
	if (c->error[0]) {
		set_error(group, "%s", c->error);
		return false;
	}
	return true;
}

int sysfs_coll_fill(struct sysfs_coll *c, enum group_id id, const struct cycle *cy, json_t *group,
		    const char *type, const int *fatal, sysfs_fill_fn fill)
{
	int noted = 0;

	for (size_t i = 0; i < c->tab.n; i++) {
		struct devslot *sl = c->tab.slot[i];
		struct rdctx r = { .type = type, .key = sl->key, .fatal = fatal, .group = group };
		json_t *d;

		if (!sl->selected || !(d = devtab_entry(group, sl, id)))
			continue;
		fill(c, id, cy, sl, &r, d);
		rd_finish(&r, d);
		noted |= r.noted;
	}
	return noted ? -1 : 0;
}

struct dev_ident *sysfs_coll_devices_each(void *state, struct dev_list *out, void **priv, size_t *it)
{
	struct sysfs_coll *c = state;

	for (; c && *it < c->tab.n; (*it)++) {
		const struct devslot *sl = c->tab.slot[*it];
		struct dev_ident *d;
		char key[16];

		if (!sl->selected || sl->gone)
			continue;
		snprintf(key, sizeof(key), "%u", sl->index);
		d = dev_list_add(out, NULL, key);
		d->index = (int)sl->index;
		snprintf(d->uuid, sizeof(d->uuid), "%s", sl->uuid);
		snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", sl->pci);
		if (priv)
			*priv = sl->priv;
		(*it)++;
		return d;
	}
	return NULL;
}

void sysfs_coll_devices(void *state, struct dev_list *out)
{
	size_t it = 0;

	while (sysfs_coll_devices_each(state, out, NULL, &it))
		;
}

const char *sysfs_coll_error(void *state)
{
	struct sysfs_coll *c = state;

	return c->error[0] ? c->error : NULL;
}

void sysfs_coll_free(void *state)
{
	struct sysfs_coll *c = state;

	if (!c)
		return;
	devtab_free(&c->tab);
	sysfs_names_free(&c->names);
	if (c->sysfd >= 0)
		close(c->sysfd);
	if (c->procfd >= 0)
		close(c->procfd);
	free(c);
}

int sysfs_probe(const struct mon_env *env, const char *dir, bool (*match)(int sysfd, const char *name))
{
	struct sysfs_names names = { 0 };
	int sysfd = open(host_sysfs(env->host), O_PATH | O_DIRECTORY | O_CLOEXEC), found = 0;

	if (sysfd < 0)
		return 0;
	if (sysfs_list(sysfd, dir, &names) == 0)
		for (size_t i = 0; i < names.n && !found; i++)
			found = match(sysfd, sysfs_name(&names, i));
	sysfs_names_free(&names);
	close(sysfd);
	return found;
}

/* ---- who holds a device node open --------------------------------------------- */

/* The fds of one process, its /proc/PID directory open as piddir. */
static int scan_fds(int piddir, pid_t pid, const char *prefix, procfd_fn fn, void *ud)
{
	struct dirents d;
	size_t plen = strlen(prefix);
	const char *name;
	char target[256];

	d.fd = openat(piddir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0)
		return -errno;
	d.len = d.pos = 0;
	while ((name = dirents_next(&d))) {
		ssize_t n;

		if (name[0] < '0' || name[0] > '9')
			continue;
		n = readlinkat(d.fd, name, target, sizeof(target) - 1);
		if (n <= 0 || (size_t)n < plen)
			continue;
		target[n] = '\0';
		if (memcmp(target, prefix, plen))
			continue;
		if (fn(pid, piddir, name, target, ud))
			break;
	}
	close(d.fd);
	return 0;
}

int procfd_scan(int procfd, const char *prefix, procfd_fn fn, void *ud)
{
	struct dirents d;
	const char *name;

	d.fd = openat(procfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0)
		return -errno;
	d.len = d.pos = 0;
	while ((name = dirents_next(&d))) {
		char *end;
		long pid;
		int piddir;

		if (name[0] < '1' || name[0] > '9')
			continue;
		pid = strtol(name, &end, 10);
		if (*end || pid <= 0)
			continue;
		piddir = openat(d.fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (piddir < 0)
			continue;
		(void)scan_fds(piddir, (pid_t)pid, prefix, fn, ud);
		close(piddir);
	}
	close(d.fd);
	return 0;
}
