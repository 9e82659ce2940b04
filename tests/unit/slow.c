// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The slowdown verdict (analysis/findings_slow.c) on made streams: each
 * cause from its counters, and the controls that must get no verdict. */
#include <math.h>
#include "unit.h"
#include "analysis/findings.h"
#include "analysis/words.h"
#include "report/report.h"

#define PID 100

/* the counters of one interval, cumulative */
struct ticks {
	__u64 minflt, majflt, read_bytes, run_ns, delay_ns, periods, throttled, quota_us;
};

static void proc_stat(struct model *m, double t, const struct ticks *k)
{
	struct gmt_proc_stat e;

	event__init(&e.hdr, GMT_EV_PROC_STAT, sizeof(e), T(t), PID);
	e.minflt = k->minflt;
	e.majflt = k->majflt;
	e.read_bytes = k->read_bytes;
	e.run_ns = k->run_ns;
	e.run_delay_ns = k->delay_ns;
	e.nr_periods = k->periods;
	e.nr_throttled = k->throttled;
	e.cpu_quota_us = k->quota_us;
	e.cpu_period_us = k->quota_us ? 100000 : 0;
	e.cpus_allowed = 2;
	e.flags = GMT_PSTAT_SCHED | GMT_PSTAT_IO | (k->quota_us ? GMT_PSTAT_CPU_STAT : 0);
	snprintf(e.cpu_cgroup, sizeof(e.cpu_cgroup), "%s", k->quota_us ? "/slow" : "");
	model__add(m, &e.hdr);
}

static void mem_limit(struct model *m, double t, __u64 limit)
{
	struct gmt_mem_limit e;

	event__init(&e.hdr, GMT_EV_MEM_LIMIT, sizeof(e), T(t), PID);
	e.limit = limit ? limit : GMT_MEM_NO_LIMIT;
	e.file = limit ? GMT_MEM_LIMIT_V1_HARD : 0;
	snprintf(e.path, sizeof(e.path), "%s", limit ? "/slow" : "");
	model__add(m, &e.hdr);
}

/* a request at t that generated n tokens at rate tokens a second, with a
 * prompt of prompt tokens (cached ones besides) evaluated in prompt_s */
static double request_p(struct model *m, double t, __u64 conn, double rate, __u32 n, __u32 prompt,
			__u32 cached, double prompt_s)
{
	struct gmt_timings e;
	double dur = n / rate + prompt_s;

	http_event(m, t, conn, GMT_HTTP_REQUEST, "/completion", 0, 0);
	http_event(m, t + dur, conn, GMT_HTTP_RESP_BEGIN, NULL, 200, 0);
	event__init(&e.hdr, GMT_EV_TIMINGS, sizeof(e), T(t + dur), PID);
	e.conn = conn;
	e.prompt_n = prompt;
	e.cache_n = cached;
	e.prompt_us = prompt_s * 1e6;
	e.predicted_n = n;
	e.predicted_us = (n - 1) / rate * 1e6; /* the server's steps after the first token */
	e.have = GMT_TM_PROMPT_N | GMT_TM_PREDICTED_N | GMT_TM_CACHE_N | GMT_TM_PROMPT_MS |
		 GMT_TM_PREDICTED_MS;
	model__add(m, &e.hdr);
	http_event(m, t + dur + 0.001, conn, GMT_HTTP_RESP_END, NULL, 200, GMT_HTTP_END_LENGTH);
	return t + dur + 0.05;
}

static double request(struct model *m, double t, __u64 conn, double rate, __u32 n, __u32 prompt,
		      __u32 cached)
{
	return request_p(m, t, conn, rate, n, prompt, cached, 0.01);
}

/* llama.cpp copied a sequence's state in (a cached prompt loaded) */
static void state_load(struct model *m, double t, __u64 bytes)
{
	struct gmt_llama_state e;

	event__init(&e.hdr, GMT_EV_LLAMA_STATE, sizeof(e), T(t), PID);
	e.size = bytes;
	e.kind = GMT_DEC_STATE_LOAD;
	model__add(m, &e.hdr);
}

/* a run of requests at rates[i], with the counters' intervals between; in
 * each slow request (rate below 30) the counters grow by `per_s` a second */
enum slow_cause { SC_NONE, SC_FAULTS, SC_READS, SC_THROTTLED, SC_NEIGHBOUR, SC_CLOCKS };

