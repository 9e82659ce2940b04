#!/bin/bash
# The request tracer's BPF cost per call (bpf_stats): bench/http_parse.py's
# server traced by gpumemtrace -p, N requests; then the ns per call of each
# tp_req_* program of that tracer (found by the prog ids in its fdinfo),
# and its time over the run per request. The programs run for every
# process's calls: tp_req_sys_exit (one program on the sys_exit raw
# tracepoint since h34) at the exit of every system call of every process,
# the call's number its first test and the target filter its second, so
# its calls and ns/call count every process's; the ns per request is the
# figure to compare. Before h34, a program per call (tp_req_read, ...):
# sendto and recvfrom were Python's, nearly all the target's.
#   sudo bench/http_parse.sh [GPUMEMTRACE] [N]
# Turns kernel.bpf_stats_enabled on for the run and back to what it was.
set -eu
GMT=${1:-$(dirname "$0")/../gpumemtrace} N=${2:-2000}
T=$(mktemp -d)
was=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo $was >/proc/sys/kernel/bpf_stats_enabled; rm -rf $T' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
mkfifo $T/ready $T/hold $T/done
python3 "$(dirname "$0")/http_parse.py" $N $T/ready $T/hold $T/done &
pid=$!
read -r _ <$T/ready
"$GMT" -p $pid --json >$T/out 2>$T/err &
gpid=$!
for _ in $(seq 100); do grep -q "tracing pid" $T/err && break; read -r -t 0.1 <> <(:) || true; done
t0=$(date +%s.%N)
echo go >$T/hold
read -r _ <$T/done
t1=$(date +%s.%N)
ids=$(grep -h "^prog_id:" /proc/$gpid/fdinfo/* 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')
bpftool prog show --json | python3 -c "
import json, sys
ids = set(int(x) for x in '$ids'.split())
for p in json.load(sys.stdin):
    c = p.get('run_cnt', 0)
    if p['name'].startswith('tp_req_') and c and p['id'] in ids:
        print('%-18s %8d calls %6d ns/call %7d ns/request' %
              (p['name'], c, p.get('run_time_ns', 0) // c, p.get('run_time_ns', 0) // $N))
"
echo "$N requests in $(echo "$t1 - $t0" | bc) s"
echo go >$T/hold
wait $gpid
echo "requests in the report: $(jq '.processes[0].requests | length' $T/out)"
