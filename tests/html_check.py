#!/usr/bin/env python3
"""The page of replay --html, as headless Chromium left its DOM, against
the JSON report of the same recording (tests/html.sh). Prints what
differs, a line each, and exits 1 if anything does; else a summary.

    html_check.py DOM REPORT.json
"""
import json
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    """the elements the checks read: their attributes and text"""

    def __init__(self):
        super().__init__()
        self.tags = []  # (tag, attrs) of every element
        self.stack = []  # open elements: [tag, attrs, text]
        self.texts = {}  # id(attrs) -> text

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag not in ("br", "meta", "img", "input", "hr", "link"):
            self.stack.append([tag, a, ""])

    def handle_endtag(self, tag):
        while self.stack:
            t, a, text = self.stack.pop()
            self.texts[id(a)] = text
            if self.stack:
                self.stack[-1][2] += text
            if t == tag:
                break

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2] += data

    def text(self, a):
        return self.texts.get(id(a), "")

    def find(self, tag=None, cls=None, **want):
        out = []
        for t, a in self.tags:
            if tag and t != tag:
                continue
            if cls and cls not in (a.get("class") or "").split():
                continue
            if all(a.get(k.replace("_", "-")) == v for k, v in want.items()):
                out.append(a)
        return out


def main():
    page = Page()
    page.feed(open(sys.argv[1], encoding="utf-8").read())
    page.close()
    r = json.load(open(sys.argv[2], encoding="utf-8"))
    bad = []
    body = page.find("body")[0]
    if body.get("data-rendered") != "ok" or "data-error" in body:
        bad.append(f"not drawn: {body}")

    # the verdicts: the report's, in its order and words
    want = [f for f in r["findings"] if f["kind"] not in ("steady", "not_judged")]
    got = page.find("div", cls="verdict")
    if [(a["data-kind"], a["data-category"]) for a in got] != [
        (f["kind"], f["category"]) for f in want
    ]:
        bad.append(f"verdicts {[(a['data-kind'], a['data-category']) for a in got]}, "
                   f"the report's {[(f['kind'], f['category']) for f in want]}")
    msgs = [page.text(a) for a in page.find("p", cls="msg")]
    for f, m in zip(want, msgs):
        if m != f["message"][:1].upper() + f["message"][1:]:
            bad.append(f"message {m!r}, the report's {f['message']!r}")

    for p in r["processes"]:
        pid = str(p["pid"])
        # per category at the end: the host heap is rss.anon's end, GPU
        # API memory gpu.by_kind's live bytes
        rows = {a["data-category"]: a for a in page.find("tr")
                if "data-category" in a and "data-end" in a}
        checks = {}
        if p["rss"].get("anon"):
            checks["host_anon"] = p["rss"]["anon"]["end_bytes"]
        for k in (p["gpu"] or {}).get("by_kind", []):
            if k["api"] == "Vulkan" and k["kind"] in ("device", "host-pinned"):
                checks["vulkan_" + ("device" if k["kind"] == "device" else "host")] = \
                    k["live_bytes"]
        for cat, v in checks.items():
            if cat in rows and int(float(rows[cat]["data-end"])) != v:
                bad.append(f"pid {pid} {cat} at the end {rows[cat]['data-end']}, "
                           f"the report's {v}")
            elif cat not in rows and v:
                bad.append(f"pid {pid}: no row for {cat} ({v})")
        # the flame graph's GPU bytes: the same in-use bytes (one process)
        flame = {a["data-category"]: int(a["data-bytes"]) for a in page.find("g")
                 if a.get("data-category")}
        v = checks.get("vulkan_device")
        if v and len(r["processes"]) == 1 and flame.get("vulkan_device") != v:
            bad.append(f"flame graph vulkan_device {flame.get('vulkan_device')}, "
                       f"the report's {v}")
        # requests: their number, and each one's figures
        note = page.find(id=f"requests-{pid}")
        if not note or int(note[0]["data-total"]) != len(p["requests"]):
            bad.append(f"pid {pid}: requests {note and note[0]['data-total']}, "
                       f"the report's {len(p['requests'])}")
        rows = page.find("tr", cls=None)
        rows = [a for a in rows if "data-nth" in a]
        if note and int(note[0]["data-shown"]) == len(p["requests"]):
            for a, q in zip(rows, p["requests"]):
                for key, field in (("data-rate", "decode_tokens_per_s"),
                                   ("data-prompt", "prompt_tokens"),
                                   ("data-generated", "generated_tokens")):
                    v = q[field]
                    if (a.get(key) is None) != (v is None) or (
                            v is not None and float(a[key]) != float(v)):
                        bad.append(f"request {a['data-nth']} {field} {a.get(key)}, "
                                   f"the report's {v}")
    for b in bad:
        print("# " + b)
    if not bad:
        print(f"# {len(want)} verdicts, {sum(len(p['requests']) for p in r['processes'])} "
              f"requests, categories and rates as the report's")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