/* NVML's sample of GPU 0, where the process holds 1 GiB */
static void nvml(struct model *m, double t, __u32 mhz, __u64 reasons)
{
	struct gmt_nvml e;

	event__init(&e.hdr, GMT_EV_NVML, sizeof(e), T(t), PID);
	e.used = 1ull << 30;
	e.total = 80ull << 30;
	e.free = 70ull << 30;
	snprintf(e.name, sizeof(e.name), "NVIDIA H100");
	e.sm_mhz = mhz;
	e.sm_max_mhz = 1980;
	e.clock_reasons = reasons;
	e.clocks_valid = GMT_NVML_CLOCK | GMT_NVML_REASONS;
	model__add(m, &e.hdr);
}

static struct model *run_of(const double *rates, size_t n, enum slow_cause cause, bool limit)
{
	struct model *m = model_of_run(2);
	struct ticks k = { .quota_us = cause == SC_THROTTLED ? 20000 : 0 };
	double t = 3, next_tick = 3;
	size_t i;

	for (i = 0; i < n; i++) {
		bool slow = rates[i] < 30;
		double end;

		end = request(m, t, 10 + i, rates[i], 32, 20, 0);
		/* a tick each 0.5 s through the request */
		for (; next_tick <= end; next_tick += 0.5) {
			k.run_ns += 4e8;
			k.periods += 5;
			if (slow && cause == SC_FAULTS)
				k.majflt += 5000;
			else
				k.majflt += 1;
			/* a mapped file read back: faults on pages read ahead are minor */
			if (slow && cause == SC_READS) {
				k.minflt += 1000;
				k.read_bytes += 300ull << 20;
			}
			if (slow && cause == SC_THROTTLED)
				k.throttled += 5;
			if (slow && cause == SC_NEIGHBOUR)
				k.delay_ns += 4e8;
			else
				k.delay_ns += 1e7;
			proc_stat(m, next_tick, &k);
			if (cause == SC_CLOCKS)
				nvml(m, next_tick, slow ? 700 : 1980,
				     slow ? GMT_NVML_SW_POWER_CAP : 0);
			/* the sampler's: none, then 150 MiB while slow, none again */
			if (limit)
				mem_limit(m, next_tick, slow ? 150ull << 20 : 0);
		}
		t = end;
	}
	proc_stat(m, t + 0.5, &k);
	return m;
}

static const struct finding *slowdown(const struct findings *fs, size_t *count)
{
	const struct finding *f = NULL;
	char said[1600];
	size_t i;

	*count = 0;
	for (i = 0; i < fs->n; i++)
		if (fs->v[i].kind == F_SLOWDOWN && !(*count)++)
			f = &fs->v[i];
	if (f)
		printf("# %s: %s\n", f->where, words__message(f, said, sizeof(said)));
	return f;
}

static double num_of(const struct finding *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->nr_nums; i++)
		if (!strcmp(f->nums[i].key, key))
			return f->nums[i].v;
	return NAN;
}

static bool has_num(const struct finding *f, const char *key)
{
	return !isnan(num_of(f, key));
}

static bool says(const struct finding *f, enum say code)
{
	size_t i;

	for (i = 0; i < f->nr_says; i++)
		if (f->says[i].code == code)
			return true;
	return false;
}

/* eight at 100 tokens/s, six at 5 (with `cause`'s counters), four at 100 */
static const double episode[] = { 100, 98,  103, 101, 99, 102, 100, 97,	 5,
				  5.2, 4.8, 5.1, 4.9, 5,  101, 99,  100, 102 };
#define EPISODE (sizeof(episode) / sizeof(episode[0]))

void test_slow_major_faults_under_a_limit(void)
{
	struct model *m = run_of(episode, EPISODE, SC_FAULTS, true);
	struct findings *fs = findings__build(m);
	const struct finding *f;
	char said[1600];
	size_t n;

	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "one slowdown") && f) {
		words__message(f, said, sizeof(said));
		printf("# %s\n", said);
		ASSERT_STR(f->strs[0], "memory", "the cause");
		/* the first request is the warm-up: the nine requests 2 to 8 and
		 * 15 to 18 are the baseline, 9 to 14 the slow ones */
		ASSERT_EQ(num_of(f, "first_request"), 9, "from request 9");
		ASSERT_EQ(num_of(f, "last_request"), 14, "to request 14");
		ASSERT_EQ(num_of(f, "slow_requests"), 6, "six slow");
		ASSERT_TRUE(fabs(num_of(f, "baseline_rate") - 100) < 2, "the baseline");
		ASSERT_TRUE(fabs(num_of(f, "rate") - 5) < 0.2, "the slow rate");
		ASSERT_EQ(num_of(f, "recovered_request"), 15, "back from 15");
		ASSERT_TRUE(num_of(f, "major_faults_per_s") > 5000, "major faults a second");
		ASSERT_TRUE(says(f, M_SLOW_READ_BACK) && says(f, M_SLOW_LIMIT) &&
				    says(f, M_SLOW_TRY_MEMORY) && !says(f, M_SLOW_NO_CAUSE),
			    "faults, the limit, what to try");
		ASSERT_EQ(num_of(f, "limit_bytes"), 150ull << 20, "the limit");
		ASSERT_TRUE(has_num(f, "limit_before_bytes") &&
				    num_of(f, "limit_before_bytes") == 0,
			    "no limit before");
		ASSERT_TRUE(f->confidence > 0.99, "sure");
		ASSERT_TRUE(findings__slow(fs, PID, 9) && findings__slow(fs, PID, 14) &&
				    !findings__slow(fs, PID, 8) && !findings__slow(fs, PID, 15),
			    "the requests marked");
	}
	findings__free(fs);
	model__free(m);
}

