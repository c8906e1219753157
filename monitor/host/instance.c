/* SPDX-License-Identifier: MIT */
/* Instance metadata over IMDSv2 on the producer's loop (http_async.h), and keeping the answer; see instance.h. */
#include "instance.h"
#include "../core/loop.h"
#include "../http/http_async.h"
#include "../../common/jsonw.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define FETCH_DEADLINE_NS (12 * NS_PER_S) /* at most ~10 requests of 1 s */
#define IMDS_DEFAULT "http://169.254.169.254"
#define IMDS_TIMEOUT_MS 1000               /* per request; off EC2 the token PUT fails within this */
#define IMDS_VALUE_MAX 4096                /* metadata values are short; anything longer is refused */
#define IMDS_TOKEN_TTL "21600"

/* The EC2 fields of instance_info, in neuron-monitor's order, and the metadata path each comes from. */
static const struct {
	const char *field;
	const char *path; /* relative to /latest/meta-data/; NULL: derived */
	int optional;     /* 404 means "" (tags are off by default on EC2) */
} ec2_fields[] = {
	{ "instance_name", "tags/instance/Name", 1 },
	{ "instance_id", "instance-id", 0 },
	{ "instance_type", "instance-type", 0 },
	{ "instance_availability_zone", "placement/availability-zone", 0 },
	{ "instance_availability_zone_id", "placement/availability-zone-id", 1 },
	{ "instance_region", "placement/region", 1 },
	{ "ami_id", "ami-id", 0 },
	{ "subnet_id", NULL, 0 },
};

/* The requests of one fetch, in order: the token, each field with a path, the MAC, its subnet. */
enum { STEP_TOKEN = -1, STEP_MAC = (int)ARRAY_SIZE(ec2_fields), STEP_SUBNET, STEP_DONE };

struct instance {
	struct loop *loop;       /* borrowed */
	struct http_async *http; /* borrowed */
	unsigned conn;
	struct http_call call;   /* the request running */
	struct loop_timer timer; /* the fetch's deadline while it runs, else the next fetch */
	char endpoint[512];      /* AWS_EC2_METADATA_SERVICE_ENDPOINT, or the default, without a trailing '/' */
	int disabled;            /* not asked */
	char disabled_why[384];  /* why (instance_should_ask's answer) */
	int64_t refresh_ns;
	json_t *info;            /* the current object, hostname and node_name included */
	struct buf text;         /* info as the report writes it (json_write): made when info is */
	int have_good;           /* a fetch has succeeded: a failure keeps its values */
	int first_done;
	/* the fetch running */
	int fetching;
	int step;
	json_t *got;             /* the EC2 fields so far */
	char token_hdr[320];     /* "X-aws-ec2-metadata-token: ..." */
	char path[300];          /* the request's path, for messages */
	char mac[64];
	char hostname[256], node_name[256];
	char pod_name[256], pod_namespace[256]; /* the monitor's own pod (downward API), "" outside Kubernetes */
};

/* Replace the current object with the EC2 fields of o (borrowed) and err. */
static void publish(struct instance *in, json_t *o, const char *err)
{
	json_t *n = json_object();

	for (size_t i = 0; i < ARRAY_SIZE(ec2_fields); i++) {
		json_t *v = o ? json_object_get(o, ec2_fields[i].field) : NULL;

		if (!json_is_string(v) && in->info)
			v = json_object_get(in->info, ec2_fields[i].field); /* keep what we had */
		json_object_set_new(n, ec2_fields[i].field, json_string(json_is_string(v) ? json_string_value(v) : ""));
	}
	json_object_set_new(n, "error", json_string(err));
	json_object_set_new(n, "hostname", json_string(in->hostname));
	json_object_set_new(n, "node_name", json_string(in->node_name));
	/* The monitor's own pod, when the downward API gives it: only then (other reports stay as they were). */
	if (*in->pod_name)
		json_object_set_new(n, "pod_name", json_string(in->pod_name));
	if (*in->pod_namespace)
		json_object_set_new(n, "pod_namespace", json_string(in->pod_namespace));
	json_decref(in->info);
	in->info = n;
	buf_reset(&in->text);
	json_write(n, &in->text); /* no cap (instance_new): never a partial text in a report */
}

static void on_timer(struct loop_timer *t);
static void on_answer(struct http_call *c, void *data);

