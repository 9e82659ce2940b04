# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""compare.py REPORT EXPECTED: gpumemtrace's gpu.by_kind against what a test
program did, field by field; prints both and exits 1 on any difference."""
import json
import sys

report, expected = (json.load(open(p)) for p in sys.argv[1:3])
gpu = report["processes"][0].get("gpu") or {}
seen = {k["kind"]: k for k in gpu.get("by_kind", []) if k["api"] == expected["api"]}
ok = True
fields = ("allocs", "frees", "failed", "alloc_bytes", "live_bytes")
for want in expected["by_kind"]:
    got = seen.get(want["kind"], {})
    diff = [f for f in fields if got.get(f) != want[f]]
    print("  %-13s %s %s" % (want["kind"], "ok  " if not diff else "DIFF",
                             " ".join("%s=%s/%s" % (f, got.get(f), want[f]) for f in fields)))
    ok &= not diff
if not expected.get("exact", True):
    # expandable segments: the allocator maps physical chunks under the tensors
    mapped = seen.get("vmm-mapped", {}).get("alloc_bytes", 0)
    phys = seen.get("vmm-physical", {}).get("allocs", 0)
    print("  vmm: %d cuMemCreate, %d bytes mapped for %d bytes of tensors"
          % (phys, mapped, expected["tensor_bytes"]))
    ok &= phys > 0 and mapped >= expected["tensor_bytes"]
print("  unknown frees: %s, lost events: %s" % (gpu.get("unknown_frees"),
                                                report["lost_events"]["total"]))
ok &= report["lost_events"]["total"] == 0
for f in gpu.get("failures", []):
    print("  failure: %s(%d) -> %s, stack: %s" % (
        f["call"], f["size_bytes"], f["result_name"],
        " < ".join(fr["symbol"] or fr["module"] for fr in (f["stack"] or [])[:4])))
sys.exit(0 if ok else 1)
