/* SPDX-License-Identifier: MIT */
/*
 * What the sysfs device collectors share (monitor/sysfs/sysfs.c): strict number
 * parsing, per-period counters across resets, the device table (stable
 * indices, a vanished device reported once per group then dropped), natural
 * directory order, and the /proc fd scan on tests/fixtures/proc-devices.
 */
#include "../../common/util.h"
#include "../../monitor/sysfs/sysfs.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* text with its newline shown as \\n, for a test name on one line */
static const char *shown(const char *text)
{
	static char buf[2][64];
	static int k;
	char *o = buf[k ^= 1];
	size_t n = 0;

	for (; *text && n + 3 < sizeof(buf[0]); text++)
		if (*text == '\n') {
			o[n++] = '\\';
			o[n++] = 'n';
		} else {
			o[n++] = *text;
		}
	o[n] = '\0';
	return o;
}

static void test_parse(void)
{
	static const struct {
		const char *text;
		int rc;
		uint64_t v;
	} u[] = {
		{ "42", 0, 42 },
		{ " 42\n", 0, 42 },
		{ "0x1002", 0, 0x1002 },
		{ "0", 0, 0 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -EBADMSG, 0 },
		{ "", -EBADMSG, 0 },
		{ "abc", -EBADMSG, 0 },
		{ "-1", -EBADMSG, 0 },
		{ "12abc", -EBADMSG, 0 },
		{ "1e6", -EBADMSG, 0 },
		{ "0x", -EBADMSG, 0 },
	};
	static const struct {
		const char *text;
		int rc;
		int64_t v;
	} s[] = {
		{ "-5000", 0, -5000 }, { "45000\n", 0, 45000 }, { "-", -EBADMSG, 0 }, { "--1", -EBADMSG, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(u); i++) {
		uint64_t v = 0;
		int rc = sysfs_parse_u64(u[i].text, &v);

		ok(rc == u[i].rc && (rc || v == u[i].v), "parse_u64(\"%s\") = %d, %llu", shown(u[i].text), rc,
		   (unsigned long long)v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		int64_t v = 0;
		int rc = sysfs_parse_s64(s[i].text, &v);

		ok(rc == s[i].rc && (rc || v == s[i].v), "parse_s64(\"%s\") = %d, %lld", shown(s[i].text), rc, (long long)v);
	}
	{
		static const char *const keys[][3] = {
			{ "Package id 0", "temp1", "package_id_0" }, { "edge", "temp1", "edge" },
			{ "CPU Fan", "fan1", "cpu_fan" },             { "  ", "temp2", "temp2" },
			{ "3.3V", "in1", "in1" },                      { "Tctl", "temp1", "tctl" },
			{ "Sensor-1 (°C)", "temp3", "sensor_1_c" },
		};
		char key[48];

		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			is_str(sysfs_key(keys[i][0], keys[i][1], key, sizeof(key)), keys[i][2], keys[i][0]);
	}
	ok(sysfs_is_pci_address("0000:03:00.0") && sysfs_is_pci_address("0000:c1:00.1"), "PCI addresses");
	ok(!sysfs_is_pci_address("coretemp.0") && !sysfs_is_pci_address("0000:03:00.0x") &&
		   !sysfs_is_pci_address("0000:03:00"),
	   "not PCI addresses");
}

static void test_counter(void)
{
	struct counter c = { 0 };
	uint64_t d;

	ok(!counter_step(&c, 100, &d), "first sample: no delta (baseline)");
	ok(counter_step(&c, 130, &d) && d == 30, "130 after 100: 30");
	ok(counter_step(&c, 130, &d) && d == 0, "unchanged: 0");
	ok(counter_step(&c, 7, &d) && d == 7, "went backwards (reset): a fresh start, 7, never negative");
	ok(counter_step(&c, 9, &d) && d == 2, "then counts on: 2");
}

static void test_devtab(void)
{
	struct cfg_group gs[] = { { GROUP_DEVICE_INFO, 1000 }, { GROUP_DEVICE_THERMAL, 1000 },
				  { GROUP_DEVICE_CLOCKS, 1000 } };
	struct cfg_device cfg = { .type = "ncs2", .select_all = 1, .groups = gs, .ngroups = 3 };
	struct devtab t;
	struct devslot *a, *b, *c;
	bool fresh;
	json_t *g;

	devtab_init(&t, &cfg, GROUP_BIT(GROUP_DEVICE_INFO) | GROUP_BIT(GROUP_DEVICE_THERMAL), free);
	devtab_begin(&t);
	a = devtab_see(&t, "1-2", -1, &fresh);
	ok(fresh && a->index == 0, "first device: index 0");
	b = devtab_see(&t, "1-3", -1, &fresh);
	ok(fresh && b->index == 1, "second: index 1");
	c = devtab_see(&t, "neuron5", 5, &fresh);
	ok(c->index == 5, "a hint is taken when free");
	a->selected = b->selected = c->selected = true;
	devtab_end(&t);
	is_int(devtab_present(&t), 3, "three present");

	devtab_begin(&t);
	devtab_see(&t, "1-3", -1, &fresh);
	ok(!fresh, "seen again: not fresh");
	devtab_see(&t, "neuron5", 5, &fresh);
	devtab_end(&t);
	ok(a->gone && devtab_present(&t) == 2, "1-2 not seen: gone");

	g = group_new(1.0, "2026-11-21T05:30:00.000Z");
	devtab_group(g);
	ok(!devtab_entry(g, a, GROUP_DEVICE_INFO), "a gone device gets no data object");
	ok(strstr(json_string_value(json_object_get(json_object_get(json_object_get(g, "devices"), "0"), "error")),
		  "disappeared") != NULL,
	   "but its error, under its index");
	json_decref(g);

	devtab_begin(&t);
	devtab_see(&t, "1-3", -1, &fresh);
	devtab_see(&t, "neuron5", 5, &fresh);
	devtab_end(&t);
	ok(devtab_find(&t, "1-2") != NULL, "kept while a supported group has not reported it (thermal)");
	g = group_new(1.0, "2026-11-21T05:30:00.000Z");
	devtab_entry(g, a, GROUP_DEVICE_THERMAL);
	json_decref(g);
	devtab_begin(&t);
	devtab_see(&t, "1-3", -1, &fresh);
	devtab_see(&t, "neuron5", 5, &fresh);
	devtab_end(&t);
	ok(!devtab_find(&t, "1-2"), "dropped once info and thermal reported it (clocks is not supported)");
	a = devtab_see(&t, "2-1", -1, &fresh);
	ok(fresh && a->index == 0, "a new device takes the lowest free index");
	b = devtab_see(&t, "neuron6", 5, &fresh);
	ok(b->index == 2, "a hint already taken: the lowest free index");
	devtab_free(&t);
}

static void test_list(void)
{
	const char *tmp = getenv("TMPDIR");
	struct sysfs_names n = { 0 };
	char dir[256], path[400], cat[512] = "";

	snprintf(dir, sizeof(dir), "%s/accel-sysfs-list.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(2);
	}
	for (const char *const *p = (const char *const[]){ "card10", "card2", "card1", "renderD128", NULL }; *p; p++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, *p);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	is_int(sysfs_list(AT_FDCWD, dir, &n), 0, "list");
	for (size_t i = 0; i < n.n; i++) {
		strcat(cat, sysfs_name(&n, i));
		strcat(cat, " ");
	}
	is_str(cat, "card1 card2 card10 renderD128 ", "natural order");
	is_int(sysfs_list(AT_FDCWD, "/nonexistent-dir", &n), -ENOENT, "a missing directory: -ENOENT");
	sysfs_names_free(&n);
	for (const char *const *p = (const char *const[]){ "card10", "card2", "card1", "renderD128", NULL }; *p; p++) {
		snprintf(path, sizeof(path), "%s/%s", dir, *p);
		unlink(path);
	}
	rmdir(dir);
}

struct hits {
	char seen[16][64];
	size_t n;
};

static int on_fd(pid_t pid, int piddir, const char *fd, const char *target, void *ud)
{
	struct hits *h = ud;

	(void)piddir;
	if (h->n < 16)
		snprintf(h->seen[h->n++], sizeof(h->seen[0]), "%d:%s:%s", (int)pid, fd, target);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void test_procfd(void)
{
	int procfd = open("tests/fixtures/proc-devices", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct hits h = { .n = 0 };

	is_int(procfd_scan(procfd, "/dev/bus/usb/", on_fd, &h), 0, "scan /proc for USB nodes");
	qsort(h.seen, h.n, sizeof(h.seen[0]), cmp);
	is_int(h.n, 3, "three fds point at USB nodes");
	is_str(h.seen[0], "3000:7:/dev/bus/usb/002/005", "pid 3000 fd 7");
	h.n = 0;
	is_int(procfd_scan(procfd, "/dev/dri/", on_fd, &h), 0, "scan /proc for DRM nodes");
	qsort(h.seen, h.n, sizeof(h.seen[0]), cmp);
	is_int(h.n, 6, "six fds point at DRM nodes, three of them Xorg's");
	is_str(h.seen[0], "1000:10:/dev/dri/card1", "Xorg (pid 1000) first");
	is_int(procfd_scan(-1, "/dev/", on_fd, &h), -EBADF, "no procfs root: an error");
	close(procfd);
}

int main(void)
{
	test_parse();
	test_counter();
	test_devtab();
	test_list();
	test_procfd();
	return done_testing();
}
