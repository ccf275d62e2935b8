"""Service benchmark: the CLI and the hooks as a coding-agent session runs them, with the embedding model
installed (the default provider is the local model), and the HTTP and MCP round trips.

    python bench/service.py            # ~5 minutes
    python bench/service.py --quick    # 10k memories for the HTTP/MCP part instead of 100k
    python bench/service.py --install  # also a fresh `pip install` of the default set (time, size)

Every command is a real process (``python -m cortex``, the console script's entry point), timed from process
start to its output. Baseline in the same run: ``python -c pass`` (interpreter start alone).

* ``cortex --version`` and ``cortex --help``.
* ``cortex store`` and ``cortex search`` (hybrid, the default model) at 10k memories: without a server (each
  command loads the model), then through a running ``cortex serve``.
* ``cortex hook claude SubagentStart`` for an agent with 10k memories: without a server (the hook opens the store,
  lexical ranking) and with one.
* The hooks right after a server starts, while its model is still loading: they must not wait for it.
* HTTP ``GET /v1/agents/{agent}/memories?query=...`` (AND-token recall) and MCP ``search_memories`` (bm25) round
  trips at 100k memories for the agent.

Large agents are filled with the ``hash`` provider's vectors, so the server does not spend the run embedding them
with the model (their semantic search falls back to bm25); the agent searched from the CLI has real vectors.
Targets are ratios to ``python -c pass`` where the issue gives them so. Prints a table and writes
bench/results/service.json.
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


def make_project(root: Path, sizes: dict[str, int], embedded: dict[str, int]) -> None:
    """Agents with ``sizes`` memories (hash vectors) and ``embedded`` ones (vectors of the local model)."""
    (root / ".git").mkdir(parents=True)
    (root / "agent_defs").mkdir()
    corpus = Corpus()
    for provider, agents in (("hash", sizes), ("local", embedded)):
        with Cortex.open(root / ".cortex" / "store", embeddings=provider) as cx:
            for name, n in agents.items():
                (root / "agent_defs" / f"{name}.md").write_text(AGENT_MD.format(name=name))
                cx.agents.register(name)
                contents = corpus.contents(n)
                for start in range(0, n, 50_000):
                    cx.store_many(name, [{"content": c} for c in contents[start : start + 50_000]])


def run_process(args: list[str], cwd: Path, stdin: str, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, env=env, check=True).stdout
    return time.perf_counter() - t0, out


def command_latency(project: Path, env: dict[str, str], runs: int, *args: str, stdin: str = "") -> dict:
    times = [run_process([sys.executable, "-m", "cortex", *args], project, stdin, env)[0] for _ in range(runs)]
    return percentiles(times)


def cli_commands(project: Path, env: dict[str, str], runs: int, words: list[str]) -> dict:
    """``cortex store`` / ``cortex search`` (hybrid, the default model) as new processes: each loads the model
    itself when no server runs, or goes through the running one."""
    rng = random.Random(5)
    out: dict = {}
    out["store"] = percentiles([run_process(
        [sys.executable, "-m", "cortex", "store", "embedded", " ".join(rng.sample(words, 8))], project, "", env)[0]
        for _ in range(runs)])
    searches = []
    for _ in range(runs):
        elapsed, found = run_process([sys.executable, "-m", "cortex", "search", "embedded",
                                      " ".join(rng.sample(words, 3))], project, "", env)
        assert json.loads(found)["mode"] == "hybrid", found[:300]
        searches.append(elapsed)
    out["search"] = percentiles(searches)
    return out


def fresh_install(repo: Path) -> dict:
    """``pip install <repo>`` (the default set, no extras) into a new virtualenv: seconds and megabytes."""
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        t0 = time.perf_counter()
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(repo)], check=True)
        seconds = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
        return {"seconds": seconds, "mib": size / 2**20}


def hooks_while_the_model_loads(project: Path, env: dict[str, str]) -> dict:
    """A server just started (its model loading in the background): SubagentStop and SubagentStart at once."""
    process, info = start_server(project, env)
    times = []
    try:
        for i in range(5):
            stop = json.dumps({"cwd": str(project), "hook_event_name": "SubagentStop", "agent_type": "hook10k",
                               "last_assistant_message": f"LEARNED: captured while the model loads {i}"})
            times.append(run_process([sys.executable, "-m", "cortex", "hook", "claude", "SubagentStop"], project,
                                     stop, env)[0])
            start = json.dumps({"cwd": str(project), "hook_event_name": "SubagentStart", "agent_type": "hook10k",
                                "prompt": "what was captured while the model loads"})
            times.append(run_process([sys.executable, "-m", "cortex", "hook", "claude", "SubagentStart"], project,
                                     start, env)[0])
        health = httpx.get(f"{info['url']}/v1/info", headers={"Authorization": f"Bearer {info['token']}"}).json()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    result = percentiles(times)
    result["max_ms"] = max(times) * 1000
    result["embeddings"] = health.get("embeddings")
    return result


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


def shared_server_memory(root: Path, env: dict[str, str], stores: int = 3) -> dict:
    """Resident memory of the user's background server serving ``stores`` stores (the model loaded once) against
    one ``cortex serve`` per store, each store with 1k memories and the default model loaded."""
    projects = []
    for i in range(stores):
        project = root / f"shared{i}"
        make_project(project, {}, {"embedded": 1_000})
        projects.append(project)
    env = env | {"CORTEX_SERVERS_DIR": str(root / "servers")}
    script = ("import sys, time\nfrom pathlib import Path\nfrom cortex.service.connect import ensure_server\n"
              "c = ensure_server(Path(sys.argv[1]), agent_dirs=[Path(sys.argv[2])])\n"
              "while c.search('embedded', 'warm up').mode != 'hybrid':\n    time.sleep(0.2)\n")
    for project in projects:
        subprocess.run([sys.executable, "-c", script, str(project / ".cortex" / "store"), str(project / "agent_defs")],
                       cwd=project, env=env, check=True, capture_output=True, text=True)
    pid = json.loads((projects[0] / ".cortex" / "store" / "cortex-server.json").read_text())["pid"]
    time.sleep(2)  # the model loaded in the background; the stores' housekeeping done
    shared = _rss_mib(pid)
    subprocess.run([sys.executable, "-m", "cortex", "server", "stop", "--all"], cwd=projects[0], env=env, check=True,
                   capture_output=True)
    separate = []
    for project in projects:
        process, info = start_server(project, env)
        httpx.get(f"{info['url']}/v1/agents/embedded/search", params={"query": "warm up"},
                  headers={"Authorization": f"Bearer {info['token']}"}, timeout=60)
        time.sleep(2)
        separate.append((process, _rss_mib(process.pid)))
    for process, _ in separate:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    return {"stores": stores, "shared_mib": shared, "separate_mib": sum(r or 0 for _, r in separate)}


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--install", action="store_true", help="also time a fresh `pip install` of the project")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    big = 10_000 if args.quick else 100_000
    # as on a user's machine: the default embeddings (the model, when installed) and bytecode caches written
    env = {k: v for k, v in os.environ.items() if k not in ("CORTEX_STORE", "CORTEX_TOKEN", "CORTEX_EMBEDDINGS",
                                                            "PYTHONDONTWRITEBYTECODE")}
    results: dict = {"big": big}
    rng = random.Random(3)
    words = Corpus().words[:400]
    queries = [" ".join(rng.sample(words, rng.randint(1, 2))) for _ in range(300)]
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        t0 = time.perf_counter()
        make_project(project, {"hook10k": 10_000, "big": big}, {"embedded": 10_000})
        results["setup_s"] = time.perf_counter() - t0
        results["python_start"] = percentiles([run_process([sys.executable, "-c", "pass"], project, "", env)[0]
                                               for _ in range(args.runs)])
        results["version"] = command_latency(project, env, args.runs, "--version")
        results["help"] = command_latency(project, env, args.runs, "--help")
        results["hook_without_server"] = hook_latency(project, env, args.runs)
        results["cli_without_server"] = cli_commands(project, env, args.runs, words)
        process, info = start_server(project, env)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:  # the server's model loaded
                _, found = run_process([sys.executable, "-m", "cortex", "search", "embedded", "warm up"], project,
                                       "", env)
                if json.loads(found)["mode"] == "hybrid":
                    break
                time.sleep(0.5)
            results["cli_with_server"] = cli_commands(project, env, args.runs, words)
            results["hook_with_server"] = hook_latency(project, env, args.runs)
            results["http_recall"] = http_recall(info, "big", queries)
            results["mcp_search"] = mcp_search(info, "big", queries)
            results["server_rss_mib"] = _rss_mib(process.pid)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        results["hooks_while_model_loads"] = hooks_while_the_model_loads(project, env)
        results["background_server"] = shared_server_memory(Path(tmp), env)
    if args.install:
        results["install"] = fresh_install(Path(__file__).resolve().parents[1])
    base = results["python_start"]["p50_ms"]

    def x(n: float) -> str:
        return f"<= {n:g}x ({n * base:.0f})"

    rows = [
        ("python -c pass (interpreter start, baseline)", "", results["python_start"]),
        ("cortex --version", x(2), results["version"]),
        ("cortex --help", x(2), results["help"]),
        ("cortex store, no server (model loaded by the command)", "<= 600 ms", results["cli_without_server"]["store"]),
        ("cortex search (hybrid), no server", "<= 600 ms", results["cli_without_server"]["search"]),
        ("cortex store through a running server", x(3), results["cli_with_server"]["store"]),
        ("cortex search (hybrid) through a running server", x(3), results["cli_with_server"]["search"]),
        ("hook SubagentStart, 10k memories, no server", x(5), results["hook_without_server"]),
        ("hook SubagentStart, 10k memories, server running", x(3), results["hook_with_server"]),
        ("hooks while the server's model loads", "no wait", results["hooks_while_model_loads"]),
        (f"HTTP recall round trip, {big:,} memories", "<= 5 ms", results["http_recall"]),
        (f"MCP search_memories over streamable HTTP, {big:,} memories", "<= 15 ms", results["mcp_search"]),
    ]
    print_table("Service latency", [(name, target, f"{r['p50_ms']:.1f}", f"{r['p50_ms'] / base:.1f}x",
                                     f"{r['p95_ms']:.1f}") for name, target, r in rows],
                ("what", "target (p50)", "p50 ms", "p50 / python", "p95 ms"))
    print(f"hooks while the model loads: max {results['hooks_while_model_loads']['max_ms']:.0f} ms; server resident "
          f"memory {results['server_rss_mib']:.0f} MiB")
    shared = results["background_server"]
    print(f"the user's background server serving {shared['stores']} stores (1k memories each, model loaded): "
          f"{shared['shared_mib']:.0f} MiB resident; one `cortex serve` per store: {shared['separate_mib']:.0f} MiB "
          "in all")
    if args.install:
        print(f"fresh install of the default set: {results['install']['seconds']:.0f} s (target <= 60 s), "
              f"{results['install']['mib']:.0f} MiB (target <= 350 MB)")
    target = write_json("service", results, args.json)
    print(f"results written to {target}")
    return results


def _rss_mib(pid: int) -> float | None:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


if __name__ == "__main__":
    main()
