"""Redaction benchmark: the engine and every channel it guards, on the labelled corpus (issue 29).

    python bench/redaction.py                       # every channel Cortex offers here, and the throughput
    python bench/redaction.py --only engine store   # some channels
    python bench/redaction.py --compare             # also detect-secrets / credsweeper's rules, when importable

The corpus is bench/data/redaction/secrets.jsonl (each case a text and the span(s) of its secret(s)) and
lookalikes.jsonl (texts in which nothing may be redacted: digests, ids, placeholders, public keys...), made by
bench/data/redaction/make_corpus.py (seeded).

The engine's row is ``Redactor().redact`` case by case; every other channel is one of
bench/redaction_channels.py (explicit store, markers, transcript with a model, what the model receives, summary,
notes, each importer, task outcomes, team memory), run over the whole corpus in batches on one store with the
model stand-in (:func:`measure_channels`, :func:`measure_batch`). A secret is
**caught** when no part of it of half its length (at least 8 characters, or all of it when shorter) is left in
what the channel stores or sends; a look-alike is a **false positive** when the channel's text holds a
``[REDACTED:`` placeholder the case did not. The engine's row also says whether its spans cover every character
of each secret (``exact``); ``stored`` counts the secret cases of which the channel kept some text (a gate may
refuse a case: nothing stored, nothing leaked, but then the row says less). Per kind: recall; per look-alike kind: false positives. Throughput: ``redact`` over
a 1 MB transcript-like text.

Prints tables and writes bench/results/redaction.json.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))
from _common import print_table, write_json  # noqa: E402

from cortex.capture.redact import Redactor  # noqa: E402

DATA = Path(__file__).parent / "data" / "redaction"
PLACEHOLDER = re.compile(r"\[REDACTED:[^\]]*\]")
Channel = Callable[[str], str]
#: A channel's factory: returns the channel and a function that releases what it set up.
Factory = Callable[[], tuple[Channel, Callable[[], None]]]


def load(name: str) -> list[dict[str, Any]]:
    """The cases of ``name`` (secrets or lookalikes)."""
    with (DATA / f"{name}.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def leaked(secret: str, output: str) -> bool:
    """Whether a part of ``secret`` of half its length (at least 8 characters) is still in ``output``."""
    width = min(len(secret), max(8, len(secret) // 2))
    return any(secret[i:i + width] in output for i in range(len(secret) - width + 1))


# --- channels -----------------------------------------------------------------------------------------------------

def engine() -> tuple[Channel, Callable[[], None]]:
    """The engine alone: ``Redactor().redact``."""
    redactor = Redactor()
    return (lambda text: redactor.redact(text).text), (lambda: None)


CHANNELS: dict[str, Factory] = {"engine": engine}


def _detect_secrets(entropy: bool = True) -> tuple[Channel, Callable[[], None]]:
    """detect-secrets 1.5.0's default plugins over each line (without its two high-entropy plugins when
    ``entropy`` is False: its provider rules and keyword detector); a reported secret value is replaced (it
    reports the value, not its span)."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    ctx = default_settings()
    ctx.__enter__()
    skipped = set() if entropy else {"Base64 High Entropy String", "Hex High Entropy String"}

    def run(text: str) -> str:
        for line in text.splitlines():
            for found in scan_line(line):
                if found.secret_value and found.type not in skipped:
                    text = text.replace(found.secret_value, "[REDACTED:detect-secrets]")
        return text
    return run, lambda: ctx.__exit__(None, None, None)


def _credsweeper() -> tuple[Channel, Callable[[], None]]:
    """credsweeper's rules (ML validation off) over the text; each candidate's value replaced."""
    from credsweeper.app import CredSweeper
    from credsweeper.file_handler.string_content_provider import StringContentProvider

    sweeper = CredSweeper(ml_threshold=0)

    def run(text: str) -> str:
        candidates = sweeper.file_scan(StringContentProvider(text.splitlines()))
        for candidate in candidates:
            for line in candidate.line_data_list:
                if line.value and len(line.value) >= 4:
                    text = text.replace(line.value, "[REDACTED:credsweeper]")
        return text
    return run, lambda: None


COMPARED: dict[str, Factory] = {"detect-secrets": _detect_secrets,
                                "detect-secrets-no-entropy": lambda: _detect_secrets(entropy=False),
                                "credsweeper": _credsweeper}


# --- measurement --------------------------------------------------------------------------------------------------

