#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined; undefined
# behaviour aborts, so that it leaves its input like a crash) into
# OUTDIR: fuzz_prom_line (accel-prom: stream -> samples -> exposition),
# fuzz_csv (accel-csv: stream -> samples -> CSV cells, rows and files) and
# fuzz_cloudwatch (accel-cloudwatch: stream -> samples -> PutMetricData
# bodies and EMF) and fuzz_expo (an endpoint's exposition -> expo_parse ->
# monitor/endpoint/infer.c) and fuzz_podres (the kubelet's pod-resources answer -> grpc_unframe ->
# monitor/host/podres_table.c) and fuzz_jobmap (an HPC job mapping file's name and text ->
# monitor/host/jobmap.c's reader) and fuzz_otlp (accel-otlp: stream -> the OTLP encoder -> requests read
# back, and the server's answers -> otlp_response_parse/otlp_status_parse). The Makefile runs it to make build/fuzz/fuzz_TARGET,
# which tests/integration/*_fuzz.sh (short runs in the test suite) and
# tests/fuzz/run.sh (make fuzz) run.
#
# Usage: tests/fuzz/build.sh OUTDIR [TARGET...]   (TARGET: prom_line, csv,
#        cloudwatch, expo, podres, jobmap, otlp; default the first three; CLANG=clang-16 to pick a compiler)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: $0 OUTDIR [TARGET...]}
shift
[ $# -gt 0 ] || set -- prom_line csv cloudwatch
cc=${CLANG:-clang}
mkdir -p "$out"
# Each target links only the modules its path uses (common/samples.c, stream.c, derive.c and their helpers).
common="$top/common/derive.c $top/common/samples.c $top/common/samples_rules.c $top/common/all_rows.c $top/common/rows/*.c $top/common/stream.c $top/common/util.c $top/common/log.c $top/common/timeutil.c $top/common/schema.c"
for t in "$@"; do
	case $t in
	prom_line) mods="$top/common/series/prom_store.c $top/common/series/prom_hist.c $top/common/series/prom_expo.c $top/common/series/prom_dcgm.c $top/common/series/nvidia_xid.c $top/common/series/prom_pass.c $top/common/series/prom_kube.c
		$top/common/expo_parse.c" ;;
	csv) mods="$top/sinks/csv/csv_format.c $top/sinks/csv/csv_out.c" ;;
	expo) mods="$top/common/expo_parse.c $top/monitor/endpoint/infer.c $top/monitor/endpoint/infer_period.c $top/monitor/endpoint/bounds.c
		$top/common/jsonw.c" ;;
	cloudwatch) mods="$top/sinks/cloudwatch/cloudwatch_map.c $top/sinks/cloudwatch/cloudwatch_query.c $top/sinks/cloudwatch/cloudwatch_emf.c
		$top/sinks/cloudwatch/cloudwatch_queue.c" ;;
	podres) mods="$top/monitor/host/podres_table.c $top/monitor/host/podres_api.pb-c.c $top/monitor/http/grpc.c
		$top/common/http.c" ;;
	jobmap) mods="$top/monitor/host/jobmap.c $top/common/hindex.c" ;;
	otlp) mods="$top/sinks/otlp/otlp_enc.c $top/sinks/otlp/otlp_pb.c $top/sinks/otlp/otlp_json.c $top/sinks/otlp/otlp_names.c
		$top/sinks/otlp/otlp.pb-c.c $top/common/series/prom_store.c $top/common/series/prom_hist.c $top/common/series/prom_expo.c
		$top/common/series/prom_dcgm.c $top/common/series/nvidia_xid.c $top/common/series/prom_pass.c
		$top/common/series/prom_kube.c $top/common/expo_parse.c $top/common/jsonw.c $top/common/hindex.c" ;;
	*) echo "$0: unknown target $t (prom_line, csv, cloudwatch, expo, podres, jobmap, otlp)" >&2; exit 2 ;;
	esac
	# shellcheck disable=SC2046,SC2086
	$cc -std=c11 -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-D_GNU_SOURCE -DACCEL_VERSION='"fuzz"' -Wall -Wextra \
		-o "$out/fuzz_$t" "$top/tests/fuzz/fuzz_$t.c" $mods $common \
		$(pkg-config --cflags --libs jansson zlib) $(case $t in podres | otlp) pkg-config --cflags --libs libprotobuf-c ;; esac) \
		-lm -lpthread
done
