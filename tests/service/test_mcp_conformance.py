"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, Node 22) against a live
``cortex serve``: every scenario that applies passes; those that need the suite's own fixture tools are listed in
``tests/fixtures/mcp/conformance-expected-failures.yml`` (the suite fails when one of them starts passing too)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from cortex import Cortex
from cortex.service.http import create_app
from cortex.service.server import LOOPBACK_NAMES

EXPECTED = Path(__file__).parent.parent / "fixtures" / "mcp" / "conformance-expected-failures.yml"
#: the scenarios that apply to Cortex, all passing (docs/service.md gives the score)
PASSING = ("server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list",
           "tools-call-simple-text", "tools-call-error", "resources-list", "prompts-list",
           "dns-rebinding-protection")
NODE, SUITE = os.environ.get("CORTEX_NODE22"), os.environ.get("CORTEX_MCP_CONFORMANCE")


@pytest.mark.clients
def test_conformance_suite(tmp_path: Path) -> None:
    if not (NODE and SUITE):
        reason = "CORTEX_NODE22 and CORTEX_MCP_CONFORMANCE (node 22 and the suite's bin) are not set"
        if os.environ.get("CORTEX_REQUIRE_CLIENTS") == "1":
            pytest.fail(f"CORTEX_REQUIRE_CLIENTS=1 but {reason}")
        pytest.skip(reason)
    # the suite sends no token: the app of `cortex serve` without a token store (on loopback only, in the test)
    cx = Cortex.open(tmp_path / "store", embeddings=None)
    cx.agents.register("alice", description="first")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(cx, web=False, allowed_hosts=LOOPBACK_NAMES), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        out = tmp_path / "results"
        run = subprocess.run([NODE, SUITE, "server", "--url", f"http://127.0.0.1:{port}/mcp", "--expected-failures",
                              str(EXPECTED), "-o", str(out)], capture_output=True, text=True, timeout=240,
                             check=False)
    finally:
        server.should_exit = True
        thread.join(30)
        cx.close()
    report = run.stdout + run.stderr
    assert run.returncode == 0, report[-4000:]
    passed = [line for line in report.splitlines() if line.startswith("✓") and " 0 failed" in line and " 0 passed" not in line]
    names = sorted(line[2:].split(":")[0] for line in passed)
    assert names == sorted(PASSING), report[-4000:]
    assert out.exists() and any(out.rglob("*.json")), json.dumps(sorted(map(str, out.rglob("*"))))
