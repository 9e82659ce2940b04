// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* the command line: live tracing, record, replay */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <poll.h>
#include <unistd.h>
#include "source/attach.h"
#include "source/collect.h"
#include "source/gpulib.h"
#include "common/fmt.h"
#include "stream/dump.h"
#include "report/perfetto.h"
#include "report/html.h"
#include "report/pprof.h"
#include "model/model.h"
#include "source/procfs.h"
#include "report/report.h"
#include "serve/metrics.h"
#include "analysis/findings.h"
#include "view/top.h"
#include "stream/tracedir.h"
#include "stream/tracefile.h"

enum mode { MODE_LIVE, MODE_RECORD, MODE_REPLAY };

struct args {
	enum mode mode;
	pid_t pid;
	char **argv;
	const char *output;
	const char *input;
	const char *debug_dir;
	const char *metrics, *metrics_file, *perfetto;
	const char *pprof, *folded, *html; /* replay --pprof, --folded, --html */
	struct pprof_opts prof;
	bool sample_set;
	double duration, interval;
	bool json, verbose, quiet, follow, events, all_bos, no_tui, live, watch;
	const char *comms[16];
	size_t nr_comms;
	unsigned int ringbuf_mb;
	double speed;
	long long touch_bytes;	/* -1: the default */
	int tokens;		/* enum gpulib_tokens */
	long long rotate_bytes; /* --watch -o DIR */
	double rotate_age;
	unsigned int keep;
	long long max_disk;
	double max_age;
};

const char *argp_program_version = "gpumemtrace " GMT_VERSION;

static const char doc[] =
	"Explain why a GPU program's memory grows or its speed falls, without\n"
	"restarting or recompiling it.\n"
	"\n"
	"  gpumemtrace [OPTIONS] -p PID\n"
	"      trace a running process\n"
	"  gpumemtrace [OPTIONS] -- CMD [ARGS...]\n"
	"      start CMD and trace it from its first instruction\n"
	"  gpumemtrace record -o FILE [OPTIONS] (-p PID | -- CMD [ARGS...])\n"
	"      the same, and save the events to FILE for a bug report\n"
	"  gpumemtrace --watch [--comm NAME]... [--metrics ADDR] [-o FILE]\n"
	"      every GPU process on the host as it comes and goes: a service\n"
	"  gpumemtrace replay [--json] FILE\n"
	"      the report from a recording, on any machine, without root\n"
	"  gpumemtrace replay --events FILE\n"
	"      the recorded events themselves, one JSON object per line\n"
	"  gpumemtrace replay --live [--speed N] FILE\n"
	"      play a recording through the live view, N times as fast\n"
	"  gpumemtrace replay --perfetto OUT FILE\n"
	"      the recording as a Perfetto trace, for ui.perfetto.dev\n"
	"  gpumemtrace replay --pprof OUT [--sample S] [--from T] [--to T] FILE\n"
	"      its allocating stacks as a pprof profile (go tool pprof, Parca);\n"
	"      --folded OUT: as folded text, for flamegraph.pl and speedscope\n"
	"  gpumemtrace replay --html OUT FILE\n"
	"      the report as one self-contained page to attach to a bug report\n"
	"\n"
	"On a terminal, tracing shows a live view, as top does: memory by where\n"
	"it lives, requests, evictions and failures, and the verdicts so far\n"
	"(q quits and prints the report, h shows the keys). Elsewhere, or with\n"
	"--no-tui, a line on standard error each interval says the same.\n"
	"\n"
	"It traces host memory (RSS, faults, mappings), GPU API allocations\n"
	"(Vulkan, CUDA, HIP: libraries are found in the target as it loads them)\n"
	"and kernel GPU buffers (TTM: VRAM, GTT, evictions), as far as this\n"
	"kernel and the target allow; the report lists what was skipped and why.\n"
	"Of llama.cpp it counts each request's tokens and decode rate: for\n"
	"llama-server, from the `timings` each response carries, read as it goes\n"
	"out (no probe in the decode loop); for other programs (llama-cli,\n"
	"programs that embed libllama), by probing each decode (--token-probes).\n"
	"\n"
	"Tracing stops when the target exits, at Ctrl-C or SIGTERM, or after\n"
	"--duration; the report then goes to standard output. Tracing needs root\n"
	"(or CAP_BPF and CAP_PERFMON) and a kernel with BTF, 5.8 or newer.\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo gpumemtrace -p $(pidof llama-server)\n"
	"  sudo gpumemtrace --duration 60 --json -p 4242 > report.json\n"
	"  sudo gpumemtrace record -o leak.gmt -- ./llama-server -m model.gguf\n"
	"  sudo gpumemtrace --metrics 9464 -q -p $(pidof llama-server)\n"
	"  sudo gpumemtrace --watch --metrics 9464 -q --no-tui\n"
	"  gpumemtrace replay leak.gmt\n"
	"\n"
	"OPTIONS:";

