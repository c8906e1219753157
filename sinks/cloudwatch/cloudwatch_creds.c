/* SPDX-License-Identifier: MIT */
/*
 * The credentials chain: environment, shared credentials file, EC2
 * instance role (IMDSv2). See cloudwatch_creds.h.
 */
#include "cloudwatch_creds.h"
#include "../../common/http.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IMDS_DEFAULT "http://169.254.169.254"
#define IMDS_BODY_MAX (64u << 10)
#define CREDS_FILE_MAX (1u << 20)

static int copy(char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		return -E2BIG;
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

const char *cw_creds_key_hint(const struct cw_creds *c, char dst[16])
{
	size_t n = strlen(c->key);

	snprintf(dst, 16, "...%s", n > 4 ? c->key + n - 4 : "");
	return dst;
}

int64_t cw_creds_refresh_at(int64_t now_ms, int64_t expires_ms)
{
	int64_t margin = (expires_ms - now_ms) / 2, at;

	if (margin > 5 * 60 * MS_PER_S)
		margin = 5 * 60 * MS_PER_S;
	at = expires_ms - margin;
	/* Already due: ask again in a second, not in a loop. */
	return at < now_ms + MS_PER_S ? now_ms + MS_PER_S : at;
}

/*
 * Every part of a key pair goes into a request header (the signature's
 * Credential, X-Amz-Security-Token): a control character in one would add
 * headers. 0, or -EINVAL with err naming the part (never its value).
 */
static int check_secrets(const char *key, const char *secret, const char *token, char *err, size_t errsz)
{
	if (http_secret_check("the access key id", key, err, errsz) ||
	    http_secret_check("the secret access key", secret, err, errsz) ||
	    http_secret_check("the session token", token, err, errsz))
		return -EINVAL;
	return 0;
}

/* ---- environment ---------------------------------------------------------- */

static int from_env(struct cw_creds *c, char *why, size_t whysz)
{
	char e[300];
	const char *k = getenv("AWS_ACCESS_KEY_ID"), *s = getenv("AWS_SECRET_ACCESS_KEY");
	const char *t = getenv("AWS_SESSION_TOKEN");

	if (!k || !*k) {
		snprintf(why, whysz, "environment: AWS_ACCESS_KEY_ID not set");
		return -ENOENT;
	}
	if (!s || !*s) {
		snprintf(why, whysz, "environment: AWS_ACCESS_KEY_ID set but AWS_SECRET_ACCESS_KEY is not");
		return -ENOENT;
	}
	if (copy(c->key, sizeof(c->key), k) || copy(c->secret, sizeof(c->secret), s) ||
	    copy(c->token, sizeof(c->token), t ? t : "")) {
		snprintf(why, whysz, "environment: a credential variable is too long");
		return -ENOENT;
	}
	if (check_secrets(c->key, c->secret, c->token, e, sizeof(e))) {
		snprintf(why, whysz, "environment: %s", e);
		return -EINVAL;
	}
	c->source = CW_CREDS_ENV;
	snprintf(c->where, sizeof(c->where), "environment");
	return 0;
}

/* ---- shared credentials file -------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int cw_creds_parse_ini(const char *text, const char *profile, struct cw_creds *c, char *err, size_t errsz)
{
	char *copytext = xstrdup(text), *line, *save = NULL, bad[300];
	int in = 0, found = 0, rc = 0;
	char key[128] = "", secret[128] = "", token[4096] = "";

	for (line = strtok_r(copytext, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *l = trim(line), *eq;

		if (!*l || *l == '#' || *l == ';')
			continue;
		if (*l == '[') {
			char *e = strchr(l, ']');

			if (e)
				*e = '\0';
			in = !strcmp(trim(l + 1), profile);
			found |= in;
			continue;
		}
		if (!in || !(eq = strchr(l, '=')))
			continue;
		*eq = '\0';
		l = trim(l);
		eq = trim(eq + 1);
		if (!strcasecmp(l, "aws_access_key_id"))
			rc |= copy(key, sizeof(key), eq);
		else if (!strcasecmp(l, "aws_secret_access_key"))
			rc |= copy(secret, sizeof(secret), eq);
		else if (!strcasecmp(l, "aws_session_token"))
			rc |= copy(token, sizeof(token), eq);
	}
	free(copytext);
	if (!found) {
		snprintf(err, errsz, "no profile [%s]", profile);
		return -ENOENT;
	}
	if (rc || !key[0] || !secret[0]) {
		snprintf(err, errsz, "profile [%s] lacks %s", profile,
			 rc ? "a value of a sane length" : !key[0] ? "aws_access_key_id" : "aws_secret_access_key");
		return -EINVAL;
	}
	if (check_secrets(key, secret, token, bad, sizeof(bad))) {
		snprintf(err, errsz, "profile [%s]: %s", profile, bad);
		return -EINVAL;
	}
	memcpy(c->key, key, sizeof(key));
	memcpy(c->secret, secret, sizeof(secret));
	memcpy(c->token, token, sizeof(token));
	return 0;
}

/* 0 found; -ENOENT nothing there (try the next source); -EINVAL a broken or missing named profile. */
static int from_file(struct cw_creds *c, char *why, size_t whysz)
{
	const char *path = getenv("AWS_SHARED_CREDENTIALS_FILE"), *home = getenv("HOME");
	const char *prof = getenv("AWS_PROFILE");
	char pbuf[512], text_err[400], *text;
	int explicit_profile = prof && *prof, explicit_path = path && *path;
	ssize_t n;
	int rc;

	if (!explicit_profile)
		prof = "default";
	if (!path || !*path) {
		snprintf(pbuf, sizeof(pbuf), "%s/.aws/credentials", home && *home ? home : "");
		path = pbuf;
	}
	/* A directory or a FIFO is said to be one (a FIFO without a writer must not hang us). */
	text = xmalloc(CREDS_FILE_MAX + 1);
	n = read_regular_file(path, text, CREDS_FILE_MAX + 1);
	if (n < 0) {
		rc = (int)n;
		if (rc == -EISDIR || rc == -EINVAL)
			snprintf(why, whysz, "shared credentials file %s is %s, not a regular file", path,
				 file_kind_name(path));
		else if (rc == -EFBIG)
			snprintf(why, whysz, "shared credentials file %s: larger than %u bytes", path, CREDS_FILE_MAX);
		else
			snprintf(why, whysz, "shared credentials file %s: %s", path, strerror(-rc));
		free(text);
		/* A profile named on purpose with no file to hold it is an error, as in the SDKs; so is a file
		 * named on purpose that is not a file or cannot be read. */
		if (rc == -ENOENT)
			return explicit_profile ? -EINVAL : -ENOENT;
		return explicit_profile || explicit_path ? -EINVAL : -ENOENT;
	}
	rc = cw_creds_parse_ini(text, prof, c, text_err, sizeof(text_err));
	memset(text, 0, (size_t)n); /* the secrets */
	free(text);
	if (rc) {
		snprintf(why, whysz, "shared credentials file %s: %s", path, text_err);
		return rc == -ENOENT && !explicit_profile ? -ENOENT : -EINVAL;
	}
	c->source = CW_CREDS_FILE;
	snprintf(c->where, sizeof(c->where), "%s [%s]", path, prof);
	return 0;
}

/* ---- IMDSv2 --------------------------------------------------------------- */

/*
 * One request to a credentials endpoint (IMDS, the container agent), never
 * through a proxy. 0 with *status and the body in *r, or -EIO with err.
 */
static int creds_call(struct http_client *c, const char *method, const char *url, const char *hdr,
		      int64_t timeout_ms, struct http_result *r, long *status, char *err, size_t errsz)
{
	struct http_opts o = { .url = url, .method = method, .headers = &hdr, .nheaders = hdr ? 1 : 0,
			       .timeout_ms = timeout_ms, .max_body = IMDS_BODY_MAX, .direct = 1 };

	if (http_setup(c, &o, err, errsz))
		return -EIO;
	http_perform(c, r);
	if (r->rc != CURLE_OK) {
		snprintf(err, errsz, "%s", r->detail);
		return -EIO;
	}
	*status = r->status;
	return 0;
}

int cw_creds_parse_imds(const char *text, size_t len, int64_t now_ms, struct cw_creds *c, char *err, size_t errsz)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	const char *code, *k, *s, *t, *exp;
	int64_t ns;
	int rc = -EINVAL;

	if (!json_is_object(j)) {
		snprintf(err, errsz, "credentials are not a JSON object");
		goto out;
	}
	code = json_string_value(json_object_get(j, "Code"));
	k = json_string_value(json_object_get(j, "AccessKeyId"));
	s = json_string_value(json_object_get(j, "SecretAccessKey"));
	t = json_string_value(json_object_get(j, "Token"));
	exp = json_string_value(json_object_get(j, "Expiration"));
	if (code && strcmp(code, "Success")) {
		snprintf(err, errsz, "credentials Code is \"%.40s\"", code);
		goto out;
	}
	if (!k || !s || !*k || !*s) {
		snprintf(err, errsz, "credentials lack AccessKeyId or SecretAccessKey");
		goto out;
	}
	if (exp && iso8601_parse(exp, &ns)) {
		snprintf(err, errsz, "credentials Expiration \"%.40s\" is not ISO 8601", exp);
		goto out;
	}
	if (copy(c->key, sizeof(c->key), k) || copy(c->secret, sizeof(c->secret), s) ||
	    copy(c->token, sizeof(c->token), t ? t : "")) {
		snprintf(err, errsz, "a credential is too long");
		goto out;
	}
	if (check_secrets(c->key, c->secret, c->token, err, errsz))
		goto out;
	c->expires_ms = exp ? ns / NS_PER_MS : 0;
	c->refresh_ms = exp ? cw_creds_refresh_at(now_ms, c->expires_ms) : 0;
	rc = 0;
out:
	json_decref(j);
	return rc;
}

