# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A PyTorch "inference server" with the bugs the verdicts must find, served
# over HTTP one request at a time (so gpumemtrace sees each request):
#   unchanged  temporaries only: steady
#   leak       keeps each request's 64 MiB output: a CUDA device leak
#   keep3      keeps the last three outputs: a bounded cache of 192 MiB
#   graph      captures and keeps a CUDA graph per request: graph
#              executables and their memory pools grow
#   graphops   the same with a graph of 3000 in-place kernels and no tensor
#              of its own: only the driver's memory for the graph grows,
#              which no allocation call shows
# usage: python3 server_variants.py VARIANT PORTFILE
import http.server
import sys

import torch

variant, portfile = sys.argv[1], sys.argv[2]
dev = torch.device("cuda")
weights = torch.randn(4096, 4096, device=dev)
kept = []
MB64 = 64 << 20


state = torch.zeros(256 * 1024, device=dev)


def serve_one():
    x = torch.randn(1024, 4096, device=dev)
    if variant == "graphops":
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            state.add_(1)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for _ in range(3000):
                state.add_(1)
        g.replay()
        kept.append(g)
        return float(state[0])
    if variant == "graph":
        static_in = torch.randn(1024, 4096, device=dev)
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            (static_in @ weights).relu()  # warm-up on a side stream, as PyTorch asks
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            static_out = (static_in @ weights).relu()
        static_in.copy_(x)
        for _ in range(200):
            g.replay()
        kept.append((g, static_in, static_out))
        return float(static_out.sum())
    y = (x @ weights).relu()
    for _ in range(200):  # work enough for a few NVML samples a request
        y = (y @ weights).relu() / 4096
    if variant in ("leak", "keep3"):
        kept.append(y.repeat(4, 1))  # 4096 x 4096 floats: 64 MiB
        if variant == "keep3" and len(kept) > 3:
            kept.pop(0)
    return float(y.sum())


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"value": %f}' % serve_one()
        torch.cuda.synchronize()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(portfile, "w") as f:
    f.write("%d\n" % srv.server_address[1])
srv.serve_forever()
