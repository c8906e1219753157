#!/bin/sh
# SPDX-License-Identifier: MIT
# Seed a libFuzzer corpus directory with one file per fixture stream line and
# fixture exposition (TARGET expo: one file per fixture exposition only).
# Usage: tests/fuzz/seed.sh DIR [TARGET]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
if [ "${2:-}" = podres ]; then # whole answers, made by the test server from our .proto
	/usr/bin/python3 "$top/tests/helpers/podres_server.py" --proto "$top/monitor/host/podres_api.proto" \
		--dir "$dir/.py" --seeds "$dir"
	exit 0
fi
if [ "${2:-}" = jobmap ]; then # a name line, then a mapping file's text
	printf '0\njob1\njob2\n' >"$dir/seed-gpu"
	printf '3.10\n12345_7\r\n12346+0\r\n\n  \n job \nb\nb' >"$dir/seed-mig-crlf"
	printf '01\ncaf\303\251\n\302\205\n' >"$dir/seed-c1"
	printf '2147483647\nok\n\377\n' >"$dir/seed-bad-utf8"
	exit 0
fi
if [ "${2:-}" = otlp ]; then # a byte of settings (encoding, request limits), stream lines, then an answer's body
	n=0
	for f in "$top"/tests/fixtures/streams/*.jsonl "$top"/tests/fixtures/prom/*.jsonl; do
		n=$((n + 1))
		{ printf '\000'; cat "$f"; } >"$dir/seed-pb-$n"
		{ printf '\003'; head -3 "$f"; printf '\n#BODY\n{"partialSuccess":{"rejectedDataPoints":"3","errorMessage":"x"}}'; } >"$dir/seed-json-$n"
		{ printf '\204'; head -2 "$f"; printf '\n#BODY\n\010\003\022\003bad'; } >"$dir/seed-small-$n"
	done
	exit 0
fi
if [ "${2:-}" = expo ]; then
	for f in "$top"/tests/fixtures/infer/*.prom "$top"/tests/fixtures/prom/*.prom; do
		cp "$f" "$dir/seed-$(basename "$f")"
	done
	exit 0
fi
# endpoints' expositions as they are (fuzz_prom_line republishes an input that is not a stream line), and
# lines Prometheus refuses
for f in "$top"/tests/fixtures/infer/*.prom; do
	cp "$f" "$dir/seed-expo-$(basename "$f")"
done
printf '%b' 'ok{a="1"} 1\nc{a:b="1"} 1\nd{a="1",a="2"} 1\nn{__name__="x"} 1\nr{runtime_tag="a",exported_runtime_tag="b",pid="1"} 1\n# TYPE _total counter\n_total 1\n# TYPE f_total counter\nf_total 1\n# TYPE f gauge\nf 2\n' \
	>"$dir/seed-expo-refused"
# an endpoint runtime's entry with its exposition (accel-prom --passthrough)
printf '%s\n' '{"monitor":{},"runtime_data":[{"address":"http://a/m","pid":7,"runtime_tag":"t","error":"","exposition":"# HELP r R\n# TYPE r counter\nr{m=\"x\"} 5\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n","report":{}}]}' \
	>"$dir/seed-passthrough"
# format 3: the devices' per-pod and per-container sums left to the reader (common/derive.c)
printf '%s\n' '{"monitor":{"format_version":3},"identities":{"containers":{"c1":{"runtime":"containerd","pod_uid":"u1","name":"app","pids":[11,12]}},"pods":{"u1":{"pod":"web","namespace":"prod","qos":"burstable"}},"processes":{"14":{"pod_uid":"u1"}}},"device_data":[{"device_type":"nvidia","error":"","report":{"device_memory":{"period":1,"error":"","devices":{"0":{"index":0,"uuid":"GPU-1","processes":{"11":5,"12":7,"14":1},"mig_devices":{"1":{"processes":{"12":3}}}}}},"device_power":{"period":1,"error":"","devices":{"0":{"index":0,"uuid":"GPU-1","energy_attribution":"memory","processes":{"11":0.5,"14":1.25}}}},"device_utilization":{"period":1,"error":"","devices":{"0":{"index":0,"uuid":"GPU-1","processes":{"11":{"sm":10,"enc":2}}}}}}}]}' \
	>"$dir/seed-format3"
for f in "$top"/tests/fixtures/streams/*.jsonl "$top"/tests/fixtures/prom/*.jsonl; do
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		printf '%s\n' "$line" >"$dir/seed-$(basename "$f" .jsonl)-$n"
	done <"$f"
done
