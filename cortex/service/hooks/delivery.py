"""Delivering a capture (marker lines, ``agent_end``) through the hook's session; on a failure that may pass it
waits in the spool (:mod:`cortex.service.spool`), and what waits there goes out after the next delivery that
worked."""

from __future__ import annotations

from pathlib import Path

from cortex.service.harnesses.base import log as _log
from cortex.service.hooks.session import HookSession, spool_dir
from cortex.service.spool import Spool


def deliver(session: HookSession, where: str, agent_type: str, found: str) -> None:
    """Capture ``found`` (marker lines) for ``agent_type``, what it notices in the log."""
    from cortex import notices

    with notices.collect() as notes:
        try:
            capture(session, agent_type, found)
        finally:
            for note in notes:
                _log(session.root, f"{where}: {note}")


def capture(session: HookSession, agent_type: str, text: str) -> None:
    """Deliver a capture (and what the spool holds); on a failure that may pass, spool it."""
    root = session.root
    spool = Spool(spool_dir(root))
    try:
        session.open()
    except Exception as exc:
        if not session.transient(exc):
            raise
        spool.put(agent_type, text)
        _log(root, f"capture for {agent_type!r} spooled (store not reachable: {type(exc).__name__}: {exc})")
        return
    try:
        session.with_agent(agent_type, lambda cx, agent: cx.agent_end(agent, text))
    except Exception as exc:
        if not session.transient(exc):
            raise
        spool.put(agent_type, text)
        _log(root, f"capture for {agent_type!r} spooled ({type(exc).__name__}: {exc})")
        return
    replay(root, session, spool)


def replay(root: Path, session: HookSession, spool: Spool) -> None:
    """Deliver what waits in the spool through ``session`` (after a delivery worked)."""
    if not spool.pending():
        return

    def deliver_one(agent_type: str, output: str, project: str | None) -> None:
        if session.agent(agent_type) is None:
            _log(root, f"spooled capture for {agent_type!r} dropped: no agent with memory has that name or alias")
            return
        session.with_agent(agent_type, lambda cx, agent: cx.agent_end(agent, output, project))

    try:
        delivered = spool.replay(deliver_one)
        if delivered:
            _log(root, f"delivered {delivered} spooled capture(s)")
    except Exception as exc:
        _log(root, f"replaying the spool stopped: {type(exc).__name__}: {exc}")