/* a mapped model read back: minor faults and reads, few major ones */
void test_slow_reads_without_major_faults(void)
{
	struct model *m = run_of(episode, EPISODE, SC_READS, false);
	struct findings *fs = findings__build(m);
	const struct finding *f;
	size_t n;

	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "one slowdown") && f) {
		ASSERT_STR(f->strs[0], "memory", "the cause");
		ASSERT_TRUE(num_of(f, "read_bytes_per_s") > 500e6, "what it read a second");
		ASSERT_TRUE(says(f, M_SLOW_READ_BACK), "read back");
	}
	findings__free(fs);
	model__free(m);
}

void test_slow_cpu_throttled_and_neighbour(void)
{
	struct model *m = run_of(episode, EPISODE, SC_THROTTLED, false);
	struct findings *fs = findings__build(m);
	const struct finding *f;
	size_t n;

	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "throttled: one slowdown") && f) {
		ASSERT_STR(f->strs[0], "cpu", "throttled: the cause");
		ASSERT_TRUE(says(f, M_SLOW_THROTTLED) && says(f, M_SLOW_TRY_CPU),
			    "throttled: the quota");
		ASSERT_TRUE(fabs(num_of(f, "cpu_quota") - 0.2) < 1e-9, "a fifth of a CPU");
	}
	findings__free(fs);
	model__free(m);
	m = run_of(episode, EPISODE, SC_NEIGHBOUR, false);
	fs = findings__build(m);
	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "neighbour: one slowdown") && f) {
		ASSERT_STR(f->strs[0], "cpu", "neighbour: the cause");
		ASSERT_TRUE(says(f, M_SLOW_CPU_WAIT) && !says(f, M_SLOW_THROTTLED),
			    "neighbour: waited for a CPU");
		ASSERT_TRUE(num_of(f, "cpu_wait_share") > 0.4, "neighbour: the wait's share");
	}
	findings__free(fs);
	model__free(m);
}

/* usual rates of two levels, a quota between them: a server at 520 tokens/s
 * before a quota ran at 360 after it was lifted (CI), and its spread put
 * 62 under the quota within four of them; a fifth of the rates here */
void test_slow_usual_rates_of_two_levels(void)
{
	static const double rates[] = { 84.4, 96.6, 115,  111.2, 99.6, 101.4, 19, 15.2,
					12.4, 24.8, 18.4, 26.4,	 83,   71.2,  72, 71.2 };
	struct model *m = run_of(rates, sizeof(rates) / sizeof(rates[0]), SC_THROTTLED, false);
	struct findings *fs = findings__build(m);
	const struct finding *f;
	size_t n;

	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "one slowdown") && f) {
		ASSERT_STR(f->strs[0], "cpu", "the cause");
		ASSERT_TRUE(num_of(f, "first_request") == 7 && num_of(f, "last_request") == 12,
			    "the requests under the quota");
	}
	findings__free(fs);
	model__free(m);
}

/* a GPU held down by its power cap */
void test_slow_gpu_clocks(void)
{
	struct model *m = run_of(episode, EPISODE, SC_CLOCKS, false);
	struct findings *fs = findings__build(m);
	const struct finding *f;
	size_t n;

	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "one slowdown") && f) {
		ASSERT_STR(f->strs[0], "gpu_clocks", "the cause");
		ASSERT_TRUE(says(f, M_SLOW_CLOCKS), "the clocks said");
		ASSERT_TRUE(fabs(num_of(f, "gpu_sm_mhz") - 700) < 1 &&
				    fabs(num_of(f, "gpu_sm_mhz_before") - 1980) < 1,
			    "the clocks");
	}
	findings__free(fs);
	model__free(m);
	/* the same clocks where the process holds nothing on that GPU: not its */
	m = run_of(episode, EPISODE, SC_NONE, false);
	fs = findings__build(m);
	f = slowdown(fs, &n);
	ASSERT_TRUE(f && !strcmp(f->strs[0], "none"), "no GPU of its");
	findings__free(fs);
	model__free(m);
}

