"""Distilling sessions into long-term learnings (docs/consolidation.md, "Distillation").

A session is a transcript the agent's capture has read (``capture.json``: from where the last distillation of it
stopped), together with the session summaries and task outcomes recorded for it; session summaries and task
outcomes of sessions without a transcript on disk form sessions of their own. JiuwenSwarm's bounds are the
defaults: at most 10 sessions per run (the most recent), each compressed under 30K tokens, at most 5 learnings
each, sessions with fewer than 4 rounds (user turns) or older than 30 days skipped. What a run distilled is
named in its record in the store (its checkpoint, written in the same atomic write as the learnings); a session
whose model call failed is not, so the next run asks again.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from cortex.consolidation.settings import ConsolidationSettings
from cortex.llm import LLMClient, estimate_tokens
from cortex.llm.prompts import distil as prompt
from cortex.llm.prompts.distil import SYSTEM
from cortex.model import Memory, Source


@dataclass
class Session:
    """One unit of distillation."""

    #: what the run's record names once it is distilled (a transcript's part, the memories read)
    keys: list[str]
    label: str
    ended: datetime
    rounds: int | None = None
    text: str = ""
    #: ids of the session summaries and task outcomes it read (the learnings are derived from them)
    sources: list[str] = field(default_factory=list)


def transcript_key(path: str, end: int) -> str:
    return f"transcript:{path}#{end}"


def distilled_ends(keys: Iterable[str]) -> dict[str, int]:
    """Per transcript path, how far it was distilled (from the keys of earlier runs)."""
    ends: dict[str, int] = {}
    for key in keys:
        if key.startswith("transcript:") and "#" in key:
            path, _, end = key[len("transcript:"):].rpartition("#")
            if end.isdigit():
                ends[path] = max(ends.get(path, 0), int(end))
    return ends


def sessions(agent: str, state_dir: Path | None, memories: Sequence[Memory], done: Collection[str],
             settings: ConsolidationSettings, now: datetime) -> tuple[list[Session], dict[str, int]]:
    """The sessions of ``agent`` not yet distilled (``done``: keys earlier runs distilled), most recent first and
    at most ``settings.max_sessions``, and what was skipped, by reason."""
    from cortex.capture.checkpoints import Checkpoints
    from cortex.capture.session import own_messages
    from cortex.capture.transcripts import read, render

    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    records = [m for m in memories if m.source in (Source.SESSION_SUMMARY, Source.TASK_COMPLETION)
               and f"memory:{m.id}" not in done]
    by_session: dict[str, list[Memory]] = {}
    for memory in records:
        session = (memory.metadata or {}).get("session")
        by_session.setdefault(session if isinstance(session, str) else f"memory:{memory.id}", []).append(memory)
    ends = distilled_ends(done)
    found: list[Session] = []
    checkpoints = Checkpoints(state_dir / "capture.json") if state_dir is not None else None
    for path, session_id in checkpoints.transcripts(agent) if checkpoints is not None else []:
        try:
            modified = datetime.fromtimestamp(os.path.getmtime(path), timezone.utc)
        except OSError:
            continue  # gone: its summaries and outcomes still make a session below
        start = ends.get(path, 0)
        try:
            if os.path.getsize(path) <= start:
                continue  # distilled to its end
            transcript = read(path, start)
        except Exception:  # an unreadable transcript is skipped, never stops a run
            skip("unreadable-transcript")
            continue
        if transcript.end <= start:
            continue
        attached = by_session.pop(session_id, []) if session_id else []
        if now - modified > settings.max_age:
            skip("too-old")
            continue
        messages = own_messages(transcript.messages)
        rounds = sum(1 for m in messages if m.role == "user" and m.kind == "text")
        if rounds < settings.min_rounds:
            skip("too-few-rounds")
            continue
        budget = settings.session_tokens
        extra = _records_text(attached)
        room = max(1000, budget - estimate_tokens(extra)) if extra else budget
        text = render(messages, room) + (f"\n\nRecorded for this session:\n{extra}" if extra else "")
        found.append(Session([transcript_key(path, transcript.end), *(f"memory:{m.id}" for m in attached)],
                             f"{Path(path).name} ({session_id or 'no session id'}, bytes {start}-{transcript.end})",
                             modified, rounds, text, [m.id for m in attached]))
    for session_id, group in by_session.items():
        ended = max(m.created_at for m in group)
        if now - ended > settings.max_age:
            skip("too-old")
            continue
        text = _records_text(group)
        budget_chars = settings.session_tokens * 4
        found.append(Session([f"memory:{m.id}" for m in group],
                             f"session {session_id}" if not session_id.startswith("memory:") else
                             f"{group[0].source.value} {group[0].id}", ended, None, text[:budget_chars],
                             [m.id for m in group]))
    found.sort(key=lambda s: s.ended, reverse=True)
    if len(found) > settings.max_sessions:
        skipped["over-max-sessions"] = len(found) - settings.max_sessions
    return found[:settings.max_sessions], skipped


def _records_text(memories: Sequence[Memory]) -> str:
    return "\n".join(f"- [{m.source.value}] {m.content}" for m in sorted(memories, key=lambda m: m.created_at))


def distil(client: LLMClient, session: Session, most: int) -> list[dict[str, object]]:
    """The learnings the model draws from ``session`` (at most ``most``), as ``store`` entries (content, type,
    confidence at most 0.8, tags). Raises what :meth:`LLMClient.complete_json` raises."""
    from cortex.llm import Extraction

    if not session.text.strip():
        return []
    system, user = prompt.messages(session.label, session.text, most)
    answer = client.complete_json(system, user, Extraction, "distillation")
    return [{"content": m.content, "type": m.type, "confidence": min(0.8, m.confidence), "tags": list(m.tags)}
            for m in answer.memories[:most]]


__all__ = ["Session", "SYSTEM", "distil", "distilled_ends", "sessions", "transcript_key"]
