"""Startup benchmark: what a new process costs, with no server running and an agent with 10k memories.

    python bench/startup.py                          # 10k memories, 15 runs of each command
    python bench/startup.py --runs 30 --memories 10000
    python bench/startup.py --base /work/wt-base     # also an older checkout, interleaved run by run

Every command is a new process, timed from its start to its exit, as a coding agent or a user runs it:

* ``python -c pass``: the interpreter alone (the baseline every ratio is taken to);
* ``python -c "import cortex"``;
* the ``SessionStart`` hook and the ``SubagentStart`` hook, run as Claude Code runs them: the command
  ``cortex install claude`` writes into ``.claude/settings.json`` (:func:`cortex.service.install.hook_command`),
  through ``sh -c``, with ``$CORTEX_BIN`` naming a console script of this interpreter and the payload on stdin.
  ``SubagentStart`` is measured twice: with the task Claude Code gives it (read from the parent transcript's
  ``Agent`` tool call, so the block is ranked for it) and without one. Each run is a new session: its block is
  shown, and so touched, for the first time;
* the ``UserPromptSubmit`` hook (the recall at each prompt) with a substantive prompt (the task above) and with
  "ok, thanks", which its gate answers before the store is opened;
* ``cortex search AGENT QUERY`` (hybrid, falling back to bm25 when no model is configured) with the default
  embedding settings and with ``CORTEX_EMBEDDINGS=none``, and ``cortex recall AGENT QUERY``.

The memories are stored without embeddings (the hook ranks lexically whatever the settings: a model load costs
more than the whole hook budget). With ``--base DIR`` every command also runs with ``PYTHONPATH=DIR``, alternating
with this tree's run by run, so both see the same machine load. Prints a table (median, p90, and the median as a
multiple of the baseline's median) and writes bench/results/startup.json. ``--phases`` also runs the
``SubagentStart`` hook (with its task) in a process that times its phases (bench/startup_phases.py: the imports,
opening the store, loading the indexes, the block) and prints their medians: where a hook's time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, print_table, target_row, write_json  # noqa: E402

HERE = Path(__file__).resolve().parents[1]
AGENT = "hook10k"
AGENT_MD = f"---\nname: {AGENT}\ndescription: reviews code changes\nmemory: true\n---\nReview the diff.\n"
TASK = "Review the session cache change: check the token expiry and the null pointer handling in the auth module"
#: The targets of issue 31, as multiples of ``python -c pass``.
TARGETS = {"hook SessionStart": 5.0, "hook SubagentStart (task)": 5.0, "hook SubagentStart (no task)": 5.0,
           "hook UserPromptSubmit": 5.0,
           "cortex search": 10.0, "cortex search (embeddings none)": 10.0}


def make_project(root: Path, memories: int, tree: Path) -> None:
    """A project with the agent declared and ``memories`` memories (no embeddings), made by ``tree``'s Cortex."""
    (root / ".git").mkdir(parents=True)
    (root / "agent_defs").mkdir()
    (root / "agent_defs" / f"{AGENT}.md").write_text(AGENT_MD)
    contents = Corpus().contents(memories)
    script = ("import json, sys\nfrom cortex import Cortex\n"
              "with Cortex.open(sys.argv[1], embeddings=None) as cx:\n"
              f"    cx.agents.register({AGENT!r})\n"
              f"    cx.store_many({AGENT!r}, [{{'content': c}} for c in json.load(sys.stdin)])\n")
    subprocess.run([sys.executable, "-c", script, str(root / ".cortex" / "store")], input=json.dumps(contents),
                   text=True, check=True, env=_env(tree))
    # the parent session's transcript: its latest Agent tool call is the subagent's task
    call = {"type": "tool_use", "id": "toolu_1", "name": "Agent",
            "input": {"subagent_type": AGENT, "description": "review", "prompt": TASK}}
    (root / "parent.jsonl").write_text(json.dumps({"type": "assistant", "message": {"role": "assistant",
                                                                                   "content": [call]}}) + "\n")


def console_script(directory: Path) -> Path:
    """A ``cortex`` console script of this interpreter, as pip writes one (what ``$CORTEX_BIN`` names)."""
    script = directory / "cortex"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom cortex.__main__ import main\n"
                      "if __name__ == '__main__':\n    sys.exit(main())\n")
    script.chmod(0o755)
    return script