enum {
	OPT_JSON = 1000,
	OPT_RINGBUF,
	OPT_DEBUG_DIR,
	OPT_EVENTS,
	OPT_NO_TUI,
	OPT_LIVE,
	OPT_SPEED,
	OPT_TOUCH,
	OPT_TOKENS,
	OPT_METRICS,
	OPT_METRICS_FILE,
	OPT_PERFETTO,
	OPT_PPROF,
	OPT_FOLDED,
	OPT_HTML,
	OPT_SAMPLE,
	OPT_FROM,
	OPT_TO,
	OPT_WATCH,
	OPT_COMM,
	OPT_ROTATE_SIZE,
	OPT_ROTATE_AGE,
	OPT_KEEP,
	OPT_MAX_DISK,
	OPT_MAX_AGE,
};

#define TOUCH_DEFAULT (1ll << 20)

static const struct argp_option options[] = {
	{ "pid", 'p', "PID", 0, "Trace the running process PID", 0 },
	{ "follow-forks", 'f', NULL, 0, "Also trace child processes the target starts", 0 },
	{ "watch", OPT_WATCH, NULL, 0,
	  "Trace every process that maps a GPU library or device, as it appears, until stopped: "
	  "a service (with --metrics, -o)",
	  0 },
	{ "comm", OPT_COMM, "NAME", 0,
	  "--watch: also trace processes named NAME (as ps shows it; repeat for more)", 0 },
	{ "system-wide", 'a', NULL, 0,
	  "Kernel GPU buffers of every process, not only the target's: who evicted whom", 0 },
	{ "output", 'o', "FILE", 0,
	  "Record the events to FILE (mode 0600) as well; with --watch, a directory (one that "
	  "exists, or a path ending in /): a file per process, COMM.TIME.PID.gmt",
	  0 },
	{ "rotate-size", OPT_ROTATE_SIZE, "SIZE", 0,
	  "--watch -o DIR: start a process's next file past SIZE (default 64M)", 0 },
	{ "rotate-age", OPT_ROTATE_AGE, "SEC", 0,
	  "--watch -o DIR: or past SEC seconds (default 3600)", 0 },
	{ "max-disk", OPT_MAX_DISK, "SIZE", 0,
	  "--watch -o DIR: keep its recordings within SIZE, all names together (default 10% of "
	  "its filesystem, at most 10G): the oldest closed files of exited processes go first, "
	  "a running process's current file never; each removal is said",
	  0 },
	{ "max-age", OPT_MAX_AGE, "AGE", 0,
	  "--watch -o DIR: also remove closed files last written AGE ago (SEC, or with s, m, h, "
	  "d; default: no limit)",
	  0 },
	{ "keep", OPT_KEEP, "N", 0,
	  "--watch -o DIR: also keep at most N files, all names together, in the same order "
	  "(default: no limit)",
	  0 },
	{ "duration", 'd', "SEC", 0, "Stop after SEC seconds", 0 },
	{ "interval", 'i', "SEC", 0, "Sample /proc and counters every SEC seconds (default 1)", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print the report as JSON (fields: docs/json.md)", 0 },
	{ "events", OPT_EVENTS, NULL, 0,
	  "replay: print the recorded events, one JSON object per line, instead of the report", 0 },
	{ "ringbuf-mb", OPT_RINGBUF, "MB", 0,
	  "Size of the kernel ring buffer (default 8); raise it when events are lost", 0 },
	{ "debug-dir", OPT_DEBUG_DIR, "DIR", 0,
	  "Where separate debug files are (by build id or .gnu_debuglink; default "
	  "/usr/lib/debug, in the target's root)",
	  0 },
	{ "touch-sample", OPT_TOUCH, "SIZE", 0,
	  "Take the stack of about one in SIZE bytes of anonymous memory the target touches "
	  "first (default 1M; K, M, G suffixes; 0: none): what made the host heap grow",
	  0 },
	{ "token-probes", OPT_TOKENS, "WHEN", 0,
	  "Probe llama.cpp's decode calls, a trap each token: auto (the default: not in "
	  "llama-server, whose responses say their own tokens and rates; in other programs), "
	  "on (llama-server too: a live decode rate during long generations, each decode in the "
	  "trace), off",
	  0 },
	{ "metrics", OPT_METRICS, "ADDR", 0,
	  "Serve Prometheus metrics on GET /metrics at ADDR: PORT (on 127.0.0.1), IP:PORT or "
	  "[IPv6]:PORT (port 0: any free one, which it prints); renewed each interval",
	  0 },
	{ "metrics-file", OPT_METRICS_FILE, "PATH", 0,
	  "Write the same metrics to PATH each interval, atomically (node_exporter's textfile "
	  "collector: a .prom file in its directory)",
	  0 },
	{ "no-tui", OPT_NO_TUI, NULL, 0,
	  "No full-screen view on a terminal: a plain line each interval instead", 0 },
	{ "live", OPT_LIVE, NULL, 0, "replay: play the recording through the live view", 0 },
	{ "perfetto", OPT_PERFETTO, "OUT", 0,
	  "replay: write the recording to OUT as a Perfetto trace (ui.perfetto.dev opens it) "
	  "instead of the report",
	  0 },
	{ "pprof", OPT_PPROF, "OUT", 0,
	  "replay: write the allocating stacks to OUT as a gzipped pprof profile (GPU allocations, "
	  "host first touches; docs/pprof.md) instead of the report",
	  0 },
	{ "folded", OPT_FOLDED, "OUT", 0,
	  "replay: the same stacks as folded text (frame;frame bytes, root first), for "
	  "flamegraph.pl and speedscope",
	  0 },
	{ "html", OPT_HTML, "OUT", 0,
	  "replay: write the report to OUT as one self-contained HTML page (verdicts, memory over "
	  "time, requests, a flame graph; docs/html.md) instead of the report",
	  0 },
	{ "sample", OPT_SAMPLE, "S", 0,
	  "--pprof, --folded: inuse (live at the end, the default), alloc (allocated over the run) "
	  "or growth (allocated between --from and --to and live at --to)",
	  0 },
	{ "from", OPT_FROM, "T", 0,
	  "--pprof, --folded: growth from T: seconds from the start, or #N, request N's start", 0 },
	{ "to", OPT_TO, "T", 0,
	  "--pprof, --folded: growth up to T: seconds from the start, or #N, request N's end "
	  "(default: the end)",
	  0 },
	{ "speed", OPT_SPEED, "N", 0, "replay --live: N times as fast as recorded (default 1)", 0 },
	{ "quiet", 'q', NULL, 0, "No progress messages or periodic lines on standard error", 0 },
	{ "verbose", 'v', NULL, 0, "libbpf's debug log and the verifier's output", 0 },
	{},
};

static double parse_secs(const char *s, const char *opt, struct argp_state *state)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e6)
		argp_error(state, "invalid %s '%s': expected seconds, more than 0", opt, s);
	return v;
}