/* The fetch is over, err saying why when it failed: publish, and schedule the next one. */
static void fetch_done(struct instance *in, const char *err)
{
	if (!*err) {
		in->have_good = 1;
		publish(in, in->got, "");
	} else if (in->have_good) {
		/* Keep the last good values and say why they are old. */
		publish(in, NULL, err);
	} else {
		publish(in, in->got, err);
	}
	if (*err)
		log_debug("instance: %s", err);
	json_decref(in->got);
	in->got = NULL;
	in->fetching = 0;
	in->first_done = 1;
	loop_timer_start(in->loop, &in->timer, clock_mono_ns() + in->refresh_ns, on_timer, in);
}

/* Ask for what step needs (the token, a field, the MAC, the subnet), or finish. */
static void next_request(struct instance *in)
{
	const char *hdr = in->token_hdr;
	struct http_opts o = { .method = "GET", .headers = &hdr, .nheaders = 1, .timeout_ms = IMDS_TIMEOUT_MS,
			       .max_body = IMDS_VALUE_MAX, .direct = 1 /* IMDS is link-local: never via a proxy */ };
	char url[1024];

	while (in->step >= 0 && in->step < STEP_MAC && !ec2_fields[in->step].path)
		in->step++; /* derived */
	if (in->step == STEP_TOKEN) {
		hdr = "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL;
		o.method = "PUT";
		snprintf(in->path, sizeof(in->path), "/latest/api/token");
	} else if (in->step < STEP_MAC) {
		snprintf(in->path, sizeof(in->path), "/latest/meta-data/%s", ec2_fields[in->step].path);
	} else if (in->step == STEP_MAC) {
		snprintf(in->path, sizeof(in->path), "/latest/meta-data/mac");
	} else if (in->step == STEP_SUBNET) {
		snprintf(in->path, sizeof(in->path), "/latest/meta-data/network/interfaces/macs/%s/subnet-id", in->mac);
	} else {
		/* Older IMDS versions lack placement/region: the zone minus its letter is the region. */
		if (!*json_string_value(json_object_get(in->got, "instance_region"))) {
			const char *az = json_string_value(json_object_get(in->got, "instance_availability_zone"));
			size_t n = strlen(az);

			if (n > 1)
				json_object_set_new(in->got, "instance_region", json_stringn(az, n - 1));
		}
		fetch_done(in, "");
		return;
	}
	snprintf(url, sizeof(url), "%s%s", in->endpoint, in->path);
	o.url = url;
	http_call_start(in->http, &in->call, in->conn, &o, on_answer, in);
}

/* The answer's first line into dst. */
static void first_line(const struct http_call *c, char *dst, size_t size)
{
	const char *b = c->body.data ? c->body.data : "";

	snprintf(dst, size, "%.*s", (int)strcspn(b, "\r\n"), b);
}

/* One request's answer: keep what it says and go on, or end the fetch with why. */
static void on_answer(struct http_call *c, void *data)
{
	struct instance *in = data;
	int optional = in->step == STEP_SUBNET || (in->step >= 0 && in->step < STEP_MAC && ec2_fields[in->step].optional);
	char err[512] = "", val[IMDS_VALUE_MAX];

	if (in->step == STEP_TOKEN) {
		if (c->error[0]) {
			snprintf(err, sizeof(err), "instance metadata service at %s unreachable: %s", in->endpoint,
				 c->error);
		} else if (c->status != 200) {
			snprintf(err, sizeof(err), "instance metadata token request to %s: HTTP %ld", in->endpoint,
				 c->status);
		} else {
			first_line(c, val, sizeof(val));
			/* It goes into a request header: a CR or LF in it would add headers. */
			if (!http_secret_check("the instance metadata token", val, err, sizeof(err)))
				snprintf(in->token_hdr, sizeof(in->token_hdr), "X-aws-ec2-metadata-token: %.256s", val);
			memset(val, 0, sizeof(val));
		}
		if (*err) {
			fetch_done(in, err);
			return;
		}
		in->step++;
		next_request(in);
		return;
	}
	if (c->error[0]) {
		snprintf(err, sizeof(err), "GET %s: %s", in->path, c->error);
	} else if (c->status == 404 && optional) {
		val[0] = '\0';
	} else if (c->status != 200) {
		snprintf(err, sizeof(err), "GET %s: HTTP %ld", in->path, c->status);
	} else {
		first_line(c, val, sizeof(val));
		utf8_sanitize(val);
	}
	if (*err) {
		fetch_done(in, err);
		return;
	}
	if (in->step == STEP_MAC)
		snprintf(in->mac, sizeof(in->mac), "%s", val);
	else
		json_object_set_new(in->got, in->step == STEP_SUBNET ? "subnet_id" : ec2_fields[in->step].field,
				    json_string(val));
	in->step++;
	next_request(in);
}

