/* SPDX-License-Identifier: MIT */
/*
 * Configuration loading (monitor/config/config.c, common/doc.c): a table of good
 * and bad configs in JSON and YAML, each bad one with the exact message.
 */
#include "../../common/doc.h"
#include "../../monitor/core/collector.h"
#include "../../monitor/config/config.h"
#include "../../monitor/host/instance.h"
#include "tap.h"

#include <stdlib.h>

/* Load text as name (YAML when yaml); return the error (new string) or NULL. */
static char *load(const char *name, const char *text, int yaml, struct cfg *cfg)
{
	struct doc d;
	char *err = NULL;

	if (doc_load_mem(name, text, strlen(text), yaml, &d, &err))
		return err;
	if (cfg_from_doc(&d, cfg, &err)) {
		doc_free(&d);
		return err;
	}
	doc_free(&d);
	return NULL;
}

/* text (an effective configuration, JSON) loads back as name, test "loads", and prints the same again. */
static void is_fixed_point(const char *name, const char *text, const char *loads)
{
	struct cfg cfg2;
	char *err = load(name, text, 0, &cfg2), *text2;
	json_t *eff2;

	if (ok(!err, "%s", loads)) {
		eff2 = cfg_effective(&cfg2);
		text2 = json_dumps(eff2, JSON_COMPACT | JSON_REAL_PRECISION(10));
		is_str(text2, text, "and is a fixed point");
		free(text2);
		json_decref(eff2);
		cfg_free(&cfg2);
	}
	free(err);
}

