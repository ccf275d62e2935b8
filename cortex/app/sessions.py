"""The sessions domain of the facade: capture at agent end, task outcomes, transcripts and the used signal."""

from __future__ import annotations

import base64
import binascii
import logging
import os
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from cortex import config, lifecycle, listing, notices
from cortex.agents import AgentSettings
from cortex.app.admin import AdminOps
from cortex.app.kernel import _redaction_note, announced
from cortex.app.memories import MemoryOps
from cortex.app.reading import ReadingOps
from cortex.capture import markers as capture
from cortex.capture import tasks, usage
from cortex.capture.sessionlog import Summary
from cortex.errors import (
    CortexError,
    InvalidInputError,
    SessionNotFoundError,
)
from cortex.files import real_path_of
from cortex.model import (
    Captured,
    CaptureReport,
    CaptureRunInfo,
    Memory,
    Pruned,
    Scope,
    SessionDetail,
    SessionInfo,
    SessionMemory,
    SessionPage,
    SessionStart,
    Source,
    UndoReport,
)
from cortex.provenance import activity as provenance_activity
from cortex.provenance import current as current_activity
from cortex.validation import (
    check_limit,
    check_project,
    check_text,
)

if TYPE_CHECKING:  # imported where used: a start or a read does not pay for them
    from cortex.capture import sessiondiff

log = logging.getLogger("cortex")

#: The most starts of one session a detail shows (its latest; a session resumed, compacted, cleared starts again).
MAX_STARTS = 50

#: How often a transcript capture asks the model again when another capture moved its checkpoint meanwhile.
_PLANS = 3