/* Token, role name, role credentials. */
static int imds_fetch(struct cw_creds *c, int64_t now_ms, char *err, size_t errsz)
{
	char url[512], hdr[256], role[256], e[CURL_ERROR_SIZE + 64];
	struct http_client hc;
	struct http_result b;
	long st = 0;
	int rc;

	if (http_client_init(&hc, http_curl_linked(), err, errsz))
		return -ENOMEM;
	snprintf(url, sizeof(url), "%s/latest/api/token", c->imds);
	rc = creds_call(&hc, "PUT", url, "X-aws-ec2-metadata-token-ttl-seconds: 21600", c->imds_timeout_ms, &b, &st, e,
			sizeof(e));
	if (rc || st != 200 || !b.len) {
		snprintf(err, errsz, "token request to %s: %s", c->imds, rc ? e : "unexpected answer");
		if (!rc)
			snprintf(err, errsz, "token request to %s: HTTP %ld", c->imds, st);
		rc = -ENOENT;
		goto out;
	}
	snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %.200s", b.body);
	snprintf(url, sizeof(url), "%s/latest/meta-data/iam/security-credentials/", c->imds);
	rc = creds_call(&hc, "GET", url, hdr, c->imds_timeout_ms, &b, &st, e, sizeof(e));
	if (rc || st != 200 || !b.len) {
		if (rc)
			snprintf(err, errsz, "%s: %s", url, e);
		else
			snprintf(err, errsz, "%s: HTTP %ld (no instance role attached?)", url, st);
		rc = -ENOENT;
		goto out;
	}
	snprintf(role, sizeof(role), "%.*s", (int)strcspn(b.body, "\r\n"), b.body);
	snprintf(url, sizeof(url), "%s/latest/meta-data/iam/security-credentials/%s", c->imds, role);
	rc = creds_call(&hc, "GET", url, hdr, c->imds_timeout_ms, &b, &st, e, sizeof(e));
	if (rc || st != 200) {
		if (rc)
			snprintf(err, errsz, "%s: %s", url, e);
		else
			snprintf(err, errsz, "%s: HTTP %ld", url, st);
		rc = -ENOENT;
		goto out;
	}
	rc = cw_creds_parse_imds(b.body, b.len, now_ms, c, e, sizeof(e));
	if (rc) {
		snprintf(err, errsz, "instance role %s: %s", role, e);
		goto out;
	}
	c->source = CW_CREDS_IMDS;
	snprintf(c->where, sizeof(c->where), "EC2 instance role %s (%s)", role, c->imds);
out:
	http_client_free(&hc);
	return rc;
}

