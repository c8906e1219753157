/* SPDX-License-Identifier: MIT */
/*
 * The credentials chain (sinks/cloudwatch/cloudwatch_creds.c): the shared credentials
 * file's INI, IMDS's JSON and refresh time, and the chain's order and
 * error message through the environment (no network: IMDS is disabled).
 */
#include "../../sinks/cloudwatch/cloudwatch_creds.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOW 1795219200000LL /* 2026-11-21T00:00:00Z */

int main(void)
{
	struct cw_creds c;
	char err[1024], hint[16], path[] = "/tmp/cw-creds-XXXXXX";
	const char *ini = "# top\n[default]\naws_access_key_id = AKIDDEF\naws_secret_access_key=secDEF\n\n"
			  "; x\n[ prod ]\n  AWS_Access_Key_Id =  AKIDPROD  \naws_secret_access_key = secPROD\n"
			  "aws_session_token = tok/+=\n[broken]\naws_access_key_id = AKIDB\n";
	int fd;

	memset(&c, 0, sizeof(c));
	is_int(cw_creds_parse_ini(ini, "default", &c, err, sizeof(err)), 0, "[default] parses");
	ok(!strcmp(c.key, "AKIDDEF") && !strcmp(c.secret, "secDEF") && !c.token[0], "its keys, no token");
	is_int(cw_creds_parse_ini(ini, "prod", &c, err, sizeof(err)), 0, "[ prod ] parses");
	ok(!strcmp(c.key, "AKIDPROD") && !strcmp(c.secret, "secPROD") && !strcmp(c.token, "tok/+="),
	   "keys case-insensitive, values trimmed, token kept");
	is_int(cw_creds_parse_ini(ini, "nosuch", &c, err, sizeof(err)), -ENOENT, "a missing profile");
	is_str(err, "no profile [nosuch]", "says which");
	is_int(cw_creds_parse_ini(ini, "broken", &c, err, sizeof(err)), -EINVAL, "a profile without a secret");
	is_str(err, "profile [broken] lacks aws_secret_access_key", "says what it lacks");

	{
		const char *j = "{\"Code\":\"Success\",\"LastUpdated\":\"2026-11-20T23:00:00Z\",\"Type\":\"AWS-HMAC\","
				"\"AccessKeyId\":\"ASIAX\",\"SecretAccessKey\":\"sec\",\"Token\":\"tok\","
				"\"Expiration\":\"2026-11-21T06:00:00Z\"}";

		memset(&c, 0, sizeof(c));
		is_int(cw_creds_parse_imds(j, strlen(j), NOW, &c, err, sizeof(err)), 0, "IMDS credentials parse");
		ok(!strcmp(c.key, "ASIAX") && !strcmp(c.token, "tok"), "key and token");
		is_int(c.expires_ms, NOW + 6 * 3600 * 1000LL, "Expiration");
		is_int(c.refresh_ms, NOW + 6 * 3600 * 1000LL - 300000, "refresh five minutes before");
		j = "{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"s\"}";
		is_int(cw_creds_parse_imds(j, strlen(j), NOW, &c, err, sizeof(err)), -EINVAL, "a failed Code is refused");
		ok(strstr(err, "AssumeRoleUnauthorizedAccess") != NULL, "naming it: %s", err);
		is_int(cw_creds_parse_imds("nope", 4, NOW, &c, err, sizeof(err)), -EINVAL, "not JSON");
		j = "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"s\",\"Token\":\"t\\r\\nX-Injected: yes\"}";
		is_int(cw_creds_parse_imds(j, strlen(j), NOW, &c, err, sizeof(err)), -EINVAL,
		       "a token with CR LF (it would add request headers) is refused");
		ok(strstr(err, "the session token: holds a control character (0x0d at byte 1)") && !strstr(err, "Injected"),
		   "naming the part, not quoting it: %s", err);
	}
	is_int(cw_creds_parse_ini("[default]\naws_access_key_id = A\naws_secret_access_key = s\ris\n", "default", &c,
				  err, sizeof(err)),
	       -EINVAL, "a secret with a CR inside, in the credentials file: refused");
	ok(strstr(err, "profile [default]: the secret access key: holds a control character") != NULL, "says so: %s",
	   err);
	is_int(cw_creds_refresh_at(NOW, NOW + 4000), NOW + 2000, "short-lived: refresh halfway");
	is_int(cw_creds_refresh_at(NOW, NOW + 500), NOW + 1000, "already due: in a second, not in a loop");
	snprintf(c.key, sizeof(c.key), "AKIDEXAMPLE1234");
	is_str(cw_creds_key_hint(&c, hint), "...1234", "the key hint shows four characters");

	/* The chain, through the environment. */
	fd = mkstemp(path);
	if (fd >= 0) {
		if (write(fd, ini, strlen(ini)) < 0)
			ok(0, "write %s", path);
		close(fd);
	}
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_PROFILE");
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	is_int(cw_creds_resolve(&c, NOW, err, sizeof(err)), 0, "the file's [default]");
	ok(c.source == CW_CREDS_FILE && !strcmp(c.key, "AKIDDEF"), "from the file");
	setenv("AWS_PROFILE", "prod", 1);
	is_int(cw_creds_resolve(&c, NOW, err, sizeof(err)), 0, "AWS_PROFILE=prod");
	ok(!strcmp(c.key, "AKIDPROD") && !strcmp(c.token, "tok/+="), "the prod keys and token");
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secENV", 1);
	setenv("AWS_SESSION_TOKEN", "", 1);
	is_int(cw_creds_resolve(&c, NOW, err, sizeof(err)), 0, "environment set too");
	ok(c.source == CW_CREDS_ENV && !strcmp(c.key, "AKIDENV") && !c.token[0],
	   "the environment wins; an empty token is no token");
	setenv("AWS_SESSION_TOKEN", "tok\nX-Injected: yes", 1);
	is_int(cw_creds_resolve(&c, NOW, err, sizeof(err)), -EINVAL, "AWS_SESSION_TOKEN with a LF: an error");
	ok(strstr(err, "environment: the session token: holds a control character") && !strstr(err, "Injected"),
	   "naming it, not quoting it: %s", err);
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_ACCESS_KEY_ID");
	setenv("AWS_PROFILE", "nosuch", 1);
	is_int(cw_creds_resolve(&c, NOW, err, sizeof(err)), -EINVAL, "a named profile that is missing is an error");
	unsetenv("AWS_PROFILE");
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
	is_int(cw_creds_resolve(&c, NOW, err, sizeof(err)), -ENOENT, "nothing anywhere");
	ok(strstr(err, "environment: AWS_ACCESS_KEY_ID not set") && strstr(err, "/nonexistent/credentials") &&
		   strstr(err, "AWS_EC2_METADATA_DISABLED=true") && !strstr(err, "secENV"),
	   "the error names each source and no secret: %s", err);
	unlink(path);
	return done_testing();
}
