/* SPDX-License-Identifier: MIT */
/*
 * AWS credentials for accel-cloudwatch, looked up in the AWS SDKs' order:
 *   1. AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN;
 *   2. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, default
 *      ~/.aws/credentials), profile AWS_PROFILE (default "default");
 *   3. the ECS task role or EKS Pod Identity: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
 *      (from http://169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI, with
 *      AWS_CONTAINER_AUTHORIZATION_TOKEN[_FILE] as Authorization;
 *   4. the EC2 instance role through IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT,
 *      default http://169.254.169.254; skipped when AWS_EC2_METADATA_DISABLED
 *      is "true"), refreshed before its Expiration.
 *
 * Secrets never leave this structure except into the request signature:
 * messages name the source and at most the last four characters of the
 * access key id.
 */
#ifndef ACCEL_CLOUDWATCH_CREDS_H
#define ACCEL_CLOUDWATCH_CREDS_H

#include <stddef.h>
#include <stdint.h>

enum cw_creds_source { CW_CREDS_NONE, CW_CREDS_ENV, CW_CREDS_FILE, CW_CREDS_CONTAINER, CW_CREDS_IMDS };

struct cw_creds {
	enum cw_creds_source source;
	char key[128];
	char secret[128];
	char token[4096];      /* "" when there is no session token */
	char where[256];       /* "environment", "/root/.aws/credentials [default]", "instance role test-role" */
	char imds[256];        /* IMDS endpoint, for refreshes */
	char container_url[512]; /* container credentials endpoint, for refreshes */
	int64_t expires_ms;    /* unix ms; 0 = does not expire */
	int64_t refresh_ms;    /* unix ms when to fetch again; 0 = never */
	int64_t imds_timeout_ms;
};

/*
 * Resolve credentials from the chain at now_ms. 0, or -ENOENT with err
 * naming every source tried and why each gave nothing (no secrets).
 */
int cw_creds_resolve(struct cw_creds *c, int64_t now_ms, char *err, size_t errsz);

/*
 * Fetch instance-role or container credentials again when due (or when force is set, as
 * after an ExpiredToken answer). Other sources never change. 1 refreshed,
 * 0 nothing to do, -errno failed (the old ones are kept; err says why).
 */
int cw_creds_refresh(struct cw_creds *c, int64_t now_ms, int force, char *err, size_t errsz);

/*
 * Read profile from a shared credentials file's text (INI: [profile],
 * key = value, '#' and ';' comments, keys case-insensitive).
 * 0; -ENOENT when the profile is not there; -EINVAL when it lacks a key
 * (err says which).
 */
int cw_creds_parse_ini(const char *text, const char *profile, struct cw_creds *c, char *err, size_t errsz);

/*
 * Parse IMDS's security-credentials JSON ("Code", "AccessKeyId",
 * "SecretAccessKey", "Token", "Expiration") and schedule the refresh.
 * 0 or -EINVAL (err says why).
 */
int cw_creds_parse_imds(const char *json, size_t len, int64_t now_ms, struct cw_creds *c, char *err, size_t errsz);

/* When to refresh credentials that expire at expires_ms, fetched at now_ms: five minutes before, or halfway. */
int64_t cw_creds_refresh_at(int64_t now_ms, int64_t expires_ms);

/* "…WXYZ": the last four characters of the key id, for messages. */
const char *cw_creds_key_hint(const struct cw_creds *c, char dst[16]);

#endif
