# What a Vulkan driver planted in a target's file system may try from inside
# gpumemtrace's helper (gpumemtrace-vkinfo), which loads the drivers it finds
# to ask them for their entry points (issue 32): sourced by tests/run.sh
# after tests/lib.sh and the other topic files.

# sandbox_driver DIR MODE [CFLAGS...]: DIR/drv/libvk_MODE.so, a "driver"
# that acts only when the helper loads it (never in the target). MODE probe:
# it tries what the host has and the target must not reach (a 127.0.0.1
# listener, a host process, a new user namespace, the tracer's environment,
# its descriptors, the host's SysV shared memory) and writes each outcome to
# the helper's answer as a device of its own ("probe WHAT reached|refused"),
# which the report lists; then it leaves a child behind, named TOKEN.
# MODE hang: it closes the helper's output and sleeps for good.
sandbox_driver() {
	local dir=$1 mode=$2
	shift 2
	mkdir -p -m 0755 "$dir/drv"
	cat >"$dir/drv/planted.c" <<'EOF'
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef PORT /* the hang mode's: it probes nothing */
#define PORT 9
#define HOSTPID 1
#define SHMID 0
#define TOKEN "gmtp"
#endif

void *vk_icdGetInstanceProcAddr(void *instance, const char *name)
{
	(void)instance;
	(void)name;
	return NULL;
}

static int nr;

/* one "device" line of the helper's answer: the tracer reports its name */
static void say(const char *what, int reached)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "device %d 0 0 probe %s %s\n", nr++, what,
			 reached ? "reached" : "refused");

	if (write(1, line, n) != n)
		_exit(3);
}

static int can_connect(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return s >= 0 && !connect(s, (struct sockaddr *)&a, sizeof(a));
}

/* descriptors beyond the three: each written to, counted */
static int open_fds(void)
{
	int fd, n = 0;

	for (fd = 3; fd < 4096; fd++)
		if (fcntl(fd, F_GETFD) != -1) {
			n++;
			if (write(fd, "leaked\n", 7) < 0)
				continue;
		}
	return n;
}

static void probe(void)
{
	struct shmid_ds ds;
	pid_t c;

	say("net", can_connect());
	say("kill", !kill(HOSTPID, 0));
	say("userns", !unshare(CLONE_NEWUSER));
	say("env", getenv("GMT_SECRET") != NULL);
	say("fds", open_fds() > 0);
	say("ipc", !shmctl(SHMID, IPC_STAT, &ds));
	c = fork();
	if (!c) {
		prctl(PR_SET_NAME, TOKEN);
		close_range(0, ~0U, 0); /* the helper's answer ends with it */
		for (;;)
			pause();
	}
}

__attribute__((constructor)) static void planted(void)
{
	if (strncmp(program_invocation_short_name, "gpumemtrace-vk", 14))
		return; /* the target's own load */
	if (!strcmp(MODE, "hang")) {
		close(1);
		for (;;)
			pause();
	}
	probe();
}
EOF
	cc -shared -fPIC -O1 -DMODE="\"$mode\"" "$@" "$dir/drv/planted.c" \
		-o "$dir/drv/libvk_$mode.so" 2>"$dir/cc.err" ||
		{ echo "# the planted driver did not build: $(cat "$dir/cc.err")"; return 1; }
	chmod 0755 "$dir/drv/libvk_$mode.so"
}

# sandbox_target LIB: dlhold holding LIB (SANDBOX_TARGET, its pid), as root
# in a pid and mount namespace of its own: the host's processes are not
# its to see; SANDBOX_UNSHARE is the unshare around it
sandbox_target() {
	mkfifo "$T/ready" "$T/hold"
	unshare -m -p -f --mount-proc "$ROOT/.output/tests/dlhold" "$1" "$T/ready" "$T/hold" \
		>"$T/target.out" 2>&1 &
	SANDBOX_UNSHARE=$!
	await_line "$T/ready" "$SANDBOX_UNSHARE" "dlhold in pid and mount namespaces of its own" \
		"$T/target.out" >/dev/null || return 1
	SANDBOX_TARGET=$(pgrep -P "$SANDBOX_UNSHARE")
	[ -n "$SANDBOX_TARGET" ] || { echo "# no dlhold under unshare $SANDBOX_UNSHARE"; return 1; }
}

