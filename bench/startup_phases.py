"""One hook call in this process, timed by phase (run by ``bench/startup.py --phases`` in a new process).

    python bench/startup_phases.py PROJECT EVENT PAYLOAD_JSON [AGENT]

Prints one JSON object: milliseconds spent importing the hook's own modules, the third-party libraries of the
full path (numpy, pydantic, yaml, pyoxigraph) and Cortex's engine (``cortex.core``), then, inside the hook's run,
opening the store, reading the agent definitions, loading the indexes, touching what was shown, the rest of the
block (ranking, loading the memories, rendering, the session's records) and closing. Imports are done before the
run, so the run's phases exclude them; the wrappers cost microseconds.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

spent: dict[str, float] = defaultdict(float)


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - t0
    return wrapper


def main() -> None:
    project, event, payload = sys.argv[1], sys.argv[2], sys.argv[3]
    agent = sys.argv[4] if len(sys.argv) > 4 else None
    import os

    os.chdir(project)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # as cortex.__main__ does
    t0 = time.perf_counter()
    from cortex.service import hooks
    t1 = time.perf_counter()
    import numpy  # noqa: F401
    import pydantic  # noqa: F401
    import pyoxigraph  # noqa: F401
    import yaml  # noqa: F401
    t2 = time.perf_counter()
    import cortex.core  # noqa: F401
    from cortex import agents, memories
    from cortex.app import reading
    from cortex.index import manager
    from cortex.service import connect
    from cortex.service.hooks import session
    t3 = time.perf_counter()
    session.connect = _timed("open the store", connect.connect)  # type: ignore[attr-defined]
    connect.connect = session.connect
    agents.AgentRegistry.load = _timed("agent definitions", agents.AgentRegistry.load)  # type: ignore[method-assign]
    manager.IndexManager._load = _timed("load the indexes", manager.IndexManager._load)  # type: ignore[method-assign]
    memories.MemoryRepository.touch = _timed("touch", memories.MemoryRepository.touch)  # type: ignore[method-assign]
    reading.ReadingOps.agent_start = _timed("agent_start", reading.ReadingOps.agent_start)  # type: ignore[attr-defined]
    session.HookSession.close = _timed("close", session.HookSession.close)  # type: ignore[method-assign]
    t4 = time.perf_counter()
    out = hooks.run(event, payload, agent)
    t5 = time.perf_counter()
    assert "additionalContext" in out, out
    inner = spent["load the indexes"] + spent["touch"]
    phases = {"import the hook modules": t1 - t0, "import numpy, pydantic, pyoxigraph, yaml": t2 - t1,
              "import cortex.core (the engine)": t3 - t2, **{k: v for k, v in spent.items() if k != "agent_start"},
              "the rest of agent_start (rank, load, render, records)": spent["agent_start"] - inner,
              "the rest of the hook (payload, transcript, offsets)":
                  (t5 - t4) - sum(v for k, v in spent.items() if k not in ("load the indexes", "touch"))}
    print(json.dumps({k: v * 1000 for k, v in phases.items()}))


if __name__ == "__main__":
    main()
