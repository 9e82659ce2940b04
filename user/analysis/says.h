/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The verdict vocabulary, declared once: the kinds of finding and the say
 * codes, each with its JSON name and its arguments by name. Everything else
 * is made from these lists: the enums, the JSON names (findings.c), the
 * records a finder fills (SAY/EVIDENCE in findings.h) and the words
 * (words.c, one writer a code).
 *
 * Why this shape: each code's arguments become a struct of named fields
 * (S: a string, V: a figure), stored in a union in struct finding_say. A
 * finder writes them by designated initializer and the words read them by
 * the same names, so a misspelt or missing argument is a compile error on
 * either side, and the list below is the one place that says what a code
 * carries. The order of a code's arguments means nothing. */
#ifndef GMT_SAYS_H
#define GMT_SAYS_H

/* X(enum, JSON name, report title, the live view's tag), in the order the
 * report shows them: the most urgent first */
#define FINDING_KINDS(X)                                                                          \
	X(F_ALLOC_FAILURE, "alloc_failure", "ALLOCATION FAILURE", "FAILED")                       \
	X(F_EXIT, "exit", "EXITED", "EXITED") /* a signal or a failing status */                  \
	X(F_LEAK, "leak", "LEAK", "LEAK")                                                         \
	X(F_UNEXPLAINED, "unexplained_device_growth", "UNEXPLAINED DEVICE GROWTH", "UNEXPLAINED") \
	X(F_EVICTION, "eviction_slowdown", "EVICTION SLOWDOWN", "EVICTED")                        \
	X(F_SLOWDOWN, "slowdown", "SLOWDOWN", "SLOW") /* requests slower than its own */          \
	X(F_GROWING, "growing", "GROWING", "GROWING") /* too early to tell */                     \
	X(F_BOUNDED, "bounded_cache", "BOUNDED CACHE", "CACHE")                                   \
	X(F_SETTLED, "settled", "SETTLED", "SETTLED") /* slower, then level */                    \
	X(F_STEP, "step", "STEP", "STEP")                                                         \
	X(F_STEADY, "steady", "STEADY", "STEADY")                                                 \
	X(F_NOT_JUDGED, "not_judged", "NOT JUDGED", "UNJUDGED") /* too few points */

enum finding_kind {
#define X(k, json, title, tag) k,
	FINDING_KINDS(X)
#undef X
		F_NR,
};

/* What a finding says, sentence by sentence, as codes with named figures:
 * X(enum, JSON name, arguments). M_ codes make the message (the first is
 * its reason), E_ codes the lines of evidence. A figure named pr is 1 over
 * requests, 0 over time; from is where a llama-server setting came from
 * (enum conf_from); the words of each code are in words.c. */