static const struct {
	const char *name;
	int yaml;
	const char *text;
	const char *error; /* NULL: must load */
} cases[] = {
	{ "empty.json", 0, "{}", NULL },
	{ "issue.json", 0,
	  "{\n"
	  "  \"period\": \"1s\",\n"
	  "  \"runtimes\": [\n"
	  "    { \"address\": \"process:tritonserver\", \"period\": \"2s\",\n"
	  "      \"metrics\": [ { \"type\": \"runtime_vcpu_usage\" }, { \"type\": \"memory_used\", \"period\": \"5s\" } ] }\n"
	  "  ],\n"
	  "  \"system_metrics\": [ { \"type\": \"vcpu_usage\" }, { \"type\": \"memory_info\", \"period\": \"10s\" } ],\n"
	  "  \"devices\": []\n"
	  "}\n",
	  NULL },
	{ "monitor.json", 0,
	  "{\n"
	  "  \"runtimes\": [\n"
	  "    { \"address\": \"pid:1\",\n"
	  "      \"metrics\": [\n"
	  "        { \"type\": \"memory_used\" },\n"
	  "        { \"type\": \"runtime_vcpu_usage\" },\n"
	  "        {\"type\": \"vcpu_usge\"}\n"
	  "      ] }\n"
	  "  ]\n"
	  "}\n",
	  "monitor.json:7:18: runtimes[0].metrics[2].type: unknown metric group \"vcpu_usge\"; known: "
	  "runtime_vcpu_usage, memory_used, execution_stats, neuroncore_counters, hw_counters" },
	{ "sys.json", 0, "{\"system_metrics\": [{\"type\": \"vcpu_usge\"}]}",
	  "sys.json:1:30: system_metrics[0].type: unknown metric group \"vcpu_usge\"; known: vcpu_usage, "
	  "memory_info, neuron_hw_counters, container_usage" },
	{ "scope.json", 0, "{\"system_metrics\": [{\"type\": \"memory_used\"}]}",
	  "scope.json:1:30: system_metrics[0].type: \"memory_used\" is a runtime group, not allowed here; known: "
	  "vcpu_usage, memory_info, neuron_hw_counters, container_usage" },
	{ "typo.json", 0, "{\n  \"perod\": \"1s\"\n}",
	  "typo.json:2:3: perod: unknown key \"perod\"; known: period, runtimes, neuron_runtimes, system_metrics, "
	  "devices, procfs, sysfs, host" },
	{ "short.json", 0, "{\"period\": \"50ms\"}",
	  "short.json:1:12: period: period too short: 50 ms; the minimum is 100ms" },
	{ "long.json", 0, "{\"period\": \"25h\"}", "long.json:1:12: period: period too long; the maximum is 24h" },
	{ "unit.json", 0, "{\"period\": \"5 minutes\"}",
	  "unit.json:1:12: period: invalid duration \"5 minutes\": expected a number followed by ms, s, m or h "
	  "(e.g. \"250ms\", \"1.5s\", \"2m\")" },
	{ "num.json", 0, "{\"period\": 0.05}", "num.json:1:12: period: period too short: 50 ms; the minimum is 100ms" },
	{ "bool.json", 0, "{\"period\": true}",
	  "bool.json:1:12: period: expected a duration such as \"1s\" or a number of seconds, got a boolean" },
	{ "syntax.json", 0, "{\n  \"period\": \"1s\",\n}",
	  "syntax.json:3:1: string or '}' expected near '}'" },
	{ "dup.json", 0, "{\"period\": 1, \"period\": 2}", "dup.json:1:22: duplicate object key near '\"period\"'" },
	{ "root.json", 0, "[1]", "root.json:1:1: expected a configuration object, got an array" },
	{ "pid.json", 0, "{\"runtimes\": [{\"address\": \"pid:abc\", \"metrics\": []}]}",
	  "pid.json:1:27: runtimes[0].address: invalid address \"pid:abc\": expected pid:N with N a process id" },
	{ "pidspace.json", 0, "{\"runtimes\": [{\"address\": \"pid: 5\", \"metrics\": []}]}",
	  "pidspace.json:1:27: runtimes[0].address: invalid address \"pid: 5\": expected pid:N with N a process id" },
	{ "pidplus.json", 0, "{\"runtimes\": [{\"address\": \"pid:+5\", \"metrics\": []}]}",
	  "pidplus.json:1:27: runtimes[0].address: invalid address \"pid:+5\": expected pid:N with N a process id" },
	{ "procfs.json", 0, "{\"procfs\": \"\"}",
	  "procfs.json:1:12: procfs: expected the path of a procfs mount, got an empty string" },
	{ "sysfs.yaml", 1, "sysfs: ''\n", "sysfs.yaml:1:8: sysfs: expected the path of a sysfs mount, got an empty string" },
	{ "proc.json", 0, "{\"runtimes\": [{\"address\": \"process:\", \"metrics\": []}]}",
	  "proc.json:1:27: runtimes[0].address: invalid address \"process:\": expected process:NAME (a command name)" },
	{ "unix.json", 0, "{\"runtimes\": [{\"address\": \"unix:/run/neuron.sock\", \"metrics\": [{\"type\": \"neuroncore_counters\"}]}]}",
	  NULL },
	/* An address's scheme must be one the registry knows; unix: (neuron-monitor's) and no address stay accepted. */
	{ "procss.json", 0, "{\"runtimes\": [{\"address\": \"procss:foo\", \"metrics\": []}]}",
	  "procss.json:1:27: runtimes[0].address: unknown address scheme \"procss:\" in \"procss:foo\"; known: pid:, "
	  "process:, http:, https:, unix: (or no address: Neuron runtime discovery)" },
	{ "htp.yaml", 1, "runtimes:\n  - metrics: []\n    address: htp://localhost:8080/metrics\n",
	  "htp.yaml:3:14: runtimes[0].address: unknown address scheme \"htp:\" in \"htp://localhost:8080/metrics\"; known: "
	  "pid:, process:, http:, https:, unix: (or no address: Neuron runtime discovery)" },
	{ "noscheme.json", 0, "{\"runtimes\": [{\"address\": \"tritonserver\", \"metrics\": []}]}",
	  "noscheme.json:1:27: runtimes[0].address: invalid address \"tritonserver\": expected SCHEME:..., with SCHEME one "
	  "of pid:, process:, http:, https:, unix: (or no address: Neuron runtime discovery)" },
	{ "noaddr.json", 0, "{\"runtimes\": [{\"tag_filter\": \"x\", \"metrics\": []}]}", NULL },
	{ "regex.json", 0, "{\"runtimes\": [{\"tag_filter\": \"(\", \"metrics\": []}]}",
	  "regex.json:1:30: runtimes[0].tag_filter: invalid regular expression \"(\": " },
	{ "nometrics.json", 0, "{\"runtimes\": [{\"address\": \"pid:1\"}]}",
	  "nometrics.json:1:15: runtimes[0]: missing \"metrics\": list the groups to collect, e.g. [{\"type\": "
	  "\"memory_used\"}]" },
	{ "twice.json", 0, "{\"system_metrics\": [{\"type\": \"vcpu_usage\"}, {\"type\": \"vcpu_usage\"}]}",
	  "twice.json:1:54: system_metrics[1].type: metric group \"vcpu_usage\" listed twice" },
	{ "both.json", 0, "{\"runtimes\": [], \"neuron_runtimes\": []}",
	  "both.json:1:18: neuron_runtimes: \"neuron_runtimes\" is an alias of \"runtimes\"; use only one of them" },
	{ "dev.json", 0, "{\"devices\": [{\"type\": \"nvidia\"}, 3]}",
	  "dev.json:1:34: devices[1]: expected a device object like {\"type\": \"nvidia\"}, got a number" },
	{ "devtype.json", 0, "{\"devices\": [{\"type\": \"nvida\"}]}",
	  "devtype.json:1:23: devices[0].type: unknown device type \"nvida\"; known: nvidia, amdgpu, neuron, ncs2, hwmon, powercap, auto" },
	{ "devnotype.json", 0, "{\"devices\": [{\"select\": \"all\"}]}", "devnotype.json:1:14: devices[0]: missing \"type\"" },
	{ "devsel.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"select\": [0, true]}]}",
	  "devsel.json:1:47: devices[0].select[1]: expected a device index (0, 1, ...), a UUID or a serial, got a boolean" },
	{ "devselall.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"select\": \"some\"}]}",
	  "devselall.json:1:43: devices[0].select: expected \"all\" or a non-empty list of device indices, UUIDs or serials" },
	{ "devgroup.json", 0, "{\"devices\": [{\"type\": \"auto\", \"metrics\": [{\"type\": \"vcpu_usage\"}]}]}",
	  "devgroup.json:1:52: devices[0].metrics[0].type: \"vcpu_usage\" is a system group, not allowed here; known: "
	  "device_info, device_utilization, device_memory, device_thermal, device_power, device_clocks, device_errors" },
	/* A collector checks its own block: hwmon chips are selected by index only. */
	{ "hwmonsel.json", 0, "{\"devices\": [{\"type\": \"hwmon\", \"select\": [0, \"GPU-x\"]}]}",
	  "hwmonsel.json:1:46: devices[0].select[1]: hwmon chips have no UUID or serial; select them by index (0, 1, ...)" },
	{ "hwmonidx.json", 0, "{\"devices\": [{\"type\": \"hwmon\", \"select\": [0, 2]}]}", NULL },
	/* Endpoint runtimes (http://, https://): the URL and the keys the endpoint collector owns. */
	{ "ep.json", 0,
	  "{\"runtimes\": [{\"address\": \"https://[::1]:8443/metrics\", \"server\": \"vllm\", \"timeout\": \"2s\", "
	  "\"max_body_bytes\": 1000, \"tls\": {\"ca_file\": \"/ca.pem\", \"cert_file\": \"/c.pem\", \"key_file\": "
	  "\"/c.key\", \"server_name\": \"m.test\", \"insecure_skip_verify\": true}, \"bearer_token_file\": \"/t\", "
	  "\"passthrough\": true, \"metrics\": [{\"type\": \"execution_stats\"}]}]}", NULL },
	{ "epbasic.yaml", 1,
	  "runtimes:\n  - address: http://localhost/metrics\n    basic_auth: {username: u}\n    metrics: []\n", NULL },
	{ "epurl.json", 0, "{\"runtimes\": [{\"address\": \"http://h:99999/m\", \"metrics\": []}]}",
	  "epurl.json:1:27: runtimes[0].address: invalid address \"http://h:99999/m\": invalid port (1-65535)" },
	{ "epcred.json", 0, "{\"runtimes\": [{\"address\": \"http://u:p@h/m\", \"metrics\": []}]}",
	  "epcred.json:1:27: runtimes[0].address: invalid address \"http://u:p@h/m\": credentials in the URL are not "
	  "accepted (use basic_auth with a password_file)" },
	{ "epnohost.json", 0, "{\"runtimes\": [{\"address\": \"http:///metrics\", \"metrics\": []}]}",
	  "epnohost.json:1:27: runtimes[0].address: invalid address \"http:///metrics\": no host" },
	{ "epserver.json", 0,
	  "{\"runtimes\": [{\"address\": \"http://h/m\", \"server\": \"trition\", \"metrics\": []}]}",
	  "epserver.json:1:51: runtimes[0].server: unknown server \"trition\"; known: triton, vllm, tgi, torchserve, "
	  "ovms, prometheus (or no \"server\": recognised from the families served)" },
	{ "eptimeout.json", 0, "{\"runtimes\": [{\"address\": \"http://h/m\", \"timeout\": \"2 s\", \"metrics\": []}]}",
	  "eptimeout.json:1:52: runtimes[0].timeout: invalid duration \"2 s\": expected a number followed by ms, s, m or h (e.g. \"250ms\", \"1.5s\", \"2m\")" },
	{ "epbody.json", 0, "{\"runtimes\": [{\"address\": \"http://h/m\", \"max_body_bytes\": 0, \"metrics\": []}]}",
	  "epbody.json:1:59: runtimes[0].max_body_bytes: expected a number of bytes from 1 to 1073741824, got one out "
	  "of range" },
	{ "eptls.yaml", 1, "runtimes:\n  - address: http://h/m\n    tls: {ca_file: /ca}\n    metrics: []\n",
	  "eptls.yaml:3:5: runtimes[0].tls: \"tls\" is for https:// addresses" },
	{ "eptlskey.yaml", 1, "runtimes:\n  - address: https://h/m\n    tls: {ca_fil: /ca}\n    metrics: []\n",
	  "eptlskey.yaml:3:11: runtimes[0].tls.ca_fil: unknown key \"ca_fil\"; known: ca_file, cert_file, key_file, "
	  "server_name, insecure_skip_verify" },
	{ "eptlscert.yaml", 1, "runtimes:\n  - address: https://h/m\n    tls: {cert_file: /c}\n    metrics: []\n",
	  "eptlscert.yaml:3:11: runtimes[0].tls.cert_file: a client certificate needs both \"cert_file\" and "
	  "\"key_file\"" },
	{ "epinsecure.yaml", 1,
	  "runtimes:\n  - address: https://h/m\n    tls: {insecure_skip_verify: yes}\n    metrics: []\n",
	  "epinsecure.yaml:3:33: runtimes[0].tls.insecure_skip_verify: expected true or false, got a string" },
	{ "epauth.yaml", 1,
	  "runtimes:\n  - address: http://h/m\n    bearer_token_file: /t\n    basic_auth: {username: u}\n"
	  "    metrics: []\n",
	  "epauth.yaml:4:5: runtimes[0].basic_auth: use either \"bearer_token_file\" or \"basic_auth\"" },
	{ "epuser.yaml", 1, "runtimes:\n  - address: http://h/m\n    basic_auth: {password_file: /p}\n    metrics: []\n",
	  "epuser.yaml:3:17: runtimes[0].basic_auth: missing \"username\"" },
	{ "eppass.json", 0, "{\"runtimes\": [{\"address\": \"http://h/m\", \"passthrough\": 1, \"metrics\": []}]}",
	  "eppass.json:1:56: runtimes[0].passthrough: expected true or false, got a number" },
	/* An endpoint's key elsewhere: the existing "unknown key ... for ..." message, naming whose it is. */
	{ "pidtimeout.yaml", 1, "runtimes:\n  - address: pid:1\n    timeout: 2s\n    metrics: []\n",
	  "pidtimeout.yaml:3:5: runtimes[0].timeout: unknown key \"timeout\" for address \"pid:1\"; known: address, "
	  "tag_filter, period, metrics (\"timeout\" is a key of http: and https: runtimes)" },
	{ "neurontls.json", 0, "{\"runtimes\": [{\"tls\": {}, \"metrics\": []}]}",
	  "neurontls.json:1:16: runtimes[0].tls: unknown key \"tls\" for a runtime without an address; known: address, "
	  "tag_filter, period, metrics (\"tls\" is a key of http: and https: runtimes)" },
	{ "eptypo.json", 0, "{\"runtimes\": [{\"address\": \"http://h/m\", \"timout\": 1, \"metrics\": []}]}",
	  "eptypo.json:1:41: runtimes[0].timout: unknown key \"timout\"; known: address, tag_filter, period, metrics, "
	  "server, timeout, max_body_bytes, tls, bearer_token_file, basic_auth, passthrough, latency_histograms" },
	{ "ephist.json", 0, "{\"runtimes\": [{\"address\": \"http://h/m\", \"latency_histograms\": \"yes\", \"metrics\": []}]}",
	  "ephist.json:1:63: runtimes[0].latency_histograms: expected true or false, got a string" },
	/* A collector's own keys (nvidia's "library"): accepted for its type only, parsed by the collector. */
	{ "nvlib.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"library\": \"/opt/nv/libnvidia-ml.so.1\"}]}", NULL },
	{ "nvlibname.yaml", 1, "devices:\n  - {type: nvidia, library: libnvidia-ml.so.535}\n", NULL },
	{ "amdlib.json", 0, "{\"devices\": [{\"type\": \"amdgpu\",\n  \"library\": \"x\"}]}",
	  "amdlib.json:2:3: devices[0].library: unknown key \"library\" for type \"amdgpu\"; known: type, select, period, "
	  "metrics, idle_power_watts (\"library\" is a key of type \"nvidia\")" },
	{ "autolib.yaml", 1, "devices:\n  - type: auto\n    library: x\n",
	  "autolib.yaml:3:5: devices[0].library: unknown key \"library\" for type \"auto\"; known: type, select, period, "
	  "metrics (\"library\" is a key of type \"nvidia\")" },
	{ "nvkey.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"libary\": \"x\"}]}",
	  "nvkey.json:1:33: devices[0].libary: unknown key \"libary\"; known: type, select, period, metrics, library, "
	  "slow_period, energy_period, idle_power_watts" },
	/* nvidia's "slow_period": a duration of 1 s to 24 h, a number of seconds, or "period" */
	{ "nvslow.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"slow_period\": \"30s\"}]}", NULL },
	{ "nvslowp.yaml", 1, "devices:\n  - {type: nvidia, slow_period: period}\n", NULL },
	{ "nvslownum.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"slow_period\": 60}]}", NULL },
	{ "nvslowshort.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"slow_period\": \"0.5s\"}]}",
	  "nvslowshort.json:1:48: devices[0].slow_period: out of range: 1s to 24h, or \"period\"" },
	{ "nvslowbool.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"slow_period\": true}]}",
	  "nvslowbool.json:1:48: devices[0].slow_period: expected a duration such as \"10s\", a number of seconds or "
	  "\"period\"" },
	/* nvidia's "energy_period": the same kinds of value */
	{ "nvenergy.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"energy_period\": \"2m\"}]}", NULL },
	{ "nvenergyp.yaml", 1, "devices:\n  - {type: nvidia, energy_period: period}\n", NULL },
	{ "nvenergyshort.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"energy_period\": \"0.5s\"}]}",
	  "nvenergyshort.json:1:50: devices[0].energy_period: out of range: 1s to 24h, or \"period\"" },
	/* "idle_power_watts" of the kinds that split energy: W for every device, or per index, uuid or pci_bus_id */
	{ "nvidle.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"idle_power_watts\": 80}]}", NULL },
	{ "amdidle.yaml", 1, "devices:\n  - type: amdgpu\n    idle_power_watts: {\"0\": 35, \"0000:03:00.0\": 40.5}\n",
	  NULL },
	{ "idleneg.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"idle_power_watts\": -1}]}",
	  "idleneg.json:1:53: devices[0].idle_power_watts: out of range: 0 to 100000 W" },
	{ "idlestr.yaml", 1, "devices:\n  - type: amdgpu\n    idle_power_watts: {\"1\": 80W}\n",
	  "idlestr.yaml:3:29: devices[0].idle_power_watts.1: expected the idle power in watts (a number), got a string" },
	{ "idleempty.json", 0, "{\"devices\": [{\"type\": \"amdgpu\", \"idle_power_watts\": {}}]}",
	  "idleempty.json:1:53: devices[0].idle_power_watts: expected W for every device, or {\"<index, uuid or "
	  "pci_bus_id>\": W}, got an empty object" },
	{ "idlehwmon.json", 0, "{\"devices\": [{\"type\": \"hwmon\", \"idle_power_watts\": 5}]}",
	  "idlehwmon.json:1:32: devices[0].idle_power_watts: unknown key \"idle_power_watts\" for type \"hwmon\"; "
	  "known: type, select, period, metrics (\"idle_power_watts\" is a key of types \"nvidia\", \"amdgpu\")" },
	{ "nvlibnum.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"library\": 3}]}",
	  "nvlibnum.json:1:44: devices[0].library: expected the NVML library's path or file name (a non-empty string), "
	  "got a number" },
	{ "nvlibempty.yaml", 1, "devices:\n  - type: nvidia\n    library: \"\"\n",
	  "nvlibempty.yaml:3:14: devices[0].library: expected the NVML library's path or file name (a non-empty "
	  "string), got an empty string" },
	/* What a collector kept is freed when a later block fails (the sanitized pass checks for leaks). */
	{ "nvliblater.json", 0,
	  "{\"devices\": [{\"type\": \"nvidia\", \"library\": \"x\"}, {\"type\": \"nvidia\", \"library\": \"y\"}]}",
	  "nvliblater.json:1:59: devices[1].type: devices[0] already collects these \"nvidia\" devices (both select "
	  "\"all\"); one block per device, or give each block its own \"select\"" },
	/* A misspelt "type" is named as such, not as a missing type. */
	{ "tpye.json", 0, "{\"devices\": [{\"tpye\": \"nvidia\"}]}",
	  "tpye.json:1:15: devices[0].tpye: unknown key \"tpye\"; known: type, select, period, metrics" },
	{ "autosel.json", 0, "{\"devices\": [{\"type\": \"auto\", \"select\": [\"GPU-x\"]}]}", NULL },
	/* One device, one block: explicit blocks of one kind must not overlap; "auto" leaves named kinds alone. */
	{ "autoamd.json", 0, "{\"devices\": [{\"type\": \"auto\"}, {\"type\": \"amdgpu\"}]}", NULL },
	{ "twoamd.json", 0, "{\"devices\": [\n {\"type\": \"amdgpu\"},\n {\"type\": \"amdgpu\", \"period\": 1}]}",
	  "twoamd.json:3:11: devices[1].type: devices[0] already collects these \"amdgpu\" devices (both select \"all\"); "
	  "one block per device, or give each block its own \"select\"" },
	{ "twoidx.json", 0,
	  "{\"devices\": [{\"type\": \"nvidia\", \"select\": [0, 1]},\n {\"type\": \"nvidia\", \"select\": [2, 1]}]}",
	  "twoidx.json:2:31: devices[1].select: devices[0] already collects these \"nvidia\" devices (both select index 1); "
	  "one block per device, or give each block its own \"select\"" },
	{ "twouuid.json", 0,
	  "{\"devices\": [{\"type\": \"nvidia\", \"select\": [\"GPU-a\"]}, {\"type\": \"nvidia\", \"select\": [\"GPU-a\"]}]}",
	  "twouuid.json:1:84: devices[1].select: devices[0] already collects these \"nvidia\" devices (both select \"GPU-a\"); "
	  "one block per device, or give each block its own \"select\"" },
	{ "allidx.json", 0, "{\"devices\": [{\"type\": \"nvidia\", \"select\": [0]}, {\"type\": \"nvidia\"}]}",
	  "allidx.json:1:58: devices[1].type: devices[0] already collects these \"nvidia\" devices (both select \"all\"); "
	  "one block per device, or give each block its own \"select\"" },
	{ "twoauto.json", 0, "{\"devices\": [{\"type\": \"auto\"}, {\"type\": \"auto\", \"period\": 1}]}",
	  "twoauto.json:1:41: devices[1].type: devices[0] already collects these \"auto\" devices (both select \"all\"); "
	  "one block per device, or give each block its own \"select\"" },
	{ "disjoint.json", 0,
	  "{\"devices\": [{\"type\": \"nvidia\", \"select\": [0]}, {\"type\": \"nvidia\", \"select\": [1, \"GPU-b\"], "
	  "\"period\": 1}, {\"type\": \"amdgpu\"}, {\"type\": \"auto\", \"select\": [0]}, {\"type\": \"auto\", \"select\": [1]}]}",
	  NULL },
	{ "devok.yaml", 1,
	  "devices:\n  - type: nvidia\n    select: [0, GPU-1234]\n    period: 1s\n    metrics:\n"
	  "      - type: device_utilization\n      - {type: device_errors, period: 30s}\n",
	  NULL },
	{ "metrickey.json", 0, "{\"system_metrics\": [{\"type\": \"vcpu_usage\", \"perid\": 1}]}",
	  "metrickey.json:1:44: system_metrics[0].perid: unknown key \"perid\"; known: type, period" },
	{ "neuron.json", 0,
	  "{\"period\": \"1s\", \"neuron_runtimes\": [{\"tag_filter\": \".*\", \"metrics\": [{\"type\": \"neuroncore_counters\"}, "
	  "{\"type\": \"memory_used\"}, {\"type\": \"neuron_runtime_vcpu_usage\"}, {\"type\": \"execution_stats\"}]}], "
	  "\"system_metrics\": [{\"type\": \"vcpu_usage\"}, {\"type\": \"memory_info\"}, {\"period\": \"2s\", \"type\": "
	  "\"neuron_hw_counters\"}]}",
	  NULL },
	/* YAML: the same schema, positions from libyaml. */
	{ "ok.yaml", 1,
	  "period: 1s\n"
	  "runtimes:\n"
	  "  - address: process:tritonserver\n"
	  "    period: 2s\n"
	  "    metrics:\n"
	  "      - type: runtime_vcpu_usage\n"
	  "      - {type: memory_used, period: 5s}\n"
	  "system_metrics:\n"
	  "  - type: vcpu_usage\n"
	  "  - type: memory_info\n"
	  "    period: 10\n"
	  "devices: []\n",
	  NULL },
	{ "bad.yaml", 1,
	  "period: 1s\n"
	  "system_metrics:\n"
	  "  - type: vcpu_usage\n"
	  "  - type: memory_inf\n",
	  "bad.yaml:4:11: system_metrics[1].type: unknown metric group \"memory_inf\"; known: vcpu_usage, "
	  "memory_info, neuron_hw_counters, container_usage" },
	{ "key.yaml", 1, "period: 1s\nsystem_metric: []\n",
	  "key.yaml:2:1: system_metric: unknown key \"system_metric\"; known: period, runtimes, neuron_runtimes, "
	  "system_metrics, devices, procfs, sysfs, host" },
	{ "syntax.yaml", 1, "period: [1s\n", "syntax.yaml:2:1: did not find expected ',' or ']' while parsing a flow sequence" },
	{ "dup.yaml", 1, "period: 1s\nperiod: 2s\n", "dup.yaml:2:1: duplicate key \"period\"" },
	{ "type.yaml", 1, "period: yes please\n",
	  "type.yaml:1:9: period: invalid duration \"yes please\": expected a number followed by ms, s, m or h "
	  "(e.g. \"250ms\", \"1.5s\", \"2m\")" },
	{ "empty.yaml", 1, "", "empty.yaml:1:1: empty document" },
	{ "anchor.yaml", 1,
	  "period: &p 2s\nsystem_metrics:\n  - {type: vcpu_usage, period: *p}\n", NULL },
	/* Alias cycles are errors at the alias (and nothing leaks: the sanitized pass checks). */
	{ "cycle.yaml", 1, "&a [[*a]]\n", "cycle.yaml:1:6: alias cycle: this alias is inside the node it refers to" },
	{ "cycle2.yaml", 1, "period: 1s\nruntimes: &a [*a]\n",
	  "cycle2.yaml:2:15: alias cycle: this alias is inside the node it refers to" },
	{ "cycle3.yaml", 1, "system_metrics:\n  - &m {type: vcpu_usage, period: *m}\n",
	  "cycle3.yaml:2:35: alias cycle: this alias is inside the node it refers to" },
	{ "reuse.yaml", 1,
	  "runtimes:\n  - address: pid:1\n    metrics: &m [{type: memory_used}]\n  - address: pid:2\n    metrics: *m\n",
	  NULL },
	{ "noalias.yaml", 1, "period: *p\n", "noalias.yaml:1:9: unknown alias" },
	{ "docs.yaml", 1, "period: 1s\n---\nperiod: 2s\n", "docs.yaml:2:1: only one YAML document is allowed" },
	/* The "host" block: each key's type and values, an unknown key, in JSON and YAML. */
	{ "host.yaml", 1,
	  "host:\n  rootfs: /host\n  run: /host/run\n  cgroupfs: /host/sys/fs/cgroup\n"
	  "  kubelet_url: https://10.0.0.7:10250\n  kubelet_token_file: /var/run/token\n"
	  "  kubelet_ca_file: /var/run/ca.crt\n  kubelet_refresh: 10s\n  ecs_agent_url: http://localhost:51678\n"
	  "  ecs_metadata_url: http://169.254.170.2/v4/x\n  ecs_refresh: 45\n  instance_metadata: \"off\"\n",
	  NULL },
	{ "hostobj.json", 0, "{\"host\": \"/host\"}",
	  "hostobj.json:1:10: host: expected an object of host options (\"rootfs\", \"kubelet_url\", ...), got a string" },
	{ "hostkey.json", 0, "{\"host\": {\"rootfs\": \"/host\", \"kubelet\": \"https://x\"}}",
	  "hostkey.json:1:30: host.kubelet: unknown key \"kubelet\"; known: rootfs, run, cgroupfs, kubelet_url, "
	  "kubelet_token_file, kubelet_ca_file, kubelet_refresh, kubelet_pod_labels, ecs_agent_url, ecs_metadata, "
	  "ecs_metadata_url, ecs_refresh, instance_metadata, pod_resources_socket, hpc_job_mapping_dir" },
	{ "hostplab.json", 0, "{\"host\": {\"kubelet_pod_labels\": 65}}",
	  "hostplab.json:1:33: host.kubelet_pod_labels: expected an integer from 0 (none) to 64, got 65" },
	{ "hostplab2.json", 0, "{\"host\": {\"kubelet_pod_labels\": \"8\"}}",
	  "hostplab2.json:1:33: host.kubelet_pod_labels: expected an integer from 0 (none) to 64, got a string" },
	{ "hostplab3.json", 0, "{\"host\": {\"kubelet_pod_labels\": -1}}",
	  "hostplab3.json:1:33: host.kubelet_pod_labels: expected an integer from 0 (none) to 64, got -1" },
	{ "hostprs.json", 0, "{\"host\": {\"pod_resources_socket\": true}}",
	  "hostprs.json:1:35: host.pod_resources_socket: expected a unix socket path, or \"\" for none, got "
	  "a boolean" },
	{ "hosthpc.json", 0, "{\"host\": {\"hpc_job_mapping_dir\": [\"/a\"]}}",
	  "hosthpc.json:1:34: host.hpc_job_mapping_dir: expected a directory, or \"\" for none, got an array" },
	{ "hostroot.json", 0, "{\"host\": {\"rootfs\": 1}}",
	  "hostroot.json:1:21: host.rootfs: expected a directory (a non-empty string), got a number" },
	{ "hostrun.json", 0, "{\"host\": {\"run\": \"\"}}",
	  "hostrun.json:1:18: host.run: expected a directory (a non-empty string), got an empty string" },
	{ "hostcg.yaml", 1, "host:\n  cgroupfs: [/sys/fs/cgroup]\n",
	  "hostcg.yaml:2:13: host.cgroupfs: expected a directory (a non-empty string), got an array" },
	{ "hostkurl.json", 0, "{\"host\": {\"kubelet_url\": \"10.0.0.7:10250\"}}",
	  "hostkurl.json:1:26: host.kubelet_url: expected an http:// or https:// URL, got \"10.0.0.7:10250\"" },
	{ "hosttok.json", 0, "{\"host\": {\"kubelet_token_file\": true}}",
	  "hosttok.json:1:33: host.kubelet_token_file: expected a file (a non-empty string), got a boolean" },
	{ "hostca.json", 0, "{\"host\": {\"kubelet_ca_file\": {}}}",
	  "hostca.json:1:30: host.kubelet_ca_file: expected a file (a non-empty string), got an object" },
	{ "hostkref.json", 0, "{\"host\": {\"kubelet_refresh\": \"500ms\"}}",
	  "hostkref.json:1:30: host.kubelet_refresh: kubelet_refresh too short: 500 ms; the minimum is 1s" },
	{ "hostagent.yaml", 1, "host:\n  ecs_agent_url: localhost:51678\n",
	  "hostagent.yaml:2:18: host.ecs_agent_url: expected an http:// or https:// URL, got \"localhost:51678\"" },
	{ "hostmurl.json", 0, "{\"host\": {\"ecs_metadata_url\": 169}}",
	  "hostmurl.json:1:31: host.ecs_metadata_url: expected an http:// or https:// URL (a non-empty string), got a "
	  "number" },
	{ "hostmeta.json", 0, "{\"host\": {\"ecs_metadata\": \"yes\"}}",
	  "hostmeta.json:1:27: host.ecs_metadata: expected true or false, got a string" },
	{ "hostmeta2.json", 0, "{\"host\": {\"ecs_metadata_url\": \"http://a/v4\", \"ecs_metadata\": true}}",
	  "hostmeta2.json:1:46: host.ecs_metadata: \"ecs_metadata\" and \"ecs_metadata_url\" both name the task "
	  "metadata endpoint; use only one of them" },
	{ "hostmeta3.json", 0, "{\"host\": {\"ecs_metadata\": true}}",
	  "hostmeta3.json:1:27: host.ecs_metadata: ECS_CONTAINER_METADATA_URI_V4 is not set (not in an ECS task?); "
	  "\"ecs_metadata_url\" names the endpoint" },
	{ "hostmeta4.json", 0, "{\"host\": {\"ecs_metadata\": false}}", NULL },
	{ "hosteref.json", 0, "{\"host\": {\"ecs_refresh\": \"soon\"}}",
	  "hosteref.json:1:26: host.ecs_refresh: invalid duration \"soon\": expected a number followed by ms, s, m or h "
	  "(e.g. \"250ms\", \"1.5s\", \"2m\")" },
	{ "hostinst.json", 0, "{\"host\": {\"instance_metadata\": \"yes\"}}",
	  "hostinst.json:1:32: host.instance_metadata: expected auto, on or off, got \"yes\"" },
	{ "hostinst2.yaml", 1, "host:\n  instance_metadata: false\n",
	  "hostinst2.yaml:2:22: host.instance_metadata: expected auto, on or off (a non-empty string), got a boolean" },
};

