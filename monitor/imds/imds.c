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
#include "../../common/util.h"
#include "../host/kubelet.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IMDS_DEFAULT "http://169.254.169.254"
#define IMDS_TIMEOUT_MS 1000L  /* per request; off EC2 the token PUT fails within this */
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

struct fetch {
	CURL *curl;
	struct buf body;
	struct curl_slist *hdr;
	char err[CURL_ERROR_SIZE];
};

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	return buf_add(b, p, size * n) ? 0 : size * n; /* 0 aborts an oversized reply */
}

/* One request; 0 and the HTTP status in *code, or -1 with f->err set. */
static int imds_request(struct imds *in, struct fetch *f, const char *method, const char *path, long *code)
{
	char url[1024];
	CURLcode rc;

	snprintf(url, sizeof(url), "%s%s", in->endpoint, path);
	buf_reset(&f->body);
	curl_easy_setopt(f->curl, CURLOPT_URL, url);
	curl_easy_setopt(f->curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(f->curl, CURLOPT_UPLOAD, 0L);
	curl_easy_setopt(f->curl, CURLOPT_NOBODY, 0L);
	curl_easy_setopt(f->curl, CURLOPT_HTTPHEADER, f->hdr);
	f->err[0] = '\0';
	rc = curl_easy_perform(f->curl);
	if (rc != CURLE_OK) {
		if (!f->err[0])
			snprintf(f->err, sizeof(f->err), "%s", curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, code);
	return 0;
}

/* GET a metadata value into dst ("" when optional and 404). 0 or -1 with err set. */
static int imds_get(struct imds *in, struct fetch *f, const char *path, int optional, char *dst, size_t size,
		    char *err, size_t errsz)
{
	char full[600];
	long code = 0;

	snprintf(full, sizeof(full), "/latest/meta-data/%s", path);
	if (imds_request(in, f, "GET", full, &code)) {
		snprintf(err, errsz, "GET %s: %s", full, f->err);
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
	snprintf(dst, size, "%s", f->body.data ? f->body.data : "");
	dst[strcspn(dst, "\r\n")] = '\0';
	utf8_sanitize(dst);
	return 0;
}

/* Fetch every field into a new object; on failure the object has "error" set. */
static json_t *imds_fetch(struct imds *in)
{
	struct fetch f = { 0 };
	json_t *o = json_object();
	char token[256], hdr[320], val[IMDS_VALUE_MAX], mac[64], path[256], err[512] = "";
	long code = 0;

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		json_object_set_new(o, fields[i].field, json_string(""));
	if (in->disabled) {
		snprintf(err, sizeof(err), "instance metadata disabled by AWS_EC2_METADATA_DISABLED");
		goto out;
	}
	buf_init(&f.body, IMDS_VALUE_MAX);
	f.curl = curl_easy_init();
	if (!f.curl) {
		snprintf(err, sizeof(err), "cannot initialise libcurl");
		goto out;
	}
	curl_easy_setopt(f.curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(f.curl, CURLOPT_CONNECTTIMEOUT_MS, IMDS_TIMEOUT_MS);
	curl_easy_setopt(f.curl, CURLOPT_TIMEOUT_MS, IMDS_TIMEOUT_MS);
	curl_easy_setopt(f.curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(f.curl, CURLOPT_WRITEDATA, &f.body);
	curl_easy_setopt(f.curl, CURLOPT_ERRORBUFFER, f.err);
	curl_easy_setopt(f.curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(f.curl, CURLOPT_NOPROXY, "*"); /* IMDS is link-local: never via a proxy */
	f.hdr = curl_slist_append(NULL, "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL);
	if (imds_request(in, &f, "PUT", "/latest/api/token", &code) || code != 200) {
		if (f.err[0])
			snprintf(err, sizeof(err), "instance metadata service at %s unreachable: %s", in->endpoint,
				 f.err);
		else
			snprintf(err, sizeof(err), "instance metadata token request to %s: HTTP %ld", in->endpoint,
				 code);
		goto out;
	}
	snprintf(token, sizeof(token), "%s", f.body.data ? f.body.data : "");
	token[strcspn(token, "\r\n")] = '\0';
	curl_slist_free_all(f.hdr);
	snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", token);
	f.hdr = curl_slist_append(NULL, hdr);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		if (!fields[i].path)
			continue;
		if (imds_get(in, &f, fields[i].path, fields[i].optional, val, sizeof(val), err, sizeof(err)))
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
	if (imds_get(in, &f, "mac", 0, mac, sizeof(mac), err, sizeof(err)))
		goto out;
	snprintf(path, sizeof(path), "network/interfaces/macs/%s/subnet-id", mac);
	if (imds_get(in, &f, path, 1, val, sizeof(val), err, sizeof(err)))
		goto out;
	json_object_set_new(o, "subnet_id", json_string(val));
out:
	json_object_set_new(o, "error", json_string(utf8_sanitize(err)));
	curl_slist_free_all(f.hdr);
	if (f.curl)
		curl_easy_cleanup(f.curl);
	buf_free(&f.body);
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
	curl_global_init(CURL_GLOBAL_DEFAULT);
	o = imds_fetch(&in);
	curl_global_cleanup();
	line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	rc = line && printf("%s\n", line) > 0 && fflush(stdout) == 0 ? 0 : 1;
	free(line);
	return rc;
}
