"""A transcript capture as steps (docs/capture.md, "Transcripts"): what :meth:`cortex.app.Cortex.capture_transcript`
runs, in order, under its capture lock (the model is asked before: :func:`cortex.capture.session.prepare`).

:meth:`TranscriptCapture.read` reads the transcript from its checkpoints (the markers' and the model's); within
:meth:`TranscriptCapture.activity` (the session and file every write records), :meth:`~TranscriptCapture.markers`
stores the marker lines as at agent end, :meth:`~TranscriptCapture.used` gives the "used" signal,
:meth:`~TranscriptCapture.tasks` records the subagents' task outcomes and :meth:`~TranscriptCapture.model` has the
language model extract learnings and a summary (through redaction and the quality gate); each step moves its own
checkpoint only after what it covers is stored. The steps write through a :class:`CapturePort` (the few facade
operations they need), not the facade itself.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol

from cortex.capture import session as captured
from cortex.capture.checkpoints import Checkpoints
from cortex.capture.redact import Redactor
from cortex.capture.tasks import task_entry
from cortex.capture.transcripts import Message, Transcript, read
from cortex.errors import CortexError, InvalidInputError, NotYoursError
from cortex.model import Captured, CaptureReport, Memory, Page, ReviewItem, SearchResult, Source
from cortex.provenance import activity as provenance_activity
from cortex.validation import memory_from_entry

if TYPE_CHECKING:
    from cortex.embeddings import EmbeddingProvider
    from cortex.llm import LLMSettings

#: A part of a transcript an extraction covers: (agent, transcript, from, to), as :func:`session.prepare` keys it.
PartKey = tuple[str, str, int, int]


class CapturePort(Protocol):
    """The operations of the facade a transcript capture writes and reads through."""

    def agent_end(self, agent: str, output: str, project: str | None = None) -> Captured: ...

    def record_use(self, agent: str, output: str, *, session: str | None = None) -> list[Memory]: ...

    def record_task(self, agent: str, task: str, output: str = "", status: str = "ok") -> Memory: ...

    def resolve_agent(self, name: str) -> str | None: ...

    def list_memories(self, agent: str, *, source: Source | str | None = None, limit: int = 50) -> Page: ...

    def search(self, agent: str, query: str, *, mode: str = ..., limit: int = ..., rerank: bool = ...) \
            -> SearchResult: ...

    def validate(self, agent: str, memory_id: str) -> Memory: ...

    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]: ...

    def hold_memory(self, agent: str, entry: Mapping[str, Any], *, reason: str, actor: str,
                    origin: Mapping[str, Any]) -> ReviewItem: ...


class TranscriptCapture:
    """One capture of the transcript at the real path ``transcript`` for ``agent`` (into ``project``): its
    :attr:`report` filled step by step, :attr:`redacted` counting the secrets replaced on the way."""

    #: set by :meth:`read`: the checkpoints it read from, what it read (``new``; ``behind``: the model's part),
    #: the agent's own messages of ``new``, and the report
    offsets: dict[str, int]
    new: Transcript
    behind: Transcript
    mine: list[Message]
    report: CaptureReport
    #: set by :meth:`read`: the open transcript it read (None: by its path), and where ``new`` starts
    handle: BinaryIO | None
    start: int

    def __init__(self, port: CapturePort, agent: str, transcript: str, project: str, checkpoints: Checkpoints, *,
                 redactor: Redactor, clock: Callable[[], datetime],
                 embeddings: EmbeddingProvider | None = None) -> None:
        self.port = port
        self.agent = agent
        self.transcript = transcript
        self.project = project
        self.checkpoints = checkpoints
        self.redactor = redactor
        self.clock = clock
        self.embeddings = embeddings
        self.redacted: Counter[str] = Counter()
        self.settings: LLMSettings | None = None

    def read(self, settings: LLMSettings | None, *, markers: bool = True,
             format: str | None = None, handle: BinaryIO | None = None) -> CaptureReport:
        """Read what is new since the checkpoints (the markers' with ``markers``, else the model's; the model's
        own part when ``settings`` names a model and its checkpoint is elsewhere) and start the report. With
        ``handle`` (the transcript opened once, checked on that handle) every read is of that open file."""
        agent, real = self.agent, self.transcript
        self.settings = settings
        self.offsets = offsets = self.checkpoints.get(agent, real)
        self.handle, self.start = handle, offsets["markers"] if markers else offsets["llm"]
        self.new = new = read(real, self.start, format=format, handle=handle)
        # the model's part has its own checkpoint: behind the markers' after a failed call, ahead of it after a
        # capture that left the markers to the hooks
        self.behind = behind = read(real, offsets["llm"], format=format, handle=handle) \
            if settings is not None and markers and offsets["llm"] != offsets["markers"] else new
        session = new.session_id or behind.session_id or self.checkpoints.session(agent, real)
        self.report = CaptureReport(agent=agent, transcript=real, format=new.format, session=session,
                                    read_from=offsets["llm"] if behind is not new else
                                    offsets["markers"] if markers else offsets["llm"],
                                    read_to=new.end, problems=list(new.problems))
        self.mine = captured.own_messages(new.messages)
        self.report.messages = len(self.mine)
        return self.report

    @property
    def part(self) -> PartKey:
        """The part the model reads, as an extraction prepared before the store was opened names it."""
        return (self.agent, self.transcript, self.offsets["llm"], self.behind.end)

    def activity(self) -> AbstractContextManager[Any]:
        """The provenance of every write of the capture: the transcript's session (when it says) and file name."""
        name = os.path.basename(self.transcript)
        session = self.report.session
        return provenance_activity(session=session, file=name) if session else provenance_activity(file=name)

    def markers(self) -> None:
        """Store the marker lines of the agent's own text (as at agent end), then move the markers' checkpoint."""
        report, session = self.report, self.report.session
        text = captured.marker_text(self.mine)
        if text:
            began = self.clock()
            with provenance_activity(channel="transcript", part=f"bytes {report.read_from}-{self.new.end}"):
                done = self.port.agent_end(self.agent, text, self.project)
            # a line stored before (by a hook, say) is refreshed: found again, not stored
            report.stored.extend(m for m in done if m.created_at >= began)
            report.confirmed.extend(m.id for m in done if m.created_at < began)
            self.redacted.update(done.redacted)
        self.checkpoints.set(self.agent, self.transcript, markers=self.new.end, session=session)

    def used(self) -> None:
        """The "used" signal of what the agent's own messages drew on."""
        if self.mine:
            self.report.used = [m.id for m in self.port.record_use(self.agent, captured.output_text(self.mine),
                                                                    session=self.report.session)]

    def tasks(self) -> None:
        """A task outcome under each declared subagent the transcript's subagent calls name (built-in and
        undeclared agents have no memory: skipped)."""
        origin = {"channel": "task", "session": self.report.session, "file": os.path.basename(self.transcript),
                  "tool": "Task"}
        calls = self.new.subagent_tasks
        start = self.start
        if start > 0 and any(not c.agent_type for c in calls):
            # a background subagent's result arrived after the part its call was read in: find that call
            try:
                earlier = read(self.transcript, 0, format=self.new.format, max_bytes=start, handle=self.handle)
                calls = captured.matched(calls, earlier.subagent_tasks)
            except (CortexError, OSError) as exc:
                self.report.problems.append(f"the calls of earlier subagent results were not read: {exc}")
        with provenance_activity(channel="task"):
            self.report.tasks = record_outcomes(self.port, calls, self.report, capturer=self.agent,
                                                origin=origin, held=self.report.held)

    def model(self, *, summary: bool = True, prepared: MutableMapping[PartKey, Any] | None = None,
              ask: bool = True) -> None:
        """The model's part: learnings and (``summary``) a summary of its part, from an extraction ``prepared``
        holds for it (one that starts at the model's checkpoint and ends at or before what is there now) or, with
        ``ask``, by asking the model; its checkpoint moves to the end of what was extracted unless the model
        failed. Without ``ask`` (the caller holds a lock others need, :meth:`cortex.app.Cortex.capture_transcript`)
        a part nothing prepared is left ``pending`` for the next run. Without a model, the report's note says so
        (and the checkpoint stays: a model configured later extracts what this run could not)."""
        settings, report = self.settings, self.report
        if settings is None:
            report.note = ("no language model configured (CORTEX_LLM_URL): marker lines only; "
                           "docs/capture.md says how to set one up")
            return
        got, end = self._prepared(prepared)
        if got is None and not ask:
            report.pending = True
            report.problems.append("the transcript's model part changed while the model read it; the next run "
                                   "extracts it")
            return
        with provenance_activity(channel="llm", model=settings.model,
                                 part=f"bytes {self.offsets['llm']}-{end}"):
            self._extract(captured.own_messages(self.behind.messages), settings, summary, got)
        if not report.pending:
            self.checkpoints.set(self.agent, self.transcript, llm=end, session=report.session)

    def _prepared(self, prepared: MutableMapping[PartKey, Any] | None) -> tuple[Any, int]:
        """The extraction ``prepared`` holds for the model's part (None when none) and where the part ends."""
        start = self.offsets["llm"]
        for key in list(prepared or ()):
            agent, transcript, begun, ended = key
            if (agent, transcript, begun) == (self.agent, self.transcript, start) and ended <= self.behind.end:
                return prepared.pop(key) if prepared is not None else None, ended
        return None, self.behind.end

    def finish(self) -> Counter[str]:
        """Close the report: the secrets replaced, by rule (returned, for the facade's notice)."""
        self.report.redacted = dict(self.redacted)
        return self.redacted

    def _extract(self, mine: Sequence[Message], settings: LLMSettings, summary: bool, prepared: Any = None) -> None:
        """Learnings through redaction and the quality gate, and the summary."""
        from cortex.capture.gate import Gate, meaning

        agent, report, redacted = self.agent, self.report, self.redacted
        report.llm = True
        got = prepared if prepared is not None else captured.extract(mine, settings, summary=summary)
        report.problems.extend(got.problems)
        report.pending = got.pending
        meta = captured.metadata(report.session, self.transcript, settings.model)
        candidates = [dict(item, content=self.redactor.scrub(item["content"], redacted)) for item in got.learnings]
        existing: dict[str, str] = {}
        for item in candidates:
            try:
                for hit in self.port.search(agent, item["content"][:2000], limit=5, mode="bm25", rerank=False).hits:
                    existing[hit.memory.id] = hit.memory.content
            except CortexError:
                continue
        # with a model, a paraphrase that only adds or drops words is a duplicate too (measured: docs/capture.md)
        gate = Gate(list(existing.items()), vectors=meaning(self.embeddings))
        own = "\n".join(m.text for m in mine if m.role == "assistant" and m.kind == "text")
        read = "\n".join(m.text for m in mine if not (m.role == "assistant" and m.kind == "text"))
        entries = []
        for item, verdict in zip(candidates, gate.judge_all([c["content"] for c in candidates])):
            if verdict.action == "store":
                entries.append({**item, "project": self.project, "source": Source.AGENT_END,
                                "tags": captured.tags_of(item["tags"]), "metadata": meta})
                self._vet_learning(entries, own, read)
            elif verdict.action == "confirm" and verdict.match is not None:
                try:
                    report.confirmed.append(self.port.validate(agent, verdict.match).id)
                except CortexError:
                    pass
            else:
                report.refused[verdict.reason or "refused"] = report.refused.get(verdict.reason or "refused", 0) + 1
        if got.summary:
            text = self.redactor.scrub(got.summary, redacted)
            entries.append({"content": f"Session summary: {text}", "type": "insight", "project": self.project,
                            "source": Source.SESSION_SUMMARY, "tags": ["session-summary"], "metadata": meta})
        self._store(entries)

    def _vet_learning(self, entries: list[dict[str, Any]], own: str, read: str) -> None:
        """The last of ``entries``, a learning the model took out of the session: marked as learned from text
        the agent read (``metadata.learned_from: read``: a team's round end holds what rests on it) unless the
        agent's own messages (``own``) hold it as much as what it read (``read``) does; held for review instead of stored (moved to the report's
        ``held``) when it reads as an instruction to agents (docs/capture.md, "Held for review")."""
        from cortex.capture.instructions import READ, READ_KEY, instruction_reason, written_by_agent

        if not written_by_agent(str(entries[-1]["content"]), own, read):
            entries[-1]["metadata"] = {**entries[-1]["metadata"], READ_KEY: READ}
        reason = instruction_reason(str(entries[-1]["content"]))
        if reason is not None:
            entry, report = entries.pop(), self.report
            origin = {"channel": "llm", "session": report.session, "file": os.path.basename(self.transcript),
                      "extractor": self.settings.model if self.settings is not None else None}
            report.held.append(self.port.hold_memory(self.agent, entry, reason=f"the learning {reason}",
                                                     actor=self.agent, origin=origin))

    def _store(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Store the valid entries in one write (an invalid one is a problem of the report); the summary is the
        report's :attr:`~CaptureReport.summary`, the others are stored learnings."""
        report, good = self.report, []
        for entry in entries:
            try:
                memory_from_entry(self.agent, entry, self.clock())
                good.append(entry)
            except InvalidInputError as exc:
                report.problems.append(f"a captured memory was not valid: {exc}")
        for memory in self.port.store_many(self.agent, good) if good else []:
            if memory.source is Source.SESSION_SUMMARY:
                report.summary = memory
            else:
                report.stored.append(memory)


def record_outcomes(port: CapturePort, calls: Sequence[Any], report: CaptureReport | None = None, *,
                    capturer: str | None = None, origin: Mapping[str, Any] | None = None,
                    held: list[ReviewItem] | None = None) -> list[Memory]:
    """Record the outcome of each subagent call of ``calls`` under the declared agent it names, unless that agent
    has it already (by the SubagentStop hook, or an earlier capture); returns the memories recorded. An agent the
    caller may not write (:mod:`cortex.caller`: another agent than its token's) gets nothing: counted in
    ``report.refused`` as ``not yours: AGENT`` and said in its problems. An outcome for an agent other than
    ``capturer`` is held for review instead (appended to ``held``; docs/capture.md, "Held for review")."""
    from cortex.capture.instructions import instruction_reason

    recorded = []
    known: dict[str, set[Any]] = {}  # per agent, the tasks it has outcomes of (read once per capture)
    for agent_type, task, result, status in captured.subagent_outcomes(calls):
        name = port.resolve_agent(agent_type)
        if name is None:
            continue
        try:
            if name not in known:
                known[name] = {(m.metadata or {}).get("task") for m in
                               port.list_memories(name, source=Source.TASK_COMPLETION, limit=1000).items}
            shown = task_entry(task, result, status)["metadata"]["task"]
            if shown in known[name]:
                continue  # recorded already (by the SubagentStop hook, or an earlier capture)
            if capturer is not None and name != capturer:  # another agent's memory, from the capturer's transcript
                reason = instruction_reason(f"{task}\n{result}")
                why = f"the subagent's result {reason}" if reason else (
                    f"a task outcome for {name} from {capturer}'s transcript: its text is what that transcript says "
                    f"the subagent answered, which may carry what the subagent read")
                item = port.hold_memory(name, task_entry(task, result, status), reason=why, actor=capturer,
                                        origin=dict(origin or {}, subagent=agent_type))
                if held is not None:
                    held.append(item)
            else:
                recorded.append(port.record_task(name, task, result, status))
            known[name].add(shown)
        except NotYoursError as exc:
            if report is not None:
                reason = f"not yours: {name}"
                if reason not in report.refused:
                    report.problems.append(f"the outcomes of subagent {name!r} were not recorded: this capture "
                                           f"runs for agent {exc.caller!r}, whose token may not write {name!r}")
                report.refused[reason] = report.refused.get(reason, 0) + 1
    return recorded
