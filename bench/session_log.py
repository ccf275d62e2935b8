"""What the session log costs on the hook path: ``agent_start`` with a session id (what the SubagentStart hook
asks the server for) with the log on and off, interleaved in one process over an on-disk store of 500 memories and
a ~10,000-character block; the append alone; and reading a page of sessions from a log of thousands.

    python bench/session_log.py [STARTS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone

from cortex import Cortex, provenance


def main(starts: int = 600) -> None:
    """Print the medians and their ratio."""
    cx = Cortex.open(tempfile.mkdtemp(), embeddings=None)
    cx.agents.register("dev")
    cx.store_many("dev", [{"content": f"deploys of service {i} go through pipeline step {i % 17} with flag --fast-{i}"}
                          for i in range(500)])
    log = cx._sessions
    real = log.started
    times: dict[str, list[float]] = {"on": [], "off": []}
    for i in range(starts):
        for mode in ("on", "off") if i % 2 else ("off", "on"):
            log.started = real if mode == "on" else (lambda *a, **k: None)  # type: ignore[method-assign]
            with provenance.activity(surface="hook", event="SubagentStart", session=f"s-{mode}-{i:05d}"):
                began = time.perf_counter()
                cx.agent_start("dev", f"fix the deploy of service {i} pipeline step", max_chars=10_000)
                times[mode].append(time.perf_counter() - began)
    log.started = real  # type: ignore[method-assign]
    on, off = statistics.median(times["on"][50:]), statistics.median(times["off"][50:])
    print(f"agent_start median: log on {on * 1e3:.3f} ms, off {off * 1e3:.3f} ms, ratio {on / off:.3f}")
    block = "<agent-memory>\n" + "- [insight] a memory line of the block\n" * 250 + "</agent-memory>"
    appends = []
    for i in range(2000):
        began = time.perf_counter()
        real("dev", f"bench-{i}", datetime.now(timezone.utc), "a task", block, [("agent:dev", "0" * 28)] * 5,
             touched=True)
        appends.append(time.perf_counter() - began)
    print(f"append alone ({len(block)}-character block): median {statistics.median(appends) * 1e6:.0f} us")
    for label in ("first (parses the log)", "then (reads what was appended)"):
        began = time.perf_counter()
        cx.sessions("dev", limit=50)
        took = (time.perf_counter() - began) * 1e3
        print(f"sessions page of 50 of {len(log.sessions('dev'))}, {label}: {took:.1f} ms")
    cx.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 600)