void test_slow_no_cause_said(void)
{
	struct model *m = run_of(episode, EPISODE, SC_NONE, false);
	struct findings *fs = findings__build(m);
	const struct finding *f;
	size_t n;

	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "one slowdown") && f) {
		ASSERT_STR(f->strs[0], "none", "no cause");
		ASSERT_TRUE(says(f, M_SLOW_NO_CAUSE) && !says(f, M_SLOW_READ_BACK) &&
				    !says(f, M_SLOW_CPU_WAIT),
			    "said as none seen");
	}
	findings__free(fs);
	model__free(m);
}

/* requests of milliseconds: the same episode twenty times slower is no
 * slowdown where its slow requests lost 73 ms in all (the scheduler swings
 * them by as much: a real server's test saw 1.8 times on two requests of
 * 56 tokens at 2,570 tokens/s), and one where they lost 1.5 s */
void test_slow_not_material(void)
{
	static const double scale[] = { 500, 25 };
	double rates[EPISODE];
	size_t i, k, n;

	for (k = 0; k < 2; k++) {
		struct model *m;
		struct findings *fs;
		const struct finding *f;

		for (i = 0; i < EPISODE; i++)
			rates[i] = episode[i] * scale[k];
		m = run_of(rates, EPISODE, SC_NONE, false);
		fs = findings__build(m);
		f = slowdown(fs, &n);
		if (k == 0)
			ASSERT_EQ(n, 0, "73 ms lost: no slowdown");
		else if (ASSERT_EQ(n, 1, "1.5 s lost: a slowdown") && f)
			ASSERT_TRUE(fabs(num_of(f, "lost_s") - 6 * (32 / 125.0 - 32 / 2500.0)) <
					    0.1,
				    "the time it lost");
		findings__free(fs);
		model__free(m);
	}
}

/* prompts slow while the server copies large states in (its prompt
 * cache's loads), the decode as usual: a prompt-rate slowdown, its cause
 * the state copies; prompts of other lengths are not compared */
void test_slow_prompt_state_copies(void)
{
	struct model *m = model_of_run(2);
	struct findings *fs;
	const struct finding *f;
	double t = 3;
	size_t i, n;

	for (i = 0; i < 16; i++) {
		bool slow = i >= 8 && i < 12;

		if (slow)
			state_load(m, t + 0.05, 200ull << 20);
		t = request_p(m, t, 10 + i, 100, 32, 256, 0, slow ? 0.5 : 0.05);
	}
	/* a short prompt is slower a token: not compared with the long ones */
	for (i = 0; i < 4; i++)
		t = request_p(m, t, 30 + i, 100, 32, 40, 0, 0.02);
	fs = findings__build(m);
	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "one slowdown") && f) {
		ASSERT_STR(f->category, "prompt_rate", "of the prompts");
		ASSERT_STR(f->strs[0], "prompt_cache", "the cause");
		ASSERT_EQ(num_of(f, "first_request"), 9, "from request 9");
		ASSERT_EQ(num_of(f, "last_request"), 12, "to request 12");
		ASSERT_TRUE(says(f, M_SLOW_STATE_COPIES), "the copies said");
		ASSERT_TRUE(findings__slow(fs, PID, 9) && findings__slow(fs, PID, 9)->prompt,
			    "marked as a prompt's");
	}
	findings__free(fs);
	model__free(m);
}

