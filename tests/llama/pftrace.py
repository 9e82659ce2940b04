#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Sums up a Perfetto trace that protoc decoded to text
(protoc --decode=perfetto.protos.Trace proto/perfetto.proto < OUT), as JSON:

  processes: [{pid, name, uuid}]
  counters:  {"PID CATEGORY": {"points": N, "last": V, "unit": U}}
  slices:    {NAME: N}                     slice begins by name
  requests:  [{name, status, prompt_tokens, generated_tokens, ...}] ("METHOD /path" slices)
  instants:  [NAME]
  unended:   N                             begins without an end on their track

It checks nothing itself; the test compares these with the report and the
server's own figures.
"""
import json
import re
import sys


def parse(lines):
    """protobuf text format into nested dicts; every field a list"""
    stack = [{}]
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        m = re.match(r"^(\w+) \{$", line)
        if m:
            d = {}
            stack[-1].setdefault(m.group(1), []).append(d)
            stack.append(d)
            continue
        m = re.match(r"^(\w+): (.*)$", line)
        if not m:
            raise ValueError(f"cannot read: {line}")
        v = m.group(2)
        if v.startswith('"'):
            v = bytes(v[1:-1], "utf-8").decode("unicode_escape")
        elif re.match(r"^-?[0-9]+$", v):
            v = int(v)
        elif re.match(r"^-?[0-9.eE+-]+$", v):
            v = float(v)
        stack[-1].setdefault(m.group(1), []).append(v)
    return stack[0]


def one(d, k, default=None):
    return d.get(k, [default])[0]


def main():
    trace = parse(sys.stdin)
    tracks, processes, counters = {}, [], {}
    slices, requests, instants = {}, [], []
    open_begins = {}
    for p in trace.get("packet", []):
        for t in p.get("track_descriptor", []):
            tracks[one(t, "uuid")] = t
            for pr in t.get("process", []):
                processes.append({"pid": one(pr, "pid"), "name": one(pr, "process_name"),
                                  "uuid": one(t, "uuid")})
    pid_of = {x["uuid"]: x["pid"] for x in processes}
    for p in trace.get("packet", []):
        for e in p.get("track_event", []):
            kind, uuid = one(e, "type"), one(e, "track_uuid")
            name = one(e, "name")
            notes = {one(a, "name"): next(v[0] for k, v in a.items() if k != "name")
                     for a in e.get("debug_annotations", [])}
            if kind == "TYPE_COUNTER":
                t = tracks[uuid]
                key = f"{pid_of.get(one(t, 'parent_uuid'))} {one(t, 'name')}"
                c = counters.setdefault(key, {"points": 0, "last": None,
                                              "unit": one(one(t, "counter", {}), "unit")})
                c["points"] += 1
                c["last"] = one(e, "counter_value")
            elif kind == "TYPE_SLICE_BEGIN":
                slices[name] = slices.get(name, 0) + 1
                open_begins[uuid] = open_begins.get(uuid, 0) + 1
                if re.match(r"^[A-Z]+ /", name or ""):
                    requests.append({"name": name, "ts": one(p, "timestamp"), **notes})
            elif kind == "TYPE_SLICE_END":
                open_begins[uuid] = open_begins.get(uuid, 0) - 1
            elif kind == "TYPE_INSTANT":
                instants.append(name)
    print(json.dumps({"processes": processes, "counters": counters, "slices": slices,
                      "requests": requests, "instants": instants,
                      "unended": sum(v for v in open_begins.values() if v > 0),
                      "packets": len(trace.get("packet", []))}))


if __name__ == "__main__":
    main()
