/* SPDX-License-Identifier: MIT */
/*
 * Whether accel-monitor asks the EC2 instance metadata service
 * (monitor/host/instance.c): EC2 decided from the host's own facts under the
 * sysfs root (tests/fixtures/ec2: Nitro, Xen, and a QEMU guest; and trees of
 * one fact each, with look-alikes that must not count), then
 * --instance-metadata and the AWS variables. Nothing here makes a request:
 * instance_should_ask decides, and only instances that ask nothing are made.
 */
#include "../../common/jsonw.h"
#include "../../common/util.h"
#include "../../monitor/core/loop.h"
#include "../../monitor/host/instance.h"
#include "../../monitor/http/http_async.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX "tests/fixtures/ec2"

static char root[] = "/tmp/test_instance.XXXXXX";

/* A sysfs tree under root/name holding one file rel with text; returns its path (static). */
static const char *tree(const char *name, const char *rel, const char *text)
{
	static char dir[512];
	char path[1024], *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = path + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, strlen(text)) || close(fd)) {
		printf("Bail out! cannot write %s\n", path);
		exit(2);
	}
	return dir;
}

/* instance_info's error of an instance made with mode over sysfs (one that asks nothing: no request). */
static void info_error(struct loop *l, struct http_async *h, enum instance_mode mode, const char *sysfs, char *why,
		       size_t size)
{
	struct instance *in = instance_new(l, h, 3600 * NS_PER_S, mode, sysfs);
	json_t *info = instance_json(in);
	struct buf b;

	snprintf(why, size, "%s", json_string_value(json_object_get(info, "error")));
	/* What each report writes: the object's text, made when the object was. */
	buf_init(&b, 1 << 20);
	json_write(info, &b);
	ok(b.len > 2 && !strcmp(instance_text(in), b.data), "instance_text is the object's text: %.60s",
	   instance_text(in));
	buf_free(&b);
	json_decref(info);
	instance_free(in);
}

