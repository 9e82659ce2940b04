#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A client of a few plain requests, each in turn on its own connection:
prints what it sent and what came back, as JSON, for the test to hold the
tracer's requests against.

  sends.py PORT REQUEST...   (REQUEST: "GET /path?query" or
                              "POST /path {json body}")
"""
import json
import sys
import urllib.error
import urllib.request


def main():
    port, out = sys.argv[1], []
    for spec in sys.argv[2:]:
        method, rest = spec.split(" ", 1)
        path, _, body = rest.partition(" ")
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                     data=body.encode() if body else None,
                                     headers={"Content-Type": "application/json"} if body else {})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                status, got = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, got = e.code, e.read()
        out.append({"method": method, "path": path.split("?")[0], "status": status,
                    "bytes": len(got)})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
