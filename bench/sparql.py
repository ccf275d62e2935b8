"""The SPARQL surface's costs and bounds (issue 18): judging a query (Cortex's lexer and allow-list, against
rdflib's SPARQL parser, the judge before, on the same texts), a query through a worker process on a checkpoint
of the embedded store against the same query run in the owning process (the way before), the first query after
a write (a new checkpoint), and what a query past its time-out still costs after its answer: a killed worker
against the thread the engine could not stop.

    python bench/sparql.py            # ~2 minutes
    python bench/sparql.py --quick

Prints a table and writes bench/results/sparql.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, percentiles, print_table, timed, write_json  # noqa: E402

from cortex import Cortex, sparql  # noqa: E402
from cortex.errors import QueryTimeoutError  # noqa: E402

CONTENT = "<urn:cortex:agentmem:content>"
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
SHAPES = {
    "64 KiB IN list (7,000 strings)": "FILTER(?c IN (" + ", ".join(f'"v{i}"' for i in range(7000)) + "))",
    "3,000-term || chain": "FILTER(" + " || ".join(f"?c = {i}" for i in range(3000)) + ")",
    "parentheses 28 deep": "FILTER(" + "(" * 28 + "?c" + ")" * 28 + ")",
    "1,000 triple patterns": " ".join(f"?m{i} {CONTENT} ?c{i} ." for i in range(1000)),
}


def judging(repeat: int) -> list[dict]:
    from rdflib.plugins.sparql.parser import parseQuery

    rows = []
    for name, shape in SHAPES.items():
        text = f"SELECT ?c WHERE {{ ?m {CONTENT} ?c {shape} }}"
        ours = min(timed(sparql.prepare, text, dataset=["urn:cortex:graph:agent:a"])[0] for _ in range(repeat))
        started = time.perf_counter()
        try:
            parseQuery(text)
            theirs: float | None = time.perf_counter() - started
            note = ""
        except Exception as exc:  # noqa: BLE001 - rdflib's limits are part of the comparison
            theirs, note = None, type(exc).__name__
        rows.append({"query": name, "bytes": len(text.encode()), "cortex_ms": ours * 1000,
                     "rdflib_ms": theirs * 1000 if theirs is not None else None, "rdflib_error": note})
    return rows


def cpu_seconds() -> float:
    return time.process_time()


def workers_cpu() -> float:
    """CPU seconds of this process's SPARQL worker children still alive."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == os.getpid() and b"cortex.sparql.workers" in command:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default="sparql")
    args = parser.parse_args()
    memories, queries = (2_000, 50) if args.quick else (10_000, 300)

    judged = judging(3 if args.quick else 10)
    results: dict = {"memories": memories, "judging": judged}
    with tempfile.TemporaryDirectory() as tmp:
        cx = Cortex.open(Path(tmp) / "store", embeddings=None)
        cx.agents.register("a")
        contents = Corpus().contents(memories)
        for start in range(0, memories, 5_000):
            cx.store_many("a", [{"content": c} for c in contents[start:start + 5_000]])
        text = f"SELECT ?c WHERE {{ ?m {CONTENT} ?c FILTER(CONTAINS(?c, \"review\")) }} LIMIT 10"
        store = cx._memories.store
        prepared = sparql.prepare(text, dataset=["urn:cortex:graph:agent:a"])
        graphs = sparql.graphs_clause([store.vocab.graph(s) for s in cx._read_scopes("a", None)])

        def in_process() -> sparql.SparqlResult:  # the way before: the engine in the owning process
            return sparql.run(lambda: sparql.collect(store.query(prepared.text, None, **graphs), 2**62), 30)

        first, _ = timed(cx.sparql, text, agent="a", timeout=30)  # starts a worker
        worker = [timed(cx.sparql, text, agent="a", timeout=30)[0] for _ in range(queries)]
        thread = [timed(in_process)[0] for _ in range(queries)]
        after_write = []
        for i in range(min(queries, 100)):
            cx.store("a", f"written {i}")
            after_write.append(timed(cx.sparql, text, agent="a", timeout=30)[0])
        results["query"] = {"worker": percentiles(worker), "in_process": percentiles(thread),
                            "after_a_write": percentiles(after_write), "first_with_worker_start_ms": first * 1000}

        # a query past its time-out: what it still costs after its answer
        timeout = 1.0
        started = time.monotonic()
        try:
            cx.sparql(SLOW, timeout=timeout)
        except QueryTimeoutError:
            pass
        answered = time.monotonic() - started
        before = workers_cpu()  # the workers left (the one that ran it is gone)
        time.sleep(3)
        worker_after = workers_cpu() - before
        threads_before = threading.active_count()
        cpu_before = cpu_seconds()
        started = time.monotonic()
        try:
            sparql.run(lambda: sparql.collect(store.query(SLOW, None, use_default_graph_as_union=True), 10), timeout)
        except QueryTimeoutError:
            pass
        thread_answered = time.monotonic() - started
        cpu_mark = cpu_seconds()
        time.sleep(3)
        thread_after = cpu_seconds() - cpu_mark
        results["timeout"] = {"timeout_s": timeout, "worker_answered_s": answered,
                              "worker_cpu_s_in_3s_after": worker_after, "thread_answered_s": thread_answered,
                              "thread_cpu_s_in_3s_after": thread_after,
                              "threads_still_running": threading.active_count() - threads_before + 1,
                              "thread_cpu_s_until_answer": cpu_mark - cpu_before}
        cx.close()
        os._exit(_report(results, args.json))  # the engine's thread is still computing the timed-out query


