/* SPDX-License-Identifier: MIT */
/*
 * accel-imds: fetch this host's EC2 instance metadata once, over IMDSv2
 * (PUT a session token, then GET with it) through libcurl, and print it as
 * one compact JSON line: the instance_info fields of a report, with
 * "error" saying why any are missing. Exit status 0 whenever a line was
 * printed, also when the service was unreachable.
 *
 * accel-monitor runs this at start and hourly (monitor/host/instance.c). It is a
 * separate program so the long-running producer maps no TLS or HTTP
 * library: libcurl and its dependencies cost about 9 MB of resident memory.
 *
 * Environment, as in the AWS SDKs: AWS_EC2_METADATA_DISABLED=true (no
 * request at all), AWS_EC2_METADATA_SERVICE_ENDPOINT (default
 * http://169.254.169.254). Each request times out after 1 s.
 */
#include "../../common/http.h"
#include "../../common/util.h"
#include "../host/kubelet.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IMDS_DEFAULT "http://169.254.169.254"
#define IMDS_TIMEOUT_MS 1000  /* per request; off EC2 the token PUT fails within this */
#define IMDS_VALUE_MAX 4096    /* metadata values are short; anything longer is refused */
#define IMDS_TOKEN_TTL "21600"

struct imds {
	char endpoint[512];
	int disabled;
};

/* The fields, in neuron-monitor's order, and the metadata path each comes from. */
static const struct {
	const char *field;
	const char *path; /* relative to /latest/meta-data/; NULL: derived */
	int optional;     /* 404 means "" (tags are off by default on EC2) */
} fields[] = {
	{ "instance_name", "tags/instance/Name", 1 },
	{ "instance_id", "instance-id", 0 },
	{ "instance_type", "instance-type", 0 },
	{ "instance_availability_zone", "placement/availability-zone", 0 },
	{ "instance_availability_zone_id", "placement/availability-zone-id", 1 },
	{ "instance_region", "placement/region", 1 },
	{ "ami_id", "ami-id", 0 },
	{ "subnet_id", NULL, 0 },
};

/* One request; 0 with the HTTP status in *code, or -1 with err set. */
static int imds_request(struct imds *in, struct http_client *c, const char *method, const char *path,
			const char *header, long *code, struct http_result *r, char *err, size_t errsz)
{
	char url[1024];
	struct http_opts o = { .url = url, .method = method, .headers = &header, .nheaders = header ? 1 : 0,
			       .timeout_ms = IMDS_TIMEOUT_MS, .max_body = IMDS_VALUE_MAX,
			       .direct = 1 /* IMDS is link-local: never via a proxy */ };

	snprintf(url, sizeof(url), "%s%s", in->endpoint, path);
	if (http_setup(c, &o, err, errsz))
		return -1;
	http_perform(c, r);
	if (r->error[0]) {
		snprintf(err, errsz, "%s", r->error);
		return -1;
	}
	*code = r->status;
	return 0;
}

/* GET a metadata value into dst ("" when optional and 404). 0 or -1 with err set. */
static int imds_get(struct imds *in, struct http_client *c, const char *token_hdr, const char *path, int optional,
		    char *dst, size_t size, char *err, size_t errsz)
{
	char full[600], e[512];
	struct http_result r;
	long code = 0;

	snprintf(full, sizeof(full), "/latest/meta-data/%s", path);
	if (imds_request(in, c, "GET", full, token_hdr, &code, &r, e, sizeof(e))) {
		snprintf(err, errsz, "GET %s: %s", full, e);
		return -1;
	}
	if (code == 404 && optional) {
		dst[0] = '\0';
		return 0;
	}
	if (code != 200) {
		snprintf(err, errsz, "GET %s: HTTP %ld", full, code);
		return -1;
	}
	snprintf(dst, size, "%s", r.body);
	dst[strcspn(dst, "\r\n")] = '\0';
	utf8_sanitize(dst);
	return 0;
}

/* Fetch every field into a new object; on failure the object has "error" set. */
static json_t *imds_fetch(struct imds *in)
{
	struct http_client c = { 0 };
	struct http_result r;
	json_t *o = json_object();
	char token[256], hdr[320], val[IMDS_VALUE_MAX], mac[64], path[256], err[512] = "", e[512] = "";
	long code = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		json_object_set_new(o, fields[i].field, json_string(""));
	if (in->disabled) {
		snprintf(err, sizeof(err), "instance metadata disabled by AWS_EC2_METADATA_DISABLED");
		goto out;
	}
	if (http_client_init(&c, http_curl_linked(), err, sizeof(err)))
		goto out;
	if (imds_request(in, &c, "PUT", "/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL,
			 &code, &r, e, sizeof(e)) || code != 200) {
		if (e[0])
			snprintf(err, sizeof(err), "instance metadata service at %s unreachable: %s", in->endpoint, e);
		else
			snprintf(err, sizeof(err), "instance metadata token request to %s: HTTP %ld", in->endpoint,
				 code);
		goto out;
	}
	snprintf(token, sizeof(token), "%s", r.body);
	token[strcspn(token, "\r\n")] = '\0';
	if (http_secret_check("the instance metadata token", token, err, sizeof(err)))
		goto out;
	snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", token);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		if (!fields[i].path)
			continue;
		if (imds_get(in, &c, hdr, fields[i].path, fields[i].optional, val, sizeof(val), err, sizeof(err)))
			goto out;
		json_object_set_new(o, fields[i].field, json_string(val));
	}
	/* Older IMDS versions lack placement/region: the zone minus its letter is the region. */
	if (!*json_string_value(json_object_get(o, "instance_region"))) {
		const char *az = json_string_value(json_object_get(o, "instance_availability_zone"));
		size_t n = strlen(az);

		if (n > 1)
			json_object_set_new(o, "instance_region", json_stringn(az, n - 1));
	}
	if (imds_get(in, &c, hdr, "mac", 0, mac, sizeof(mac), err, sizeof(err)))
		goto out;
	snprintf(path, sizeof(path), "network/interfaces/macs/%s/subnet-id", mac);
	if (imds_get(in, &c, hdr, path, 1, val, sizeof(val), err, sizeof(err)))
		goto out;
	json_object_set_new(o, "subnet_id", json_string(val));
out:
	json_object_set_new(o, "error", json_string(utf8_sanitize(err)));
	http_client_free(&c);
	return o;
}

int main(int argc, char **argv)
{
	struct imds in = { 0 };
	const char *ep = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *dis = getenv("AWS_EC2_METADATA_DISABLED");
	json_t *o;
	char *line;
	size_t n;
	int rc;

	if (argc > 1) /* --kubelet-pods: the kubelet's pod list for accel-monitor (kubelet.h) */
		return kubelet_fetch_main(argc, argv);
	snprintf(in.endpoint, sizeof(in.endpoint), "%s", ep && *ep ? ep : IMDS_DEFAULT);
	n = strlen(in.endpoint);
	while (n > 0 && in.endpoint[n - 1] == '/')
		in.endpoint[--n] = '\0';
	in.disabled = dis && !strcasecmp(dis, "true");
	http_curl_linked()->global_init(CURL_GLOBAL_DEFAULT);
	o = imds_fetch(&in);
	http_curl_linked()->global_cleanup();
	line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	rc = line && printf("%s\n", line) > 0 && fflush(stdout) == 0 ? 0 : 1;
	free(line);
	return rc;
}