def _env(tree: Path, **extra: str) -> dict[str, str]:
    """The environment of a user's shell: bytecode caches written, no store or embeddings forced, ``tree``'s
    Cortex first on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("CORTEX_STORE", "CORTEX_TOKEN", "CORTEX_EMBEDDINGS",
                                                            "PYTHONDONTWRITEBYTECODE", "CORTEX_STATE_DIR")}
    env["PYTHONPATH"] = str(tree)
    return {**env, **extra}


def commands(project: Path, script: Path) -> dict[str, tuple[list[str], Any, dict[str, str]]]:
    """Each measured command: (argv, the payload on stdin or a function of the run number, extra environment)."""
    from cortex.service.install import hook_command  # noqa: PLC0415  (this tree's: the same command for both)

    py = sys.executable
    hook_env = {"CORTEX_BIN": str(script), "CLAUDE_CONFIG_DIR": str(project.parent)}

    def payload(event: str, **fields: Any) -> Any:
        return lambda run: json.dumps({"session_id": f"bench-{event}-{run}", "transcript_path": "",
                                       "cwd": str(project), "hook_event_name": event, **fields})

    return {
        "python -c pass": ([py, "-c", "pass"], "", {}),
        "import cortex": ([py, "-c", "import cortex"], "", {}),
        "hook SessionStart": (["sh", "-c", hook_command("SessionStart", AGENT)],
                              payload("SessionStart", source="startup"), hook_env),
        "hook SubagentStart (task)": (["sh", "-c", hook_command("SubagentStart")],
                                      payload("SubagentStart", agent_type=AGENT, agent_id="a1",
                                              transcript_path=str(project / "parent.jsonl")), hook_env),
        "hook SubagentStart (no task)": (["sh", "-c", hook_command("SubagentStart")],
                                         payload("SubagentStart", agent_type=AGENT, agent_id="a1"), hook_env),
        # the recall at each prompt (issue 33): a substantive prompt, and one its gate answers before the store
        "hook UserPromptSubmit": (["sh", "-c", hook_command("UserPromptSubmit", AGENT)],
                                  payload("UserPromptSubmit", prompt=TASK), hook_env),
        "hook UserPromptSubmit (ok)": (["sh", "-c", hook_command("UserPromptSubmit", AGENT)],
                                       payload("UserPromptSubmit", prompt="ok, thanks"), hook_env),
        "cortex search": ([py, "-m", "cortex", "search", AGENT, "session token cache"], "", {}),
        "cortex search (embeddings none)": ([py, "-m", "cortex", "search", AGENT, "session token cache"], "",
                                            {"CORTEX_EMBEDDINGS": "none"}),
        "cortex recall": ([py, "-m", "cortex", "recall", AGENT, "null pointer"], "", {}),
    }


def run_once(argv: list[str], stdin: str, cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the process and its children) and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, input=stdin, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, done.stdout


def check(name: str, out: str) -> None:
    """The command did its work: a hook answered with a block, a search or recall found something."""
    if name == "hook UserPromptSubmit (ok)":
        assert out.strip() == "", out[:300]  # the gate: nothing to add, nothing printed
    elif name.startswith("hook"):
        context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert context.startswith("<agent-memory>"), out[:300]
    elif name.startswith("cortex"):
        assert json.loads(out), out[:300]


def stats(samples: list[float], base: float | None) -> dict[str, Any]:
    """Median, p90 (ms) and the median as a multiple of ``base`` (ms)."""
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    median = statistics.median(ms)
    return {"median_ms": median, "p90_ms": p90, "x_python": median / base if base else None, "n": len(ms)}


def measure(trees: dict[str, Path], project: Path, runs: int) -> dict[str, dict[str, Any]]:
    """Every command of :func:`commands` ``runs`` times for each tree, interleaved (one warm-up run first)."""
    script = console_script(project.parent)
    table = commands(project, script)
    walls: dict[str, dict[str, list[float]]] = {t: {c: [] for c in table} for t in trees}
    cpus: dict[str, dict[str, list[float]]] = {t: {c: [] for c in table} for t in trees}
    for run in range(-1, runs):
        for name, (argv, stdin, extra) in table.items():
            for tree, path in trees.items():
                text = stdin(f"{tree}-{run}") if callable(stdin) else stdin
                wall, cpu, out = run_once(argv, text, project, _env(path, **extra))
                check(name, out)
                if run >= 0:
                    walls[tree][name].append(wall)
                    cpus[tree][name].append(cpu)
    results: dict[str, dict[str, Any]] = {}
    for tree in trees:
        base = statistics.median(walls[tree]["python -c pass"]) * 1000
        base_cpu = statistics.median(cpus[tree]["python -c pass"]) * 1000
        results[tree] = {name: {**stats(walls[tree][name], base),
                                "cpu_median_ms": statistics.median(cpus[tree][name]) * 1000,
                                "cpu_x_python": statistics.median(cpus[tree][name]) * 1000 / base_cpu}
                         for name in table}
    return results


def phases(project: Path, runs: int) -> dict[str, float]:
    """Median milliseconds of each phase of the ``SubagentStart`` hook (with its task), ``runs`` new processes."""
    samples: dict[str, list[float]] = {}
    for run in range(runs):
        payload = json.dumps({"session_id": f"bench-phases-{run}", "transcript_path": str(project / "parent.jsonl"),
                              "cwd": str(project), "hook_event_name": "SubagentStart", "agent_type": AGENT,
                              "agent_id": "a1"})
        done = subprocess.run([sys.executable, str(Path(__file__).parent / "startup_phases.py"), str(project),
                               "SubagentStart", payload], capture_output=True, text=True, check=True,
                              env=_env(HERE, CLAUDE_CONFIG_DIR=str(project.parent)))
        for name, ms in json.loads(done.stdout).items():
            samples.setdefault(name, []).append(ms)
    return {name: statistics.median(values) for name, values in samples.items()}


def why_slow(name: str, breakdown: dict[str, float] | None) -> str:
    """Why a command misses its target: where the hook's time goes (--phases), or the known cause."""
    if breakdown and name.startswith("hook"):
        total = sum(breakdown.values()) or 1.0
        top = sorted(breakdown.items(), key=lambda kv: -kv[1])[:3]
        return "in-process phases (SubagentStart): " + ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in top)
    if name.startswith("hook"):
        return "imports (numpy, pydantic, pyoxigraph) and the engine are most of it (--phases: where it goes)"
    return "imports (numpy, pydantic, pyoxigraph, the engine) and opening the store and its indexes"


