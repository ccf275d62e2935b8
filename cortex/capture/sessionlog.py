"""The session log: per session of an agent, the exact ``<agent-memory>`` block each of its starts injected and the
memories it showed, which of them the agent's output then drew on (and why), the transcripts read for it, and the
memories forgotten in it (a forget leaves nothing in provenance, by design).

One append-only JSON Lines file per agent, ``<state>/sessions/<agent>.jsonl``, one record a line:

* ``{"k": "start", "s": session, "at": time, "task": ..., "block": ..., "cut": false, "touch": true,
  "shown": [[scope key, memory id], ...]}``
* ``{"k": "used", "s": ..., "at": ..., "used": [[scope key, memory id, "cited" | "repeated" | "applied"], ...]}``
* ``{"k": "transcript", "s": ..., "at": ..., "path": ..., "run": capture run id or null}``
* ``{"k": "forget", "s": ..., "at": ..., "scope": scope key, "id": memory id}``

Cheap on the hook path: a start appends one line (one ``write`` under ``flock``, no fsync: a record survives the
process being killed, and the store's own writes are what power loss protects). Crash safe: a record is one
``O_APPEND`` write; a reader parses complete lines only and skips one it cannot read, and an append after a line
cut short by a kill starts on a line of its own. Bounded: past :attr:`SessionLog.MAX_BYTES` the file is rewritten
atomically with its newest sessions (half of that). Readers keep what they parsed and read only what was appended
since (a rewrite is noticed by its new inode).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

#: The longest block text kept (a hook's is under 10,000 characters; the Python API allows far more).
MAX_BLOCK_CHARS = 256 * 1024
#: The longest task and transcript path kept.
MAX_TASK_CHARS = 8 * 1024
MAX_PATH_CHARS = 4096


@dataclass
class Summary:
    """What the log says of one session of an agent."""

    session: str
    started: datetime
    task: str | None = None
    starts: int = 0
    #: (scope key, memory id) of every memory its starts showed, in order, once each
    shown: dict[tuple[str, str], None] = field(default_factory=dict)
    #: why each memory its output drew on was used, by (scope key, memory id)
    used: dict[tuple[str, str], str] = field(default_factory=dict)
    transcripts: dict[str, None] = field(default_factory=dict)
    #: (scope key, memory id, when) of the memories forgotten in it
    forgotten: list[tuple[str, str, datetime]] = field(default_factory=list)
    #: where its start records are in the file (offset, length), for their blocks
    lines: list[tuple[int, int]] = field(default_factory=list)


class _Parsed:
    """What has been read of one agent's file: up to ``offset`` of the file with inode ``ino``."""

    def __init__(self, ino: int) -> None:
        self.ino = ino
        self.offset = 0
        self.sessions: dict[str, Summary] = {}