int main(void)
{
	static const struct {
		const char *name, *rel, *text;
		int ec2;
	} facts[] = {
		{ "asset", "class/dmi/id/board_asset_tag", "i-0123456789abcdef0\n", 1 },
		{ "asset8", "class/dmi/id/board_asset_tag", "i-12345678\n", 1 },
		{ "asset-upper", "class/dmi/id/board_asset_tag", "i-0123456789ABCDEF0\n", 0 },
		{ "asset-short", "class/dmi/id/board_asset_tag", "i-123\n", 0 },
		{ "asset-other", "class/dmi/id/board_asset_tag", "Default string\n", 0 },
		{ "bios", "class/dmi/id/bios_vendor", "Amazon EC2\n", 1 },
		{ "vendor-like", "class/dmi/id/sys_vendor", "Amazon EC2 compatible\n", 0 },
		/* the hypervisor's uuid counts only with a second fact (a random one starts so once in 4096) */
		{ "hv-upper", "hypervisor/uuid", "EC2E1916-9099-7CAF-FD21-012345ABCDEF\n", 1 },
		{ "hv-alone", "hypervisor/uuid", "ec2e1916-9099-7caf-fd21-012345abcdef\n", 0 },
		{ "hv-le-alone", "hypervisor/uuid", "45e12aec-dcd1-b213-94ed-012345abcdef\n", 0 },
		{ "hv-dmi", "hypervisor/uuid", "ec2e1916-9099-7caf-fd21-012345abcdef\n", 1 },
		{ "hv-serial", "hypervisor/uuid", "ec2e1916-9099-7caf-fd21-012345abcdef\n", 1 },
		{ "hv-dmi-other", "hypervisor/uuid", "ec2e1916-9099-7caf-fd21-012345abcdef\n", 0 },
		{ "hv-extra-other", "hypervisor/uuid", "ec2e1916-9099-7caf-fd21-012345abcdef\n", 0 },
		{ "hv-other", "hypervisor/uuid", "3b2e1916-9099-7caf-fd21-012345abcdef\n", 0 },
		{ "uuid-alone", "class/dmi/id/product_uuid", "ec2e1916-9099-7caf-fd21-012345abcdef\n", 0 },
		{ "uuid", "class/dmi/id/product_uuid", "ec2e1916-9099-7caf-fd21-012345abcdef\n", 1 },
		{ "uuid-le", "class/dmi/id/product_uuid", "45E12AEC-DCD1-B213-94ED-012345ABCDEF\n", 1 },
		{ "uuid-other", "class/dmi/id/product_uuid", "45E12AED-DCD1-B213-94ED-012345ABCDEF\n", 0 },
		{ "biosver", "class/dmi/id/bios_version", "4.2.amazon\n", 1 },
		{ "biosver-other", "class/dmi/id/bios_version", "amazonian 1.0\n", 0 },
	};
	struct loop *l = loop_new();
	struct http_async *h = http_async_new(l);
	char why[512];

	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp\n");
		return 2;
	}
	is_int(instance_mode_parse("auto"), INSTANCE_AUTO, "auto");
	is_int(instance_mode_parse("on"), INSTANCE_ON, "on");
	is_int(instance_mode_parse("off"), INSTANCE_OFF, "off");
	is_int(instance_mode_parse("yes"), -EINVAL, "yes is refused");
	is_int(instance_mode_parse(""), -EINVAL, "\"\" is refused");

	/* The fixtures */
	ok(instance_ec2_local(FIX "/nitro", why, sizeof(why)) == 1 && strstr(why, "sys_vendor \"Amazon EC2\""),
	   "Nitro: EC2 by its sys_vendor (%s)", why);
	ok(instance_ec2_local(FIX "/xen", why, sizeof(why)) == 1 && strstr(why, "hypervisor uuid \"ec2") && strstr(why, ".amazon"),
	   "Xen: EC2 by the hypervisor's uuid (%s)", why);
	ok(instance_ec2_local(FIX "/other", why, sizeof(why)) == 0 && strstr(why, "\"QEMU\""),
	   "a QEMU guest: not EC2, and it says what it saw (%s)", why);
	ok(instance_ec2_local(FIX "/none", why, sizeof(why)) == 0 && strstr(why, "no EC2 sign"),
	   "no DMI at all: not EC2 (%s)", why);
	/* One fact each, and look-alikes */
	for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		const char *d = tree(facts[i].name, facts[i].rel, facts[i].text);

		/* product_uuid counts only with product_serial the same (as ds-identify) */
		if (!strncmp(facts[i].name, "uuid-", 5) && strcmp(facts[i].name, "uuid-alone"))
			d = tree(facts[i].name, "class/dmi/id/product_serial", facts[i].text);
		else if (!strcmp(facts[i].name, "uuid"))
			d = tree(facts[i].name, "class/dmi/id/product_serial", "EC2E1916-9099-7CAF-FD21-012345ABCDEF\n");
		/* the hypervisor's uuid with its second fact, or a look-alike of one */
		else if (!strcmp(facts[i].name, "hv-upper"))
			d = tree(facts[i].name, "hypervisor/version/extra", ".amazon\n");
		else if (!strcmp(facts[i].name, "hv-extra-other"))
			d = tree(facts[i].name, "hypervisor/version/extra", ".1-xs\n");
		else if (!strcmp(facts[i].name, "hv-dmi"))
			d = tree(facts[i].name, "class/dmi/id/product_uuid", "EC2E1916-9099-7CAF-FD21-012345ABCDEF\n");
		else if (!strcmp(facts[i].name, "hv-serial"))
			d = tree(facts[i].name, "class/dmi/id/product_serial", "EC2E1916-9099-7CAF-FD21-012345ABCDEF\n");
		else if (!strcmp(facts[i].name, "hv-dmi-other"))
			d = tree(facts[i].name, "class/dmi/id/product_uuid", "EC2E1916-9099-7CAF-FD21-0123456789AB\n");

		is_int(instance_ec2_local(d, why, sizeof(why)), facts[i].ec2, facts[i].name);
	}

	/* The decision: option, AWS variables, then the facts. */
	unsetenv("AWS_EC2_METADATA_DISABLED");
	unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	ok(!instance_should_ask(INSTANCE_AUTO, FIX "/other", why, sizeof(why)) && strstr(why, "not an EC2 instance (DMI"),
	   "auto, not EC2: not asked (%s)", why);
	info_error(l, h, INSTANCE_AUTO, FIX "/other", why, sizeof(why));
	ok(strstr(why, "not an EC2 instance (DMI sys_vendor \"QEMU\""), "instance_info says why (%s)", why);
	info_error(l, h, INSTANCE_OFF, FIX "/nitro", why, sizeof(why));
	is_str(why, "instance metadata off (--instance-metadata=off)", "off: instance_info says so");
	ok(instance_should_ask(INSTANCE_AUTO, FIX "/nitro", why, sizeof(why)), "auto, Nitro: asked (%s)", why);
	ok(instance_should_ask(INSTANCE_AUTO, FIX "/xen", why, sizeof(why)), "auto, Xen: asked (%s)", why);
	ok(!instance_should_ask(INSTANCE_OFF, FIX "/nitro", why, sizeof(why)) && strstr(why, "--instance-metadata=off"),
	   "off, Nitro: not asked (%s)", why);
	ok(instance_should_ask(INSTANCE_ON, FIX "/other", why, sizeof(why)), "on, not EC2: asked (%s)", why);
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9", 1);
	ok(instance_should_ask(INSTANCE_AUTO, FIX "/other", why, sizeof(why)),
	   "auto, not EC2, AWS_EC2_METADATA_SERVICE_ENDPOINT set: asked (%s)", why);
	ok(!instance_should_ask(INSTANCE_OFF, FIX "/other", why, sizeof(why)), "off beats the endpoint variable");
	unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
	ok(!instance_should_ask(INSTANCE_AUTO, FIX "/nitro", why, sizeof(why)) && strstr(why, "AWS_EC2_METADATA_DISABLED"),
	   "auto, Nitro, AWS_EC2_METADATA_DISABLED=TRUE: not asked (%s)", why);
	ok(instance_should_ask(INSTANCE_ON, FIX "/other", why, sizeof(why)), "on beats AWS_EC2_METADATA_DISABLED");
	setenv("AWS_EC2_METADATA_DISABLED", "false", 1);
	ok(instance_should_ask(INSTANCE_AUTO, FIX "/nitro", why, sizeof(why)), "AWS_EC2_METADATA_DISABLED=false: asked");
	unsetenv("AWS_EC2_METADATA_DISABLED");

	http_async_free(h);
	loop_free(l);
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			printf("# cannot remove %s\n", root);
	}
	return done_testing();
}