/* clang-format off */
#define SAYS(X) \
	X(M_LEAK, "leak", S(where) V(slope) V(lo) V(hi) V(first) V(last) V(points) V(pr) V(base)) \
	X(M_LEVEL_UNTIL, "level_until", V(pr) V(point)) \
	X(M_STEP_RISES, "step_rises", V(tau)) \
	X(M_FIXED_ENTRIES, "fixed_entries", V(bytes) V(min_tokens) V(max_tokens)) \
	X(M_RUNS_OUT, "runs_out", S(what) V(limit) V(more) V(pr) V(host)) \
	X(M_RUNS_OUT_CGROUP, "runs_out_cgroup", S(cgroup) V(limit) V(used) V(more) V(pr) V(file) V(swap)) \
	X(M_TRY_HOST_STACKS, "try_host_stacks", ) \
	X(M_TRY_API_STACKS, "try_api_stacks", ) \
	X(M_BOUNDED, "bounded", S(where) V(rate) V(point) V(pr) V(ceiling) V(points_after)) \
	X(M_SETTLED, "settled", S(where) V(rise) V(point) V(pr) V(ceiling) V(points_after)) \
	X(M_STEADY_AT, "steady_at", S(where) V(middle) V(lo) V(hi) V(points) V(pr)) \
	X(M_STEADY_WANDERS, "steady_wanders", S(where) V(lo) V(hi) V(points) V(pr) V(last)) \
	X(M_STEADY_SMALL, "steady_small", V(rise) V(material)) \
	X(M_GROWING_SLOWING, "growing_slowing", S(where) V(early) V(recent) V(first) V(last) V(points) V(pr) V(more)) \
	X(M_GROWING_DRIFT, "growing_drift", S(where) V(first) V(last) V(points) V(pr) V(slope) V(more)) \
	X(M_HIGH_WATER, "high_water", S(where) V(first) V(last) V(points) V(slope) V(larger)) \
	X(M_STEP_REQUEST, "step_request", S(where) V(step) V(request) V(seconds)) \
	X(M_STEP_TIME, "step_time", S(where) V(step) V(seconds)) \
	X(M_BY_ROLE, "by_role", S(roles)) \
	X(M_ROSE_HELD, "rose_and_held", S(where) V(rise) V(percent) V(first) V(last) V(points) V(pr)) \
	X(M_HELD_BRIEFLY, "held_briefly", S(where) V(rise) V(rise_s) V(ceiling) V(hold_s) V(more_s)) \
	X(M_LEAK_UNBOUNDED, "leak_unbounded", S(label) V(share) V(rest_bounded)) \
	X(M_ROLE_PAST_BOUND, "role_past_bound", S(role) S(bound_name) V(bytes) V(bound) V(share)) \
	X(M_ROLE_FILLING, "role_filling", S(where) V(step) V(share) V(bound)) \
	X(M_ROLE_WITHIN, "role_within_bound", S(where) S(role) S(bound_name) V(rise) V(first) V(last) V(points) V(pr) V(share) V(bound)) \
	X(M_ROLES_UNDECIDED, "roles_undecided", S(where) V(rise) V(first) V(last) V(points) V(pr) V(share) V(rest) V(more)) \
	X(M_UNEXPLAINED, "unexplained", S(where) V(excess) V(pr) V(first) V(last) V(points) V(api_slope)) \
	X(M_GRAPH_CACHE, "graph_cache", V(graphs_off)) \
	X(M_DRIVER_GROWS, "driver_grows", ) \
	X(M_GRAPHS_NOW, "graphs_now", V(per_unit) V(live) V(pr)) \
	X(M_COUNT_LEAK, "count_leak", S(where) V(slope) V(first) V(last) V(points) V(pr) V(base)) \
	X(M_COUNT_GROWING, "count_growing", S(where) V(slope) V(first) V(last) V(points) V(pr)) \
	X(M_COUNT_BEFORE_SWEEP, "count_before_sweep", S(where) V(slope) V(first) V(last) V(points) V(pr) V(span) V(needed)) \
	X(M_COUNT_LEVELS, "count_levels", S(where) V(first) V(ceiling) V(lo) V(hi) V(point) V(points) V(pr)) \
	X(M_COUNT_STEP, "count_step", S(where) V(step) V(first) V(last) V(point) V(pr)) \
	X(M_COUNT_STEADY, "count_steady", S(where) V(lo) V(hi) V(points) V(pr)) \
	X(M_COUNT_SWINGS, "count_swings", S(where) V(hi) V(hi_point) V(last) V(lo) V(points) V(pr)) \
	X(M_GRAPHS_HOLD, "graphs_hold", V(llama) V(graphs_off)) \
	X(M_NOT_JUDGED, "not_judged", S(where) V(samples) V(span) V(requests) V(needed) V(interval) V(driver)) \
	X(M_CACHE_OFF, "cache_off", V(from)) \
	X(M_CACHE_UNLIMITED, "cache_unlimited", V(from)) \
	X(M_CACHE_EXCEEDED, "cache_exceeded", V(grown) V(mib) V(from)) \
	X(M_CACHE_STOPS_AT, "cache_stops_at", V(mib) V(from) V(bytes)) \
	X(M_CACHE_LEVELS, "cache_levels", V(mib) V(from) V(bytes) V(requests) V(known)) \
	X(M_CACHE_OOM_FIRST, "cache_oom_first", V(more) V(available) V(requests) V(by_cgroup)) \
	X(M_CACHE_TRY_LOWER, "cache_try_lower", ) \
	X(M_CACHE_SHARE, "cache_share", V(rise) V(percent) V(mib) V(from) V(over)) \
	X(M_LEAK_BESIDE_CACHE, "leak_beside_cache", S(where) S(label) V(slope) V(lo) V(hi) V(rest) V(points) V(held) V(touched) V(share)) \
	X(M_LEAK_BESIDE_HOLDERS, "leak_beside_holders", S(where) S(label) V(slope) V(lo) V(hi) V(rise) V(total) V(live) V(points) V(pr)) \
	X(M_CACHE_BESIDE, "cache_beside", V(saves) V(mean) V(total) V(held) V(mib) V(from) V(full) V(fit)) \
	X(M_RUNS_OUT_WITH_CACHE, "runs_out_with_cache", V(fill) V(left)) \
	X(M_CACHE_FULL, "cache_full", S(where) V(first) V(last) V(saves) V(fit) V(mib) V(from)) \
	X(M_CACHE_FILLING, "cache_filling", S(where) V(step) V(saves) V(mean) V(total) V(mib) V(from) V(ceiling) V(more)) \
	X(M_FAILED, "failed", S(call) S(result) S(role) V(size) V(type) V(heap) V(heap_bytes) V(device_local) V(seconds) V(times) V(live)) \
	X(M_FAILED_ROLES, "failed_roles", S(roles)) \
	X(M_FAILED_STACKS, "failed_stacks", V(other)) \
	X(M_FAIL_TRY_GRAPHS, "fail_try_graphs", V(llama) V(graphs_off)) \
	X(M_FAIL_TRY_SHRINK, "fail_try_shrink", S(holder) V(percent)) \
	X(M_FAIL_TRY_CALL, "fail_try_call", S(role) V(size) V(biggest) V(live)) \
	X(M_FAIL_TRY_KV, "fail_try_kv", V(read) V(ctx) V(ctx_from) V(slots) V(slots_from) V(fit) V(scaled_kv)) \
	X(M_FAIL_END, "fail_end", ) \
	X(M_EVICTED, "evicted", S(comm) V(seconds) V(bytes) V(evictor) V(created)) \
	X(M_EVICT_RETURNED, "evict_returned", V(back) V(freed)) \
	X(M_EVICT_STILL_OUT, "evict_still_out", V(out) V(back) V(freed)) \
	X(M_EVICT_NONE_BACK, "evict_none_back", ) \
	X(M_EVICT_AFTER_FREE, "evict_after_free", V(evictor) V(seconds)) \
	X(M_EVICT_BY_END, "evict_by_end", ) \
	X(M_DECODE_FELL, "decode_fell", V(before) V(after) V(n_before) V(n_after) V(partly_back)) \
	X(M_DECODE_NOT_FELL, "decode_not_fell", V(before) V(after) V(n_before) V(n_after)) \
	X(M_DECODE_NO_RATES, "decode_no_rates", ) \
	X(M_EXIT, "exit", S(comm) S(how) V(killed) V(seconds) V(requests) V(answered) V(total) V(after_failure) V(failed_size)) \
	X(M_CRASH_THREAD, "crash_thread", S(thread) S(frames) V(tid) V(code) V(addr) V(sender) V(self) V(sig)) \
	X(M_CRASH_SERVING, "crash_serving", S(requests) V(count)) \
	X(M_CRASH_HEAP, "crash_heap", ) \
	X(M_SLOW, "slow", S(where) V(n) V(first) V(last) V(rate) V(baseline) V(spread) V(ratio) V(n_base) V(seconds) V(slots) V(prompt)) \
	X(M_SLOW_BACK, "slow_recovered", V(request) V(rate) V(n)) \
	X(M_SLOW_TO_END, "slow_to_the_end", V(more)) \
	X(M_SLOW_READ_BACK, "slow_read_back", S(where) V(read) V(read_s) V(read_before) V(faults_s) V(faults_before) V(major) V(major_s) V(refaults) V(per_token)) \
	X(M_SLOW_FILE_OUT, "slow_file_out", S(file) V(size) V(resident) V(rss_file) V(low)) \
	X(M_SLOW_SWAPPED, "slow_swapped", V(swap) V(swapins)) \
	X(M_SLOW_LIMIT, "slow_limit", S(cgroup) S(file) V(limit) V(before) V(seconds) V(raised) V(raised_s) V(need)) \
	X(M_SLOW_HOST_MEMORY, "slow_host_memory", V(available) V(before) V(total)) \
	X(M_SLOW_PRESSURE, "slow_memory_pressure", V(share) V(cgroup)) \
	X(M_SLOW_CPU_WAIT, "slow_cpu_wait", V(share) V(before) V(cpus) V(running) V(threads)) \
	X(M_SLOW_THROTTLED, "slow_throttled", S(cgroup) V(quota) V(share) V(before_quota) V(seconds) V(threads) V(v2)) \
	X(M_SLOW_GRAPHS, "slow_graphs", V(count) V(per_token) V(before)) \
	X(M_SLOW_EVICTED, "slow_evicted", V(bytes) V(seconds) V(evictor)) \
	X(M_SLOW_CLOCKS, "slow_gpu_clocks", V(mhz) V(before) V(max) V(power) V(thermal) V(hw)) \
	X(M_SLOW_CONTEXT_FULL, "slow_context_full", V(n) V(slot)) \
	X(M_SLOW_STATE_COPIES, "slow_state_copies", V(bytes) V(before)) \
	X(M_SLOW_NO_CAUSE, "slow_no_cause", V(faults) V(waits) V(gpu)) \
	X(M_SLOW_TRY_MEMORY, "slow_try_memory", V(mmap) V(mlock) V(need)) \
	X(M_SLOW_TRY_CPU, "slow_try_cpu", V(throttled) V(cpus) V(threads) V(quota)) \
	X(M_SLOW_TRY_GRAPHS, "slow_try_graphs", ) \
	X(E_SLOW_RATES, "slow_rates", S(where) V(before) V(during) V(after) V(n_before) V(n_during) V(n_after)) \
	X(E_SLOW_PROMPT, "slow_prompt_rates", V(before) V(during)) \
	X(E_SLOW_FAULTS, "slow_fault_rates", V(before) V(during) V(major_before) V(major) V(file) V(anon)) \
	X(E_SLOW_READS, "slow_reads", V(before) V(during) V(refaults) V(cgroup)) \
	X(E_SLOW_WAITS, "slow_cpu_waits", V(before) V(during) V(throttled)) \
	X(E_SLOW_PRESSURE, "slow_pressure", V(memory) V(cpu) V(io) V(cgroup)) \
	X(E_SLOW_SLOTS, "slow_slots", V(slots) V(n)) \
	X(E_STEP_SPREAD, "step_spread", V(cv)) \
	X(E_STEP_FOLLOWS, "step_follows", V(tau)) \
	X(E_STEP_NOT_FOLLOWS, "step_not_follows", V(tau) V(requests)) \
	X(E_HELD_BY_ROLE, "held_by_role", S(roles) V(touched)) \
	X(E_TOUCHES, "touches", S(label) V(from) V(to) V(total) V(top) V(per_touch)) \
	X(E_MADE_HELD, "made_held", S(label) V(total) V(from) V(to) V(top)) \
	X(E_MAPPINGS_COVER, "mappings_cover", V(mapped) V(grew)) \
	X(E_GRAPHS_GROW, "graphs_grow", S(what) V(per_unit) V(pr) V(live)) \
	X(E_HOST_NOT_GPU, "host_not_gpu", S(flat)) \
	X(E_LESS_VULKAN, "less_vulkan", V(bytes) S(api)) \
	X(E_FIRST_LEFT_OUT, "first_left_out", V(step) V(request)) \
	X(E_STEP_FIT, "step_fit", V(points) V(pr) V(first) V(last) V(noise)) \
	X(E_BOUNDED_FIT, "bounded_fit", V(points) V(pr) V(rate) V(point) V(noise) V(confidence)) \
	X(E_SHAPE_FIT, "shape_fit", S(shape) V(points) V(pr) V(slope) V(noise) V(confidence)) \
	X(E_CHANGED_ONCE, "changed_once", S(where) V(step) V(request) V(seconds)) \
	X(E_DRIVER_AGREES, "driver_agrees", S(where) V(slope) V(pr)) \
	X(E_DRIVER_RATE, "driver_rate", S(where) V(slope) V(lo) V(hi) V(pr)) \
	X(E_API_RATE, "api_rate", V(slope) V(lo) V(hi) V(pr)) \
	X(E_GRAPHS_LIVE, "graphs_live", V(per_unit) V(live) V(pr)) \
	X(E_LIVE_BY_ROLE, "live_by_role", S(roles)) \
	X(E_CALL_FAILED, "call_failed", S(call) S(result) V(size) V(has_stack)) \
	X(E_EVICTIONS, "evictions", S(comm) V(count) V(evictor) V(first) V(last)) \
	X(E_VRAM_LEVELS, "vram_levels", V(before) V(end)) \
	X(E_DECODE_RATES, "decode_rates", V(before) V(n_before) V(after) V(n_after) V(share)) \
	X(E_EXITED, "exited", S(how) V(seconds) V(serving)) \
	X(E_CACHE_ENTRIES, "cache_entries", V(saves) V(min) V(max) V(total) V(limit_mib) V(fit)) \
	X(E_CHECKPOINTS, "checkpoints", V(count) V(max) V(total)) \
	X(E_FIXED_STATE, "fixed_state", V(bytes) V(saves) V(min_tokens) V(max_tokens))

/* clang-format on */

enum say {
	SAY_NONE,
#define X(code, json, ...) code,
	SAYS(X)
#undef X
		SAY_NR,
};

#define SAY_STR 240

/* each code's arguments as stored: struct say_M_LEAK { char where[]; double slope, ...; } */
#define S(n) char n[SAY_STR];
#define V(n) double n;
#define X(code, json, ...)  \
	struct say_##code { \
		__VA_ARGS__ \
	};
SAYS(X)
#undef X
#undef S
#undef V

/* and as a finder gives them: the strings by pointer (NULL: none) */
#define S(n) const char *n;
#define V(n) double n;
#define X(code, json, ...)     \
	struct say_in_##code { \
		__VA_ARGS__    \
	};
SAYS(X)
#undef X
#undef S
#undef V

struct finding_say {
	enum say code;
	union {
#define X(code, json, ...) struct say_##code code;
		SAYS(X)
#undef X
	} a; /* the member named by code */
};

/* fill x (NULL: nothing) with a code and its arguments (findings.c) */
#define X(code, json, ...) void says__##code(struct finding_say *x, const struct say_in_##code *in);
SAYS(X)
#undef X

#endif
