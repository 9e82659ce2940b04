#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""llama.cpp's server suite run twice (tools/llama-suite.sh), judged by what
the suite itself saw: each test's outcome untraced and traced (JUnit XML),
and, for the traced run, each server the suite started and each request its
clients got an answer to (suite_plugin.py's log) against gpumemtrace's
recordings of that server (`replay --json` of the pid's files): counted,
and not marked as sent by a traced process. The requests a server sent
itself (its /cors-proxy fetching its own /models) and those a router passed
to its child servers (recordings of pids the suite did not start) must be
marked with their sender.

  judge.py UNTRACED.xml TRACED.xml SUITE_LOG RECORDINGS_DIR GPUMEMTRACE

Prints a table and a summary; exits 1 when a test's outcome changed, a
server was not found, or a request was not counted."""
import collections
import glob
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                kind = "failed"
            elif child.tag == "skipped":
                kind = "skipped"
        out[name] = kind
    return out


HOW = collections.Counter()  # how each server's tracing began


def replay(gmt, files, with_parent=False):
    reqs, first, ppid = [], None, None
    for f in sorted(files):
        r = subprocess.run([gmt, "replay", "--json", f], capture_output=True, text=True)
        if r.returncode != 0:
            continue
        rep = json.loads(r.stdout)
        for p in rep.get("processes", []):
            reqs += [(q["method"], q["path"], q["status"], q.get("sent_by"))
                     for q in p.get("requests", [])]
            if p.get("traced_from_s") is not None and first is None:
                first = p["traced_from_s"]
                HOW[p.get("traced_how")] += 1
            ppid = p.get("ppid") if ppid is None else ppid
    return (reqs, first, ppid) if with_parent else (reqs, first)


def main():
    untraced, traced = outcomes(sys.argv[1]), outcomes(sys.argv[2])
    log = [json.loads(line) for line in open(sys.argv[3])]
    rdir, gmt = sys.argv[4], sys.argv[5]
    bad = []
    changed = sorted(n for n in untraced if n in traced and untraced[n] != traced[n])
    for n in changed:
        bad.append(f"{n}: {untraced[n]} untraced, {traced[n]} traced")
    tally = collections.Counter(traced.values())
    servers = [r for r in log if r["ev"] == "server"]
    sent = counted = found = 0
    kinds = collections.Counter()
    kinds_counted = collections.Counter()
    lag = []
    # a port is reused by the next test's server: a server's requests are
    # those of its test to its port. Servers one test starts one after
    # another on one port (a restart) are held together: the suite logs a
    # server once it answers /health, after its readiness polls, so which
    # of them a request reached is the recordings' to say, not the log's
    mine_of = collections.defaultdict(list)
    for r in log:
        if r["ev"] == "request" and r.get("port") and r["status"] > 0:
            mine_of[(r["test"], r["port"])].append(r)
    groups = collections.defaultdict(list)
    for s in servers:
        groups[(s["test"], s["port"])].append(s)
    suite_pids = {s["pid"] for s in servers}
    selfsent = collections.Counter()
    for key, ss in groups.items():
        got = []
        for s in ss:
            files = glob.glob(os.path.join(rdir, f"*.{s['pid']}.gmt")) + \
                glob.glob(os.path.join(rdir, f"*.{s['pid']}.*.gmt"))
            g, first = replay(gmt, files) if files else ([], None)
            for m, p, _, by in g:
                if by and by.get("itself") and by.get("pid") == s["pid"]:
                    selfsent[f"{key[0]} {m} {p}"] += 1
                elif by:
                    bad.append(f"{key[0]}: {m} {p} at pid {s['pid']} marked as sent by {by}")
            got += [q for q in g if not q[3]]
            found += bool(files)
            if first is not None:
                lag.append(first)
            if not files:
                bad.append(f"server pid {s['pid']} ({s['test']}): no recording")
        want = collections.Counter((r["method"], r["path"]) for r in mine_of[key])
        have = collections.Counter((m, p) for m, p, _, _ in got)
        sent += sum(want.values())
        for k, n in want.items():
            kinds[k[1]] += n
            c = min(n, have.get(k, 0))
            kinds_counted[k[1]] += c
            counted += c
        if want - have:
            bad.append(f"{key[0]} (port {key[1]}, pids {[s['pid'] for s in ss]}): not counted "
                       f"{dict(want - have)}")
    how = dict(HOW)
    # the servers a router the suite started started itself, whose every
    # request the router sent (other recordings: servers of other jobs on
    # the machine, which --watch --comm llama-server records too)
    child = collections.Counter()
    child_marked = collections.Counter()
    by_pid = collections.defaultdict(list)
    for f in glob.glob(os.path.join(rdir, "*.gmt")):
        try:
            pid = int(os.path.basename(f).split(".")[2])
        except (IndexError, ValueError):
            continue
        if pid not in suite_pids:
            by_pid[pid].append(f)
    for pid, files in by_pid.items():
        g, _, ppid = replay(gmt, files, with_parent=True)
        if ppid not in suite_pids:
            continue
        for m, p, _, by in g:
            child[p] += 1
            if by and by.get("pid") in suite_pids and not by.get("itself"):
                child_marked[p] += 1
            else:
                bad.append(f"child pid {pid}: {m} {p} marked as sent by {by}")
    print("| path | requests answered (the suite's clients) | counted by gpumemtrace |")
    print("|---|---|---|")
    for k, n in kinds.most_common():
        print(f"| {k} | {n} | {kinds_counted[k]} |")
    print("\n| requests a traced process sent | requests | marked with their sender |")
    print("|---|---|---|")
    for k, n in selfsent.items():
        print(f"| a server to itself: {k} | {n} | {n} |")
    for k, n in child.most_common():
        print(f"| a router to its child servers: {k} | {n} | {child_marked[k]} |")
    lag.sort()
    med = lag[len(lag) // 2] if lag else None
    if lag:
        print(f"\ntime to attach (from the process's start to its first traced event), "
              f"{len(lag)} servers: median {med:.3f} s, 90th percentile "
              f"{lag[len(lag) * 9 // 10]:.3f} s, largest {lag[-1]:.3f} s; found by: {how}")
    print(f"\ntests: {len(traced)} ({dict(tally)}); outcomes changed by tracing: {len(changed)}; "
          f"servers {len(servers)}, found {found}; requests answered {sent}, counted {counted}"
          f"{f'; traced from, median {med:.3f} s after start' if med is not None else ''}")
    for b in bad[:40]:
        print("# " + b)
    if len(bad) > 40:
        print(f"# ... {len(bad) - 40} more")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
