"""Helpers shared by the benchmarks: synthetic memories, percentiles, the result table and JSON."""

from __future__ import annotations

import json
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).parent / "results"

_BASE_WORDS = """
null pointer check review auth oauth token session cache index query database schema migration test
fixture mock deploy build release version branch merge commit diff patch lint format type error
exception retry timeout latency memory leak thread lock async await future promise callback handler
request response header cookie cors csrf xss sql injection escape sanitize validate parse serialize
json yaml toml config env secret key rotate encrypt hash salt password login logout user admin role
permission policy audit log metric trace span alert dashboard queue worker job cron schedule batch
stream kafka redis postgres sqlite mysql mongo elastic search rank score vector embed model prompt
agent tool plan task goal step review refactor rename extract inline module package import export
api endpoint route controller service repository entity dto mapper factory builder adapter facade
""".split()


def make_vocabulary(seed: int = 7, synthetic: int = 20_000) -> list[str]:
    """Real technical words first (frequent), then synthetic identifiers (rare): a Zipf-like corpus."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    made = {"".join(rng.choice(letters) for _ in range(rng.randint(4, 10))) for _ in range(synthetic)}
    return _BASE_WORDS + sorted(made - set(_BASE_WORDS))


class Corpus:
    """Deterministic synthetic memory contents with Zipf-distributed words."""

    def __init__(self, seed: int = 7) -> None:
        self.words = make_vocabulary(seed)
        self.rng = np.random.default_rng(seed)
        ranks = np.arange(1, len(self.words) + 1)
        weights = 1.0 / ranks**1.05
        self.p = weights / weights.sum()

    def contents(self, n: int) -> list[str]:
        lengths = self.rng.integers(8, 24, size=n)
        picks = self.rng.choice(len(self.words), size=int(lengths.sum()), p=self.p)
        out, pos = [], 0
        for length in lengths:
            words = [self.words[i] for i in picks[pos : pos + length]]
            pos += length
            words[0] = words[0].capitalize()
            out.append(" ".join(words) + ".")
        return out


def percentiles(samples_s: list[float]) -> dict[str, float]:
    """p50/p95/p99/mean in milliseconds."""
    ms = sorted(s * 1000 for s in samples_s)

    def pct(q: float) -> float:
        return ms[min(len(ms) - 1, int(round(q * (len(ms) - 1))))]

    return {"p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99), "mean_ms": statistics.fmean(ms),
            "n": len(ms)}


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t0, result


def print_table(title: str, rows: list[tuple[str, ...]], headers: tuple[str, ...]) -> None:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    print(f"\n{title}")
    print("  ".join(str(h).ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def write_json(name: str, data: dict[str, Any], path: Path | None = None) -> Path:
    target = path or RESULTS / f"{name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    data = {"benchmark": name, "machine": {"python": platform.python_version(), "cpu": platform.processor(),
            "system": platform.platform()}, **data}
    target.write_text(json.dumps(data, indent=2))
    return target


def target_row(row: str, now: float | None, limit: float, *, unit: str = "", spec: str = ".2f",
               at_least: bool = False, why: str = "", label: str | None = None) -> dict[str, Any]:
    """One row of issue 31's targets summary, in the form bench/scale.py reads from every result file's ``targets``
    list: the figure (``now``) beside its target (at most ``limit``, or at least with ``at_least``), whether it is met
    and, when it is not, by how much as a factor (``"2.4x over"``, ``"3.1x under"``) and ``why`` (one line). ``now``
    None: not measured (met None). ``label`` replaces the printed figure (e.g. two figures in one row)."""
    if now is None:
        return {"row": row, "now": label or "-", "target": f"{'>=' if at_least else '<='} {limit:{spec}}{unit}",
                "met": None, "by": "", "why": why, "value": None, "limit": limit}
    met = now >= limit if at_least else now <= limit
    by = ""
    if not met:
        factor = (limit / now if now else float("inf")) if at_least else (now / limit if limit else float("inf"))
        by = f"{factor:.1f}x {'under' if at_least else 'over'}"
    return {"row": row, "now": label or f"{now:{spec}}{unit}",
            "target": f"{'>=' if at_least else '<='} {limit:{spec}}{unit}", "met": met, "by": by, "why": "" if met else why, "value": now, "limit": limit}
