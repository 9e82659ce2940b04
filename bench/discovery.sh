#!/bin/bash
# What --watch's discovery from events costs (issue 35), by bpf_stats: the
# ns per run of the exec program (tp_sched_process_exec: every exec on the
# host, its name against --comm's) and of the mm sys_exit program
# (tp_mm_sys_exit: every system call; under --watch a file mapped by any
# process has its name looked at too), while N execs of /bin/true run
# (each one maps its libraries: the file mmaps of a process that is not
# traced). The same under -p of an idle sleep, where neither looks.
#   sudo bench/discovery.sh [GPUMEMTRACE] [N]
# Turns kernel.bpf_stats_enabled on for the run and back to what it was.
set -eu
GMT=${1:-$(dirname "$0")/../gpumemtrace} N=${2:-2000}
T=$(mktemp -d)
was=$(cat /proc/sys/kernel/bpf_stats_enabled)
sleep 600 &
idle=$!
trap 'echo $was >/proc/sys/kernel/bpf_stats_enabled; kill $idle; rm -rf $T' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
run() { # run LABEL ARGS...: the programs' ns per run over N execs
	"$GMT" --no-tui "${@:2}" >/dev/null 2>$T/err &
	local gpid=$! ids
	for _ in $(seq 200); do grep -q "tracing pid\|watching" $T/err && break; sleep 0.05; done
	ids=$(grep -h "^prog_id:" /proc/$gpid/fdinfo/* 2>/dev/null | awk '{ print $2 }' | tr '\n' ' ')
	bpftool prog show --json >$T/before
	for ((i = 0; i < N; i++)); do /bin/true; done
	bpftool prog show --json >$T/after
	kill -INT $gpid
	wait $gpid || true
	python3 - "$1" "$ids" $T/before $T/after <<'PY'
import json, sys
label, ids = sys.argv[1], set(int(x) for x in sys.argv[2].split())
def progs(f):
    return {p['id']: p for p in json.load(open(f)) if p['id'] in ids}
b, a = progs(sys.argv[3]), progs(sys.argv[4])
for i, p in a.items():
    if p['name'] not in ('tp_sched_process_exec', 'tp_mm_sys_exit'):
        continue
    c = p.get('run_cnt', 0) - b[i].get('run_cnt', 0)
    t = p.get('run_time_ns', 0) - b[i].get('run_time_ns', 0)
    print('| %s | %s | %d | %d |' % (label, p['name'], c, t // c if c else 0))
PY
}
echo "kernel $(uname -r), $(nproc) CPUs, $N execs of /bin/true"
echo
echo "| run | program | runs | ns per run |"
echo "|---|---|---|---|"
run "-p (an idle sleep)" -p $idle
run "-p -f (the same target lookup as --watch)" -p $idle -f
run "--watch --comm x" --watch --comm gmt-nobody-x
