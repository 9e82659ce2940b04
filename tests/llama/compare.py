#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""gpumemtrace's requests (its --json report) against the truth: what the
client measured with its own clock (client.py) and what llama-server said of
each request (`timings`) and in all (/metrics). Prints a table and a summary
line; exits 1, after "# " lines saying what was off, when anything is.

  compare.py REPORT.json CLIENT.json [--no-metrics] [--decodes] [--slowdown-ok]

Each request's tokens must come from the server's own timings, as read in
its response (tokens_from "server"). With --decodes (gpumemtrace
--token-probes on), the figures counted from llama.cpp's decodes
("decoded") must be the server's too (of an answer with drafted tokens,
speculative decoding's, the generated tokens and rate unknown: null), and
the decode calls /metrics'.

Requests are paired by path and by the client's start and end against the
tool's (same machine, both on CLOCK_REALTIME), one to one. The tool counts
a request from the server's first read of it to its last write, as nginx's
$request_time does; the client from the kernel's send to the kernel's
arrival. So for every request:
- the tool's span lies within the client's (1 ms for the two clocks) and
  holds the server's own work, its `timings` prompt_ms + predicted_ms;
- on a kept connection, where a server thread already waits to read,
  latency and time to first byte within 10% (or 5 ms) of the client's; on a
  new one the server first accepts it and hands it to a thread, a wait the
  tool does not count, which on a loaded machine passed 10 ms;