def measure(name: str, channel: Channel, secrets: list[dict], looks: list[dict]) -> dict[str, Any]:
    """Recall per kind and false positives per look-alike kind of one channel."""
    caught: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    exact: list[int] = [0, 0]
    missed: list[str] = []
    stored = 0
    redactor = Redactor()
    for case in secrets:
        out = channel(case["text"])
        stored += bool(out.strip())
        ok = not any(leaked(case["text"][s:e], out) for s, e in case["spans"])
        caught[case["kind"]][0] += ok
        caught[case["kind"]][1] += 1
        if not ok:
            missed.append(case["id"])
        if name == "engine":
            found = redactor.find(case["text"])
            exact[0] += all(all(any(fs <= i < fe for fs, fe, _ in found) for i in range(s, e))
                            for s, e in case["spans"])
            exact[1] += 1
    fps: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    false: list[str] = []
    for case in looks:
        out = channel(case["text"])
        bad = out.count("[REDACTED:") > case["text"].count("[REDACTED:")
        fps[case["kind"]][0] += bad
        fps[case["kind"]][1] += 1
        if bad:
            false.append(case["id"])
    n_secrets, n_looks = len(secrets), len(looks)
    result = {"recall": (n_secrets - len(missed)) / n_secrets, "false_positive_rate": len(false) / n_looks,
              "secrets": n_secrets, "lookalikes": n_looks, "stored": stored, "missed": missed, "false_positives": false,
              "recall_by_kind": {k: v[0] / v[1] for k, v in sorted(caught.items())},
              "false_positives_by_kind": {k: v[0] for k, v in sorted(fps.items())}}
    if exact[1]:
        result["exact_span_recall"] = exact[0] / exact[1]
    return result


def measure_batch(channel: Callable[[list[tuple[str, str]]], str], secrets: list[dict],
                  looks: list[dict]) -> dict[str, Any]:
    """Recall and false positives of a channel of :mod:`redaction_channels`, which takes every case at once (each
    behind its tag): a secret is caught when no half of it is left anywhere in what the secrets' run stored or
    sent; a look-alike is a false positive when a placeholder its own text did not hold is attributed to it (a
    placeholder no case claims is counted too, in ``unclaimed``)."""
    from redaction_channels import TAG, attribute

    out = channel([(c["id"], c["text"]) for c in secrets])
    seen = {m.group(1).lower() for m in TAG.finditer(out)}
    caught: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed = []
    for case in secrets:
        ok = not any(leaked(case["text"][s:e], out) for s, e in case["spans"])
        caught[case["kind"]][0] += ok
        caught[case["kind"]][1] += 1
        if not ok:
            missed.append(case["id"])
    per_case, unclaimed = attribute(channel([(c["id"], c["text"]) for c in looks]))
    fps: dict[str, int] = defaultdict(int)
    false = []
    for case in looks:
        own = set(PLACEHOLDER.findall(case["text"]))
        if any(p not in own for p in per_case.get(case["id"], [])):
            false.append(case["id"])
            fps[case["kind"]] += 1
    n_secrets, n_looks = len(secrets), len(looks)
    return {"recall": (n_secrets - len(missed)) / n_secrets, "false_positive_rate": (len(false) + unclaimed) / n_looks,
            "secrets": n_secrets, "lookalikes": n_looks, "stored": sum(c["id"] in seen for c in secrets),
            "missed": missed, "false_positives": false, "unclaimed_placeholders": unclaimed,
            "recall_by_kind": {k: v[0] / v[1] for k, v in sorted(caught.items())},
            "false_positives_by_kind": dict(sorted(fps.items()))}


def stratified(cases: list[dict], per_kind: int) -> list[dict]:
    """The first ``per_kind`` cases of each kind, in corpus order (deterministic: a sample every kind is in)."""
    taken: dict[str, int] = defaultdict(int)
    out = []
    for case in cases:
        if taken[case["kind"]] < per_kind:
            taken[case["kind"]] += 1
            out.append(case)
    return out


def measure_channels(secrets: list[dict], looks: list[dict], only: list[str] | None = None) -> dict[str, Any]:
    """Every channel of :mod:`redaction_channels` (or those in ``only``) over the cases, on one fresh store with
    the model stand-in: :func:`measure_batch`'s figures per channel, and its seconds."""
    from redaction_channels import open_channels

    results: dict[str, Any] = {}
    with warnings.catch_warnings(), open_channels() as channels:
        warnings.simplefilter("ignore")
        for name, channel in channels.items():
            if only and name not in only:
                continue
            started = time.perf_counter()
            results[name] = measure_batch(channel, secrets, looks)
            results[name]["seconds"] = time.perf_counter() - started
    return results


