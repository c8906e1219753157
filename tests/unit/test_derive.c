/* SPDX-License-Identifier: MIT */
/*
 * common/derive.c: what a report of format 3 leaves to its reader. The
 * sums as the producer made them before format 3 (same keys, same order,
 * integers while they fit), the pods' names back in their containers, and
 * reports of other versions left alone.
 */
#include "../../common/derive.h"
#include "tap.h"

#include <jansson.h>

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j) {
		printf("# bad test JSON: %s\n", e.text);
		exit(2);
	}
	return j;
}

/* derive(text)'s path (dot-separated keys, from the root) compactly, in its own order; a new string. */
static char *derived(const char *text, const char *const *path)
{
	json_t *r = parse(text), *v = r;
	char *s;

	report_derive(r);
	for (; *path && v; path++)
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(*path)) : json_object_get(v, *path);
	s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("(none)");
	json_decref(r);
	return s;
}

#define IDS3                                                                                                   \
	"\"identities\": {\"containers\": {\"c1\": {\"runtime\": \"containerd\", \"pod_uid\": \"u1\", \"name\": "  \
	"\"app\", \"pids\": [11, 12]}, \"c2\": {\"pod_uid\": \"u1\", \"pod\": \"own\", \"name\": \"side\", "       \
	"\"pids\": [13.0]}}, \"pods\": {\"u1\": {\"pod\": \"web\", \"namespace\": \"prod\", \"qos\": "            \
	"\"burstable\"}}, \"processes\": {\"14\": {\"unit\": \"x.service\"}, \"15\": {\"pod_uid\": \"u1\"}}}"

static void test_sums(void)
{
	const char *r = "{\"monitor\": {\"format_version\": 3}, " IDS3 ", \"device_data\": [{\"report\": {"
			"\"device_memory\": {\"devices\": {\"0\": {\"processes\": {\"12\": 5, \"11\": 7, \"14\": 1, "
			"\"13\": 2, \"99\": 3, \"15\": 4, \"x\": 9, \"0\": 9}, \"mig_devices\": {\"1\": {\"processes\": "
			"{\"11\": 9223372036854775807, \"12\": 1}}}}}}, "
			"\"device_power\": {\"devices\": {\"0\": {\"energy_attribution\": \"memory\", \"processes\": "
			"{\"11\": 0.1, \"12\": 0.2, \"13\": 3}}}}, "
			"\"device_utilization\": {\"devices\": {\"0\": {\"processes\": {\"11\": {\"sm\": 10, \"enc\": 1.5}, "
			"\"13\": {\"sm\": 5}}}}}, \"device_info\": {\"devices\": {\"0\": {\"uuid\": \"GPU-1\"}}}}}]}";
	char *s;

	s = derived(r, (const char *const[]){ "device_data", "0", "report", "device_memory", "devices", "0", "pods",
					      NULL });
	is_str(s, "{\"u1\":{\"pids\":[12,11,13,15],\"memory_bytes\":18}}",
	       "memory: a pod sums its containers' and its own processes, in the order they come");
	free(s);
	s = derived(r, (const char *const[]){ "device_data", "0", "report", "device_memory", "devices", "0",
					      "containers", NULL });
	is_str(s, "{\"c1\":{\"pids\":[12,11],\"memory_bytes\":12},\"c2\":{\"pids\":[13],\"memory_bytes\":2}}",
	       "memory: each container its processes (no unit's, no pod's own, no unknown pid)");
	free(s);
	s = derived(r, (const char *const[]){ "device_data", "0", "report", "device_memory", "devices", "0",
					      "mig_devices", "1", "containers", NULL });
	is_str(s, "{\"c1\":{\"pids\":[11,12],\"memory_bytes\":9.2233720368547758e18}}",
	       "MIG: summed too; past int64 the sum is a real");
	free(s);
	s = derived(r, (const char *const[]){ "device_data", "0", "report", "device_power", "devices", "0", "pods",
					      NULL });
	is_str(s, "{\"u1\":{\"pids\":[11,12,13],\"energy_joules\":3.2999999999999998}}",
	       "energy: device_power's joules as energy_joules, reals summed in order (0.1 + 0.2 + 3)");
	free(s);
	s = derived(r, (const char *const[]){ "device_data", "0", "report", "device_utilization", "devices", "0",
					      "pods", NULL });
	is_str(s, "{\"u1\":{\"pids\":[11,13],\"engines\":{\"sm\":15,\"enc\":1.5}}}", "engines: summed per engine");
	free(s);
	s = derived(r, (const char *const[]){ "device_data", "0", "report", "device_info", "devices", "0", NULL });
	is_str(s, "{\"uuid\":\"GPU-1\"}", "a device without processes: no sums");
	free(s);
	s = derived(r, (const char *const[]){ "identities", "containers", NULL });
	is_str(s, "{\"c1\":{\"runtime\":\"containerd\",\"pod_uid\":\"u1\",\"name\":\"app\",\"pids\":[11,12],"
		  "\"pod\":\"web\",\"namespace\":\"prod\",\"qos\":\"burstable\"},\"c2\":{\"pod_uid\":\"u1\",\"pod\":"
		  "\"own\",\"name\":\"side\",\"pids\":[13.0],\"namespace\":\"prod\",\"qos\":\"burstable\"}}",
	       "identities: each container its pod's names, its own kept where it has them");
	free(s);
	s = derived(r, (const char *const[]){ "identities", "processes", "15", NULL });
	is_str(s, "{\"pod_uid\":\"u1\",\"pod\":\"web\",\"namespace\":\"prod\",\"qos\":\"burstable\"}",
	       "identities: a pod's own process its pod's names");
	free(s);
}