sandbox_release() {
	[ -z "${SANDBOX_UNSHARE:-}" ] || { echo go >"$T/hold"; wait "$SANDBOX_UNSHARE"; }
}

# sandbox_leftovers NAME: the pids of processes named NAME (a token made up
# by this test, so they can only be its own)
sandbox_leftovers() {
	pgrep -x "$1" | tr '\n' ' '
}

# sandbox_await_err TEXT SECONDS: until the tracer's messages name TEXT
sandbox_await_err() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q -F "$1" "$T/gmt.err" && return 0
		read -r -t 0.1 <> <(:) || true
	done
	echo "# the tracer did not mention $1 within $2 s: $(cat "$T/gmt.err")"
	return 1
}

# The planted driver reaches nothing of the host's that the target cannot:
# every probe refused, and it ran (its answer reached the report).
test_sandbox_planted_driver_reaches_nothing_of_the_host() {
	need_root
	local port hostpid listener shmid token pids rc=0
	[ -x "$ROOT/.output/tests/dlhold" ] || skip "tests/dlhold is not built: make .output/tests/dlhold"
	chmod 0755 "$T"
	mkfifo "$T/port"
	# a listener on the host's loopback, a host process the helper's uid
	# (nobody) may signal, SysV shared memory anyone may read
	python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1], "w").write("%d\n" % s.getsockname()[1])
time.sleep(300)' "$T/port" 2>"$T/listener.err" &
	listener=$!
	port=$(await_line "$T/port" "$listener" "the 127.0.0.1 listener" "$T/listener.err") ||
		{ kill "$listener"; return 1; }
	setpriv --reuid=65534 --regid=65534 --clear-groups sleep 300 &
	hostpid=$!
	shmid=$(ipcmk -M 4096 -p 0666 | awk '{ print $NF }')
	token=gmtp$RANDOM$RANDOM
	sandbox_driver "$T" probe -DPORT="$port" -DHOSTPID="$hostpid" -DSHMID="${shmid:-0}" \
		-DTOKEN="\"$token\"" || rc=1
	[ $rc = 0 ] && { sandbox_target "$T/drv/libvk_probe.so" || rc=1; }
	if [ $rc = 0 ]; then
		# a secret in the tracer's environment, a descriptor it inherited
		export GMT_SECRET=s3cret
		exec 7>"$T/leak"
		GMT_READY="libvk_probe.so" start_tracer --json -p "$SANDBOX_TARGET" || rc=1
		exec 7>&-
		unset GMT_SECRET
		kill -INT "$GMT_PID" 2>/dev/null
		wait_tracer
	fi
	sandbox_release
	kill "$listener" "$hostpid" 2>/dev/null
	wait "$listener" "$hostpid" 2>/dev/null
	[ -z "$shmid" ] || ipcrm -m "$shmid"
	pids=$(sandbox_leftovers "$token")
	[ -z "$pids" ] || kill -KILL $pids
	[ $rc = 0 ] || return 1
	expect '[ -n "$shmid" ]' "ipcmk made shared memory" || return 1
	jq -r '.gpu_devices[].name' "$T/gmt.out" >"$T/probes" 2>&1
	expect '[ "$(grep -c "^probe [a-z]* refused$" "$T/probes")" = 6 ]' \
		"every probe of the planted driver refused (net, kill, userns, env, fds, ipc): $(tr '\n' ';' <"$T/probes") $(grep libvk_probe "$T/gmt.err")" ||
		return 1
	expect '[ ! -s "$T/leak" ]' "nothing written to the tracer's inherited descriptor: $(cat "$T/leak")"
}

