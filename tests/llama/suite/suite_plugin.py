# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A pytest plugin that runs llama.cpp's own server test suite
(tools/server/tests of the bundle's source) on this machine's models, and
writes down what the suite did, for tools/llama-suite.sh to hold against
gpumemtrace's recordings.

- Models are never downloaded: every preset's Hugging Face model becomes a
  local file of SUITE_MODELS (tiny random-weight models written by
  tools/tiny-gguf.mjs), so tests whose answers need the real weights fail,
  the same way with and without the tracer.
- SUITE_LOG gets a JSON line for each server started (its pid and port, the
  test) and for each HTTP request the suite's clients made that an answer
  came back to (method, path, port, status), through requests and aiohttp.

Loaded with `-p suite_plugin` (PYTHONPATH holding this directory and the
stubs of tests/llama/suite/stubs)."""
import json
import os
import threading
import time
from urllib.parse import urlsplit

import pytest

_lock = threading.Lock()
_test = {"name": None}


def _log(**rec):
    path = os.environ.get("SUITE_LOG")
    if not path:
        return
    rec["t"] = time.time()
    rec["test"] = _test["name"]
    with _lock, open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def _model(repo, hf_file):
    """the local model for a preset's Hugging Face model"""
    d = os.environ["SUITE_MODELS"]
    name = f"{repo or ''} {hf_file or ''}"
    if "moe" in name.lower():
        return os.path.join(d, "moe.gguf") if os.path.exists(os.path.join(d, "moe.gguf")) \
            else os.path.join(d, "tiny.gguf")
    return os.path.join(d, "tiny.gguf")


def _patch_utils():
    import utils

    utils.ServerPreset.load_all = staticmethod(lambda: None)
    start = utils.ServerProcess.start

    def local_start(self, *a, **k):
        if self.model_hf_repo or self.model_hf_file or self.model_url:
            self.model_file = _model(self.model_hf_repo, self.model_hf_file)
            self.model_hf_repo = self.model_hf_file = self.model_url = None
        if getattr(self, "model_draft", None) and not os.path.exists(self.model_draft):
            self.model_draft = _model(None, self.model_draft)
        self.mmproj_url = None
        try:
            return start(self, *a, **k)
        finally:
            if self.process is not None:
                _log(ev="server", pid=self.process.pid, port=self.server_port)

    utils.ServerProcess.start = local_start


def _patch_clients():
    import requests

    send = requests.adapters.HTTPAdapter.send

    def logged_send(self, req, *a, **k):
        u = urlsplit(req.url)
        try:
            r = send(self, req, *a, **k)
        except Exception:
            raise
        _log(ev="request", method=req.method, path=u.path or "/", port=u.port,
             status=r.status_code, client="requests")
        return r

    requests.adapters.HTTPAdapter.send = logged_send
    try:
        import aiohttp
    except ImportError:
        return
    request = aiohttp.ClientSession._request

    async def logged_request(self, method, url, *a, **k):
        r = await request(self, method, url, *a, **k)
        u = urlsplit(str(url))
        _log(ev="request", method=method.upper(), path=u.path or "/", port=u.port,
             status=r.status, client="aiohttp")
        return r

    aiohttp.ClientSession._request = logged_request


def pytest_configure(config):
    _patch_clients()
    _patch_utils()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _test["name"] = item.nodeid
    yield
    _test["name"] = None
