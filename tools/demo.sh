#!/bin/sh
# `make run`: trace the bundled demo workload, which grows its memory by
# 16 MiB every half second, and print the report.
set -eu
cd "$(dirname "$0")/.."
echo "demo: tracing a workload that maps and touches 16 MiB every 0.5 s, 10 times"
echo "demo: sudo ./gpumemtrace -i 0.5 -- .output/tests/workload --steps 10 --step-mib 16 --step-ms 500"
echo
exec ./gpumemtrace -i 0.5 -- .output/tests/workload --steps 10 --step-mib 16 --step-ms 500 \
	--out /dev/null