class SessionOps(MemoryOps, ReadingOps, AdminOps):
    """What an agent's work leaves: marker lines at its end, task outcomes, transcripts, the "used" signal."""

    @announced("capture", "agent_end")
    def agent_end(self, agent: str, output: str, project: str | None = None) -> Captured:
        """Capture memories from marker lines in ``output`` (``LEARNED:``, ``INSIGHT:``, ``PATTERN:``,
        ``CONVENTION:``, ``DECISION:``; source ``agent_end``) and ``SUPERSEDES <id>: text`` lines (the memory
        ``<id>`` is superseded by ``text``), then prune with the agent's ``cortex.prune`` settings.

        Content already stored for this agent and project is touched rather than stored again. Returns the
        memories stored or refreshed, in the order of the output, then those that superseded others. Lines
        whose text is not valid content (e.g. over 64 KiB), or that name a memory the agent cannot supersede,
        are skipped and logged.
        """
        output = check_text(output, "output")
        definition = self._agent(agent)
        settings = definition.settings
        project = check_project(project if project is not None else settings.project or config.DEFAULT_PROJECT)
        scope = self._scope(agent)
        redacted: Counter[str] = Counter()
        with self._memories.lock, provenance_activity(channel=current_activity().channel or "marker"):
            now = self._clock()
            result = capture.capture(self._memories, scope, output, project, now, self._policy(agent).expires_at,
                                     self.redactor, redacted)
            for old_id, raw in capture.supersessions(output):
                try:
                    result.append(self.supersede(agent, old_id, self.redactor.scrub(raw, redacted),
                                                 source=Source.AGENT_END))
                except CortexError as exc:
                    log.warning("%s: skipped SUPERSEDES %s: %s", scope, old_id, exc)
            captured = {m.id for m in result}
            doomed = [
                i for i in lifecycle.prune_candidates(self._memories.index(scope),
                                                      min_confidence=settings.prune_min_confidence,
                                                      max_age=settings.prune_max_age, now=now)
                if i not in captured
            ]
            if redacted:
                notices.notice(f"agent_end of agent {agent!r} {_redaction_note(redacted)} before storing what it "
                               "captured")
            pruned = self._prune_at_end(agent, scope, doomed, settings, now)
        # outside the lock: the detector's work on a long output must not hold up every other write
        self._record_use(agent, output, captured)
        return Captured(result, pruned, dict(redacted))

    @announced("capture", "use")
    def record_use(self, agent: str, output: str, *, session: str | None = None,
                   transcript: str | None = None) -> list[Memory]:
        """The "used" signal: which of the memories ``agent`` was shown at its latest start (in ``session``,
        default: the current activity's) its ``output`` (text and tool calls, after the start) drew on, by
        citing the memory's id, repeating it, or applying its distinctive terms (:mod:`cortex.capture.usage`).
        Each gets ``usedCount + 1``, which ranking prefers to having been shown. ``agent_end`` does this with
        its output; hooks call it with what the session wrote, and the ``transcript`` they read it from (its path,
        kept in the session's record: :meth:`session_detail`). Returns the memories marked."""
        output = check_text(output, "output")
        self._agent(agent)
        if session is not None:
            session = listing.check_session(session)
        if transcript is not None:
            transcript = check_text(transcript, "transcript")[:4096]
            named = session if session is not None else current_activity().session
            if named:
                self._note_session(lambda: self._sessions.transcript(agent, named, self._clock(), transcript))
        return self._record_use(agent, output, set(), session=session)

    def _record_use(self, agent: str, output: str, exclude: set[str], *,
                    session: str | None = None) -> list[Memory]:
        shown = self._shown.shown(agent, session if session is not None else current_activity().session)
        if not shown or not output:
            return []
        by_key = {s.key: s for s in self._read_scopes(agent, None)}
        with self._memories.lock:
            pairs = [(by_key[k], i) for k, i in shown if k in by_key and i not in exclude]
            contents = {(s.key, m.id): m.content for s, m in
                        ((s, m) for s, i in pairs for m in self._memories.load(s, [i]))}
            embed, vectors = self._usage_model(pairs)
        # judged outside the lock: the embedding model may run (a few borderline memories)
        found = usage.drawn_on([(i, contents[(s.key, i)]) for s, i in pairs if (s.key, i) in contents], output,
                               embed=embed, vectors=vectors)
        named = session if session is not None else current_activity().session
        marked: list[Memory] = []
        with self._memories.lock:
            # a use counts once per start: another Stop of the session may have marked some meanwhile
            still = {i for _, i in self._shown.shown(agent, named)}
            found = [(i, why) for i, why in found if i in still]
            hits = {i for i, _ in found}
            for scope_ in dict.fromkeys(s for s, i in pairs if i in hits):
                ids = [i for s, i in pairs if s == scope_ and i in hits]
                marked.extend(self._changing(lambda: self._memories.mark_used(scope_, ids)))
            if hits:
                # used once per start: a later Stop of the same session does not count the same use again
                self._shown.record(agent, named, [(k, i) for k, i in self._shown.shown(agent, named)
                                                  if i not in hits])
                if named:
                    keys = {i: s.key for s, i in pairs}
                    self._note_session(lambda: self._sessions.used(agent, named, self._clock(),
                                                                   [(keys[i], i, why) for i, why in found]))
        return marked

    def _usage_model(self, pairs: Sequence[tuple[Scope, str]]) -> tuple[usage.Embed | None, dict[str, Any]]:
        """The embedding model the "used" detector may re-judge borderline memories with (the store's, when it
        is the all-MiniLM-L6-v2 the detector's weights were fitted with; a failure of it leaves the lexical
        judgement), and the shown memories' vectors the index holds for it."""
        provider = self._memories.embeddings
        if provider is None or getattr(provider, "model", None) not in usage.SEMANTIC_MODELS:
            return None, {}
        vectors: dict[str, Any] = {}
        for scope_, memory_id in pairs:
            index = self._memories.index(scope_)
            if index.vector_model == provider.model:
                vector = index.vector_of(memory_id)
                if vector is not None:
                    vectors[memory_id] = vector.copy()
        return provider.embed, vectors

    @announced("capture", "transcript")
    def capture_transcript(self, agent: str, path: str | os.PathLike[str], *, format: str | None = None,
                           project: str | None = None, markers: bool = True, summary: bool = True,
                           tasks: bool = True, dry_run: bool = False) -> CaptureReport:
        """Capture what a session transcript holds for ``agent``, from where the last capture of this
        transcript for this agent stopped (so a second run stores nothing new): its marker lines (as at agent
        end, with ``markers``), and with a language model (:attr:`llm`) at most N learnings and (``summary``) a
        ``session_summary`` memory, both linked to the session in PROV-O; the outcomes of the subagent calls it
        shows, as ``task_completion`` memories of those agents (``tasks``); and the "used" signal of what its
        output drew on. Formats: Claude Code JSONL (a main transcript's subagent lines are left to the
        subagents), Codex CLI session files, a JSON list of messages, plain text (``format`` forces one).

        Captured text is redacted, and learnings pass the quality gate (a duplicate confirms the memory it
        repeats). A malformed line is reported in ``problems``, the rest read. A model that fails leaves its
        part ``pending`` (not checkpointed: the next run retries it); without a model, ``note`` says so.

        What it wrote is one run (``report.run``) that :meth:`undo_capture` undoes. ``dry_run``: the same
        reading, extraction and gate, reporting what it would store, confirm and supersede, writing nothing (no
        memory, no use, no checkpoint)."""
        definition = self._agent(agent)
        project = check_project(project if project is not None else definition.settings.project
                                or config.DEFAULT_PROJECT)
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidInputError("transcript", f"must be a path, not {type(path).__name__}")
        # opened once and checked on the handle (confinement, Cortex's own files); every read is of that handle,
        # and the checkpoints are keyed by the real path of the file opened, whatever the path names meanwhile
        from cortex.capture.transcripts import open_transcript  # here: a read or a start does not parse transcripts

        with open_transcript(path) as handle:
            return self._capture_from(handle, agent, project, format=format, markers=markers, summary=summary,
                                      tasks=tasks, dry_run=dry_run)

    def _capture_from(self, handle: Any, agent: str, project: str, *, format: str | None, markers: bool,
                      summary: bool, tasks: bool, dry_run: bool) -> CaptureReport:
        """:meth:`capture_transcript` of the transcript open as ``handle``."""
        from cortex.capture import runs as capture_runs
        from cortex.capture.dryrun import DryRun, FrozenCheckpoints
        from cortex.capture.pipeline import CapturePort, TranscriptCapture
        from cortex.capture.session import prepare as prepare_extraction

        real = str(real_path_of(handle))
        checkpoints = FrozenCheckpoints(self._checkpoints.path) if dry_run else self._checkpoints
        # the facade is the port (its hold_memory is the consolidation domain's, above this one)
        port: CapturePort = DryRun(self) if dry_run else cast("CapturePort", self)
        settings = self.llm
        for attempt in range(_PLANS):
            # the model first, holding no lock: a slow model then delays only this capture (docs/capture.md)
            mine: dict[Any, Any] = {}
            start = checkpoints.get(agent, real)["llm"]
            adopted = {k: v for k, v in self._prepared.items() if k[:3] == (agent, real, start)}
            if adopted:  # a hook's capture asked before it opened the store
                mine.update(adopted)
                if not dry_run:
                    for k in adopted:
                        del self._prepared[k]
            elif settings is not None:
                key, extraction = prepare_extraction(None, agent, real, settings, summary=summary, format=format,
                                                     kept=checkpoints, handle=handle)
                mine[key] = extraction
            with self._capturing:
                run = TranscriptCapture(port, agent, real, project, checkpoints, redactor=self.redactor,
                                        clock=self._clock, embeddings=self._memories.embeddings)
                report = run.read(settings, markers=markers, format=format, handle=handle)
                if settings is not None and attempt + 1 < _PLANS and \
                        not any(k[2] == run.offsets["llm"] for k in mine):
                    continue  # another capture moved the model's checkpoint meanwhile: ask again for what is left
                started = self._clock()
                with run.activity(), self._memories.recording() as journal:
                    if markers:
                        run.markers()
                    run.used()
                    if tasks:
                        run.tasks()
                    run.model(summary=summary, prepared=mine, ask=False)
                    redacted = run.finish()
                    if redacted and not dry_run:
                        notices.notice(f"capture of {os.path.basename(real)!r} for agent {agent!r} "
                                       f"{_redaction_note(redacted)} before storing it")
                if isinstance(port, DryRun):
                    report.dry_run, report.superseded = True, port.superseded
                else:
                    report.superseded = capture_runs.superseded(journal)
                    try:
                        report.run = capture_runs.save(self._memories, self._scope(agent), agent, journal,
                                                       transcript=real, checkpoint=run.offsets,
                                                       session=report.session, started=started, now=self._clock())
                    except CortexError as exc:  # what it stored stays stored; only its undo is lost
                        report.problems.append(f"the capture's run could not be recorded ({exc}): it cannot be "
                                               "undone")
                    named = report.session or current_activity().session
                    if named:
                        self._note_session(lambda: self._sessions.transcript(agent, named, self._clock(), real,
                                                                             report.run))
                return report
        raise AssertionError("unreachable: the last attempt returns")

    @announced("capture", "undo")
    def undo_capture(self, agent: str, run: str = "last", *, force: bool = False) -> "UndoReport":
        """Undo a capture run of ``agent`` (its id, as the capture's report gave it, or ``last``: its latest not
        undone): the memories it created removed, those it changed (confirmed, superseded, touched, marked used)
        or pruned put back exactly as they were (uses since kept), and the transcript's checkpoint moved back so
        that a capture reads that part again; its record stays in provenance, marked undone. Refuses (nothing
        changed) when a memory it wrote was changed since, unless ``force``."""
        from cortex.capture import runs as capture_runs

        self._agent(agent)
        wanted = capture_runs.check_run(run)
        with self._capturing:
            return capture_runs.undo(self._memories, self._scope(agent), wanted, agent, self._clock(),
                                     self._checkpoints, force=force)

    def capture_runs(self, agent: str) -> list["CaptureRunInfo"]:
        """The capture runs of ``agent`` (each capture that wrote), the latest first, undone ones too: the run ids
        :meth:`undo_capture` takes, with the session and file each read and how many memories it created,
        changed and pruned."""
        from cortex.capture import runs as capture_runs

        self._agent(agent)
        with self._memories.lock:
            return capture_runs.listed(self._memories, self._scope(agent))

    def sessions(self, agent: str, *, cursor: str | None = None, limit: int = 50) -> SessionPage:
        """One page of ``agent``'s sessions, newest first (by their first record): each with its first task, how
        many starts it had, how many memories its blocks showed and its output used, how many memories it created
        and changed (provenance), and the transcripts read for it. ``page.next_cursor`` continues the listing.
        A session is on record once a start, a use or a capture named its id (a hook's session, the
        ``Cortex-Session`` header of an HTTP call); the record keeps each agent's newest sessions (tens of
        megabytes of them)."""
        from cortex.capture import sessiondiff

        self._agent(agent)
        limit = check_limit(limit)
        found = self._sessions.sessions(agent)
        if cursor is not None:
            after = _decode_cursor(cursor)
            found = [s for s in found if (s.started, s.session) < after]
        page = found[:limit]
        with self._memories.lock:
            diffs = sessiondiff.diffs(self._memories, self._read_scopes(agent, None), agent, [s.session for s in page])
        items = [_info(agent, s, diffs[s.session]) for s in page]
        more = len(found) > limit and bool(page)
        return SessionPage(items=items, next_cursor=_encode_cursor(page[-1]) if more else None)

    def session_detail(self, agent: str, session: str) -> SessionDetail:
        """One session of ``agent``: each start's exact ``<agent-memory>`` block (and task), the memories its blocks
        showed with why its output used them (cited, repeated, applied; None: not used), the memories it created
        and those it changed (updated with their content before and after, validated, superseded, pruned,
        forgotten), as provenance and the session log record them, and the transcripts read for it.
        :class:`~cortex.errors.SessionNotFoundError` when the record has no such session of the agent."""
        from cortex.capture import sessiondiff

        self._agent(agent)
        session = listing.check_session(session)
        found = self._sessions.session(agent, session)
        if found is None:
            raise SessionNotFoundError(agent, session)
        summary, starts = found
        scopes = self._read_scopes(agent, None)
        by_key = {s.key: s for s in scopes}
        with self._memories.lock:
            diff = sessiondiff.diffs(self._memories, scopes, agent, [session])[session]
            wanted: dict[Scope, set[str]] = {}
            for key, memory_id in [*summary.shown, *((s.key, i) for s, i in diff.created),
                                   *((c.scope.key, c.memory_id) for c in diff.changes)]:
                if key in by_key:
                    wanted.setdefault(by_key[key], set()).add(memory_id)
            now = {(s.key, m.id): m for s, ids in wanted.items() for m in self._memories.load(s, sorted(ids))}
            changed = [_change(c, now.get((c.scope.key, c.memory_id)),
                               self._memories.history(c.scope, c.memory_id) if c.action == "update" else [])
                       for c in diff.changes]
        changed += [SessionMemory(id=i, scope=_relative(k), action="forget", at=at) for k, i, at in summary.forgotten]
        return SessionDetail(
            info=_info(agent, summary, diff),
            starts=[SessionStart(at=r["at"], task=r.get("task"), block=r.get("block") or "", cut=bool(r.get("cut")),
                                 touched=r.get("touch") is not False,
                                 shown=[p[1] for p in r.get("shown") or () if isinstance(p, list) and len(p) == 2])
                    for r in starts[-MAX_STARTS:]],
            shown=[SessionMemory(id=i, scope=_relative(k), used=summary.used.get((k, i)),
                                 content=m.content if (m := now.get((k, i))) is not None else None)
                   for k, i in summary.shown],
            created=[SessionMemory(id=i, scope=s.relative, action="created", content=m.content, at=m.created_at,
                                   by=m.author) for s, i in diff.created if (m := now.get((s.key, i))) is not None],
            changed=changed)

    def adopt_extraction(self, key: tuple[str, str, int, int], extraction: Any) -> None:
        """Use ``extraction`` (from :func:`cortex.capture.session.prepare`) when a capture reads exactly the part
        ``key`` names, instead of asking the model again."""
        self._prepared[key] = extraction

    @announced("capture", "task")
    def record_task(self, agent: str, task: str, output: str = "", status: str = "ok", *,
                    project: str | None = None) -> Memory:
        """Record a finished task's outcome as a ``task_completion`` memory of ``agent`` (source TTL: 7 days by
        default): ``Task done: <task>`` / ``Task failed: <task>``, then the outcome or what went wrong, bounded
        (:mod:`cortex.capture.tasks`); tagged ``task-outcome`` and ``task-ok``/``task-failed``. Captured text:
        its secrets are redacted (a warning says so)."""
        redacted: Counter[str] = Counter()
        # redacted as given, before the task's whitespace is joined and both are cut to their bounds: a cut or a
        # joined line can leave part of a secret without the context (its name, its other half) that finds it
        if isinstance(task, str):
            task = self.redactor.scrub(task, redacted)
        if isinstance(output, str):
            output = self.redactor.scrub(output, redacted)
        entry = tasks.task_entry(task, output, status)
        entry["content"] = self.redactor.scrub(entry["content"], redacted)
        entry["metadata"]["task"] = self.redactor.redact(entry["metadata"]["task"]).text  # counted in the content
        if redacted:
            notices.notice(f"record_task of agent {agent!r} {_redaction_note(redacted)} before storing it")
        entry["project"] = project if project is not None else \
            self._agent(agent).settings.project or config.DEFAULT_PROJECT
        scope, memories = self._new_memories(agent, [entry], batch=False)
        with provenance_activity(channel=current_activity().channel or "task"):
            self._memories.add(scope, memories)
        self._warn_prunable(memories)
        return memories[0]

    def _prune_at_end(self, agent: str, scope: Scope, doomed: Sequence[str], settings: AgentSettings,
                      now: datetime) -> list[Pruned]:
        """Delete what the agent's prune rule selected, record it (a ``prune`` activity that
        ``prov:invalidated`` each memory) and say it (:func:`cortex.notices.notice`); returns what went."""
        if not doomed:
            return []
        rule = f"confidence < {settings.prune_min_confidence:g}" + (
            f" or unused for longer than {settings.prune_max_age}" if settings.prune_max_age is not None else "")
        before = {m.id: m for m in self._memories.load(scope, list(doomed))}
        deleted = self._delete(scope, doomed, action="prune", actor=agent, at=now, rule=rule)
        pruned = [Pruned(id=i, agent=agent, content=before[i].content, confidence=before[i].confidence,
                         rule=lifecycle.prune_rule(before[i], min_confidence=settings.prune_min_confidence,
                                                   max_age=settings.prune_max_age, now=now) or rule)
                  for i in deleted if i in before]
        if pruned:
            shown = ", ".join(f"{p.id} ({p.rule})" for p in pruned[:5]) + (", ..." if len(pruned) > 5 else "")
            count = f"{len(pruned)} memor{'y' if len(pruned) == 1 else 'ies'}"
            notices.notice(f"agent_end of agent {agent!r} pruned {count} (cortex.prune: {rule}): {shown}")
            log.info("%s: pruned %d memories at agent end (%s)", scope, len(pruned), rule)
        return pruned