# Whatever the planted driver starts ends with the helper: a child it leaves
# behind, having closed the helper's output so that the answer ends, is
# gone once the tracer is.
test_sandbox_planted_driver_leaves_no_process() {
	need_root
	local token pids rc=0
	[ -x "$ROOT/.output/tests/dlhold" ] || skip "tests/dlhold is not built: make .output/tests/dlhold"
	chmod 0755 "$T"
	token=gmtp$RANDOM$RANDOM
	sandbox_driver "$T" probe -DPORT=9 -DHOSTPID=1 -DSHMID=0 -DTOKEN="\"$token\"" || return 1
	sandbox_target "$T/drv/libvk_probe.so" || return 1
	GMT_READY="libvk_probe.so" start_tracer --json -p "$SANDBOX_TARGET" || rc=1
	kill -INT "$GMT_PID" 2>/dev/null
	wait_tracer
	sandbox_release
	pids=$(sandbox_leftovers "$token")
	[ -z "$pids" ] || kill -KILL $pids
	[ $rc = 0 ] || return 1
	expect 'grep -q "probe net" <(jq -r ".gpu_devices[].name" "$T/gmt.out")' \
		"the planted driver ran: $(grep libvk_probe "$T/gmt.err")" || return 1
	expect '[ -z "$pids" ]' "the driver's child ($token) is gone with the helper: pids $pids"
}

# A driver that closes the helper's output and sleeps: the tracer says it
# gave nothing and goes on, and stops when asked (it once waited for the
# helper to end, for good).
test_sandbox_driver_that_sleeps_cannot_hang_the_tracer() {
	need_root
	local rc=0
	[ -x "$ROOT/.output/tests/dlhold" ] || skip "tests/dlhold is not built: make .output/tests/dlhold"
	chmod 0755 "$T"
	sandbox_driver "$T" hang || return 1
	sandbox_target "$T/drv/libvk_hang.so" || return 1
	start_tracer --json -p "$SANDBOX_TARGET" || rc=1
	# its verdict on the driver, then SIGINT: it ends within 30 s, or is
	# killed, with its helper
	[ $rc = 0 ] && { sandbox_await_err libvk_hang.so 30 || rc=1; }
	kill -INT "$GMT_PID" 2>/dev/null
	if ! timeout 30 tail --pid="$GMT_PID" -f /dev/null; then
		echo "# the tracer did not end within 30 s of SIGINT"
		pkill -KILL -P "$GMT_PID"
		kill -KILL "$GMT_PID"
		rc=1
	fi
	wait_tracer
	sandbox_release
	[ $rc = 0 ] || return 1
	expect 'grep -q "could not attach to libvk_hang.so" "$T/gmt.err"' \
		"the driver was refused: $(cat "$T/gmt.err")"
}

# A Vulkan program in a pid namespace of its own with its own /proc, as in
# a container: the helper, in its mount namespace, is not in that /proc,
# and still finds where lavapipe's entry points are (it once read them from
# /proc/self/maps, and attached nothing).
test_sandbox_driver_of_a_target_with_its_own_proc_is_attached() {
	need_root
	need_lavapipe
	local rc=0 pid
	mkfifo "$T/ready" "$T/go" "$T/done"
	unshare -m -p -f --mount-proc "$VK" --ready "$T/ready" --wait "$T/go" --out "$T/done" \
		--loader 1 --direct 1 >"$T/vk.out" 2>&1 &
	pid=$!
	await_line "$T/ready" "$pid" "vkalloc in pid and mount namespaces of its own" "$T/vk.out" \
		>/dev/null || return 1
	start_tracer --json -p "$(pgrep -P "$pid")" || rc=1
	[ $rc = 0 ] && { sandbox_await_err libvulkan_lvp.so 30 || rc=1; }
	kill -INT "$GMT_PID" 2>/dev/null
	wait_tracer
	echo go >"$T/go"
	cat "$T/done" >/dev/null
	wait "$pid"
	[ $rc = 0 ] || return 1
	expect 'grep -q "attached Vulkan driver: [1-9][0-9]* functions" "$T/gmt.err"' \
		"lavapipe attached: $(grep lvp "$T/gmt.err")"
}
