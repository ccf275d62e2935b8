"""Reads while another process writes, with no server: ``cortex recall`` and the SubagentStart hook as new
processes, (a) on an idle store, (b) while another process holds the store and writes (store_many batches, as
``cortex import`` does), beside ``python -c pass``; p50 and the ratios busy/idle and to ``python -c pass``.

    python bench/readonly.py                          # 10k memories, 7 runs of each (~2-3 minutes on 2 cores)
    python bench/readonly.py --base /work/wt-base     # the same, interleaved with an older checkout

A run that fails (an older Cortex: the store is locked) or that returns no block counts as failed; its time is
still recorded. Embeddings are off. Prints a table and writes bench/results/readonly.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, print_table, write_json  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
#: Seconds after which a process counts as failed, with this time.
TIMEOUT = 60.0
AGENT = "---\nname: reviewer\ndescription: Reviews diffs\nmemory: true\n---\nYou review code.\n"

#: Holds the store and writes batches until its stdin closes (what a long import does to a store).
WRITER = textwrap.dedent("""
    import sys, threading, time
    from cortex import Cortex
    try:
        from cortex import discovery
        discovery.set_process_label("cortex import")
    except (ImportError, AttributeError):
        pass
    cx = Cortex.open(sys.argv[1], client=False, embeddings=None)
    cx.agents.register("reviewer")
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.readline(), done.set()), daemon=True).start()
    print("ready", flush=True)
    n = 0
    while not done.is_set():
        cx.store_many("reviewer", [{"content": f"imported note {n} {k} about lexers and parsers"}
                                   for k in range(int(sys.argv[2]))])
        n += 1
    print(n, flush=True)
    cx.close()
""")


def environment(tree: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    return env | {"PYTHONPATH": str(tree), "CORTEX_EMBEDDINGS": "none", "CORTEX_LOCK_WAIT": "2"}


def seed(project: Path, tree: Path, n: int) -> list[str]:
    contents = Corpus(7).contents(n)
    script = ("import json, sys\nfrom cortex import Cortex\n"
              "cx = Cortex.open(sys.argv[1], client=False, embeddings=None); cx.agents.register('reviewer')\n"
              "items = json.load(sys.stdin)\n"
              "for s in range(0, len(items), 1000): cx.store_many('reviewer', items[s:s + 1000])\n"
              "cx.close()\n")
    subprocess.run([sys.executable, "-c", script, str(project / ".cortex" / "store")], check=True, cwd=project,
                   input=json.dumps([{"content": c} for c in contents]), text=True, env=environment(tree))
    return contents


def run_once(kind: str, project: Path, tree: Path, query: str) -> tuple[float, bool]:
    """One new process: seconds, and whether it answered (memories found, a block injected)."""
    env = environment(tree)
    if kind == "python -c pass":
        args, stdin = [sys.executable, "-c", "pass"], None
    elif kind == "cortex recall":
        args, stdin = [sys.executable, "-m", "cortex", "recall", "reviewer", query, "--limit", "5"], None
    else:
        payload = {"session_id": "bench", "transcript_path": "", "cwd": str(project), "agent_id": "a1",
                   "hook_event_name": "SubagentStart", "agent_type": "reviewer"}
        args, stdin = [sys.executable, "-m", "cortex", "hook", "claude", "SubagentStart"], json.dumps(payload)
        env["CLAUDE_CONFIG_DIR"] = str(project.parent)
    started = time.perf_counter()
    try:
        done = subprocess.run(args, cwd=project, input=stdin, capture_output=True, text=True, env=env,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:  # (Claude Code gives a hook 30 s)
        return TIMEOUT, False
    took = time.perf_counter() - started
    if kind == "python -c pass":
        return took, done.returncode == 0
    if kind == "cortex recall":
        return took, done.returncode == 0 and bool(done.stdout.strip()) and json.loads(done.stdout) != []
    return took, done.returncode == 0 and "<agent-memory>" in done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--batch", type=int, default=1000, help="memories per write of the writing process")
    parser.add_argument("--base", type=Path, default=None, help="an older checkout, measured interleaved")
    args = parser.parse_args()
    trees = {"new": HERE} | ({"base": args.base.resolve()} if args.base else {})
    kinds = ("python -c pass", "cortex recall", "SubagentStart hook")
    samples: dict[tuple[str, str, str], list[tuple[float, bool]]] = {}
    written: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="cortex-readonly-") as tmp:
        projects = {}
        for name, tree in trees.items():
            project = Path(tmp) / name / "proj"
            (project / ".git").mkdir(parents=True)
            (project / "agent_defs").mkdir()
            (project / "agent_defs" / "reviewer.md").write_text(AGENT)
            contents = seed(project, tree, args.memories)
            projects[name] = project
        query = contents[0].split()[1]  # a word of the corpus (Zipf: often a frequent one)
        for phase in ("idle", "busy"):
            writers = {}
            if phase == "busy":
                for name, tree in trees.items():
                    writers[name] = subprocess.Popen(
                        [sys.executable, "-c", WRITER, str(projects[name] / ".cortex" / "store"), str(args.batch)],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=environment(tree))
                    assert writers[name].stdout is not None and writers[name].stdout.readline().strip() == "ready"
            for _ in range(args.runs):
                for kind in kinds:
                    for name, tree in trees.items():  # interleaved: the machine's noise hits both alike
                        samples.setdefault((name, phase, kind), []).append(
                            run_once(kind, projects[name], tree, query))
            for name, writer in writers.items():
                out, _ = writer.communicate("\n", timeout=300)
                written[name] = int(out.split()[-1]) * args.batch if out.split() else 0
    rows, results = [], []
    for name in trees:
        base_pass = statistics.median(t for t, _ in samples[(name, "idle", "python -c pass")])
        for kind in kinds[1:]:
            idle = statistics.median(t for t, _ in samples[(name, "idle", kind)])
            busy = statistics.median(t for t, _ in samples[(name, "busy", kind)])
            answered = {phase: sum(ok for _, ok in samples[(name, phase, kind)]) for phase in ("idle", "busy")}
            rows.append((name, kind, f"{idle * 1000:.0f}", f"{busy * 1000:.0f}", f"{busy / idle:.2f}",
                         f"{idle / base_pass:.1f}x", f"{busy / base_pass:.1f}x",
                         f"{answered['idle']}/{args.runs}", f"{answered['busy']}/{args.runs}"))
            results.append({"tree": name, "kind": kind, "idle_p50_ms": idle * 1000, "busy_p50_ms": busy * 1000,
                            "busy_over_idle": busy / idle, "python_pass_p50_ms": base_pass * 1000,
                            "idle_over_python": idle / base_pass, "busy_over_python": busy / base_pass,
                            "answered_idle": answered["idle"], "answered_busy": answered["busy"],
                            "runs": args.runs})
    print_table(f"New processes, no server, {args.memories} memories; busy: another process holds the store and "
                f"writes batches of {args.batch} (memories written meanwhile: {written})", rows,
                ("tree", "process", "idle p50 ms", "busy p50 ms", "busy/idle", "idle/pass", "busy/pass",
                 "answered idle", "answered busy"))
    path = write_json("readonly", {"memories": args.memories, "runs": args.runs, "batch": args.batch,
                                   "written_during_busy": written, "results": results})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