int main(void)
{
	struct cfg cfg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = load(cases[i].name, cases[i].text, cases[i].yaml, &cfg);

		if (!cases[i].error) {
			if (!ok(err == NULL, "%s loads", cases[i].name))
				printf("#   error: %s\n", err);
			else
				cfg_free(&cfg);
		} else if (!strcmp(cases[i].name, "regex.json")) {
			/* regerror's wording is libc's: compare up to it. */
			ok(err && !strncmp(err, cases[i].error, strlen(cases[i].error)), "%s: %s", cases[i].name,
			   err ? err : "(loaded)");
		} else {
			is_str(err, cases[i].error, cases[i].name);
		}
		free(err);
	}

	/* Period inheritance root -> runtime -> group, and aliases mapped. */
	{
		char *err = load("inherit.json",
				 "{\"period\": \"3s\", \"neuron_runtimes\": [{\"address\": \"pid:7\", \"period\": \"2s\", "
				 "\"metrics\": [{\"type\": \"neuron_runtime_vcpu_usage\"}, {\"type\": \"inference_stats\", "
				 "\"period\": 0.5}]}, {\"address\": \"process:x\", \"metrics\": [{\"type\": \"memory_used\"}]}],"
				 " \"system_metrics\": [{\"type\": \"vcpu_usage\"}]}",
				 0, &cfg);

		if (ok(!err, "inheritance config loads")) {
			is_int(cfg.system[0].period_ms, 3000, "system group inherits the root period");
			is_int(cfg.runtimes[0].groups[0].period_ms, 2000, "runtime group inherits the runtime period");
			is_int(cfg.runtimes[0].groups[1].period_ms, 500, "group period overrides");
			is_int(cfg.runtimes[1].groups[0].period_ms, 3000, "runtime without period inherits the root");
			is_str(group_name(cfg.runtimes[0].groups[0].id), "runtime_vcpu_usage", "alias mapped");
			is_str(group_name(cfg.runtimes[0].groups[1].id), "execution_stats", "inference_stats mapped");
			is_str(cfg.runtimes[0].collector, "pid", "pid: address");
			is_int(cfg.runtimes[0].pid, 7, "pid parsed");
			is_str(cfg.runtimes[1].collector, "process", "process: address");
			is_str(cfg.runtimes[1].name, "x", "process name parsed");
			cfg_free(&cfg);
		}
		free(err);
	}

	/*
	 * The "host" block: each key's value as parsed; the effective block
	 * prints each (the defaults filled in: run and cgroupfs under rootfs),
	 * loads back and is a fixed point; "ecs_metadata": true takes the
	 * variable ECS sets; the command line's options win (cfg_override).
	 */
	{
		char *err = load("hostv.json",
				 "{\"host\": {\"rootfs\": \"/host/\", \"kubelet_url\": \"https://10.0.0.7:10250\", "
				 "\"kubelet_token_file\": \"/t\", \"kubelet_ca_file\": \"/ca\", \"kubelet_refresh\": \"10s\", "
				 "\"ecs_agent_url\": \"http://localhost:51678\", \"ecs_metadata_url\": \"http://169.254.170.2/v4/x\", "
				 "\"ecs_refresh\": 45, \"instance_metadata\": \"off\", \"pod_resources_socket\": \"/k.sock\", "
				 "\"hpc_job_mapping_dir\": \"/run/slurm-gpus\"}}",
				 0, &cfg);
		struct cfg_host cli = { .run = "/cli/run", .kubelet_url = "http://127.0.0.1:10255", .ecs_refresh_ms = 2000,
					.instance_mode = INSTANCE_ON, .pod_resources_socket = "",
					.hpc_job_mapping_dir = "/cli/jobs" };
		json_t *eff;
		char *text;

		if (ok(!err, "hostv.json loads")) {
			const struct cfg_host *h = &cfg.host;

			is_str(h->rootfs, "/host/", "host.rootfs");
			ok(!h->run && !h->cgroupfs, "host.run, host.cgroupfs: not given, NULL (the default)");
			is_str(h->kubelet_url, "https://10.0.0.7:10250", "host.kubelet_url");
			is_str(h->kubelet_token_file, "/t", "host.kubelet_token_file");
			is_str(h->kubelet_ca_file, "/ca", "host.kubelet_ca_file");
			is_int(h->kubelet_refresh_ms, 10000, "host.kubelet_refresh");
			is_str(h->ecs_agent_url, "http://localhost:51678", "host.ecs_agent_url");
			is_str(h->ecs_metadata_url, "http://169.254.170.2/v4/x", "host.ecs_metadata_url");
			is_int(h->ecs_refresh_ms, 45000, "host.ecs_refresh: a number of seconds");
			is_int(h->instance_mode, INSTANCE_OFF, "host.instance_metadata: off");
			is_str(h->pod_resources_socket, "/k.sock", "host.pod_resources_socket");
			is_str(h->hpc_job_mapping_dir, "/run/slurm-gpus", "host.hpc_job_mapping_dir");
			eff = cfg_effective(&cfg);
			text = json_dumps(json_object_get(eff, "host"), JSON_COMPACT | JSON_REAL_PRECISION(10));
			is_str(text,
			       "{\"rootfs\":\"/host/\",\"run\":\"/host/run\",\"cgroupfs\":\"/host/sys/fs/cgroup\","
			       "\"kubelet_url\":\"https://10.0.0.7:10250\",\"kubelet_token_file\":\"/t\",\"kubelet_ca_file\":"
			       "\"/ca\",\"kubelet_refresh\":10.0,\"ecs_agent_url\":\"http://localhost:51678\","
			       "\"ecs_metadata_url\":\"http://169.254.170.2/v4/x\",\"ecs_refresh\":45.0,"
			       "\"pod_resources_socket\":\"/k.sock\",\"hpc_job_mapping_dir\":\"/run/slurm-gpus\","
			       "\"instance_metadata\":\"off\"}",
			       "the effective host block: every key, run and cgroupfs under rootfs");
			free(text);
			text = json_dumps(eff, JSON_COMPACT | JSON_REAL_PRECISION(10));
			json_decref(eff);
			is_fixed_point("hostv2.json", text, "the effective host block loads back");
			free(text);

			cfg_override(&cfg, "/cli/proc", NULL, &cli);
			is_str(cfg.procfs, "/cli/proc", "override: --path.procfs wins");
			is_str(cfg.sysfs, "/sys", "override: a root not given stays the file's");
			is_str(h->run, "/cli/run", "override: --path.run wins");
			is_str(h->rootfs, "/host/", "override: host.rootfs not given on the command line stays");
			is_str(h->kubelet_url, "http://127.0.0.1:10255", "override: --kubelet-url wins");
			is_str(h->kubelet_token_file, "/t", "override: host.kubelet_token_file stays");
			is_int(h->kubelet_refresh_ms, 10000, "override: host.kubelet_refresh stays");
			is_int(h->ecs_refresh_ms, 2000, "override: --ecs-refresh wins");
			is_int(h->instance_mode, INSTANCE_ON, "override: --instance-metadata on wins over \"off\"");
			is_str(h->pod_resources_socket, "", "override: --pod-resources-socket \"\" wins (the client off)");
			is_str(h->hpc_job_mapping_dir, "/cli/jobs", "override: --hpc-job-mapping-dir wins");
			cli = (struct cfg_host){ .instance_mode = -1 };
			cfg_override(&cfg, NULL, NULL, &cli);
			is_int(h->instance_mode, INSTANCE_ON, "override: --instance-metadata not given (-1) keeps the mode");
			cfg_free(&cfg);
		}
		free(err);
		setenv("ECS_CONTAINER_METADATA_URI_V4", "http://169.254.170.2/v4/abc", 1);
		err = load("hostmeta.json", "{\"host\": {\"ecs_metadata\": true}}", 0, &cfg);
		if (ok(!err, "\"ecs_metadata\": true loads with ECS_CONTAINER_METADATA_URI_V4 set")) {
			is_str(cfg.host.ecs_metadata_url, "http://169.254.170.2/v4/abc", "and takes its endpoint");
			cfg_free(&cfg);
		}
		free(err);
		setenv("ECS_CONTAINER_METADATA_URI_V4", "169.254.170.2/v4/abc", 1);
		err = load("hostmeta.json", "{\"host\": {\"ecs_metadata\": true}}", 0, &cfg);
		is_str(err, "hostmeta.json:1:27: host.ecs_metadata: ECS_CONTAINER_METADATA_URI_V4: expected an http:// or "
			    "https:// URL, got \"169.254.170.2/v4/abc\"", "a variable that is no URL: an error");
		free(err);
		unsetenv("ECS_CONTAINER_METADATA_URI_V4");
		/* --kubelet-pod-labels' key: loaded, in the effective block when not 0, the command line's wins. */
		err = load("hostplabok.json", "{\"host\": {\"kubelet_pod_labels\": 8}}", 0, &cfg);
		if (ok(!err, "\"kubelet_pod_labels\": 8 loads")) {
			struct cfg_host none = { .instance_mode = -1, .kubelet_pod_labels = -1 };
			struct cfg_host zero = { .instance_mode = -1, .kubelet_pod_labels = 0 };
			json_t *heff = cfg_effective(&cfg);

			is_int(cfg.host.kubelet_pod_labels, 8, "host.kubelet_pod_labels");
			is_int(json_integer_value(json_object_get(json_object_get(heff, "host"), "kubelet_pod_labels")), 8,
			       "the effective host block has it");
			json_decref(heff);
			cfg_override(&cfg, NULL, NULL, &none);
			is_int(cfg.host.kubelet_pod_labels, 8, "override: --kubelet-pod-labels not given (-1) keeps the file's");
			cfg_override(&cfg, NULL, NULL, &zero);
			is_int(cfg.host.kubelet_pod_labels, 0, "override: --kubelet-pod-labels 0 wins (labels off)");
			heff = cfg_effective(&cfg);
			ok(!json_object_get(json_object_get(heff, "host"), "kubelet_pod_labels"),
			   "0 (the default) is left out of the effective host block");
			json_decref(heff);
			cfg_free(&cfg);
		}
		free(err);
	}

	/* The effective configuration is itself a valid configuration, and a fixed point. */
	{
		char *err = load("eff.yaml", "period: 1.5s\nruntimes:\n  - address: unix:/x\n    metrics: [{type: hw_counters}]\n",
				 1, &cfg);
		json_t *eff;
		char *text;

		if (ok(!err, "eff.yaml loads")) {
			eff = cfg_effective(&cfg);
			text = json_dumps(eff, JSON_COMPACT | JSON_REAL_PRECISION(10));
			is_str(text,
			       "{\"period\":1.5,\"procfs\":\"/proc\",\"sysfs\":\"/sys\","
			       "\"host\":{\"rootfs\":\"/\",\"run\":\"/run\",\"cgroupfs\":\"/sys/fs/cgroup\",\"kubelet_refresh\":30.0,"
			       "\"ecs_refresh\":30.0,\"instance_metadata\":\"auto\"},\"runtimes\":[{\"address\":\"unix:/x\","
			       "\"period\":1.5,\"metrics\":[{\"type\":\"hw_counters\",\"period\":1.5}]}],\"system_metrics\":[],"
			       "\"devices\":[]}",
			       "effective configuration");
			is_fixed_point("eff.json", text, "effective configuration loads back");
			free(text);
			json_decref(eff);
			cfg_free(&cfg);
		}
		free(err);
	}

	/*
	 * A device collector's own key in the effective configuration: printed
	 * back by the collector after every block's keys, loaded back to the
	 * same, a fixed point; blocks without it print none.
	 */
	{
		char *err = load("effnv.yaml",
				 "devices:\n  - type: nvidia\n    library: /opt/nv/libnvidia-ml.so.1\n    select: [1]\n"
				 "    metrics: [{type: device_power}]\n  - type: nvidia\n    select: [0]\n"
				 "    metrics: [{type: device_power}]\n",
				 1, &cfg);
		json_t *eff;
		char *text;

		if (ok(!err, "effnv.yaml loads")) {
			ok(cfg.devices[0].own != NULL, "the collector kept what it parsed (cfg_device.own)");
			ok(cfg.devices[1].own == NULL, "a block without the collector's keys keeps nothing");
			eff = cfg_effective(&cfg);
			text = json_dumps(eff, JSON_COMPACT | JSON_REAL_PRECISION(10));
			is_str(text,
			       "{\"period\":5.0,\"procfs\":\"/proc\",\"sysfs\":\"/sys\","
			       "\"host\":{\"rootfs\":\"/\",\"run\":\"/run\",\"cgroupfs\":\"/sys/fs/cgroup\",\"kubelet_refresh\":30.0,"
			       "\"ecs_refresh\":30.0,\"instance_metadata\":\"auto\"},\"runtimes\":[],\"system_metrics\":[],"
			       "\"devices\":[{\"type\":\"nvidia\",\"select\":[1],\"period\":5.0,\"metrics\":[{\"type\":"
			       "\"device_power\",\"period\":5.0}],\"library\":\"/opt/nv/libnvidia-ml.so.1\"},{\"type\":\"nvidia\","
			       "\"select\":[0],\"period\":5.0,\"metrics\":[{\"type\":\"device_power\",\"period\":5.0}]}]}",
			       "effective configuration: the collector's key after every block's");
			is_fixed_point("effnv.json", text, "effective configuration with a collector key loads back");
			free(text);
			json_decref(eff);
			cfg_free(&cfg);
			ok(cfg.devices == NULL && cfg.ndevices == 0, "cfg_free releases the blocks (and what collectors kept)");
		}
		free(err);
	}

	/*
	 * Every collector's own keys: each is refused for every other type with
	 * a message naming its type, none shadows a key every block has, and a
	 * collector with keys parses, prints and frees them.
	 */
	{
		static const char *const common[] = { "type", "select", "period", "metrics" };
		const struct collector_ops *const *all = collectors();
		char text[256], want[512], *err;
		size_t nkeys = 0;

		for (size_t i = 0; all[i]; i++) {
			if (all[i]->scope != COLL_DEVICE)
				continue;
			for (size_t k = 0; all[i]->keys && all[i]->keys[k]; k++, nkeys++) {
				const char *key = all[i]->keys[k];

				int shadows = 0;

				for (size_t c = 0; c < sizeof(common) / sizeof(common[0]); c++)
					shadows |= !strcmp(key, common[c]);
				ok(!shadows, "%s's key \"%s\" is not one every block has", all[i]->name, key);
				for (size_t t = 0; all[t]; t++) {
					int shared = 0;

					for (size_t o = 0; all[t]->keys && all[t]->keys[o]; o++)
						shared |= !strcmp(all[t]->keys[o], key);
					if (t == i || all[t]->scope != COLL_DEVICE || shared)
						continue; /* a key two kinds declare (idle_power_watts) is each one's */
					snprintf(text, sizeof(text), "{\"devices\": [{\"type\": \"%s\", \"%s\": 1}]}",
						 all[t]->name, key);
					err = load("other.json", text, 0, &cfg);
					snprintf(want, sizeof(want), "devices[0].%s: unknown key \"%s\" for type \"%s\"", key,
						 key, all[t]->name);
					ok(err && strstr(err, want) && strstr(err, all[i]->name), "%s's \"%s\" refused for %s: %s",
					   all[i]->name, key, all[t]->name, err ? err : "(loaded)");
					if (!err)
						cfg_free(&cfg);
					free(err);
				}
			}
			if (all[i]->keys)
				ok(all[i]->config && all[i]->config_print && all[i]->config_free,
				   "%s has keys, and parses, prints and frees them", all[i]->name);
		}
		ok(nkeys >= 1, "at least one collector has keys of its own (%zu)", nkeys);
	}

	/* The default configuration: vcpu_usage, memory_info and every group of every device found, at 5 s. */
	cfg_default(&cfg);
	is_int(cfg.nsystem, 2, "default: two system groups");
	ok(cfg.system[0].id == GROUP_VCPU_USAGE && cfg.system[1].id == GROUP_MEMORY_INFO,
	   "default: vcpu_usage and memory_info (what --help, the README and the man page say)");
	is_int(cfg.system[0].period_ms, 5000, "default: 5 s");
	is_int(cfg.ndevices, 1, "default: one device block");
	is_str(cfg.devices[0].type, "auto", "default: devices of every type found");
	is_int(cfg.devices[0].ngroups, 7, "default: every device group");
	cfg_free(&cfg);

	/* Device selection and group periods. */
	{
		char *err = load("sel.json",
				 "{\"period\": 2, \"devices\": [{\"type\": \"nvidia\", \"select\": [1, \"GPU-x\"], \"metrics\": "
				 "[{\"type\": \"device_power\"}, {\"type\": \"device_errors\", \"period\": \"30s\"}]}, "
				 "{\"type\": \"hwmon\"}]}",
				 0, &cfg);

		if (ok(!err, "device selection loads")) {
			ok(cfg_device_selects(&cfg.devices[0], 1, NULL, NULL), "index 1 selected");
			ok(!cfg_device_selects(&cfg.devices[0], 0, "GPU-y", NULL), "index 0 / other UUID not selected");
			ok(cfg_device_selects(&cfg.devices[0], 7, "GPU-x", NULL), "selected by UUID");
			ok(cfg_device_selects(&cfg.devices[1], 9, NULL, NULL), "no select: all");
			is_int(cfg.devices[0].groups[0].period_ms, 2000, "device group inherits the root period");
			is_int(cfg.devices[0].groups[1].period_ms, 30000, "device group period overrides");
			is_int(cfg.devices[1].ngroups, 7, "no metrics: every device group");
			cfg_free(&cfg);
		}
		free(err);
	}

	/*
	 * An endpoint runtime's own keys in the effective configuration: printed
	 * back by its collector (max_body_bytes and passthrough with their
	 * defaults), loaded back to the same, a fixed point.
	 */
	{
		char *err = load("effep.yaml",
				 "runtimes:\n  - address: https://127.0.0.1:8443/metrics\n    server: triton\n"
				 "    timeout: 1500ms\n    tls: {ca_file: /ca.pem, cert_file: /c.pem, key_file: /c.key, "
				 "server_name: m.test}\n    basic_auth: {username: u, password_file: /pw}\n"
				 "    metrics: [{type: execution_stats}]\n  - address: http://localhost/m\n    metrics: []\n",
				 1, &cfg);
		json_t *eff;
		char *text;

		if (ok(!err, "effep.yaml loads")) {
			is_str(cfg.runtimes[0].collector, "endpoint", "an https:// address is an endpoint runtime");
			is_str(cfg.runtimes[1].collector, "endpoint", "so is an http:// one");
			eff = cfg_effective(&cfg);
			text = json_dumps(json_object_get(eff, "runtimes"), JSON_COMPACT | JSON_REAL_PRECISION(10));
			is_str(text,
			       "[{\"address\":\"https://127.0.0.1:8443/metrics\",\"period\":5.0,\"metrics\":[{\"type\":"
			       "\"execution_stats\",\"period\":5.0}],\"server\":\"triton\",\"timeout\":1.5,\"max_body_bytes\":"
			       "4194304,\"tls\":{\"ca_file\":\"/ca.pem\",\"cert_file\":\"/c.pem\",\"key_file\":\"/c.key\","
			       "\"server_name\":\"m.test\",\"insecure_skip_verify\":false},\"basic_auth\":{\"username\":\"u\","
			       "\"password_file\":\"/pw\"},\"passthrough\":false},{\"address\":\"http://localhost/m\","
			       "\"period\":5.0,\"metrics\":[],\"max_body_bytes\":4194304,\"passthrough\":false}]",
			       "effective configuration: the endpoint collector's keys after every runtime's");
			free(text);
			text = json_dumps(eff, JSON_COMPACT | JSON_REAL_PRECISION(10));
			is_fixed_point("effep.json", text, "effective configuration with endpoint keys loads back");
			free(text);
			json_decref(eff);
			cfg_free(&cfg);
		}
		free(err);
	}

	/* "latency_histograms": shown by the effective configuration when on (off: not shown, as above). */
	{
		char *err = load("ephist.json",
				 "{\"runtimes\": [{\"address\": \"http://h/m\", \"latency_histograms\": true, "
				 "\"metrics\": []}]}", 0, &cfg);
		json_t *eff;
		char *text;

		if (ok(!err, "latency_histograms: true loads")) {
			eff = cfg_effective(&cfg);
			text = json_dumps(json_object_get(eff, "runtimes"), JSON_COMPACT | JSON_REAL_PRECISION(10));
			is_str(text,
			       "[{\"address\":\"http://h/m\",\"period\":5.0,\"metrics\":[],\"max_body_bytes\":4194304,"
			       "\"passthrough\":false,\"latency_histograms\":true}]",
			       "effective configuration shows latency_histograms when on");
			free(text);
			json_decref(eff);
			cfg_free(&cfg);
		}
		free(err);
	}

	/* The registry is the list of device types and address schemes: each loads, and the error lists them. */
	{
		const struct collector_ops *const *all = collectors();
		char text[256], known[256] = "", *err;
		size_t n = 0;

		for (size_t i = 0; all[i]; i++) {
			if (all[i]->scope != COLL_DEVICE)
				continue;
			snprintf(text, sizeof(text), "{\"devices\": [{\"type\": \"%s\"}]}", all[i]->name);
			err = load("reg.json", text, 0, &cfg);
			if (ok(!err, "registry device type %s loads", all[i]->name)) {
				is_str(cfg.devices[0].type, all[i]->name, "... as itself");
				ok(collector_find(NULL, COLL_DEVICE, cfg.devices[0].type) == all[i], "... found again by type");
				cfg_free(&cfg);
			}
			free(err);
			n += (size_t)snprintf(known + n, sizeof(known) - n, "%s, ", all[i]->name);
		}
		ok(n > 0, "the registry has device collectors");
		snprintf(known + n, sizeof(known) - n, "auto");
		err = load("reg.json", "{\"devices\": [{\"type\": \"x\"}]}", 0, &cfg);
		ok(err && strstr(err, known) && !strcmp(strstr(err, known), known), "unknown type lists the registry: %s",
		   err ? err : "(loaded)");
		free(err);
		for (size_t i = 0; all[i]; i++) {
			for (size_t k = 0; all[i]->scope == COLL_RUNTIME && all[i]->schemes[k]; k++) {
				const char *scheme = all[i]->schemes[k];

				/* An address of the scheme: a URL for the endpoint collector's. */
				snprintf(text, sizeof(text), "{\"runtimes\": [{\"address\": \"%s%s\", \"metrics\": []}]}",
					 scheme, strncmp(scheme, "http", 4) ? ":1" : "://127.0.0.1:1/metrics");
				err = load("reg.json", text, 0, &cfg);
				if (ok(!err, "registry address scheme %s: loads", scheme)) {
					is_str(cfg.runtimes[0].collector, all[i]->name, "... served by its collector");
					ok(collector_find(NULL, COLL_RUNTIME, cfg.runtimes[0].collector) == all[i],
					   "... found again by name");
					cfg_free(&cfg);
				}
				free(err);
			}
		}
		/* Each name is unique in its scope, and each system group has one collector at most. */
		n = 0;
		for (size_t i = 0; all[i]; i++) {
			n += collector_find(NULL, all[i]->scope, all[i]->name) != all[i];
			n += all[i]->scope == COLL_SYSTEM && collector_group(NULL, all[i]->group) != all[i];
		}
		is_int(n, 0, "every collector is found by its scope and name (a system one by its group)");
		/* One way per scope: a system group is its collector's record (sample, write), the others collect. */
		n = 0;
		for (size_t i = 0; all[i]; i++)
			n += all[i]->scope == COLL_SYSTEM ? !all[i]->sample || !all[i]->write || all[i]->collect
							  : !all[i]->collect || all[i]->sample || all[i]->write;
		is_int(n, 0, "every system collector samples and writes its record; every other one collects");
	}

	/* YAML anchors: the latest of a name wins; more than 64 is an error at the 65th, without a leak. */
	{
		char *err = load("redef.yaml",
				 "period: &p 2s\nsystem_metrics:\n  - {type: vcpu_usage, period: &p 3s}\n"
				 "  - {type: memory_info, period: *p}\n",
				 1, &cfg);
		char text[2048], want[128];
		size_t n = 0;

		if (ok(!err, "redef.yaml loads")) {
			is_int(cfg.system[1].period_ms, 3000, "an alias refers to the latest anchor of its name");
			cfg_free(&cfg);
		}
		free(err);
		for (int sc = 0; sc < 2; sc++) {
			n = (size_t)snprintf(text, sizeof(text), "period: 1s\nx: [");
			for (int i = 0; i < 64; i++)
				n += (size_t)snprintf(text + n, sizeof(text) - n, "&a%d 1, ", i);
			snprintf(text + n, sizeof(text) - n, "%s]\n", sc ? "&z [1, 2]" : "&z 1");
			snprintf(want, sizeof(want), "many.yaml:2:%zu: too many anchors", n - 11 + 1);
			err = load("many.yaml", text, 1, &cfg);
			is_str(err, want, sc ? "65 anchors, the last on a collection" : "65 anchors, the last on a scalar");
			free(err);
		}
	}

	/* Messages quote input capped (200 bytes, then "...") and escaped: a 2 MB key or value is not one line. */
	{
		size_t big = 2u << 20, n;
		char *text = malloc(big + 256), *err;
		static const struct {
			const char *name, *pre, *post;
			int yaml;
		} huge[] = {
			{ "hugekey.json", "{\"", "\": 1}", 0 },
			{ "hugeval.json", "{\"period\": \"", "\"}", 0 },
			{ "hugegroup.json", "{\"system_metrics\": [{\"type\": \"", "\"}]}", 0 },
			{ "hugeaddr.json", "{\"runtimes\": [{\"metrics\": [], \"address\": \"pid:", "\"}]}", 0 },
			{ "hugescheme.json", "{\"runtimes\": [{\"metrics\": [], \"address\": \"", ":x\"}]}", 0 },
			{ "hugedup.yaml", "? ", "\n: 1\n? ", 1 }, /* then the same key again */
		};

		for (size_t h = 0; h < sizeof(huge) / sizeof(huge[0]); h++) {
			n = (size_t)sprintf(text, "%s", huge[h].pre);
			memset(text + n, 'k', big);
			n += big;
			n += (size_t)sprintf(text + n, "%s", huge[h].post);
			if (huge[h].yaml) { /* the duplicate: the huge key twice, as explicit keys (no 1024-byte limit) */
				text = realloc(text, 2 * big + 256);
				memset(text + n, 'k', big);
				n += big;
				n += (size_t)sprintf(text + n, "\n: 2\n");
			}
			err = load(huge[h].name, text, huge[h].yaml, &cfg);
			if (!ok(err && strlen(err) < 2000 && strstr(err, "kkk...") && !strstr(err, "kkkk\""),
				"%s: the error quotes at most 200 bytes, then \"...\" (%zu bytes)", huge[h].name,
				err ? strlen(err) : 0))
				fprintf(stderr, "#   %.300s\n", err ? err : "(loaded)");
			free(err);
		}
		free(text);

		err = load("esc.json", "{\"system_metrics\": [{\"type\": \"\\u001b[2J\\nx\"}], \"\\u001b]0;t\\u0007\": 1}", 0, &cfg);
		is_str(err, "esc.json:1:48: \\u001b]0;t\\u0007: unknown key \"\\u001b]0;t\\u0007\"; known: period, runtimes, "
			    "neuron_runtimes, system_metrics, devices, procfs, sysfs, host",
		       "control characters in a key are escaped, in the path too");
		free(err);
		err = load("esc2.json", "{\"system_metrics\": [{\"type\": \"\\u001b[2J\\nx\"}]}", 0, &cfg);
		is_str(err, "esc2.json:1:30: system_metrics[0].type: unknown metric group \"\\u001b[2J\\nx\"; known: vcpu_usage, "
			    "memory_info, neuron_hw_counters, container_usage",
		       "control characters in a value are escaped");
		free(err);
	}

	/* "auto" skips a kind named explicitly (monitor_new asks cfg_device_named). */
	{
		char *err = load("named.json", "{\"devices\": [{\"type\": \"auto\"}, {\"type\": \"amdgpu\", \"period\": 1}]}",
				 0, &cfg);

		if (ok(!err, "auto + amdgpu loads")) {
			ok(cfg_device_named(&cfg, "amdgpu"), "amdgpu is named explicitly");
			ok(!cfg_device_named(&cfg, "nvidia"), "nvidia is not (auto finds it)");
			ok(!cfg_device_named(&cfg, "auto"), "auto is never a named kind");
			cfg_free(&cfg);
		}
		free(err);
	}

	/* Files: a missing one names itself; the extension picks YAML. */
	{
		char *err = NULL;

		ok(cfg_load("/nonexistent/x.json", &cfg, &err) < 0 && err &&
			   !strcmp(err, "/nonexistent/x.json: No such file or directory"),
		   "missing file: %s", err ? err : "");
		free(err);
	}
	return done_testing();
}