static int imds_setup(struct cw_creds *c, char *why, size_t whysz)
{
	const char *dis = getenv("AWS_EC2_METADATA_DISABLED"), *ep = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	size_t n;

	if (dis && !strcasecmp(dis, "true")) {
		snprintf(why, whysz, "EC2 instance role: AWS_EC2_METADATA_DISABLED=true");
		return -ENOENT;
	}
	snprintf(c->imds, sizeof(c->imds), "%s", ep && *ep ? ep : IMDS_DEFAULT);
	n = strlen(c->imds);
	while (n && c->imds[n - 1] == '/')
		c->imds[--n] = '\0';
	if (!c->imds_timeout_ms)
		c->imds_timeout_ms = 1000; /* the SDKs' default: IMDS answers fast or is not there */
	return 0;
}

/* ---- ECS / EKS Pod Identity container credentials ---------------------------- */

/* Hosts the SDKs let a full URI use plain http for: loopback and the ECS/EKS agents' link-local addresses. */
static int container_host_ok(const char *url)
{
	static const char *const ok_http[] = { "http://127.", "http://localhost", "http://[::1]", "http://169.254.170.2",
					       "http://169.254.170.23", "http://[fd00:ec2::23]" };

	if (!strncmp(url, "https://", 8))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(ok_http); i++)
		if (!strncmp(url, ok_http[i], strlen(ok_http[i])))
			return 1;
	return 0;
}