def _relative(key: str) -> str:
    """The scope as an agent names it (``agent``, ``team:backend``, ``swarm``) from its key."""
    return "agent" if key.startswith("agent:") else key


def _info(agent: str, summary: Summary, diff: sessiondiff.Diff) -> SessionInfo:
    """The listing's line of one session."""
    changed = {(c.scope.key, c.memory_id) for c in diff.changes} | {(k, i) for k, i, _ in summary.forgotten}
    return SessionInfo(session=summary.session, agent=agent, started_at=summary.started, task=summary.task,
                       starts=summary.starts, shown=len(summary.shown),
                       used=len([k for k in summary.used if k in summary.shown]), added=len(diff.created),
                       changed=len(changed), transcripts=list(summary.transcripts))


def _change(change: sessiondiff.Change, memory: Memory | None, versions: Sequence[Memory]) -> SessionMemory:
    """One change of a session, with an update's content before and after (the versions kept)."""
    before = after = None
    for n, version in enumerate(versions):
        if change.at is not None and version.updated_at == change.at:
            after = version.content
            before = versions[n - 1].content if n else None
    return SessionMemory(id=change.memory_id, scope=change.scope.relative, action=change.action, at=change.at,
                         by=change.by, content=memory.content if memory is not None else None, before=before,
                         after=after)


def _encode_cursor(summary: Summary) -> str:
    return base64.urlsafe_b64encode(f"{summary.started.isoformat()}|{summary.session}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: object) -> tuple[datetime, str]:
    """The (start, session) a cursor of :meth:`SessionOps.sessions` continues after."""
    try:
        if not isinstance(cursor, str) or len(cursor) > 512:
            raise ValueError(cursor)
        started, session = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().split("|", 1)
        moment = datetime.fromisoformat(started)
        if moment.tzinfo is None:
            raise ValueError(started)
        return moment, session
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise InvalidInputError("cursor", "not a cursor of this listing (pass next_cursor as it was returned)") \
            from None
