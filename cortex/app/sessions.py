"""The sessions domain of the facade: capture at agent end, task outcomes, transcripts and the used signal."""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cortex import config, lifecycle, notices
from cortex.agents import AgentSettings
from cortex.app.admin import AdminOps
from cortex.app.kernel import _redaction_note
from cortex.app.memories import MemoryOps
from cortex.app.reading import ReadingOps
from cortex.capture import markers as capture
from cortex.capture import tasks, usage
from cortex.errors import (
    CortexError,
    InvalidInputError,
)
from cortex.model import (
    Captured,
    CaptureReport,
    Memory,
    Pruned,
    Scope,
    Source,
)
from cortex.provenance import activity as provenance_activity
from cortex.provenance import current as current_activity
from cortex.validation import (
    check_project,
    check_text,
    memory_from_entry,
)

if TYPE_CHECKING:
    from cortex.llm import LLMSettings

log = logging.getLogger("cortex")


class SessionOps(MemoryOps, ReadingOps, AdminOps):
    """What an agent's work leaves: marker lines at its end, task outcomes, transcripts, the "used" signal."""

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
            self._record_use(agent, output, captured)
            return Captured(result, self._prune_at_end(agent, scope, doomed, settings, now), dict(redacted))

    def record_use(self, agent: str, output: str, *, session: str | None = None) -> list[Memory]:
        """The "used" signal: which of the memories ``agent`` was shown at its latest start (in ``session``,
        default: the current activity's) its ``output`` (text and tool calls, after the start) drew on, by
        citing the memory's id, repeating it, or applying its distinctive terms (:mod:`cortex.capture.usage`).
        Each gets ``usedCount + 1``, which ranking prefers to having been shown. ``agent_end`` does this with
        its output; hooks call it with what the session wrote. Returns the memories marked."""
        output = check_text(output, "output")
        self._agent(agent)
        return self._record_use(agent, output, set(), session=session)

    def _record_use(self, agent: str, output: str, exclude: set[str], *,
                    session: str | None = None) -> list[Memory]:
        shown = self._shown.shown(agent, session if session is not None else current_activity().session)
        if not shown or not output:
            return []
        by_key = {s.key: s for s in self._read_scopes(agent, None)}
        marked: list[Memory] = []
        with self._memories.lock:
            pairs = [(by_key[k], i) for k, i in shown if k in by_key and i not in exclude]
            contents = {(s.key, m.id): m.content for s, m in
                        ((s, m) for s, i in pairs for m in self._memories.load(s, [i]))}
            hits = {i for i, _ in usage.drawn_on([(i, contents[(s.key, i)]) for s, i in pairs
                                                  if (s.key, i) in contents], output)}
            for scope_ in dict.fromkeys(s for s, i in pairs if i in hits):
                ids = [i for s, i in pairs if s == scope_ and i in hits]
                marked.extend(self._changing(lambda: self._memories.mark_used(scope_, ids)))
            if hits:
                # used once per start: a later Stop of the same session does not count the same use again
                self._shown.record(agent, session if session is not None else current_activity().session,
                                   [(k, i) for k, i in shown if i not in hits])
        return marked

    def capture_transcript(self, agent: str, path: str | os.PathLike[str], *, format: str | None = None,
                           project: str | None = None, markers: bool = True, summary: bool = True,
                           tasks: bool = True) -> CaptureReport:
        """Capture what a session transcript holds for ``agent``, from where the last capture of this
        transcript for this agent stopped (so a second run stores nothing new): its marker lines (as at agent
        end, with ``markers``), and with a language model (:attr:`llm`) at most N learnings and (``summary``) a
        ``session_summary`` memory, both linked to the session in PROV-O; the outcomes of the subagent calls it
        shows, as ``task_completion`` memories of those agents (``tasks``); and the "used" signal of what its
        output drew on. Formats: Claude Code JSONL (a main transcript's subagent lines are left to the
        subagents), Codex CLI session files, a JSON list of messages, plain text (``format`` forces one).

        Captured text is redacted, and learnings pass the quality gate (a duplicate confirms the memory it
        repeats). A malformed line is reported in ``problems``, the rest read. A model that fails leaves its
        part ``pending`` (not checkpointed: the next run retries it); without a model, ``note`` says so."""
        from cortex.capture import session as captured
        from cortex.capture.checkpoints import Checkpoints
        from cortex.capture.transcripts import read

        definition = self._agent(agent)
        project = check_project(project if project is not None else definition.settings.project
                                or config.DEFAULT_PROJECT)
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidInputError("transcript", f"must be a path, not {type(path).__name__}")
        real = os.path.realpath(os.fspath(path))
        checkpoints = Checkpoints(self._state / "capture.json" if self._state is not None else None)
        with self._capturing:
            offsets = checkpoints.get(agent, real)
            settings = self.llm
            new = read(real, offsets["markers"] if markers else offsets["llm"], format=format)
            # the model's part has its own checkpoint: behind the markers' after a failed call, ahead of it after a
            # capture that left the markers to the hooks
            behind = read(real, offsets["llm"], format=format) \
                if settings is not None and markers and offsets["llm"] != offsets["markers"] else new
            report = CaptureReport(agent=agent, transcript=real, format=new.format,
                                   session=new.session_id or behind.session_id or checkpoints.session(agent, real),
                                   read_from=offsets["llm"] if behind is not new else
                                   offsets["markers"] if markers else offsets["llm"],
                                   read_to=new.end, problems=list(new.problems))
            session = report.session
            name = os.path.basename(real)
            with provenance_activity(session=session, file=name) if session else provenance_activity(file=name):
                redacted: Counter[str] = Counter()
                mine = captured.own_messages(new.messages)
                report.messages = len(mine)
                if markers:
                    text = captured.marker_text(mine)
                    if text:
                        began = self._clock()
                        with provenance_activity(channel="transcript", part=f"bytes {report.read_from}-{new.end}"):
                            done = self.agent_end(agent, text, project)
                        # a line stored before (by a hook, say) is refreshed: found again, not stored
                        report.stored.extend(m for m in done if m.created_at >= began)
                        report.confirmed.extend(m.id for m in done if m.created_at < began)
                        redacted.update(done.redacted)
                    checkpoints.set(agent, real, markers=new.end, session=session)
                if mine:
                    report.used = [m.id for m in self.record_use(agent, captured.output_text(mine), session=session)]
                if tasks:
                    with provenance_activity(channel="task"):
                        report.tasks = self._record_outcomes(new.subagent_tasks)
                if settings is None:
                    # the model's checkpoint stays: a model configured later extracts what this run could not
                    report.note = ("no language model configured (CORTEX_LLM_URL): marker lines only; "
                                   "docs/capture.md says how to set one up")
                else:
                    prepared = self._prepared.pop((agent, real, offsets["llm"], behind.end), None)
                    with provenance_activity(channel="llm", model=settings.model,
                                             part=f"bytes {offsets['llm']}-{behind.end}"):
                        self._extract(agent, captured.own_messages(behind.messages), settings, project, summary,
                                      session, real, report, redacted, prepared)
                    if not report.pending:
                        checkpoints.set(agent, real, llm=behind.end, session=session)
                report.redacted = dict(redacted)
                if redacted:
                    notices.notice(f"capture of {os.path.basename(real)!r} for agent {agent!r} "
                                   f"{_redaction_note(redacted)} before storing it")
        return report

    def adopt_extraction(self, key: tuple[str, str, int, int], extraction: Any) -> None:
        """Use ``extraction`` (from :func:`cortex.capture.session.prepare`) when a capture reads exactly the part
        ``key`` names, instead of asking the model again."""
        self._prepared[key] = extraction

    def _extract(self, agent: str, mine: Sequence[Any], settings: "LLMSettings",
                 project: str, summary: bool, session: str | None, transcript: str, report: CaptureReport,
                 redacted: Counter[str], prepared: Any = None) -> None:
        """The model's part of a capture: learnings through redaction and the quality gate, and the summary."""
        from cortex.capture import session as captured
        from cortex.capture.gate import Gate, meaning

        report.llm = True
        got = prepared if prepared is not None else captured.extract(mine, settings, summary=summary)
        report.problems.extend(got.problems)
        report.pending = got.pending
        meta = captured.metadata(session, transcript, settings.model)
        candidates = [dict(item, content=self.redactor.scrub(item["content"], redacted)) for item in got.learnings]
        existing: dict[str, str] = {}
        for item in candidates:
            try:
                for hit in self.search(agent, item["content"][:2000], limit=5, mode="bm25", rerank=False).hits:
                    existing[hit.memory.id] = hit.memory.content
            except CortexError:
                continue
        # with a model, a paraphrase that only adds or drops words is a duplicate too (measured: docs/capture.md)
        gate = Gate(list(existing.items()), vectors=meaning(self._memories.embeddings))
        entries = []
        for item, verdict in zip(candidates, gate.judge_all([c["content"] for c in candidates])):
            if verdict.action == "store":
                entries.append({**item, "project": project, "source": Source.AGENT_END,
                                "tags": captured.tags_of(item["tags"]), "metadata": meta})
            elif verdict.action == "confirm" and verdict.match is not None:
                try:
                    report.confirmed.append(self.validate(agent, verdict.match).id)
                except CortexError:
                    pass
            else:
                report.refused[verdict.reason or "refused"] = report.refused.get(verdict.reason or "refused", 0) + 1
        if got.summary:
            text = self.redactor.scrub(got.summary, redacted)
            entries.append({"content": f"Session summary: {text}", "type": "insight", "project": project,
                            "source": Source.SESSION_SUMMARY, "tags": ["session-summary"], "metadata": meta})
        good = []
        for entry in entries:
            try:
                memory_from_entry(agent, entry, self._clock())
                good.append(entry)
            except InvalidInputError as exc:
                report.problems.append(f"a captured memory was not valid: {exc}")
        stored = self.store_many(agent, good) if good else []
        for memory in stored:
            if memory.source is Source.SESSION_SUMMARY:
                report.summary = memory
            else:
                report.stored.append(memory)

    def _record_outcomes(self, calls: Sequence[Any]) -> list[Memory]:
        """A task outcome under each declared subagent the transcript's subagent calls name (built-in and
        undeclared agents have no memory: skipped)."""
        from cortex.capture import session as captured

        recorded = []
        known: dict[str, set[Any]] = {}  # per agent, the tasks it has outcomes of (read once per capture)
        for agent_type, task, result, status in captured.subagent_outcomes(calls):
            name = self.resolve_agent(agent_type)
            if name is None:
                continue
            if name not in known:
                known[name] = {(m.metadata or {}).get("task") for m in
                               self.list_memories(name, source=Source.TASK_COMPLETION, limit=1000).items}
            shown = tasks.task_entry(task, result, status)["metadata"]["task"]
            if shown in known[name]:
                continue  # recorded already (by the SubagentStop hook, or an earlier capture)
            recorded.append(self.record_task(name, task, result, status))
            known[name].add(shown)
        return recorded

    def record_task(self, agent: str, task: str, output: str = "", status: str = "ok", *,
                    project: str | None = None) -> Memory:
        """Record a finished task's outcome as a ``task_completion`` memory of ``agent`` (source TTL: 7 days by
        default): ``Task done: <task>`` / ``Task failed: <task>``, then the outcome or what went wrong, bounded
        (:mod:`cortex.capture.tasks`); tagged ``task-outcome`` and ``task-ok``/``task-failed``. Captured text:
        its secrets are redacted (a warning says so)."""
        entry = tasks.task_entry(task, output, status)
        redacted: Counter[str] = Counter()
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