def _report(results: dict, name: str) -> int:
    rows = [(r["query"], f"{r['bytes']:,}", f"{r['cortex_ms']:.2f}",
             f"{r['rdflib_ms']:.0f}" if r["rdflib_ms"] is not None else r["rdflib_error"],
             f"{r['rdflib_ms'] / r['cortex_ms']:.0f}x" if r["rdflib_ms"] is not None else "")
            for r in results["judging"]]
    print_table("Judging a query (sparql.prepare vs rdflib's parser, the judge before)", rows,
                ("query", "bytes", "cortex ms", "rdflib ms", "rdflib/cortex"))
    q = results["query"]
    rows = [("through a worker process (checkpoint unchanged)", f"{q['worker']['p50_ms']:.2f}",
             f"{q['worker']['p99_ms']:.2f}", f"{q['worker']['p50_ms'] / q['in_process']['p50_ms']:.2f}x"),
            ("in the owning process (the way before)", f"{q['in_process']['p50_ms']:.2f}",
             f"{q['in_process']['p99_ms']:.2f}", "1.00x"),
            ("right after a write (a new checkpoint)", f"{q['after_a_write']['p50_ms']:.2f}",
             f"{q['after_a_write']['p99_ms']:.2f}", f"{q['after_a_write']['p50_ms'] / q['in_process']['p50_ms']:.2f}x"),
            ("first query of a process (starts a worker)", f"{q['first_with_worker_start_ms']:.0f}", "", "")]
    print_table(f"A SELECT ... LIMIT 10 over {results['memories']:,} memories", rows, ("", "p50 ms", "p99 ms", "ratio"))
    t = results["timeout"]
    rows = [("worker process (killed)", f"{t['worker_answered_s']:.2f}", f"{t['worker_cpu_s_in_3s_after']:.2f}"),
            ("thread (the way before)", f"{t['thread_answered_s']:.2f}", f"{t['thread_cpu_s_in_3s_after']:.2f}")]
    print_table(f"A query past its {t['timeout_s']:.0f} s time-out", rows,
                ("", "answered after s", "CPU s spent in the 3 s after"))
    path = write_json(name, results)
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    main()