/* what must not be called a slowdown */
void test_slow_controls(void)
{
	/* noise of a fifth either way, 40 requests */
	double noisy[40], one[20];
	struct model *m;
	struct findings *fs;
	size_t i, n;
	double t;

	for (i = 0; i < 40; i++)
		noisy[i] = 100 * (0.8 + 0.4 * ((i * 7919) % 40) / 39.0);
	m = run_of(noisy, 40, SC_NONE, false);
	fs = findings__build(m);
	slowdown(fs, &n);
	ASSERT_EQ(n, 0, "noise");
	findings__free(fs);
	model__free(m);
	/* one request slow, and nothing to show for it */
	for (i = 0; i < 20; i++)
		one[i] = i == 10 ? 10 : 100;
	m = run_of(one, 20, SC_NONE, false);
	fs = findings__build(m);
	slowdown(fs, &n);
	ASSERT_EQ(n, 0, "one slow request");
	findings__free(fs);
	model__free(m);
	/* four slots at once run at a third of one alone's rate: singles and
	 * batches of four, mixed */
	m = model_of_run(2);
	for (t = 3, i = 0; i < 8; i++) {
		size_t k;
		double end = t;

		t = request(m, t, 10 + 5 * i, 100, 32, 20, 0);
		for (k = 0; k < 4; k++) {
			double e = request(m, t + 0.001 * k, 11 + 5 * i + k, 33, 32, 20, 0);

			end = e > end ? e : end;
		}
		t = end;
	}
	fs = findings__build(m);
	slowdown(fs, &n);
	ASSERT_EQ(n, 0, "four slots");
	findings__free(fs);
	model__free(m);
	/* a context twenty times as long decodes slower: not the machine */
	m = model_of_run(2);
	for (t = 3, i = 0; i < 10; i++)
		t = request(m, t, 10 + i, 100, 32, 100, 0);
	for (i = 0; i < 4; i++)
		t = request(m, t, 30 + i, 40, 32, 200, 1800);
	fs = findings__build(m);
	slowdown(fs, &n);
	ASSERT_EQ(n, 0, "a longer context");
	findings__free(fs);
	model__free(m);
	/* the same with one usual request of a context half as long: still
	 * too few to compare them with (tests/slow.sh's mixed prompts) */
	m = model_of_run(2);
	for (t = 3, i = 0; i < 10; i++)
		t = request(m, t, 10 + i, 100, 32, 50, 0);
	t = request(m, t, 20, 70, 32, 360, 0);
	for (i = 0; i < 4; i++)
		t = request(m, t, 30 + i, 35, 32, 600, 0);
	fs = findings__build(m);
	slowdown(fs, &n);
	ASSERT_EQ(n, 0, "a longer context, one usual request near it");
	findings__free(fs);
	model__free(m);
}

/* a recording of before these counters: the rates alone, no cause said
 * wrongly, and no crash on a window no counter covers */
void test_slow_without_counters(void)
{
	struct model *m = model_of_run(2);
	struct findings *fs;
	const struct finding *f;
	size_t i, n;
	double t = 3;

	for (i = 0; i < 18; i++)
		t = request(m, t, 10 + i, episode[i], 32, 20, 0);
	fs = findings__build(m);
	f = slowdown(fs, &n);
	if (ASSERT_EQ(n, 1, "one slowdown") && f) {
		ASSERT_STR(f->strs[0], "none", "no cause");
		ASSERT_TRUE(!has_num(f, "major_faults"), "no fault count claimed");
	}
	findings__free(fs);
	model__free(m);
}

/* the live view shows it as it happens (a verdict line, the slow requests
 * marked with their cause); the Prometheus text counts them by cause; the
 * JSON report marks each slow request */
void test_slow_in_the_view_and_the_metrics(void)
{
	struct model *m = run_of(episode, EPISODE, SC_FAULTS, true);
	struct top_line *l = calloc(256, sizeof(*l));
	struct top_state st = { .refresh_s = 1 };
	struct findings *fs = findings__build(m);
	char *text = NULL;
	size_t n, len = 0;
	FILE *f;

	m->target_pid = PID;
	st.now = m->last_ts;
	st.baseline_ts = m->start_ts;
	n = l ? top__layout(m, fs, &st, 60, 160, l, 256) : 0;
	ASSERT_TRUE(screen_has(l, n, "SLOW") && screen_has(l, n, "20.0x slower"),
		    "the verdict's line");
	ASSERT_TRUE(screen_has(l, n, "slow 20.0x: memory") || screen_has(l, n, "slow 19.") ||
			    screen_has(l, n, "slow 20."),
		    "a slow request marked");
	f = open_memstream(&text, &len);
	if (ASSERT_TRUE(f != NULL, "memstream")) {
		report__prometheus(f, m, fs);
		fclose(f);
		ASSERT_TRUE(strstr(text, "gpumemtrace_slow_requests{") &&
				    strstr(text, "cause=\"memory\"} 6"),
			    "six slow requests by cause");
		ASSERT_TRUE(strstr(text, "gpumemtrace_major_faults_total{") != NULL,
			    "the major faults counter");
		ASSERT_TRUE(strstr(text, "verdict=\"slowdown\"") != NULL, "the verdict gauge");
		free(text);
	}
	text = NULL;
	f = open_memstream(&text, &len);
	if (ASSERT_TRUE(f != NULL, "memstream")) {
		write_report(f, m, true);
		fclose(f);
		ASSERT_TRUE(strstr(text, "\"times_slower\"") != NULL,
			    "a request marked slow in the JSON");
		free(text);
	}
	free(l);
	findings__free(fs);
	model__free(m);
}
