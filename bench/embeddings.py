"""Cost of the local embedding providers: load time in a new process, query latency, batch throughput.

    python bench/embeddings.py                      # the providers installed: local (ONNX), torch
    python bench/embeddings.py --providers local --queries 500

Each provider runs in a process of its own (so one's imports do not speed up the other's): ``load`` is the
time from the start of that process's Python code to its first vector (imports and model loading included),
``import`` the part of it before the model loads. Queries are the LoCoMo questions (one text per call, the
provider's query threads); the batch is LongMemEval user turns (one call, the provider's batch threads). Data
from ../shared/bench/data (``--data``); without it, synthetic texts. Prints a table and writes
bench/results/embeddings.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, percentiles, print_table, write_json  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "data"

_CHILD = """
import time
t0 = time.perf_counter()
import json, sys
from cortex.embeddings import make_provider
provider = make_provider(sys.argv[1])
t_import = time.perf_counter()
provider.embed(["warm up"])
t_load = time.perf_counter()
texts = json.loads(sys.stdin.read())
for q in texts["queries"][:5]:
    provider.embed([q])
queries = []
for q in texts["queries"]:
    s = time.perf_counter()
    provider.embed([q])
    queries.append(time.perf_counter() - s)
s = time.perf_counter()
provider.embed(texts["batch"])
batch = time.perf_counter() - s
import resource
print(json.dumps({"model": provider.model, "import_s": t_import - t0, "load_s": t_load - t0, "queries_s": queries,
                  "batch_s": batch, "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def texts(data: Path, queries: int, batch: int) -> dict[str, list[str]]:
    """LoCoMo questions and LongMemEval user turns, else synthetic texts."""
    try:
        locomo = json.loads((data / "locomo10.json").read_text())
        qs = [qa["question"] for conv in locomo for qa in conv["qa"] if qa.get("category") in (1, 2, 3, 4)]
        lme = json.loads((data / "longmemeval_s_subset101.json").read_text())
        turns = [t["content"] for item in lme for session in item["haystack_sessions"] for t in session
                 if t["role"] == "user"]
    except (OSError, KeyError, ValueError):
        corpus = Corpus()
        return {"queries": corpus.contents(queries), "batch": corpus.contents(batch)}
    return {"queries": qs[:queries], "batch": turns[:batch]}


def main(argv: list[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--providers", default="local,torch")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    payload = json.dumps(texts(args.data, args.queries, args.batch))
    results: dict[str, object] = {"texts": {k: len(v) for k, v in json.loads(payload).items()}}
    rows = []
    for provider in args.providers.split(","):
        done = subprocess.run([sys.executable, "-c", _CHILD, provider], input=payload, capture_output=True,
                              text=True)
        if done.returncode != 0:
            print(f"{provider}: failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        r = json.loads(done.stdout.strip().splitlines()[-1])
        q = percentiles(r.pop("queries_s"))
        r["query"] = q
        r["batch_per_s"] = results["texts"]["batch"] / r["batch_s"]  # type: ignore[index]
        results[provider] = r
        rows.append((provider, r["model"], f"{r['import_s']:.2f}", f"{r['load_s']:.2f}", f"{q['p50_ms']:.2f}",
                     f"{q['p95_ms']:.2f}", f"{r['batch_per_s']:.0f}", f"{r['max_rss_mb']:.0f}"))
    print_table("Embedding providers (each in a new process)", rows,
                ("provider", "model", "import s", "first vector s", "query p50 ms", "query p95 ms", "batch texts/s",
                 "max RSS MB"))
    target = write_json("embeddings", results, args.json)
    print(f"results written to {target}")
    return results


if __name__ == "__main__":
    main()