class SessionLog:
    """The session log of a state directory (``path``: its ``sessions`` directory), or of memory only (None)."""

    #: A file past this size keeps its newest sessions, half of it.
    MAX_BYTES = 64 * 1024 * 1024

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._parsed: dict[str, _Parsed] = {}
        #: the log without a state directory: one buffer per agent
        self._memory: dict[str, bytearray] = {}

    # -- writing ----------------------------------------------------------------------------------------------

    def started(self, agent: str, session: str, at: datetime, task: str | None, block: str,
                shown: Sequence[tuple[str, str]], *, touched: bool) -> None:
        """Record a start of ``session``: the block it injected and the (scope key, id) of what it showed."""
        self._append(agent, {"k": "start", "s": session, "at": at.isoformat(),
                             "task": task[:MAX_TASK_CHARS] if task else None, "block": block[:MAX_BLOCK_CHARS],
                             "cut": len(block) > MAX_BLOCK_CHARS, "touch": touched,
                             "shown": [list(p) for p in shown]})

    def used(self, agent: str, session: str, at: datetime, used: Sequence[tuple[str, str, str]]) -> None:
        """Record that the session's output drew on these (scope key, id, why)."""
        self._append(agent, {"k": "used", "s": session, "at": at.isoformat(), "used": [list(u) for u in used]})

    def transcript(self, agent: str, session: str, at: datetime, path: str, run: str | None = None) -> None:
        """Record that the transcript at ``path`` was read for the session (by capture run ``run``)."""
        self._append(agent, {"k": "transcript", "s": session, "at": at.isoformat(), "path": path[:MAX_PATH_CHARS],
                             "run": run})

    def forgot(self, agent: str, session: str, at: datetime, scope: str, memory_id: str) -> None:
        """Record that the memory was forgotten in the session (its id only: a forget keeps nothing else)."""
        self._append(agent, {"k": "forget", "s": session, "at": at.isoformat(), "scope": scope, "id": memory_id})

    def _append(self, agent: str, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        if self.path is None:
            with self._lock:
                buffer = self._memory.setdefault(agent, bytearray())
                buffer += line
                if len(buffer) > self.MAX_BYTES:
                    self._memory[agent] = bytearray(_newest(bytes(buffer), self.MAX_BYTES // 2))
                    self._parsed.pop(agent, None)
            return
        import fcntl

        from cortex.files import private_dir

        path = self._file(agent)
        private_dir(path.parent)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                try:
                    if os.fstat(fd).st_ino != os.stat(path, follow_symlinks=False).st_ino:
                        continue  # rewritten meanwhile: append to the new file
                except FileNotFoundError:
                    continue
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line  # the last record was cut short (a kill): this one starts a line
                os.write(fd, line)
                if size + len(line) > self.MAX_BYTES:
                    self._rewrite(fd, path)
                return
            finally:
                os.close(fd)  # releases the lock

    def rewrite(self, change: Callable[[str], str], *, agents: Sequence[str] | None = None,
                needles: Sequence[str] = ()) -> int:
        """Pass the block and the task of every start record (of ``agents``, default: every agent's) through
        ``change``, rewriting each file that changes atomically; with ``needles``, only the files that hold one
        of them are read. Returns how many records changed. What a forget or a secret scan's redaction does to
        what the record kept of a memory."""
        import fcntl

        from cortex.files import atomic_write, open_regular

        encoded = [json.dumps(n, ensure_ascii=False)[1:-1].encode("utf-8") for n in needles if n]
        changed = 0
        if self.path is None:
            with self._lock:
                for agent, buffer in list(self._memory.items()):
                    if agents is None or agent in agents:
                        data, n = _changed(bytes(buffer), change, encoded)
                        if n:
                            self._memory[agent] = bytearray(data)
                            self._parsed.pop(agent, None)
                            changed += n
            return changed
        try:
            files = sorted(self.path.glob("*.jsonl"))
        except OSError:
            return 0
        for path in files:
            if agents is not None and path.stem not in agents:
                continue
            try:
                with open_regular(path) as fh:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
                    if os.fstat(fh.fileno()).st_ino != os.stat(path, follow_symlinks=False).st_ino:
                        continue  # rewritten meanwhile (bounded): what it holds now was read by that rewrite
                    data, n = _changed(fh.read(), change, encoded)
                    if n:
                        atomic_write(path, data)
                        changed += n
            except OSError:
                continue
        return changed

    def _rewrite(self, fd: int, path: Path) -> None:
        """Replace the file (open and locked as ``fd``) by its newest sessions, atomically."""
        from cortex.files import atomic_write

        size = os.fstat(fd).st_size
        atomic_write(path, _newest(os.pread(fd, size, 0), self.MAX_BYTES // 2))

    def _file(self, agent: str) -> Path:
        assert self.path is not None
        return self.path / f"{agent}.jsonl"

    # -- reading ----------------------------------------------------------------------------------------------

    def sessions(self, agent: str) -> list[Summary]:
        """Every session of ``agent`` the log holds, newest first (by its first record)."""
        with self._lock:
            parsed = self._refresh(agent)
            found = list(parsed.sessions.values()) if parsed is not None else []
        return sorted(found, key=lambda s: (s.started, s.session), reverse=True)

    def session(self, agent: str, session: str) -> tuple[Summary, list[dict[str, Any]]] | None:
        """The session's summary and its start records (each with its block), oldest first; None if unknown."""
        with self._lock:
            parsed = self._refresh(agent)
            summary = parsed.sessions.get(session) if parsed is not None else None
            if summary is None:
                return None
            starts = [r for r in (_record(raw) for raw in self._lines(agent, summary.lines))
                      if r is not None and r.get("k") == "start"]
        return summary, starts

    def _read(self, agent: str, parsed: _Parsed | None) -> tuple[int, int, bytes] | None:
        """The inode of the agent's file, and its bytes from where ``parsed`` stopped (from the start when it was
        rewritten since) with that offset; None: there is no file."""
        if self.path is None:
            buffer = self._memory.get(agent)
            if buffer is None:
                return None
            base = parsed.offset if parsed is not None and parsed.ino == id(buffer) else 0
            return id(buffer), base, bytes(buffer[base:])
        from cortex.files import open_regular

        try:
            with open_regular(self._file(agent)) as fh:
                ino = os.fstat(fh.fileno()).st_ino
                base = parsed.offset if parsed is not None and parsed.ino == ino else 0
                fh.seek(base)
                return ino, base, fh.read()
        except OSError:
            return None

    def _lines(self, agent: str, where: Sequence[tuple[int, int]]) -> list[bytes]:
        if self.path is None:
            buffer = self._memory.get(agent, bytearray())
            return [bytes(buffer[o:o + n]) for o, n in where]
        from cortex.files import open_regular

        try:
            with open_regular(self._file(agent)) as fh:
                return [os.pread(fh.fileno(), n, o) for o, n in where]
        except OSError:
            return []

    def _refresh(self, agent: str) -> _Parsed | None:
        """What the agent's file holds, reading only what was appended since the last read."""
        parsed = self._parsed.get(agent)
        got = self._read(agent, parsed)
        if got is None:
            self._parsed.pop(agent, None)
            return None
        ino, base, data = got
        if parsed is None or parsed.ino != ino or base != parsed.offset:
            parsed = self._parsed[agent] = _Parsed(ino)
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break  # a line still being written (or cut short: the next append ends it)
            record = _record(data[start:end])
            if record is not None:
                _apply(parsed.sessions, record, parsed.offset + start, end - start)
            start = end + 1
        parsed.offset += start
        return parsed


def _record(raw: bytes) -> dict[str, Any] | None:
    """A record of the log, or None for a line that is not one (cut short, damaged)."""
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("s"), str) or not isinstance(record.get("at"), str):
        return None
    return record


def _apply(sessions: dict[str, Summary], record: dict[str, Any], offset: int, length: int) -> None:
    """Add one record to the sessions' summaries (a malformed field is skipped, never an error)."""
    try:
        at = datetime.fromisoformat(record["at"])
    except ValueError:
        return
    if at.tzinfo is None:
        return
    summary = sessions.get(record["s"])
    if summary is None:
        summary = sessions[record["s"]] = Summary(record["s"], at)
    kind = record.get("k")
    pairs = [p for p in record.get("shown" if kind == "start" else "used", ()) or ()
             if isinstance(p, list) and len(p) >= 2 and all(isinstance(x, str) for x in p)]
    if kind == "start":
        summary.starts += 1
        summary.lines.append((offset, length))
        if summary.task is None and isinstance(record.get("task"), str):
            summary.task = record["task"]
        for p in pairs:
            summary.shown[(p[0], p[1])] = None
    elif kind == "used":
        for p in pairs:
            summary.used.setdefault((p[0], p[1]), p[2] if len(p) > 2 else "used")
    elif kind == "transcript" and isinstance(record.get("path"), str):
        summary.transcripts[record["path"]] = None
    elif kind == "forget" and isinstance(record.get("scope"), str) and isinstance(record.get("id"), str):
        summary.forgotten.append((record["scope"], record["id"], at))


def _changed(data: bytes, change: Callable[[str], str], needles: Sequence[bytes]) -> tuple[bytes, int]:
    """``data`` with the block and task of each start record passed through ``change``, and how many changed
    (``data`` itself when none did, or when it holds none of ``needles``)."""
    if needles and not any(n in data for n in needles):
        return data, 0
    out, count = [], 0
    for line in data.split(b"\n"):
        record = _record(line)
        if record is not None and record.get("k") == "start":
            new = {**record, **{k: change(record[k]) for k in ("block", "task") if isinstance(record.get(k), str)}}
            if new != record:
                line = json.dumps(new, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
                count += 1
        out.append(line)
    return (b"\n".join(out), count) if count else (data, 0)


def without_lines(block: str, lines: Sequence[str], placeholder: str = "- [forgotten]") -> str:
    """``block`` with each of its memory lines that is exactly one of ``lines`` (a memory's rendered line, its
    continuation lines included) replaced by ``placeholder``."""
    text = f"\n{block}\n"
    for line in lines:
        if line:
            while f"\n{line}\n" in text:
                text = text.replace(f"\n{line}\n", f"\n{placeholder}\n")
    return text[1:-1]


def _newest(data: bytes, budget: int) -> bytes:
    """The complete records of ``data`` of its newest sessions (by first record) that fit in ``budget`` bytes, in
    their order."""
    lines = [line for line in data.split(b"\n") if line]
    first: dict[str, int] = {}
    sizes: dict[str, int] = {}
    keys: list[str | None] = []
    for n, line in enumerate(lines):
        record = _record(line)
        key = record["s"] if record is not None else None
        keys.append(key)
        if key is not None:
            first.setdefault(key, n)
            sizes[key] = sizes.get(key, 0) + len(line) + 1
    kept: set[str] = set()
    total = 0
    for key in sorted(first, key=first.__getitem__, reverse=True):
        total += sizes[key]
        if total > budget and kept:
            break
        kept.add(key)
    return b"".join(line + b"\n" for line, key in zip(lines, keys) if key in kept)


__all__ = ["MAX_BLOCK_CHARS", "SessionLog", "Summary", "without_lines"]
