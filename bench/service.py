"""Service benchmark: hook latency end to end, HTTP recall and MCP search round trips.

    python bench/service.py            # ~3 minutes
    python bench/service.py --quick    # 10k memories for the HTTP/MCP part instead of 100k

* ``cortex hook claude SubagentStart`` as a process (``python -m cortex``, the console script's entry point),
  from process start to JSON on stdout, for an agent with 10k memories: without a server (the hook opens the
  store) and with one. Baseline in the same run: ``python -c pass`` (interpreter start alone).
* HTTP ``GET /v1/agents/{agent}/memories?query=...`` (AND-token recall, limit 10) round trip over loopback
  with a keep-alive client, at 100k memories for the agent.
* MCP ``search_memories`` over streamable HTTP (the real ``mcp.Client``) at the same size.

Embeddings are off (``CORTEX_EMBEDDINGS=none``) so that the figures isolate the service; bench/retrieval.py
measures hybrid search. Prints a table and writes bench/results/service.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, percentiles, print_table, write_json  # noqa: E402

from cortex import Cortex  # noqa: E402

AGENT_MD = "---\nname: {name}\ndescription: bench agent\nmemory: true\n---\nbody\n"


def make_project(root: Path, sizes: dict[str, int]) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "agent_defs").mkdir()
    corpus = Corpus()
    with Cortex.open(root / ".cortex" / "store", embeddings=None) as cx:
        for name, n in sizes.items():
            (root / "agent_defs" / f"{name}.md").write_text(AGENT_MD.format(name=name))
            cx.agents.register(name)
            contents = corpus.contents(n)
            for start in range(0, n, 50_000):
                cx.store_many(name, [{"content": c} for c in contents[start : start + 50_000]])


def run_process(args: list[str], cwd: Path, stdin: str, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, env=env, check=True).stdout
    return time.perf_counter() - t0, out


def hook_latency(project: Path, env: dict[str, str], runs: int) -> dict:
    payload = json.dumps({"cwd": str(project), "hook_event_name": "SubagentStart", "agent_type": "hook10k",
                          "agent_id": "x"})
    args = [sys.executable, "-m", "cortex", "hook", "claude", "SubagentStart"]
    run_process(args, project, payload, env)  # warm the OS cache
    times = []
    for _ in range(runs):
        elapsed, out = run_process(args, project, payload, env)
        assert "additionalContext" in json.loads(out)["hookSpecificOutput"], out
        times.append(elapsed)
    return percentiles(times)


def start_server(project: Path, env: dict[str, str]) -> tuple[subprocess.Popen, dict]:
    process = subprocess.Popen([sys.executable, "-m", "cortex", "serve", "--port", "0"], cwd=project, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    discovery = project / ".cortex" / "store" / "cortex-server.json"
    for _ in range(1200):
        try:
            info = json.loads(discovery.read_text())
            if info["pid"] == process.pid and httpx.get(f"{info['url']}/healthz").status_code == 200:
                return process, info
        except (OSError, ValueError, KeyError, httpx.HTTPError):
            time.sleep(0.05)
    raise RuntimeError("server did not start")


def http_recall(info: dict, agent: str, queries: list[str]) -> dict:
    headers = {"Authorization": f"Bearer {info['token']}"}
    times = []
    with httpx.Client(base_url=info["url"], headers=headers) as client:
        for q in queries[:20]:
            client.get(f"/v1/agents/{agent}/memories", params={"query": q})
        for q in queries:
            t0 = time.perf_counter()
            response = client.get(f"/v1/agents/{agent}/memories", params={"query": q, "limit": 10})
            times.append(time.perf_counter() - t0)
            response.raise_for_status()
    return percentiles(times)


def mcp_search(info: dict, agent: str, queries: list[str]) -> dict:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> list[float]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {info['token']}"})
        async with http, Client(streamable_http_client(f"{info['url']}/mcp", http_client=http)) as client:
            for q in queries[:20]:
                await client.call_tool("search_memories", {"agent": agent, "query": q, "mode": "bm25"})
            times = []
            for q in queries:
                t0 = time.perf_counter()
                result = await client.call_tool("search_memories", {"agent": agent, "query": q, "mode": "bm25"})
                times.append(time.perf_counter() - t0)
                assert not result.is_error, result.content
            return times

    return percentiles(asyncio.run(main()))


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    big = 10_000 if args.quick else 100_000
    env = {k: v for k, v in os.environ.items() if k not in ("CORTEX_STORE", "CORTEX_TOKEN")}
    env["CORTEX_EMBEDDINGS"] = "none"
    results: dict = {"big": big}
    rng = random.Random(3)
    words = Corpus().words[:400]
    queries = [" ".join(rng.sample(words, rng.randint(1, 2))) for _ in range(300)]
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        t0 = time.perf_counter()
        make_project(project, {"hook10k": 10_000, "big": big})
        results["setup_s"] = time.perf_counter() - t0
        results["python_start"] = percentiles([run_process([sys.executable, "-c", "pass"], project, "", env)[0]
                                               for _ in range(args.runs)])
        results["hook_without_server"] = hook_latency(project, env, args.runs)
        process, info = start_server(project, env)
        try:
            results["hook_with_server"] = hook_latency(project, env, args.runs)
            results["http_recall"] = http_recall(info, "big", queries)
            results["mcp_search"] = mcp_search(info, "big", queries)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
    rows = [
        ("python -c pass (interpreter start, baseline)", "", results["python_start"]),
        ("hook SubagentStart, 10k memories, no server", "<= 250 ms", results["hook_without_server"]),
        ("hook SubagentStart, 10k memories, server running", "<= 120 ms", results["hook_with_server"]),
        (f"HTTP recall round trip, {big:,} memories", "<= 5 ms", results["http_recall"]),
        (f"MCP search_memories over streamable HTTP, {big:,} memories", "<= 15 ms", results["mcp_search"]),
    ]
    print_table("Service latency", [(name, target, f"{r['p50_ms']:.1f}", f"{r['p95_ms']:.1f}")
                                    for name, target, r in rows], ("what", "target (p50)", "p50 ms", "p95 ms"))
    target = write_json("service", results, args.json)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