def transcript_text(size: int = 1_000_000, seed: int = 7) -> str:
    """About ``size`` characters of transcript-like text: JSONL lines of prose, code, logs and tool output, with
    a secret every ~20 lines (so the rules' replacement path is timed too)."""
    rng = random.Random(seed)
    secrets = [c["text"] for c in load("secrets")]
    looks = [c["text"] for c in load("lookalikes")]
    prose = ("The migration ran in 42 s; the index on orders(created_at) helped. Next: check the retry policy, "
             "the timeout=30 setting and the config: mode=sync in app/settings.py line 118.")
    lines, total = [], 0
    while total < size:
        pick = rng.random()
        body = rng.choice(secrets) if pick < 0.05 else rng.choice(looks) if pick < 0.35 else prose
        line = json.dumps({"type": rng.choice(["user", "assistant", "tool_result"]), "message": {"content": body}})
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def throughput(repeat: int = 3) -> dict[str, float]:
    """MB/s of ``Redactor().redact`` on a 1 MB transcript-like text (best of ``repeat``)."""
    text = transcript_text()
    redactor = Redactor()
    redactor.redact("warm up: password=Sup3rS3cret!")
    best = min(_timed(lambda: redactor.redact(text)) for _ in range(repeat))
    return {"bytes": len(text.encode()), "seconds": best, "mb_per_s": len(text.encode()) / best / 1e6}


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", help="channels to measure (default: all)")
    parser.add_argument("--compare", action="store_true", help="also the rules of detect-secrets / credsweeper")
    parser.add_argument("--no-throughput", action="store_true")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # each store's "replaced N secrets" notice: counted here, not printed
    secrets, looks = load("secrets"), load("lookalikes")
    factories = {k: v for k, v in CHANNELS.items() if not args.only or k in args.only}
    if args.compare:
        factories.update(COMPARED)
    results: dict[str, Any] = {"corpus": {"secrets": len(secrets), "secret_kinds": len({c["kind"] for c in secrets}),
                                          "lookalikes": len(looks),
                                          "lookalike_kinds": len({c["kind"] for c in looks})}, "channels": {}}
    for name, factory in factories.items():
        try:
            channel, close = factory()
        except ImportError as exc:
            print(f"{name}: not installed ({exc})")
            continue
        try:
            started = time.perf_counter()
            results["channels"][name] = measure(name, channel, secrets, looks)
            results["channels"][name]["seconds"] = time.perf_counter() - started
        finally:
            close()
    started = time.perf_counter()
    results["channels"].update(measure_channels(secrets, looks, args.only))
    results["channels_seconds"] = time.perf_counter() - started
    rows = [(name, f"{r['recall']:.3f}", f"{len(r['missed'])}/{r['secrets']}", f"{r['false_positive_rate']:.3%}",
             f"{len(r['false_positives'])}/{r['lookalikes']}",
             f"{r['exact_span_recall']:.3f}" if "exact_span_recall" in r else "-", f"{r['stored']}/{r['secrets']}")
            for name, r in results["channels"].items()]
    print_table(f"Redaction per channel ({len(secrets)} secrets of {results['corpus']['secret_kinds']} kinds, "
                f"{len(looks)} look-alikes of {results['corpus']['lookalike_kinds']} kinds)", rows,
                ("channel", "recall", "missed", "false pos.", "false", "exact spans", "secret cases stored"))
    print(f"every channel over the corpus: {results['channels_seconds']:.1f} s")
    if "engine" in results["channels"]:
        eng = results["channels"]["engine"]
        print_table("Engine recall per kind (below 1.0 only)",
                    [(k, f"{v:.2f}") for k, v in eng["recall_by_kind"].items() if v < 1] or [("all", "1.00")],
                    ("kind", "recall"))
        print_table("Engine false positives per look-alike kind (above 0 only)",
                    [(k, str(v)) for k, v in eng["false_positives_by_kind"].items() if v] or [("none", "0")],
                    ("kind", "false positives"))
    if not args.no_throughput:
        results["throughput"] = throughput()
        t = results["throughput"]
        print(f"\nredact() on {t['bytes'] / 1e6:.2f} MB of transcript-like text: {t['seconds']:.3f} s, "
              f"{t['mb_per_s']:.2f} MB/s")
    path = write_json("redaction", results)
    print(f"\nwrote {path}")
    return results


if __name__ == "__main__":
    main()
