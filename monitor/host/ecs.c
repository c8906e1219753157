/* SPDX-License-Identifier: MIT */
/*
 * ECS task and container names from the agent and the task metadata
 * endpoint, on the producer's loop; see ecs.h. Each answer is reduced as it
 * comes to {"containers": {"<id>": {"name", "task"}}, "tasks": {"<task
 * id>": {"arn", "family", "revision", "cluster"}}} (the agent's list of
 * tasks and the endpoint's one task alike), and the endpoint's own-container
 * answer to {"DockerId", "Name", "Labels": {the ECS labels names read}}.
 * Answers (up to ECS_BODY_MAX) are parsed and reduced as the loop's work,
 * off the loop, so only the reduced facts come back to it and are kept.
 *
 * A miss for a container that no answer names (a container ECS does not
 * know, or one it names no more) would fetch again at every refresh: a
 * container missed before waits twice as long after each of its refetches
 * (up to ECS_BACKOFF_MAX refresh periods); a container never missed before
 * fetches at the refresh period.
 */
#include "ecs.h"
#include "../core/loop.h"
#include "../http/http_async.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ECS_TIMEOUT_MS 3000                /* both are local: the agent on the instance, the endpoint in the task */
#define ECS_BODY_MAX ((size_t)16 << 20)    /* an instance's task list: tens of KiB per task */
#define ECS_MISSED 64                      /* the containers missed before that are remembered */
#define ECS_BACKOFF_MAX 32                 /* a container missed before refetches at most this many periods apart */

enum src { SRC_AGENT, SRC_TASK, SRC_SELF, NSRC };

static const char *const src_what[NSRC] = { "task list", "task", "container" };

struct ecs_src {
	char *url;               /* owned; NULL: not asked */
	unsigned conn;
	struct http_call call;
	json_t *ans;             /* the last good answer, reduced (owned), or NULL */
	char error[512];         /* the last fetch's error, "" when it succeeded */
	struct ecs *e;
	struct loop_work work;   /* the answer parsed and reduced off the loop, while that runs */
	struct buf body;         /* the answer (the work's while it runs) */
	json_t *red;             /* the work's result, or NULL */
	struct loop_work drop;   /* the answer it replaced freed off the loop, while that runs */
	json_t *stale;           /* that answer (the drop's while it runs) */
};

struct ecs {
	struct http_async *http; /* borrowed */
	struct ecs_src s[NSRC];
	int64_t refresh_ns;
	int64_t last_start;      /* CLOCK_MONOTONIC ns of the last refresh's start */
	unsigned long fetches;
	char errors[NSRC * 520]; /* ecs_error's text */
	char missed[ECS_MISSED][sizeof(((struct container_id *)0)->id)]; /* containers a lookup missed (a ring) */
	size_t nmissed;
	int64_t backoff;         /* periods between refetches for a container missed before (1, 2, 4, ...) */
};

/* base + path, without a doubled slash. New string. */
static char *url_join(const char *base, const char *path)
{
	size_t n = strlen(base);

	return xasprintf("%.*s%s", (int)(n && base[n - 1] == '/' ? n - 1 : n), base, path);
}

struct ecs *ecs_new(struct http_async *http, const char *agent_url, const char *metadata_url, int64_t refresh_ns)
{
	struct ecs *e = xcalloc(1, sizeof(*e));

	e->http = http;
	e->refresh_ns = refresh_ns;
	e->last_start = INT64_MIN / 2;
	e->backoff = 1;
	if (agent_url)
		e->s[SRC_AGENT].url = url_join(agent_url, "/v1/tasks");
	if (metadata_url) {
		e->s[SRC_TASK].url = url_join(metadata_url, "/task");
		e->s[SRC_SELF].url = xstrdup(metadata_url);
	}
	for (int i = 0; i < NSRC; i++) {
		e->s[i].e = e;
		http_call_init(&e->s[i].call, ECS_BODY_MAX);
		if (e->s[i].url)
			e->s[i].conn = http_async_conn(http);
	}
	return e;
}

/* The string value of o[key] when it is a non-empty string, else NULL. */
static const char *str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v && *v ? v : NULL;
}

