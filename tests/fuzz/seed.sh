#!/bin/sh
# SPDX-License-Identifier: MIT
# Seed a libFuzzer corpus directory with one file per fixture stream line
# (TARGET expo: one file per fixture exposition instead).
# Usage: tests/fuzz/seed.sh DIR [TARGET]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: $0 DIR}
mkdir -p "$dir"
if [ "${2:-}" = expo ]; then
	for f in "$top"/tests/fixtures/infer/*.prom "$top"/tests/fixtures/prom/*.prom; do
		cp "$f" "$dir/seed-$(basename "$f")"
	done
	exit 0
fi
# an endpoint runtime's entry with its exposition (accel-prom --passthrough)
printf '%s\n' '{"monitor":{},"runtime_data":[{"address":"http://a/m","pid":7,"runtime_tag":"t","error":"","exposition":"# HELP r R\n# TYPE r counter\nr{m=\"x\"} 5\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n","report":{}}]}' \
	>"$dir/seed-passthrough"
for f in "$top"/tests/fixtures/streams/*.jsonl "$top"/tests/fixtures/prom/*.jsonl; do
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		printf '%s\n' "$line" >"$dir/seed-$(basename "$f" .jsonl)-$n"
	done <"$f"
done