static int container_fetch(struct cw_creds *c, int64_t now_ms, char *err, size_t errsz)
{
	const char *tok = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN"), *tokf = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	char hdr[4096 + 32] = "", e[CURL_ERROR_SIZE + 64], filetok[4096];
	struct http_client hc;
	struct http_result b;
	long st = 0;
	int rc;

	if (tokf && *tokf) {
		if (http_secret_read("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", tokf, filetok, sizeof(filetok), err, errsz))
			return -ENOENT;
		tok = filetok;
	} else if (tok && http_secret_check("AWS_CONTAINER_AUTHORIZATION_TOKEN", tok, err, errsz)) {
		return -ENOENT;
	}
	if (tok && *tok)
		snprintf(hdr, sizeof(hdr), "Authorization: %s", tok);
	if (http_client_init(&hc, http_curl_linked(), err, errsz))
		return -ENOENT;
	rc = creds_call(&hc, "GET", c->container_url, hdr[0] ? hdr : NULL, c->imds_timeout_ms, &b, &st, e, sizeof(e));
	memset(hdr, 0, sizeof(hdr));
	memset(filetok, 0, sizeof(filetok));
	if (rc || st != 200) {
		if (rc)
			snprintf(err, errsz, "%s: %s", c->container_url, e);
		else
			snprintf(err, errsz, "%s: HTTP %ld", c->container_url, st);
		http_client_free(&hc);
		return -ENOENT;
	}
	rc = cw_creds_parse_imds(b.body, b.len, now_ms, c, e, sizeof(e));
	http_client_free(&hc);
	if (rc) {
		snprintf(err, errsz, "%s: %s", c->container_url, e);
		return -ENOENT;
	}
	c->source = CW_CREDS_CONTAINER;
	snprintf(c->where, sizeof(c->where), "container credentials %s", c->container_url);
	return 0;
}

/* 0 when a container endpoint is configured (c->container_url set), else -ENOENT with why. */
static int container_setup(struct cw_creds *c, char *why, size_t whysz)
{
	const char *rel = getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"), *full = getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");

	if (rel && *rel) {
		snprintf(c->container_url, sizeof(c->container_url), "http://169.254.170.2%s", rel);
	} else if (full && *full) {
		if (!container_host_ok(full)) {
			snprintf(why, whysz, "container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI %s is neither https "
				 "nor a loopback or ECS/EKS agent address", full);
			return -EINVAL;
		}
		snprintf(c->container_url, sizeof(c->container_url), "%s", full);
	} else {
		snprintf(why, whysz, "container credentials: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI/FULL_URI not set");
		return -ENOENT;
	}
	if (!c->imds_timeout_ms)
		c->imds_timeout_ms = 1000;
	return 0;
}

/* ---- the chain ------------------------------------------------------------ */

int cw_creds_resolve(struct cw_creds *c, int64_t now_ms, char *err, size_t errsz)
{
	char why[4][400];
	int rc;
	int64_t timeout = c->imds_timeout_ms;

	memset(c, 0, sizeof(*c));
	c->imds_timeout_ms = timeout;
	rc = from_env(c, why[0], sizeof(why[0]));
	if (rc == 0)
		return 0;
	if (rc == -EINVAL) {
		snprintf(err, errsz, "%s", why[0]);
		return -EINVAL;
	}
	rc = from_file(c, why[1], sizeof(why[1]));
	if (rc == 0)
		return 0;
	if (rc == -EINVAL) {
		snprintf(err, errsz, "%s", why[1]);
		return -EINVAL;
	}
	rc = container_setup(c, why[3], sizeof(why[3]));
	if (rc == -EINVAL) {
		snprintf(err, errsz, "%s", why[3]);
		return -EINVAL;
	}
	if (rc == 0) {
		char e[360];

		/* Configured on purpose: its failure is the answer, as in the SDKs. */
		if (container_fetch(c, now_ms, e, sizeof(e)) == 0)
			return 0;
		snprintf(err, errsz, "container credentials: %s", e);
		return -ENOENT;
	}
	if (imds_setup(c, why[2], sizeof(why[2])) == 0) {
		char e[360];

		if (imds_fetch(c, now_ms, e, sizeof(e)) == 0)
			return 0;
		snprintf(why[2], sizeof(why[2]), "EC2 instance role: %s", e);
	}
	c->source = CW_CREDS_NONE;
	snprintf(err, errsz, "no AWS credentials found; tried %s; %s; %s; %s", why[0], why[1], why[3], why[2]);
	return -ENOENT;
}

int cw_creds_refresh(struct cw_creds *c, int64_t now_ms, int force, char *err, size_t errsz)
{
	struct cw_creds n;
	int rc;

	if ((c->source != CW_CREDS_IMDS && c->source != CW_CREDS_CONTAINER) ||
	    (!force && (!c->refresh_ms || now_ms < c->refresh_ms)))
		return 0;
	n = *c;
	rc = c->source == CW_CREDS_IMDS ? imds_fetch(&n, now_ms, err, errsz) : container_fetch(&n, now_ms, err, errsz);
	if (rc) {
		/* Keep what we have; try again in a few seconds rather than on every request. */
		c->refresh_ms = now_ms + 5 * MS_PER_S;
		return rc;
	}
	*c = n;
	return 1;
}