- every byte of the answer counted (the client's own count); the client
  may read the end, or the first bytes, up to 40 ms after the write where
  Nagle's algorithm held them (llama-server leaves it on); requests are
  paired by their bytes first, then by time;
- tokens exact; decode rate within 5%.
Nothing slowed the server these tests drive: no slowdown verdict (a false
one is as bad as a false leak), unless --slowdown-ok.
"""
import json
import sys


def within(a, b, rel, absolute):
    return a is not None and b is not None and abs(a - b) <= max(rel * abs(b), absolute)


def ms(s):
    return "-" if s is None else f"{s * 1000:.1f}"


def main():
    report = json.load(open(sys.argv[1]))
    client = json.load(open(sys.argv[2]))
    check_metrics = "--no-metrics" not in sys.argv[3:]
    decodes = "--decodes" in sys.argv[3:]
    slow_ok = "--slowdown-ok" in sys.argv[3:]
    source = "server"
    # one clock for both: CLOCK_MONOTONIC where the report and the client
    # give it (a step of the wall clock during the run, as a VM's time sync
    # makes, moves the client's kernel stamps and not the tool's times),
    # else the wall clock
    mono = report["session"].get("start_monotonic_ns")
    if mono is not None and all("wall_minus_mono_ms" in c for c in client["requests"]):
        t0 = mono / 1e6
        for c in client["requests"]:
            c["start_ms"] -= c["wall_minus_mono_ms"][0]
            if "send_ms" in c:
                c["send_ms"] -= c["wall_minus_mono_ms"][0]
            c["end_ms"] -= c["wall_minus_mono_ms"][1]
    else:
        t0 = report["session"]["start_realtime_ns"] / 1e6
    proc = report["processes"][0]
    # requests the server read and closed without an answer (llama-server
    # closes a kept connection after an event stream) are not the client's
    posts = [r for r in proc["requests"] if r["method"] == "POST"]
    tool = [r for r in posts if r["status"] is not None]
    unanswered = len(posts) - len(tool)
    bad = []
    used = set()
    rows = []
    # the closest pairs first, over all of them: requests of concurrent
    # clients start and end within a millisecond or two of each other, and
    # taking the client's requests in order can give one another's match
    # (and the same bytes first, where the client counted them: two answers
    # that end a millisecond apart on a loaded machine are told by their size)
    pairs = sorted(("bytes" in c and r.get("bytes_out") != c["bytes"],
                    abs(t0 + r["start_s"] * 1000 - c["start_ms"]) +
                    abs(t0 + r["end_s"] * 1000 - c["end_ms"]), ci, i)
                   for ci, c in enumerate(client["requests"]) for i, r in enumerate(tool)
                   if r["path"] == c["path"] and r["end_s"] is not None)
    match = {}
    for _, d, ci, i in pairs:
        if d <= 1000 and ci not in match and i not in used:
            match[ci] = i
            used.add(i)
    for ci, c in enumerate(client["requests"]):
        rows.append((c, tool[match[ci]] if ci in match else None))

    lat_err = ttfb_err = rate_err = drate_err = wait = nagle = 0
    tok_ok = from_ok = 0
    out = ["\t".join(["#", "path", "stream", "keep", "latency ms tool/client",
                      "ttfb ms tool/client", "read after send ms", "prompt tool/server", "gen tool/server",
                      "tok/s tool/server", "err"])]
    for c, r in rows:
        t = c.get("timings") or {}
        k = c["k"]
        if r is None:
            bad.append(f"request {k} ({c['path']}, {'stream' if c['stream'] else 'json'}) not found")
            out.append(f"{k}\t{c['path']}\tnot found")
            continue
        if c["status"] != 200:
            bad.append(f"request {k}: the server answered {c['status']}: {c.get('error')}")
        if r["status"] != c["status"]:
            bad.append(f"request {k}: status {r['status']}, the client got {c['status']}")
        start, end = t0 + r["start_s"] * 1000, t0 + r["end_s"] * 1000
        if start < min(c["start_ms"], c.get("send_ms", c["start_ms"])) - 1 or end > c["end_ms"] + 1:
            bad.append(f"request {k}: the tool's span is not within the client's: it starts "
                       f"{start - c['start_ms']:.1f} ms after, ends {end - c['end_ms']:.1f} ms "
                       "after")
        work = (t.get("prompt_ms") or 0) + (t.get("predicted_ms") or 0)
        if r["latency_s"] * 1000 < work - 1:
            bad.append(f"request {k}: latency {ms(r['latency_s'])} ms, less than the server's "
                       f"work on it ({work:.1f} ms)")
        kept = not c.get("fresh", True)
        # every byte of the answer, status line to the last, is what the client read
        if "bytes" in c and r.get("bytes_out") != c["bytes"]:
            bad.append(f"request {k}: {r.get('bytes_out')} bytes out, the client read {c['bytes']}")
        # llama-server leaves Nagle's algorithm on (cpp-httplib's TCP_NODELAY
        # is off), so a small last write, a stream's terminator, can wait in
        # the kernel for the ACK of the write before: the client reads the end
        # up to a delayed ACK (40 ms at least) after the server's last write.
        # With every byte counted, that wait is the kernel's, not a misread end
        trail = c["latency_ms"] - r["latency_s"] * 1000
        held = "bytes" in c and r.get("bytes_out") == c["bytes"] and 5 < trail <= 40
        nagle += held
        if kept and not held and not within(r["latency_s"] * 1000, c["latency_ms"], 0.1, 5):
            bad.append(f"request {k}: latency {ms(r['latency_s'])} ms, the client measured "
                       f"{c['latency_ms']:.1f} ms (end: {r['end']})")
        # the same kernel hold can come before the first bytes (the headers
        # behind a small write not yet acknowledged)
        ftrail = c["ttfb_ms"] - (r["ttfb_s"] or 0) * 1000
        fheld = "bytes" in c and r.get("bytes_out") == c["bytes"] and 5 < ftrail <= 40
        nagle += fheld and not held
        if r["ttfb_s"] is None or r["ttfb_s"] * 1000 > c["ttfb_ms"] + 1:
            bad.append(f"request {k}: time to first byte {ms(r['ttfb_s'])} ms, more than the "
                       f"client measured ({c['ttfb_ms']:.1f} ms)")
        elif kept and not fheld and not within(r["ttfb_s"] * 1000, c["ttfb_ms"], 0.1, 5):
            bad.append(f"request {k}: time to first byte {ms(r['ttfb_s'])} ms, the client "
                       f"measured {c['ttfb_ms']:.1f} ms")
        if r["event_stream"] != c["stream"]:
            bad.append(f"request {k}: event stream {r['event_stream']}, sent {c['stream']}")
        if t and r.get("tokens_from") != source:
            bad.append(f"request {k}: tokens from {r.get('tokens_from')}, not {source}")
        from_ok += r.get("tokens_from") == source
        if r["prompt_tokens"] != t.get("prompt_n"):
            bad.append(f"request {k}: {r['prompt_tokens']} prompt tokens, the server says "
                       f"{t.get('prompt_n')}")
        if r["generated_tokens"] != t.get("predicted_n"):
            bad.append(f"request {k}: {r['generated_tokens']} generated tokens, the server says "
                       f"{t.get('predicted_n')}")
        d = r.get("decoded")
        # speculative decoding: how many drafted tokens a step kept is the
        # server's to say; the decodes give none (null), never a guess
        drafted = bool(t.get("draft_n"))
        if decodes and t and (not d or d["prompt_tokens"] != t.get("prompt_n") or
                              d["generated_tokens"] != (None if drafted else t.get("predicted_n"))):
            bad.append(f"request {k}: decoded {d and [d['prompt_tokens'], d['generated_tokens']]}"
                       f", the server says {[t.get('prompt_n'), t.get('predicted_n')]}")
        if decodes and d and drafted:
            if d["decode_tokens_per_s"] is not None:
                bad.append(f"request {k}: a decoded rate of a drafted answer, "
                           f"{d['decode_tokens_per_s']}")
        elif decodes and d and (t.get("predicted_n") or 0) > 2:
            dwant = t.get("predicted_per_second")
            if not within(d["decode_tokens_per_s"], dwant, 0.05, 0):
                bad.append(f"request {k}: decoded {d['decode_tokens_per_s']} tokens/s, the "
                           f"server says {dwant}")
            else:
                drate_err = max(drate_err, abs(d["decode_tokens_per_s"] - dwant) / dwant)
        tok_ok += r["prompt_tokens"] == t.get("prompt_n") and \
            r["generated_tokens"] == t.get("predicted_n")
        want, got = t.get("predicted_per_second"), r["decode_tokens_per_s"]
        if (t.get("predicted_n") or 0) > 2 and not within(got, want, 0.05, 0):
            bad.append(f"request {k}: {got} tokens/s, the server says {want}")
        if kept and not held:
            lat_err = max(lat_err, abs(r["latency_s"] * 1000 - c["latency_ms"]) / c["latency_ms"])
        if kept and not fheld and r["ttfb_s"] is not None:
            ttfb_err = max(ttfb_err, abs(r["ttfb_s"] * 1000 - c["ttfb_ms"]) / c["ttfb_ms"])
        if not kept:
            wait = max(wait, start - c["start_ms"])
        if (t.get("predicted_n") or 0) > 2 and got is not None and want:
            rate_err = max(rate_err, abs(got - want) / want)
        err = "-" if got is None or not want else f"{(got - want) / want * 100:.1f}%"
        out.append("\t".join(str(x) for x in [
            k, c["path"], "yes" if c["stream"] else "no", "yes" if c["keep_alive"] else "no",
            f"{ms(r['latency_s'])}/{c['latency_ms']:.1f}",
            f"{ms(r['ttfb_s'])}/{c['ttfb_ms']:.1f}",
            f"{t0 + r['start_s'] * 1000 - c['start_ms']:.1f}{'' if kept else ' new'}",
            f"{r['prompt_tokens']}/{t.get('prompt_n')}",
            f"{r['generated_tokens']}/{t.get('predicted_n')}",
            f"{'-' if got is None else f'{got:.1f}'}/{'-' if want is None else f'{want:.1f}'}",
            err]))
    n = len(client["requests"])
    if len(tool) != n:
        bad.append(f"the tool saw {len(tool)} POST requests answered, the client sent {n}")
    for e in client.get("errors") or []:
        bad.append(f"the client: {e}")

    sums = ""
    if check_metrics:
        m = client.get("metrics")
        if not m:
            bad.append("no /metrics from the server (start it with --metrics)")
        else:
            llama = proc.get("llama") or {}
            checks = [
                ("prompt tokens", sum(r["prompt_tokens"] for r in tool), m["prompt_tokens_total"]),
                ("generated tokens", sum(r["generated_tokens"] for r in tool),
                 m["tokens_predicted_total"]),
            ]
            if decodes:
                # the server counts its own llama_decode calls, not those
                # of mtmd for an image's embeddings
                checks.append(("decode calls", llama.get("decodes", 0) -
                               llama.get("decodes_before_requests", 0) -
                               llama.get("image_decodes", 0), m["n_decode_total"]))
            for what, got, want in checks:
                if got != want:
                    bad.append(f"{what}: {got} in all, /metrics says {want:.0f}")
            sums = "; sums tool/metrics: " + ", ".join(f"{w} {g}/{t:.0f}" for w, g, t in checks)
    print("\n".join(out))
    print(f"found {sum(1 for _, r in rows if r)}/{n}; tokens exact {tok_ok}/{n} "
          f"(from {source} {from_ok}/{n}); "
          f"worst on kept connections: latency error {lat_err * 100:.1f}%, "
          f"ttfb {ttfb_err * 100:.1f}%; longest wait to read a new one {wait:.1f} ms; "
          f"decode rate {rate_err * 100:.2f}%"
          f"{f' (decoded {drate_err * 100:.2f}%)' if decodes else ''}{sums}"
          f"{f'; {unanswered} read and closed unanswered' if unanswered else ''}"
          f"{f'; {nagle} whose last write the client read 5-40 ms later (Nagle)' if nagle else ''}")
    slow = [f for f in report.get("findings", []) if f.get("kind") == "slowdown"]
    if slow and not slow_ok:
        bad.append("a slowdown where nothing slowed the server: " +
                   "; ".join(f.get("message", "") for f in slow))
    for b in bad:
        print("# " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
