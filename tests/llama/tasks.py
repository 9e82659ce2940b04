#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Requests of several tasks each, one after the other: a streamed chat
completion with n = 2 choices, a /completion with n_cmpl = 2 (an array of
two results), a chat completion with n = 2 not streamed. For each, the
server's /metrics counters before and after (tokens_predicted_total,
prompt_tokens_total) and the figures its answer gave: every timings object
it held, the last per task index. Prints JSON.

  tasks.py PORT
"""
import http.client
import json
import re
import sys

GRAMMAR = {"grammar": "root ::= [a-z ]+", "ignore_eos": True, "temperature": 0.8}


def metrics(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    out = {}
    for name in ("tokens_predicted_total", "prompt_tokens_total"):
        m = re.search(r"^llamacpp:%s (\S+)" % name, text, re.M)
        out[name] = float(m.group(1)) if m else None
    return out


def objects(body, stream):
    """the JSON objects of an answer: the events of a stream, else the one"""
    if not stream:
        d = json.loads(body)
        return d if isinstance(d, list) else [d]
    return [json.loads(line[6:]) for line in body.splitlines()
            if line.startswith("data: {")]


def index_of(o):
    if "index" in o:
        return o["index"]
    ch = o.get("choices") or [{}]
    return ch[-1].get("index", 0)


def main():
    port = int(sys.argv[1])
    cases = [
        ("/v1/chat/completions", True, {"messages": [{"role": "user", "content": "hi there"}],
                                        "max_tokens": 7, "n": 2}),
        ("/completion", False, {"prompt": "hi there", "n_predict": 7, "n_cmpl": 2}),
        ("/v1/chat/completions", False, {"messages": [{"role": "user", "content": "hi you"}],
                                         "max_tokens": 7, "n": 2}),
    ]
    out = []
    for path, stream, body in cases:
        before = metrics(port)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("POST", path, json.dumps({**GRAMMAR, **body, "stream": stream}),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        after = metrics(port)
        last = {}
        for o in objects(text, stream):
            if "timings" in o:
                last[index_of(o)] = o["timings"]
        out.append({
            "path": path, "stream": stream, "status": r.status,
            "choices": len(json.loads(text).get("choices", [])) if not stream and
            text.startswith("{") else None,
            "answer": {"predicted_n": sum(t["predicted_n"] for t in last.values()),
                       "prompt_n": sum(t["prompt_n"] for t in last.values()),
                       "tasks": len(last)},
            "metrics": {"predicted": after["tokens_predicted_total"] -
                        before["tokens_predicted_total"],
                        "prompt": after["prompt_tokens_total"] - before["prompt_tokens_total"]},
        })
    print(json.dumps(out))


if __name__ == "__main__":
    main()