def targets(results: dict[str, Any], memories: int, breakdown: dict[str, float] | None) -> list[dict[str, Any]]:
    """Issue 31's rows this benchmark measures, for bench/scale.py's summary: each command's median as a multiple of
    ``python -c pass``, this tree's run."""
    rows = []
    for name, limit in TARGETS.items():
        r = results["this"][name]
        rows.append(target_row(f"{name}, no server, {memories:,} memories (x python -c pass)", r["x_python"], limit,
                               unit="x", spec=".1f", why=why_slow(name, breakdown),
                               label=f"{r['median_ms']:.0f} ms = {r['x_python']:.1f}x"))
    return rows


def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--base", type=Path, default=None, help="an older checkout to compare with, interleaved")
    parser.add_argument("--phases", action="store_true", help="also time the phases of the SubagentStart hook")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    trees = {"this": HERE, **({"base": args.base.resolve()} if args.base else {})}
    for path in trees.values():  # bytecode caches written, as an installed package has them
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(path / "cortex")], check=True,
                       stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "proj"
        t0 = time.perf_counter()
        make_project(project, args.memories, HERE)
        setup_s = time.perf_counter() - t0
        results = measure(trees, project, args.runs)
        breakdown = phases(project, args.runs) if args.phases else None
    rows = []
    for name in results["this"]:
        row = [name, f"<= {TARGETS[name]:g}x" if name in TARGETS else ""]
        for tree in trees:
            r = results[tree][name]
            row += [f"{r['median_ms']:.0f}", f"{r['p90_ms']:.0f}", f"{r['x_python']:.1f}x", f"{r['cpu_x_python']:.1f}x"]
        rows.append(tuple(row))
    headers = ["command", "target"]
    for tree in trees:
        headers += [f"{tree} p50 ms", f"{tree} p90 ms", f"{tree} x python", f"{tree} cpu x python"]
    print_table(f"New processes, no server, {args.memories:,} memories, {args.runs} runs each", rows, tuple(headers))
    if breakdown is not None:
        base = results["this"]["python -c pass"]["median_ms"]
        print_table("Where the SubagentStart hook's time goes (median ms in the process; the interpreter's start "
                    "excluded)", [(name, f"{ms:.1f}", f"{ms / base:.2f}x") for name, ms in breakdown.items()],
                    ("phase", "ms", "x python -c pass"))
    data = {"memories": args.memories, "runs": args.runs, "setup_s": setup_s, "cpus": os.cpu_count(),
            "load_average": os.getloadavg(), "targets_x_python": TARGETS,
            "trees": {t: str(p) for t, p in trees.items()}, "results": results, "phases_ms": breakdown,
            "targets": targets(results, args.memories, breakdown)}
    print(f"\nwrote {write_json('startup', data, args.json)}")
    return data


if __name__ == "__main__":
    main()
