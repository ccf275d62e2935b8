"""`cortex` with the ``hash`` embedding provider held at a gate: ``python -m tests.slow_embeddings ARGS...`` runs
the real CLI (``serve``, ``import``, ...) in which every embedding of more than one text (a batch of a write, never
a query) waits until the test lets it go. The tests see and steer where a long writer is, by files in
``$CORTEX_TEST_GATE``: ``started-N`` appears when batch N starts embedding, and it waits for ``go-N`` (or for
``go-all``), so they order events without timing anything."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cortex import embeddings

GATE_ENV = "CORTEX_TEST_GATE"
#: How long a batch waits for its go-ahead before going on anyway (a test that forgot to release it).
MAX_WAIT = 120.0


def release(gate: Path, call: int | str) -> None:
    """Let embedding call ``call`` (1, 2, ..., or ``all``) go on."""
    (gate / f"go-{call}").touch()


def wait_started(gate: Path, call: int, timeout: float = 120.0) -> None:
    """Wait until embedding call ``call`` has started (a failure if it never does)."""
    deadline = time.monotonic() + timeout
    while not (gate / f"started-{call}").exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"embedding call {call} never started")
        time.sleep(0.01)


def _install(gate: Path) -> None:
    original = embeddings.HashEmbeddings.embed
    calls = [0]

    def gated(self: embeddings.HashEmbeddings, texts: Sequence[str]) -> np.ndarray:
        if len(texts) > 1:
            calls[0] += 1
            call = calls[0]
            (gate / f"started-{call}").touch()
            deadline = time.monotonic() + MAX_WAIT
            while not ((gate / f"go-{call}").exists() or (gate / "go-all").exists()) and time.monotonic() < deadline:
                time.sleep(0.01)
        return original(self, texts)

    embeddings.HashEmbeddings.embed = gated  # type: ignore[method-assign]


if __name__ == "__main__":
    _install(Path(os.environ[GATE_ENV]))
    from cortex.cli import main

    sys.argv[0] = "cortex"
    sys.exit(main())
