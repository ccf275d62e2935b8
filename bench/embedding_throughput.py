"""Embedding throughput of the ``local`` provider (int8 ONNX all-MiniLM-L6-v2) on this machine, by how texts are
fed to ONNX Runtime: intra-op threads, parallel single-text runs, and batches (equal-length groups: no padding;
padded batches). Every way is run in rounds, interleaved, and its best round is kept (the machine is shared);
the batched ways are also compared with the one-text-a-run vectors (the shipped numerics: int8 activations are
quantized per run, so a batch changes them a little). Texts: 10-30 word memories (bench/_common.Corpus).

    python bench/embedding_throughput.py [--texts 512] [--rounds 3]

Prints a table and writes bench/results/embedding_throughput.json.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import Corpus, print_table, write_json  # noqa: E402

from cortex.embeddings import OnnxEmbeddings, _unit_rows  # noqa: E402


def feeds(model, texts: list[str]) -> list[dict]:  # type: ignore[no-untyped-def]
    out = []
    for encoding in model.tokenizer.encode_batch(texts):
        ids = np.asarray([encoding.ids], dtype=np.int64)
        out.append({"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})
    return out


def pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask.astype(np.float64)[..., None]
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)


def one_by_one(session, items: list[dict]) -> np.ndarray:  # type: ignore[no-untyped-def]
    rows = [pooled(np.asarray(session.run(None, f)[0], dtype=np.float64), f["attention_mask"])[0] for f in items]
    return _unit_rows(np.stack(rows))


def parallel(session, items: list[dict], workers: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    rows: list[np.ndarray | None] = [None] * len(items)

    def work(k: int) -> None:
        for i in range(k, len(items), workers):
            f = items[i]
            rows[i] = pooled(np.asarray(session.run(None, f)[0], dtype=np.float64), f["attention_mask"])[0]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return _unit_rows(np.stack(rows))  # type: ignore[arg-type]


def same_length(session, items: list[dict], size: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    by_length: dict[int, list[int]] = {}
    for i, f in enumerate(items):
        by_length.setdefault(f["input_ids"].shape[1], []).append(i)
    rows = np.zeros((len(items), 384))
    for group in by_length.values():
        for start in range(0, len(group), size):
            part = group[start:start + size]
            feed = {k: np.concatenate([items[i][k] for i in part]) for k in items[0]}
            rows[part] = pooled(np.asarray(session.run(None, feed)[0], dtype=np.float64), feed["attention_mask"])
    return _unit_rows(rows)


def padded(session, items: list[dict], size: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    rows = []
    order = sorted(range(len(items)), key=lambda i: items[i]["input_ids"].shape[1])
    out = np.zeros((len(items), 384))
    for start in range(0, len(order), size):
        part = order[start:start + size]
        width = max(items[i]["input_ids"].shape[1] for i in part)
        feed = {k: np.zeros((len(part), width), dtype=np.int64) for k in items[0]}
        for row, i in enumerate(part):
            n = items[i]["input_ids"].shape[1]
            for k in items[0]:
                feed[k][row, :n] = items[i][k][0]
        out[part] = pooled(np.asarray(session.run(None, feed)[0], dtype=np.float64), feed["attention_mask"])
    del rows
    return _unit_rows(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    texts = Corpus().contents(args.texts)
    provider = OnnxEmbeddings()
    model = provider._load()
    s1, s2 = model.session(1, True), model.session(2, True)
    items = feeds(model, texts)
    ways: dict[str, Callable[[], np.ndarray]] = {
        "provider.embed (today: 1 text a run, 2 intra-op threads)": lambda: provider.embed(texts),
        "1 text a run, 1 thread": lambda: one_by_one(s1, items),
        "1 text a run, 2 intra-op threads": lambda: one_by_one(s2, items),
        "1 text a run, 2 parallel runs x 1 thread": lambda: parallel(s1, items, 2),
        "same-length batches of 32, 2 threads": lambda: same_length(s2, items, 32),
        "same-length batches of 32, 2 parallel x 1 thread": lambda: _par_batches(s1, items, 32),
        "padded batches of 8, 2 threads": lambda: padded(s2, items, 8),
        "padded batches of 32, 2 threads": lambda: padded(s2, items, 32),
    }
    reference = one_by_one(s2, items)
    best = {name: float("inf") for name in ways}
    cosine = {}
    for _ in range(args.rounds):
        for name, run in ways.items():
            t0 = time.perf_counter()
            vectors = run()
            best[name] = min(best[name], time.perf_counter() - t0)
            cosine[name] = float(np.min(np.sum(vectors * reference, axis=1)))
    base = best["provider.embed (today: 1 text a run, 2 intra-op threads)"]
    rows, results = [], {}
    for name in ways:
        rate = len(texts) / best[name]
        results[name] = {"texts_per_s": rate, "speedup": base / best[name], "min_cosine_to_one_by_one": cosine[name]}
        rows.append((name, f"{rate:,.0f}/s", f"{base / best[name]:.2f}x", f"{cosine[name]:.5f}"))
    print_table(f"local embeddings, {len(texts)} memories of 8-24 words, best of {args.rounds} rounds", rows,
                ("how", "memories/s", "vs today", "min cosine"))
    write_json("embedding_throughput", {"texts": len(texts), "rounds": args.rounds, "ways": results})


def _par_batches(session, items: list[dict], size: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    halves = [items[0::2], items[1::2]]
    out: list[np.ndarray | None] = [None, None]

    def work(k: int) -> None:
        out[k] = same_length(session, halves[k], size)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = np.zeros((len(items), 384), dtype=np.float32)
    rows[0::2], rows[1::2] = out[0], out[1]  # type: ignore[assignment]
    return rows


if __name__ == "__main__":
    main()
