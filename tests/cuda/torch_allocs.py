# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""PyTorch allocations for tests/cuda/run.sh, made after the tracer attached.

With PYTORCH_NO_CUDA_MEMORY_CACHING=1 every tensor is its own cudaMalloc and
every del its cudaFree, so the counts are exact; with expandable segments the
allocator grows by cuMemCreate/cuMemMap instead.
usage: torch_allocs.py READY GO OUT HOLD"""
import json
import os
import sys

import torch

ready, go, out, hold = sys.argv[1:5]
MIB = 1 << 20
torch.cuda.init()
warm = torch.empty(1, device="cuda")  # the context and the allocator's setup
del warm
torch.cuda.synchronize()
with open(ready, "w") as f:
    f.write("ready\n")
with open(go) as f:
    f.read(1)

sizes = [(i + 1) * 2 * MIB for i in range(8)]
tensors = [torch.empty(s, dtype=torch.uint8, device="cuda") for s in sizes]
torch.cuda.synchronize()
for i in range(4):
    tensors[i] = None
torch.cuda.synchronize()
live = sum(sizes[4:])
exact = os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1"
expect = {"api": "CUDA", "exact": exact, "tensor_bytes": sum(sizes), "live_tensor_bytes": live,
          "by_kind": [{"kind": "device", "allocs": 8, "frees": 4, "failed": 0,
                       "alloc_bytes": sum(sizes), "live_bytes": live}] if exact else []}
with open(out, "w") as f:
    json.dump(expect, f)
with open(hold) as f:
    f.read(1)