static void fetch_start(struct instance *in)
{
	if (in->disabled) {
		publish(in, NULL, in->disabled_why);
		in->first_done = 1;
		return;
	}
	in->fetching = 1;
	in->step = STEP_TOKEN;
	in->got = json_object();
	for (size_t i = 0; i < ARRAY_SIZE(ec2_fields); i++)
		json_object_set_new(in->got, ec2_fields[i].field, json_string(""));
	loop_timer_start(in->loop, &in->timer, clock_mono_ns() + FETCH_DEADLINE_NS, on_timer, in);
	next_request(in);
}

/* The running fetch's deadline, or the time of the next fetch. */
static void on_timer(struct loop_timer *t)
{
	struct instance *in = t->data;

	if (in->fetching) {
		http_call_cancel(&in->call);
		fetch_done(in, "instance metadata fetch timed out");
	} else {
		fetch_start(in);
	}
}

int instance_mode_parse(const char *s)
{
	static const char *const names[] = { [INSTANCE_AUTO] = "auto", [INSTANCE_ON] = "on", [INSTANCE_OFF] = "off" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -EINVAL;
}

/* The attribute sysfs/rel into dst, trailing blanks cut; "" when it cannot be read (product_uuid: root only). */
static void read_fact(const char *sysfs, const char *rel, char *dst, size_t size)
{
	char path[4096];

	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", sysfs, rel);
	n = read_regular_file(path, dst, size);
	if (n < 0)
		n = 0;
	while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == ' ' || dst[n - 1] == '\t'))
		n--;
	dst[n] = '\0';
	utf8_sanitize(dst);
}

/* An EC2 instance id: "i-" and 8 or 17 lowercase hex digits. */
static int is_instance_id(const char *s)
{
	size_t n;

	if (strncmp(s, "i-", 2))
		return 0;
	n = strspn(s + 2, "0123456789abcdef");
	return !s[2 + n] && (n == 8 || n == 17);
}

/* A UUID EC2 gave: "ec2..." in any case, or with its first four bytes swapped (little-endian DMI). */
static int is_ec2_uuid(const char *u)
{
	char le[4];

	if (!strncasecmp(u, "ec2", 3))
		return 1;
	if (strlen(u) < 8)
		return 0;
	le[0] = u[6];
	le[1] = u[7];
	le[2] = u[4];
	le[3] = '\0';
	return !strcasecmp(le, "ec2");
}

int instance_ec2_local(const char *sysfs, char *why, size_t size)
{
	char vendor[256], v[256], serial[256];

	read_fact(sysfs, "class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	if (!strcmp(vendor, "Amazon EC2")) {
		snprintf(why, size, "DMI sys_vendor \"Amazon EC2\"");
		return 1;
	}
	read_fact(sysfs, "class/dmi/id/bios_vendor", v, sizeof(v));
	if (!strcmp(v, "Amazon EC2")) {
		snprintf(why, size, "DMI bios_vendor \"Amazon EC2\"");
		return 1;
	}
	read_fact(sysfs, "class/dmi/id/board_asset_tag", v, sizeof(v));
	if (is_instance_id(v)) {
		snprintf(why, size, "DMI board_asset_tag \"%s\", an instance id", v);
		return 1;
	}
	/*
	 * A random UUID starts so once in 4096 (either byte order): the
	 * hypervisor's counts only with EC2's Xen build behind it (its version
	 * "extra" ".amazon") or DMI's product_uuid or product_serial the same
	 * (Xen HVM), as product_uuid counts only with product_serial.
	 */
	read_fact(sysfs, "hypervisor/uuid", v, sizeof(v));
	if (is_ec2_uuid(v)) {
		char extra[256], dmi_uuid[256];

		read_fact(sysfs, "hypervisor/version/extra", extra, sizeof(extra));
		read_fact(sysfs, "class/dmi/id/product_uuid", dmi_uuid, sizeof(dmi_uuid));
		read_fact(sysfs, "class/dmi/id/product_serial", serial, sizeof(serial));
		if (!strcmp(extra, ".amazon")) {
			snprintf(why, size, "hypervisor uuid \"%s\" and Xen version extra \".amazon\"", v);
			return 1;
		}
		if (!strcasecmp(v, dmi_uuid) || !strcasecmp(v, serial)) {
			snprintf(why, size, "hypervisor uuid \"%s\" and DMI product_%s the same", v,
				 strcasecmp(v, dmi_uuid) ? "serial" : "uuid");
			return 1;
		}
	}
	/* product_uuid: as ds-identify, only with product_serial the same (Xen HVM). */
	read_fact(sysfs, "class/dmi/id/product_uuid", v, sizeof(v));
	read_fact(sysfs, "class/dmi/id/product_serial", serial, sizeof(serial));
	if (is_ec2_uuid(v) && !strcasecmp(v, serial)) {
		snprintf(why, size, "DMI product_uuid and product_serial \"%s\"", v);
		return 1;
	}
	read_fact(sysfs, "class/dmi/id/bios_version", v, sizeof(v));
	if (strlen(v) > 7 && !strcmp(v + strlen(v) - 7, ".amazon")) {
		snprintf(why, size, "DMI bios_version \"%s\"", v);
		return 1;
	}
	if (*vendor)
		snprintf(why, size, "DMI sys_vendor \"%s\" under %s, no EC2 sign", vendor, sysfs);
	else
		snprintf(why, size, "no EC2 sign in DMI or the hypervisor's uuid under %s", sysfs);
	return 0;
}