static void test_versions(void)
{
	const char *v2 = "{\"monitor\": {\"format_version\": 2}, " IDS3 ", \"device_data\": [{\"report\": {"
			 "\"device_memory\": {\"devices\": {\"0\": {\"processes\": {\"11\": 7}}}}}}]}";
	const char *v3sums = "{\"monitor\": {\"format_version\": 3}, " IDS3 ", \"device_data\": [{\"report\": {"
			     "\"device_memory\": {\"devices\": {\"0\": {\"processes\": {\"11\": 7}, \"pods\": {}}}}}}]}";
	const char *bad = "{\"monitor\": {\"format_version\": 3}, \"identities\": {\"containers\": [1], \"pods\": 2},"
			  "\"device_data\": [{\"report\": {\"g\": {\"devices\": {\"0\": {\"processes\": [1]}, \"1\": 5,"
			  "\"2\": {\"processes\": {\"11\": \"x\"}}}}, \"h\": 3}}, 7]}";
	json_t *j;
	char *s;

	s = derived(v2, (const char *const[]){ "device_data", "0", "report", "device_memory", "devices", "0", NULL });
	is_str(s, "{\"processes\":{\"11\":7}}", "format 2: left as it is (its sums are the producer's)");
	free(s);
	s = derived(v2, (const char *const[]){ "identities", "containers", "c1", NULL });
	ok(s && !strstr(s, "\"namespace\""), "format 2: identities left as they are");
	free(s);
	s = derived(v3sums, (const char *const[]){ "device_data", "0", "report", "device_memory", "devices", "0", NULL });
	is_str(s, "{\"processes\":{\"11\":7},\"pods\":{}}", "a device that has sums already keeps them");
	free(s);
	j = parse(bad);
	report_derive(j); /* every shape but the expected one is passed over */
	ok(json_object_size(json_object_get(json_object_get(json_object_get(json_object_get(json_object_get(
		   json_object_get(json_array_get(json_object_get(j, "device_data"), 0), "report"), "g"), "devices"),
		   "2"), "processes"), "11")) == 0, "bad shapes: passed over, nothing made");
	json_decref(j);
	j = parse("{\"monitor\": {}}");
	is_int(report_format_version(j), 1, "no format_version: 1");
	json_decref(j);
	j = parse("{\"monitor\": {\"format_version\": \"3\"}}");
	is_int(report_format_version(j), 1, "a format_version that is no integer: 1");
	json_decref(j);
	j = parse("{\"neuron_runtime_data\": []}");
	is_int(report_format_version(j), 0, "neuron-monitor's report: 0");
	report_derive(j);
	json_decref(j);
}

int main(void)
{
	test_sums();
	test_versions();
	return done_testing();
}