static long parse_int(const char *s, const char *what, long max, struct argp_state *state)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > max)
		argp_error(state, "invalid %s '%s': expected a whole number from 1 to %ld", what, s,
			   max);
	return v;
}

/* seconds, with an optional s, m, h or d; up to ten years */
static double parse_age(const char *s, const char *opt, struct argp_state *state)
{
	static const char units[] = "smhd";
	static const double secs[] = { 1, 60, 3600, 86400 };
	const char *u;
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*end && !end[1] && (u = strchr(units, *end)))
		v *= secs[u - units], end++;
	if (errno || end == s || *end || !isfinite(v) || v < 1 || v > 3650 * 86400.0)
		argp_error(state, "invalid %s '%s': expected an age, as 3600, 12h or 30d", opt, s);
	return v;
}

/* bytes, with an optional K, M or G (powers of 1024) */
static long long parse_size(const char *s, const char *opt, struct argp_state *state)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*end == 'K' || *end == 'k')
		v *= 1 << 10, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1 << 20, end++;
	else if (*end == 'G' || *end == 'g')
		v *= 1 << 30, end++;
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v > (double)(1ll << 40))
		argp_error(state, "invalid %s '%s': expected bytes, as 4096, 512K or 1M", opt, s);
	return (long long)v;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct args *a = state->input;

	switch (key) {
	case 'p':
		a->pid = parse_int(arg, "pid", INT_MAX, state);
		break;
	case 'f':
		a->follow = true;
		break;
	case 'a':
		a->all_bos = true;
		break;
	case 'o':
		a->output = arg;
		break;
	case 'd':
		a->duration = parse_secs(arg, "--duration", state);
		break;
	case 'i':
		a->interval = parse_secs(arg, "--interval", state);
		if (a->interval < 0.01)
			argp_error(state, "--interval must be at least 0.01 s");
		break;
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_EVENTS:
		a->events = true;
		break;
	case OPT_RINGBUF:
		a->ringbuf_mb = parse_int(arg, "--ringbuf-mb", 1024, state);
		if (a->ringbuf_mb & (a->ringbuf_mb - 1))
			argp_error(state, "--ringbuf-mb must be a power of two");
		break;
	case OPT_DEBUG_DIR:
		if (arg[0] != '/' || strlen(arg) > 200)
			argp_error(state, "--debug-dir needs an absolute path (at most 200 bytes)");
		a->debug_dir = arg;
		break;
	case OPT_TOUCH:
		a->touch_bytes = parse_size(arg, "--touch-sample", state);
		break;
	case OPT_TOKENS:
		if (!strcmp(arg, "auto"))
			a->tokens = GPULIB_TOKENS_AUTO;
		else if (!strcmp(arg, "on"))
			a->tokens = GPULIB_TOKENS_ON;
		else if (!strcmp(arg, "off"))
			a->tokens = GPULIB_TOKENS_OFF;
		else
			argp_error(state, "--token-probes takes auto, on or off, not '%s'", arg);
		break;
	case OPT_WATCH:
		a->watch = true;
		break;
	case OPT_COMM:
		if (!*arg || strlen(arg) > 15)
			argp_error(state, "--comm takes a process name of 1 to 15 bytes");
		if (a->nr_comms == sizeof(a->comms) / sizeof(a->comms[0]))
			argp_error(state, "at most 16 --comm");
		a->comms[a->nr_comms++] = arg;
		break;
	case OPT_ROTATE_SIZE:
		a->rotate_bytes = parse_size(arg, "--rotate-size", state);
		if (a->rotate_bytes < 4096)
			argp_error(state, "--rotate-size must be at least 4K");
		break;
	case OPT_ROTATE_AGE:
		a->rotate_age = parse_secs(arg, "--rotate-age", state);
		break;
	case OPT_KEEP:
		a->keep = parse_int(arg, "--keep", 100000, state);
		break;
	case OPT_MAX_DISK:
		a->max_disk = parse_size(arg, "--max-disk", state);
		if (a->max_disk < 4096)
			argp_error(state, "--max-disk must be at least 4K");
		break;
	case OPT_MAX_AGE:
		a->max_age = parse_age(arg, "--max-age", state);
		break;
	case OPT_METRICS:
		a->metrics = arg;
		break;
	case OPT_METRICS_FILE:
		if (!*arg)
			argp_error(state, "--metrics-file needs a PATH");
		a->metrics_file = arg;
		break;
	case OPT_NO_TUI:
		a->no_tui = true;
		break;
	case OPT_LIVE:
		a->live = true;
		break;
	case OPT_PERFETTO:
		if (!*arg)
			argp_error(state, "--perfetto needs a file to write");
		a->perfetto = arg;
		break;
	case OPT_PPROF:
	case OPT_FOLDED:
		if (!*arg)
			argp_error(state, "--%s needs a file to write",
				   key == OPT_PPROF ? "pprof" : "folded");
		*(key == OPT_PPROF ? &a->pprof : &a->folded) = arg;
		break;
	case OPT_HTML:
		if (!*arg)
			argp_error(state, "--html needs a file to write");
		a->html = arg;
		break;
	case OPT_SAMPLE:
		if (!strcmp(arg, "inuse"))
			a->prof.sample = PPROF_INUSE;
		else if (!strcmp(arg, "alloc"))
			a->prof.sample = PPROF_ALLOC;
		else if (!strcmp(arg, "growth"))
			a->prof.sample = PPROF_GROWTH;
		else
			argp_error(state, "invalid --sample '%s': inuse, alloc or growth", arg);
		a->sample_set = true;
		break;
	case OPT_FROM:
	case OPT_TO:
		if (!pprof__point_ok(arg))
			argp_error(state,
				   "invalid --%s '%s': seconds from the start, or #N, a request's "
				   "number",
				   key == OPT_FROM ? "from" : "to", arg);
		*(key == OPT_FROM ? &a->prof.from : &a->prof.to) = arg;
		break;
	case OPT_SPEED:
		a->speed = parse_secs(arg, "--speed", state);
		break;
	case 'q':
		a->quiet = true;
		break;
	case 'v':
		a->verbose = true;
		break;
	case ARGP_KEY_ARG:
		/* the first argument starts the command (or names the replay file) */
		if (a->mode == MODE_REPLAY) {
			if (a->input)
				argp_error(state, "replay takes one FILE");
			a->input = arg;
			break;
		}
		a->argv = &state->argv[state->next - 1];
		state->next = state->argc;
		break;
	case ARGP_KEY_END:
		if (a->mode == MODE_REPLAY) {
			if (!a->input)
				argp_error(state, "replay needs a FILE");
			if (a->pid || a->argv || a->output || a->metrics || a->metrics_file)
				argp_error(
					state,
					"replay takes only FILE, --json, --events, --live, "
					"--speed, --perfetto, --pprof, --folded, --html, --sample, "
					"--from and --to");
			if (a->live && a->events)
				argp_error(state, "--live and --events do not go together");
			if (a->perfetto && (a->live || a->events || a->json))
				argp_error(state, "--perfetto writes OUT instead of a report: it "
						  "goes with none of --live, --events, --json");
			if (a->speed && !a->live)
				argp_error(state, "--speed goes with --live");
			if ((a->pprof || a->folded || a->html) &&
			    (a->live || a->events || a->json || a->perfetto))
				argp_error(state,
					   "--pprof, --folded and --html write OUT instead of a "
					   "report: they go with none of --live, --events, --json, "
					   "--perfetto");
			if ((a->sample_set || a->prof.from || a->prof.to) && !a->pprof &&
			    !a->folded)
				argp_error(state,
					   "--sample, --from and --to go with --pprof or --folded");
			if ((a->prof.from || a->prof.to) && a->sample_set &&
			    a->prof.sample != PPROF_GROWTH)
				argp_error(
					state,
					"--from and --to make a growth profile: --sample growth");
			if (a->prof.from || a->prof.to)
				a->prof.sample = PPROF_GROWTH;
			break;
		}
		if (a->watch && (a->pid || a->argv || a->follow))
			argp_error(state, "--watch finds its processes: no -p, -f or command");
		if (a->nr_comms && !a->watch)
			argp_error(state, "--comm goes with --watch");
		if (!a->watch && !a->pid == !a->argv)
			argp_error(state, "give either -p PID, -- CMD [ARGS...] or --watch");
		if (a->live || a->speed || a->perfetto)
			argp_error(state, "--live, --speed and --perfetto are for replay");
		if (a->pprof || a->folded || a->html || a->sample_set || a->prof.from || a->prof.to)
			argp_error(state,
				   "--pprof, --folded, --html, --sample, --from and --to are "
				   "for replay");
		if (a->mode == MODE_RECORD && !a->output)
			argp_error(state, "record needs -o FILE");
		if (!a->watch && a->output && tracedir__is_dir(a->output))
			argp_error(state,
				   "%s is a directory: -o DIR, a file per process, goes "
				   "with --watch; give -o FILE",
				   a->output);
		if ((a->rotate_bytes || a->rotate_age || a->keep || a->max_disk || a->max_age) &&
		    !(a->watch && a->output && tracedir__is_dir(a->output)))
			argp_error(state, "--rotate-size, --rotate-age, --max-disk, --max-age and "
					  "--keep go with --watch -o DIR");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* the recorder and the model both see every event, in the same order */
struct pipeline {
	struct model *model;
	struct tracefile_writer *writer;
	const char *output;
	bool write_failed, dir_failed;
	struct tracedir *dir; /* --watch -o DIR */
	struct top *top;
	struct metrics *metrics;
};

/* a file of -o DIR that failed is closed and the others go on: said once */
static void report_dir_error(struct pipeline *p, int err)
{
	if (!err || p->dir_failed)
		return;
	p->dir_failed = true;
	fprintf(stderr,
		"gpumemtrace: writing under %s failed (%s): a file that failed holds what was "
		"written before; the others go on\n",
		p->output, strerror(-err));
}

static void pipeline_sink(void *ctx, const struct gmt_hdr *e)
{
	struct pipeline *p = ctx;

	model__add(p->model, e);
	if (p->writer && !p->write_failed && tracefile__write(p->writer, e))
		p->write_failed = true;
	if (p->dir)
		report_dir_error(p, tracedir__write(p->dir, e));
}

static void pipeline_tick(void *ctx, __u64 now)
{
	struct pipeline *p = ctx;

	char err[512];

	if (p->writer && !p->write_failed && tracefile__tick(p->writer, now))
		p->write_failed = true;
	if (p->dir)
		report_dir_error(p, tracedir__tick(p->dir, now));
	if (!metrics__update(p->metrics, p->model, now, NULL, err, sizeof(err)))
		fprintf(stderr, "gpumemtrace: %s\n", err);
}

/* GMT_TEST_VIEW_HOLD=FIFO: the view's first frame waits for a byte from
 * FIFO, as a very slow frame would, for the test that the kernel's buffer
 * is read meanwhile */
static void test_hold_view(void)
{
	static bool held;
	const char *path = getenv("GMT_TEST_VIEW_HOLD");
	char c;
	int fd;

	if (!path || held)
		return;
	held = true;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && read(fd, &c, 1) < 0)
		perror(path);
	if (fd >= 0)
		close(fd);
}