int instance_should_ask(enum instance_mode mode, const char *sysfs, char *why, size_t size)
{
	const char *ep = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT"), *dis = getenv("AWS_EC2_METADATA_DISABLED");
	char fact[320];

	if (mode == INSTANCE_OFF) {
		snprintf(why, size, "instance metadata off (--instance-metadata=off)");
		return 0;
	}
	if (mode == INSTANCE_ON) {
		snprintf(why, size, "--instance-metadata=on");
		return 1;
	}
	if (dis && !strcasecmp(dis, "true")) {
		snprintf(why, size, "instance metadata disabled by AWS_EC2_METADATA_DISABLED");
		return 0;
	}
	if (ep && *ep) {
		snprintf(why, size, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
		return 1;
	}
	if (instance_ec2_local(sysfs, fact, sizeof(fact))) {
		snprintf(why, size, "an EC2 instance: %s", fact);
		return 1;
	}
	snprintf(why, size, "not an EC2 instance (%s): instance metadata not asked (--instance-metadata=on asks)", fact);
	return 0;
}

struct instance *instance_new(struct loop *loop, struct http_async *http, int64_t refresh_ns,
			      enum instance_mode mode, const char *sysfs)
{
	struct instance *in = xcalloc(1, sizeof(*in));
	const char *node = getenv("KUBE_NODE_NAME"), *pod = getenv("POD_NAME"), *ns = getenv("POD_NAMESPACE");
	const char *ep = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	size_t n;

	in->loop = loop;
	in->http = http;
	buf_init(&in->text, SIZE_MAX / 2); /* no cap: each string is bounded where it is read (IMDS_VALUE_MAX) */
	in->conn = http_async_conn(http);
	http_call_init(&in->call, IMDS_VALUE_MAX);
	in->refresh_ns = refresh_ns;
	snprintf(in->endpoint, sizeof(in->endpoint), "%s", ep && *ep ? ep : IMDS_DEFAULT);
	n = strlen(in->endpoint);
	while (n > 0 && in->endpoint[n - 1] == '/')
		in->endpoint[--n] = '\0';
	in->disabled = !instance_should_ask(mode, sysfs, in->disabled_why, sizeof(in->disabled_why));
	if (in->disabled)
		log_info("instance: %s", in->disabled_why);
	else
		log_info("instance: asking the metadata service at %s (%s)", in->endpoint, in->disabled_why);
	if (gethostname(in->hostname, sizeof(in->hostname) - 1))
		in->hostname[0] = '\0';
	if (!node || !*node)
		node = getenv("NODE_NAME"); /* the downward API's usual name (fieldRef spec.nodeName) */
	snprintf(in->node_name, sizeof(in->node_name), "%s", node ? node : "");
	snprintf(in->pod_name, sizeof(in->pod_name), "%s", pod ? pod : "");
	snprintf(in->pod_namespace, sizeof(in->pod_namespace), "%s", ns ? ns : "");
	utf8_sanitize(in->hostname);
	utf8_sanitize(in->node_name);
	utf8_sanitize(in->pod_name);
	utf8_sanitize(in->pod_namespace);
	publish(in, NULL, "instance metadata not fetched yet");
	fetch_start(in);
	return in;
}

int instance_ready(const struct instance *in)
{
	return in->first_done;
}

json_t *instance_json(struct instance *in)
{
	return json_incref(in->info);
}

const char *instance_text(const struct instance *in)
{
	return in->text.len ? in->text.data : "{}";
}

void instance_free(struct instance *in)
{
	if (!in)
		return;
	http_call_free(&in->call);
	http_async_conn_close(in->http, in->conn);
	loop_timer_stop(in->loop, &in->timer);
	json_decref(in->got);
	json_decref(in->info);
	buf_free(&in->text);
	free(in);
}
