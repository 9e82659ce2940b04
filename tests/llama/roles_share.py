#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""How much of a report's live GPU memory its stacks explain.

  roles_share.py REPORT.json

Of the live GPU API bytes (gpu.live_by_stack of the first process; not
address space reserved, nor mappings of memory counted once already, nor
graph executables): the
share whose stack reaches llama.cpp's own code above the ggml backend (a
frame in libllama or the llama-server binary), the share with a role, and
the bytes by role; and of the host memory first touched (sampled), the
share with a role, and the bytes by role. Prints one JSON object."""
import json
import sys

r = json.load(open(sys.argv[1]))
g = (r["processes"][0].get("gpu") or {}) if r["processes"] else {}
rows = [x for x in g.get("live_by_stack", [])
        if x["kind"] not in ("va-reserved", "vmm-mapped", "graph-exec")]
total = sum(x["bytes"] for x in rows)


def above_backend(x):
    mods = [f.get("module") or "" for f in (x.get("stack") or [])]
    return any(m.startswith("libllama") or m == "llama-server" for m in mods)


touched = (r["processes"][0].get("mappings") or {}).get("first_touched_by_role") or {} if r["processes"] else {}
by_role = {}
for x in rows:
    by_role[x.get("role", "none")] = by_role.get(x.get("role", "none"), 0) + x["bytes"]
print(json.dumps({
    "live_bytes": total,
    "stacks": len(rows),
    "share_above_backend": sum(x["bytes"] for x in rows if above_backend(x)) / total if total else None,
    "share_with_role": sum(x["bytes"] for x in rows if "role" in x) / total if total else None,
    "by_role": dict(sorted(by_role.items(), key=lambda kv: -kv[1])),
    "deepest_frames": max((len(x.get("stack") or []) for x in rows), default=0),
    "host_first_touched_bytes": sum(touched.values()),
    "host_share_with_role": (1 - touched.get("other", 0) / sum(touched.values())) if touched else None,
    "host_by_role": dict(sorted(touched.items(), key=lambda kv: -kv[1])),
}))