static bool pipeline_ui(void *ctx, __u64 now)
{
	struct pipeline *p = ctx;

	test_hold_view();
	return top__tick(p->top, now);
}

/* the full-screen view on a terminal, else plain lines on stderr (none
 * with -q) */
static struct top *open_view(const struct args *a, const struct model *m, const char *rec,
			     bool replay)
{
	const char *term = getenv("TERM");
	struct top_opts o = { .model = m,
			      .recording = rec,
			      .replay = replay,
			      .speed = a->speed,
			      .refresh_s = replay ? 0.5 : a->interval,
			      .tui = !a->no_tui && isatty(0) && isatty(1) && term && *term &&
				     strcmp(term, "dumb"),
			      .plain = a->quiet ? NULL : stderr };
	struct top *t = top__new(&o);

	if (!t && o.tui) {
		o.tui = false;
		t = top__new(&o);
	}
	return t;
}

static void print_report(const struct model *m, const struct findings *fs, const struct args *a,
			 const struct replay_result *r)
{
	struct report_opts o = {};

	if (r) {
		o.notes = r->notes;
		o.nr_notes = r->nr_notes;
	}
	if (a->json)
		report__json(stdout, m, fs, &o);
	else
		report__text(stdout, m, fs, &o);
	fflush(stdout);
}