/* The part of an ARN after its last '/' (a task's id, a cluster's name); s itself when it has none. */
static const char *arn_tail(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

/*
 * Add one task object (the agent's {"Arn", "Family", "Version", "Containers"}
 * or the endpoint's {"Cluster", "TaskARN", "Family", "Revision", "Containers"})
 * to the reduced answer r.
 */
static void reduce_task(json_t *r, json_t *t)
{
	const char *arn = str(t, "Arn") ? str(t, "Arn") : str(t, "TaskARN");
	const char *cluster = str(t, "Cluster"), *v;
	json_t *red, *c;
	char cl[256] = "";
	size_t i;

	if (!arn)
		return;
	red = json_object();
	json_object_set_new(red, "arn", json_string(arn));
	if ((v = str(t, "Family")))
		json_object_set_new(red, "family", json_string(v));
	if ((v = str(t, "Revision") ? str(t, "Revision") : str(t, "Version")))
		json_object_set_new(red, "revision", json_string(v));
	if (cluster) {
		snprintf(cl, sizeof(cl), "%s", arn_tail(cluster));
	} else {
		/* The ARN's long form says it: arn:aws:ecs:<region>:<account>:task/<cluster>/<task id>. */
		const char *first = strchr(arn, '/'), *last = strrchr(arn, '/');

		if (first && last > first + 1)
			snprintf(cl, sizeof(cl), "%.*s", (int)(last - first - 1), first + 1);
	}
	if (*cl)
		json_object_set_new(red, "cluster", json_string(cl));
	json_object_set_new(json_object_get(r, "tasks"), arn_tail(arn), red);
	json_array_foreach(json_object_get(t, "Containers"), i, c) {
		const char *id = str(c, "DockerId"), *name = str(c, "Name");

		if (id && name)
			json_object_set_new(json_object_get(r, "containers"), id,
					    json_pack("{s:s, s:s}", "name", name, "task", arn_tail(arn)));
	}
}

/* The own-container answer reduced to its id, name and the ECS labels (container_names_ecs_labels), or NULL. */
static json_t *reduce_self(json_t *j)
{
	static const char *const keep[] = { "com.amazonaws.ecs.container-name", "com.amazonaws.ecs.task-arn",
					    "com.amazonaws.ecs.task-definition-family",
					    "com.amazonaws.ecs.task-definition-version", "com.amazonaws.ecs.cluster" };
	json_t *r, *labels = json_object_get(j, "Labels"), *l = json_object();

	if (!str(j, "DockerId")) {
		json_decref(l);
		return NULL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		if (json_is_string(json_object_get(labels, keep[i])))
			json_object_set(l, keep[i], json_object_get(labels, keep[i]));
	r = json_pack("{s:s, s:o}", "DockerId", str(j, "DockerId"), "Labels", l);
	if (str(j, "Name"))
		json_object_set_new(r, "Name", json_string(str(j, "Name")));
	return r;
}

/* The reduced answer of src from its JSON (borrowed), or NULL when it is not what src serves. New reference. */
static json_t *reduce(enum src src, json_t *j)
{
	json_t *r, *t;
	size_t i;

	if (src == SRC_SELF)
		return reduce_self(j);
	if (src == SRC_AGENT && !json_is_array(json_object_get(j, "Tasks")))
		return NULL;
	if (src == SRC_TASK && !str(j, "TaskARN"))
		return NULL;
	r = json_pack("{s:{}, s:{}}", "containers", "tasks");
	if (src == SRC_TASK)
		reduce_task(r, j);
	else
		json_array_foreach(json_object_get(j, "Tasks"), i, t)
			reduce_task(r, t);
	return r;
}

/* ecs_error's text: the sources' errors joined. */
static void errors_join(struct ecs *e)
{
	size_t n = 0;

	e->errors[0] = '\0';
	for (int i = 0; i < NSRC; i++)
		if (e->s[i].error[0] && n < sizeof(e->errors))
			n += (size_t)snprintf(e->errors + n, sizeof(e->errors) - n, "%s%s", n ? "; " : "", e->s[i].error);
}

/* On a loop worker: an answer replaced, freed (tens of thousands of objects), its memory back to the system. */
static void drop_work(struct loop_work *w)
{
	struct ecs_src *s = w->data;

	json_decref(s->stale);
	s->stale = NULL;
	malloc_trim(0);
}

static void drop_after(struct loop_work *w)
{
	(void)w;
}

/* A source's fetch (and its reduction) is over: keep r (taken) unless err, say what changed once. */
static void fetch_end(struct ecs_src *s, json_t *r, const char *err)
{
	if (r) {
		struct loop *l = http_async_loop(s->e->http);

		/* The one before still running (seldom: it had a fetch's time): this one is freed here. */
		if (s->ans && loop_work_active(&s->drop)) {
			json_decref(s->ans);
		} else if (s->ans) {
			s->stale = s->ans;
			if (loop_work_post(l, &s->drop, drop_work, drop_after, s)) {
				json_decref(s->stale);
				s->stale = NULL;
			}
		}
		s->ans = r;
	}
	if (*err && !http_error_same(err, s->error))
		log_warn("ecs: %s; task and container names fall back to ids (retried at most every %lld s)", err,
			 (long long)(s->e->refresh_ns / NS_PER_S));
	else if (!*err && *s->error)
		log_info("ecs: %s is answered again", s->url);
	snprintf(s->error, sizeof(s->error), "%s", err);
	errors_join(s->e);
}

/* On a loop worker: the answer parsed and reduced, the answer and its parse freed here. */
static void reduce_work(struct loop_work *w)
{
	struct ecs_src *s = w->data;
	size_t len = s->body.len;
	json_t *j = json_loadb(s->body.data ? s->body.data : "", len, 0, NULL);

	s->red = j ? reduce((enum src)(s - s->e->s), j) : NULL;
	json_decref(j);
	buf_free(&s->body);
	if (len > ((size_t)1 << 20))
		malloc_trim(0); /* the parse's many small blocks and the body, back to the system */
}

/* Back on the loop: the reduced answer, or why there is none. */
static void reduce_after(struct loop_work *w)
{
	struct ecs_src *s = w->data;
	enum src src = (enum src)(s - s->e->s);
	char err[sizeof(s->error)] = "";

	if (!s->red)
		snprintf(err, sizeof(err), "GET %s: the answer is no ECS %s", s->url, src_what[src]);
	fetch_end(s, s->red, err);
	s->red = NULL;
}

/* A source's fetch is over: its answer goes to be reduced off the loop, or its error is told. */
static void fetch_done(struct http_call *c, void *data)
{
	struct ecs_src *s = data;
	char err[sizeof(s->error)] = "";
	int rc;

	if (c->error[0]) {
		snprintf(err, sizeof(err), "GET %s: %s", s->url, c->error);
	} else if (c->status != 200) {
		snprintf(err, sizeof(err), "GET %s: HTTP %ld", s->url, c->status);
	} else {
		http_call_take_body(c, &s->body);
		if (!(rc = loop_work_post(http_async_loop(s->e->http), &s->work, reduce_work, reduce_after, s)))
			return;
		buf_free(&s->body);
		snprintf(err, sizeof(err), "GET %s: cannot parse the answer off the loop: %s", s->url, strerror(-rc));
	}
	fetch_end(s, NULL, err);
}

/*
 * Was container (or task) id missed before? 1, else 0 and it is remembered
 * now: something new, so the back-off starts again.
 */
static int missed_before(struct ecs *e, const char *id)
{
	size_t n = e->nmissed < ECS_MISSED ? e->nmissed : ECS_MISSED;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(e->missed[i], id))
			return 1;
	snprintf(e->missed[e->nmissed++ % ECS_MISSED], sizeof(e->missed[0]), "%s", id);
	e->backoff = 1;
	return 0;
}

/*
 * Start every source's fetch, when none runs (nor its reduction) and the
 * last started a refresh period ago; again (a miss of a container missed
 * before): the back-off's periods ago, and the back-off doubles.
 */
static void maybe_fetch(struct ecs *e, int64_t now, int again)
{
	static const char *const accept[] = { "Accept: application/json" };

	for (int i = 0; i < NSRC; i++)
		if (http_call_running(&e->s[i].call) || loop_work_active(&e->s[i].work))
			return;
	if (now - e->last_start < (again ? e->backoff : 1) * e->refresh_ns)
		return;
	if (again)
		e->backoff = e->backoff * 2 > ECS_BACKOFF_MAX ? ECS_BACKOFF_MAX : e->backoff * 2;
	e->last_start = now;
	e->fetches++;
	for (int i = 0; i < NSRC; i++) {
		struct http_opts o = { .url = e->s[i].url, .headers = accept, .nheaders = 1, .timeout_ms = ECS_TIMEOUT_MS,
				       .max_body = ECS_BODY_MAX, .direct = 1 /* on this instance, or in this task */ };

		if (e->s[i].url)
			http_call_start(e->http, &e->s[i].call, e->s[i].conn, &o, fetch_done, &e->s[i]);
	}
}

static void fill(char *dst, size_t size, const char *v)
{
	if (!*dst && v) {
		snprintf(dst, size, "%s", v);
		utf8_sanitize(dst);
	}
}

void ecs_names(struct ecs *e, const struct container_id *id, int64_t now, struct container_names *out)
{
	const char *task = id->ecs_task[0] ? id->ecs_task : NULL;
	json_t *self = e->s[SRC_SELF].ans;

	if (id->id[0] && self && !strcmp(str(self, "DockerId"), id->id)) {
		fill(out->name, sizeof(out->name), str(self, "Name"));
		container_names_ecs_labels(json_object_get(self, "Labels"), out);
	}
	for (int i = SRC_AGENT; i <= SRC_TASK; i++) {
		json_t *c = id->id[0] ? json_object_get(json_object_get(e->s[i].ans, "containers"), id->id) : NULL;

		if (!c)
			continue;
		fill(out->name, sizeof(out->name), str(c, "name"));
		if (!task)
			task = str(c, "task");
	}
	for (int i = SRC_AGENT; task && i <= SRC_TASK; i++) {
		json_t *t = json_object_get(json_object_get(e->s[i].ans, "tasks"), task);

		fill(out->ecs_task_arn, sizeof(out->ecs_task_arn), str(t, "arn"));
		fill(out->ecs_task_family, sizeof(out->ecs_task_family), str(t, "family"));
		fill(out->ecs_task_revision, sizeof(out->ecs_task_revision), str(t, "revision"));
		fill(out->ecs_cluster, sizeof(out->ecs_cluster), str(t, "cluster"));
	}
	if (!out->ecs_task_arn[0] || (id->id[0] && !out->name[0]))
		maybe_fetch(e, now, missed_before(e, id->id[0] ? id->id : id->ecs_task)); /* newer than the answers? */
}

int ecs_self(struct ecs *e, int64_t now, struct container_id *id)
{
	json_t *self = e->s[SRC_SELF].ans;
	const char *arn = self ? str(json_object_get(self, "Labels"), "com.amazonaws.ecs.task-arn") : NULL;
	char *path;
	int rc;

	if (!self) {
		if (e->s[SRC_SELF].url)
			maybe_fetch(e, now, 0);
		return -ENOENT;
	}
	/* The same parser as every process's cgroup: the id's form says the runtime. */
	path = xasprintf("/ecs/%s/%s", arn ? arn_tail(arn) : "-", str(self, "DockerId"));
	rc = container_from_cgroup(path, id);
	free(path);
	if (rc || !id->id[0]) {
		memset(id, 0, sizeof(*id));
		snprintf(id->id, sizeof(id->id), "%s", str(self, "DockerId"));
		strcpy(id->runtime, "docker");
		if (arn)
			snprintf(id->ecs_task, sizeof(id->ecs_task), "%s", arn_tail(arn));
	}
	return 0;
}

const char *ecs_error(const struct ecs *e)
{
	return e->errors;
}

unsigned long ecs_fetches(const struct ecs *e)
{
	return e->fetches;
}

void ecs_free(struct ecs *e)
{
	if (!e)
		return;
	for (int i = 0; i < NSRC; i++) {
		http_call_free(&e->s[i].call);
		loop_work_cancel(http_async_loop(e->http), &e->s[i].work); /* waits for a reduction that runs */
		loop_work_cancel(http_async_loop(e->http), &e->s[i].drop);
		buf_free(&e->s[i].body);
		json_decref(e->s[i].red);
		json_decref(e->s[i].stale);
		if (e->s[i].url)
			http_async_conn_close(e->http, e->s[i].conn);
		json_decref(e->s[i].ans);
		free(e->s[i].url);
	}
	free(e);
}