/* replay --live: each event waits for its time, scaled by --speed; a
 * pause holds the clock; q plays the rest at once, for the full report */
struct live_replay {
	struct model *model;
	struct top *top;
	double speed;
	__u64 first_ts, wall0, paused_ns;
	bool started, rushing;
};

static __u64 live_clock(const struct live_replay *l, __u64 wall)
{
	return l->first_ts + (__u64)((wall - l->wall0 - l->paused_ns) * l->speed);
}

static void live_sink(void *ctx, const struct gmt_hdr *e)
{
	struct live_replay *l = ctx;
	struct pollfd pfd = { .fd = top__fd(l->top), .events = POLLIN };
	__u64 wall, due;

	model__add(l->model, e);
	if (l->rushing)
		return;
	if (!l->started) {
		l->started = true;
		l->first_ts = e->ts_ns;
		l->wall0 = event__now_ns();
	}
	for (;;) {
		wall = event__now_ns();
		if (top__paused(l->top)) {
			__u64 before = wall;

			if (top__tick(l->top, live_clock(l, wall))) {
				l->rushing = true;
				return;
			}
			poll(&pfd, pfd.fd >= 0, 100);
			l->paused_ns += event__now_ns() - before;
			continue;
		}
		if (top__tick(l->top,
			      live_clock(l, wall) < e->ts_ns ? live_clock(l, wall) : e->ts_ns)) {
			l->rushing = true;
			return;
		}
		due = l->wall0 + l->paused_ns + (__u64)((e->ts_ns - l->first_ts) / l->speed);
		if (e->ts_ns <= l->first_ts || wall >= due)
			return;
		/* wake for keys, and at least every 100 ms to redraw */
		poll(&pfd, pfd.fd >= 0,
		     (due - wall) / 1000000 + 1 < 100 ? (due - wall) / 1000000 + 1 : 100);
	}
}

/* replay --perfetto: the events into the writer, which keeps its own model */
static int export_perfetto(const struct args *a, struct replay_result *r)
{
	struct perfetto *p;
	char err[512];
	size_t n, i;
	int rc, e;

	p = perfetto__open(a->perfetto, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "gpumemtrace: %s\n", err);
		return 1;
	}
	rc = tracefile__replay(a->input, perfetto__event, p, r);
	e = perfetto__finish(p, &n);
	if (rc) {
		fprintf(stderr, "gpumemtrace: %s\n", r->error);
		return 1;
	}
	for (i = 0; i < r->nr_notes; i++)
		fprintf(stderr, "gpumemtrace: %s: %s\n", a->input, r->notes[i]);
	if (e) {
		fprintf(stderr, "gpumemtrace: writing %s failed: %s\n", a->perfetto, strerror(-e));
		return 1;
	}
	if (!a->quiet)
		fprintf(stderr,
			"gpumemtrace: wrote %zu packets to %s; open it at https://ui.perfetto.dev\n",
			n, a->perfetto);
	return 0;
}

/* replay --html: the page of the whole recording, with its one analysis */
static int export_html(const struct args *a, const struct model *m)
{
	struct findings *fs = findings__build(m);
	const char *name = strrchr(a->input, '/');
	char err[512];
	int rc;

	rc = html__write(m, fs, name ? name + 1 : a->input, a->html, err, sizeof(err));
	findings__free(fs);
	if (rc) {
		fprintf(stderr, "gpumemtrace: %s\n", err);
		return 1;
	}
	if (!a->quiet)
		fprintf(stderr, "gpumemtrace: wrote %s\n", a->html);
	return 0;
}

/* replay --pprof, --folded, --html: from the whole recording's model; no
 * file at all when the recording cannot be read */
static int export_profiles(const struct args *a, struct model *m, struct replay_result *r)
{
	char err[512];
	unsigned int i;

	if (tracefile__replay(a->input, model__add, m, r)) {
		fprintf(stderr, "gpumemtrace: %s\n", r->error);
		return 1;
	}
	for (i = 0; i < r->nr_notes; i++)
		fprintf(stderr, "gpumemtrace: %s: %s\n", a->input, r->notes[i]);
	if (!r->events) {
		fprintf(stderr, "gpumemtrace: %s holds no events\n", a->input);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		const char *out = i ? a->folded : a->pprof;

		if (!out)
			continue;
		if (pprof__write(m, &a->prof, out, i, err, sizeof(err))) {
			fprintf(stderr, "gpumemtrace: %s\n", err);
			return 1;
		}
		if (!a->quiet)
			fprintf(stderr, "gpumemtrace: wrote %s\n", out);
	}
	return a->html ? export_html(a, m) : 0;
}

static int replay(const struct args *a)
{
	struct model *m = model__new();
	struct replay_result *r = calloc(1, sizeof(*r));
	struct dump d = { stdout, 0 };
	struct findings *fs = NULL; /* the one analysis pass, for the view and the report */
	unsigned int i;
	int ret = 1;

	if (!m || !r) {
		fprintf(stderr, "gpumemtrace: out of memory\n");
		goto out;
	}
	if (a->perfetto) {
		ret = export_perfetto(a, r);
		goto out;
	}
	if (a->pprof || a->folded || a->html) {
		ret = export_profiles(a, m, r);
		goto out;
	}
	if (a->live) {
		struct live_replay l = { .model = m, .speed = a->speed ? a->speed : 1 };
		int rc;

		l.top = open_view(a, m, a->input, true);
		rc = tracefile__replay(a->input, live_sink, &l, r);
		if (!rc && !l.rushing) {
			fs = findings__build(m);
			top__wait_end(l.top, fs, m->last_ts);
		}
		top__end(l.top);
		if (rc) {
			fprintf(stderr, "gpumemtrace: %s\n", r->error);
			goto out;
		}
	} else if (a->events ? tracefile__replay(a->input, dump__event, &d, r) :
			       tracefile__replay(a->input, model__add, m, r)) {
		fprintf(stderr, "gpumemtrace: %s\n", r->error);
		goto out;
	}
	for (i = 0; i < r->nr_notes; i++)
		fprintf(stderr, "gpumemtrace: %s: %s\n", a->input, r->notes[i]);
	if (!r->events) {
		fprintf(stderr, "gpumemtrace: %s holds no events\n", a->input);
		goto out;
	}
	if (!a->events) {
		if (!fs)
			fs = findings__build(m);
		print_report(m, fs, a, r);
	}
	ret = 0;
out:
	findings__free(fs);
	model__free(m);
	free(r);
	return ret;
}

/* the arguments, each ended by a NUL, as /proc/PID/cmdline has them (one
 * byte of size kept for procfs__redact); their length */
static size_t join_args(char **argv, char *buf, size_t size)
{
	size_t n = 0, k;

	for (; argv && *argv && n + 1 < size; argv++) {
		k = strnlen(*argv, size - 1 - n);
		memcpy(buf + n, *argv, k);
		n += k;
		if (n + 1 < size)
			buf[n++] = 0;
	}
	return n;
}

static void target_cmdline(const struct args *a, char *buf, size_t size)
{
	size_t i, n = 0;

	buf[0] = 0;
	if (a->watch) {
		for (i = 0; i < a->nr_comms && n < size; i++)
			n += snprintf(buf + n, size - n, "%s%s", i ? ", " : "; and named ",
				      a->comms[i]);
		return;
	}
	if (a->argv)
		n = join_args(a->argv, buf, size);
	else
		n = procfs__read_raw(a->pid, "cmdline", buf, size - 1);
	procfs__redact(buf, n);
}

static void output_info(struct tracefile_info *info, const char *cmdline)
{
	struct timespec ts;
	struct utsname u;

	snprintf(info->tool, sizeof(info->tool), "gpumemtrace %s", GMT_VERSION);
	if (!uname(&u)) {
		snprintf(info->kernel, sizeof(info->kernel), "%s", u.release);
		snprintf(info->host, sizeof(info->host), "%s", u.nodename);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	fmt_utc(info->start, sizeof(info->start), (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec);
	snprintf(info->cmdline, sizeof(info->cmdline), "%s", cmdline);
}

/* --watch -o DIR */
static struct tracedir *open_output_dir(const struct args *a, const char *cmdline)
{
	struct tracefile_info info = {};
	struct tracedir_opts o = {
		.dir = a->output,
		.max_bytes = a->rotate_bytes ? (__u64)a->rotate_bytes : 64ull << 20,
		.max_age_ns = (a->rotate_age ? a->rotate_age : 3600) * 1e9,
		.retain = { .max_bytes = a->max_disk, .max_age_s = a->max_age, .keep = a->keep },
		.info = &info,
	};
	struct tracedir *d;
	char err[512], budget[32];

	output_info(&info, cmdline);
	d = tracedir__open(&o, err, sizeof(err));
	if (!d)
		fprintf(stderr, "gpumemtrace: %s\n", err);
	else if (!a->quiet)
		fprintf(stderr,
			"gpumemtrace: recordings under %s kept within %s%s; each removal is said\n",
			a->output, fmt_bytes(budget, sizeof(budget), tracedir__budget(d)),
			a->max_disk ? "" : " (10% of its filesystem, at most 10 GiB: --max-disk)");
	return d;
}

static struct tracefile_writer *open_output(const struct args *a, const char *cmdline)
{
	struct tracefile_info info = {};
	struct tracefile_writer *w;
	char err[512];

	output_info(&info, cmdline);
	w = tracefile__create(a->output, &info, err, sizeof(err));
	if (!w)
		fprintf(stderr, "gpumemtrace: %s\n", err);
	return w;
}

/* -v: what the feature probes found */
static void print_probes(const struct attach *at)
{
	static const char *status[] = { "?", "attached", "skipped", "failed" };
	const struct gmt_probe *p;
	size_t i, n;

	p = attach__probes(at, &n);
	for (i = 0; i < n; i++)
		fprintf(stderr, "gpumemtrace: %-8s %s%s%s\n", status[p[i].status & 3], p[i].name,
			p[i].reason[0] ? ": " : "", p[i].reason);
}

static int trace(const struct args *a)
{
	struct attach_opts ao = { .pid = a->pid,
				  .argv = a->argv,
				  .watch = a->watch,
				  .comms = a->comms,
				  .nr_comms = a->nr_comms,
				  .follow_forks = a->follow,
				  .all_bos = a->all_bos,
				  .ringbuf_mb = a->ringbuf_mb,
				  .touch_bytes =
					  a->touch_bytes < 0 ? TOUCH_DEFAULT : a->touch_bytes,
				  .verbose = a->verbose };
	struct pipeline p = { .output = a->output };
	struct findings *fs;
	struct collect_opts co = {
		.interval_s = a->interval,
		.duration_s = a->duration,
		.session_flags = (a->follow ? GMT_SESSION_FOLLOW : 0) |
				 (a->all_bos ? GMT_SESSION_ALL_BOS : 0) |
				 (a->watch ? GMT_SESSION_WATCH : 0),
		.watch = a->watch,
		.comms = a->comms,
		.nr_comms = a->nr_comms,
		.spawned = a->argv != NULL,
		.sink = pipeline_sink,
		.ctx = &p,
		.tick = pipeline_tick,
		.quiet = a->quiet,
		.debug_dir = a->debug_dir,
		.tokens = a->tokens,
	};
	struct attach *at = NULL;
	char err[512], cmdline[4096];
	int ret = 1, werr;
	sigset_t stop;

	if (attach__check_privileges(err, sizeof(err))) {
		fprintf(stderr, "gpumemtrace: %s\n", err);
		return 1;
	}
	if (a->pid && kill(a->pid, 0) && errno == ESRCH) {
		fprintf(stderr, "gpumemtrace: no process with pid %d\n", a->pid);
		return 1;
	}
	target_cmdline(a, cmdline, sizeof(cmdline));
	co.cmdline = cmdline;
	p.model = model__new();
	if (!p.model)
		return 1;
	/* before the target starts: a bad path fails fast */
	if (a->watch && a->output && tracedir__is_dir(a->output)) {
		if (!(p.dir = open_output_dir(a, cmdline)))
			goto out;
	} else if (a->output && !(p.writer = open_output(a, cmdline))) {
		goto out;
	}
	if ((a->metrics || a->metrics_file) &&
	    !(p.metrics =
		      metrics__new(a->metrics, a->metrics_file, a->interval, err, sizeof(err)))) {
		fprintf(stderr, "gpumemtrace: %s\n", err);
		goto out;
	}
	if (p.metrics && a->metrics && !a->quiet)
		fprintf(stderr, "gpumemtrace: metrics at http://%s/metrics\n",
			metrics__address(p.metrics));
	at = attach__new(&ao, err, sizeof(err));
	if (!at) {
		fprintf(stderr, "gpumemtrace: %s\n", err);
		goto out;
	}
	if (a->verbose)
		print_probes(at);
	/* from the view on, Ctrl-C and SIGTERM wait for the collector's signalfd,
	 * which ends the run with the terminal restored and the report printed */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	p.top = open_view(a, p.model, a->output, false);
	co.ui_fd = top__fd(p.top);
	co.ui = p.top ? pipeline_ui : NULL;
	if (collect__run(at, &co, err, sizeof(err))) {
		top__end(p.top);
		p.top = NULL;
		fprintf(stderr, "gpumemtrace: %s\n", err);
		goto out;
	}
	top__end(p.top);
	p.top = NULL;
	fs = findings__build(p.model); /* the run's one analysis pass */
	if (!metrics__update(p.metrics, p.model, event__now_ns(), fs, err, sizeof(err)))
		fprintf(stderr, "gpumemtrace: %s\n", err);
	print_report(p.model, fs, a, NULL);
	findings__free(fs);
	fflush(stdout);
	ret = 0;
out:
	if (p.dir) {
		unsigned int files = tracedir__files(p.dir);

		werr = tracedir__close(p.dir);
		if (werr)
			report_dir_error(&p, werr);
		else if (!a->quiet && !ret && !p.dir_failed)
			fprintf(stderr,
				"gpumemtrace: recorded %u file%s under %s; replay each with: "
				"gpumemtrace replay FILE\n",
				files, files == 1 ? "" : "s", a->output);
	} else {
		werr = tracefile__close(p.writer);
		if (werr || p.write_failed)
			fprintf(stderr,
				"gpumemtrace: writing %s failed (%s): the file holds what was "
				"written before\n",
				a->output, strerror(werr ? -werr : EIO));
		else if (a->output && !a->quiet && !ret)
			fprintf(stderr,
				"gpumemtrace: recorded to %s; replay with: gpumemtrace replay %s\n",
				a->output, a->output);
	}
	/* before the probes, which take seconds to go: a restarted tracer finds
	 * its port free */
	metrics__free(p.metrics);
	attach__free(at);
	model__free(p.model);
	return ret;
}

/* stderr, line by line as printable UTF-8 (fmt_clean): its messages name
 * what traced processes named (their libraries, their threads) */
static ssize_t clean_write(void *cookie, const char *buf, size_t n)
{
	char out[4096 * 3 + 2];
	size_t i = 0, len, w;

	(void)cookie;
	while (i < n) {
		const char *nl = memchr(buf + i, '\n', n - i);

		len = nl ? (size_t)(nl - buf - i) : n - i;
		if (len > 4096)
			len = 4096;
		w = fmt_clean(out, sizeof(out) - 1, buf + i, len);
		i += len;
		if (i < n && buf[i] == '\n') {
			out[w++] = '\n';
			i++;
		}
		if (write(STDERR_FILENO, out, w) < 0)
			return -1;
	}
	return n;
}

static void clean_stderr(void)
{
	FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = clean_write });

	if (f && !setvbuf(f, NULL, _IOLBF, 4096))
		stderr = f;
}

int main(int argc, char **argv)
{
	struct argp argp = { options, parse_opt, "[-p PID | -- CMD [ARGS...]]", doc, 0, 0, 0 };
	struct args a = { .interval = 1.0, .touch_bytes = -1 };
	int first = 1;

	if (argc > 1 && !strcmp(argv[1], "record")) {
		a.mode = MODE_RECORD;
		first = 2;
	} else if (argc > 1 && !strcmp(argv[1], "replay")) {
		a.mode = MODE_REPLAY;
		first = 2;
	}
	argv[first - 1] = argv[0];
	if (argp_parse(&argp, argc - first + 1, argv + first - 1, ARGP_IN_ORDER, NULL, &a))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	clean_stderr();
	if (a.mode == MODE_REPLAY)
		return replay(&a);
	return trace(&a);
}
