"""The data model: :class:`Memory`, :class:`MemoryType`, :class:`Scope`, the :class:`Query` every read takes,
and the results the API returns: of ranked search, capture, imports (:class:`Violation`), agent definitions
(:class:`AgentProblem`) and consolidation (:class:`ConsolidationReport`, :class:`ReviewItem`, :class:`RunInfo`,
:class:`UndoReport`). Validation of user input lives in :mod:`cortex.validation`."""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cortex import config
from cortex.errors import InvalidInputError
from cortex.model_sessions import MemoryUsage as MemoryUsage, SessionDetail as SessionDetail  # noqa: I001
from cortex.model_sessions import SessionInfo as SessionInfo, SessionMemory as SessionMemory
from cortex.model_sessions import SessionPage as SessionPage, SessionStart as SessionStart, UsageOrder as UsageOrder


class MemoryType(StrEnum):
    """What kind of learning a memory is (the values are ``config.MEMORY_TYPES``)."""

    PATTERN = "pattern"
    CONVENTION = "convention"
    INSIGHT = "insight"
    DECISION = "decision"


assert tuple(MemoryType) == config.MEMORY_TYPES


DEFAULT_TYPE = MemoryType(config.DEFAULT_TYPE)


class Source(StrEnum):
    """Where a memory came from; its default time to live and decay follow from it (docs/lifecycle.md)."""

    MANUAL = "manual"
    AGENT_END = "agent_end"
    TASK_COMPLETION = "task_completion"
    SESSION_SUMMARY = "session_summary"
    FILE_INDEX = "file_index"
    IMPORT = "import"
    INJECTED = "injected"


class Memory(BaseModel):
    """One memory, as stored: its content and fields, its lifecycle (source, expiry, versions, validation,
    valid time and supersession) and where it lives (``scope``: ``agent`` for the agent's own memories,
    ``team:{name}`` or ``swarm`` for shared ones; ``author``: the agent that wrote it)."""

    # defer_build: the validation schema is built on first use, not at import (a hook that only reads
    # memories, built with model_construct, never pays for it)
    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    #: the agent whose private memory this is, or (for a shared memory) the one that wrote it
    agent: str
    content: str
    type: MemoryType
    project: str
    confidence: float
    usage_count: int
    created_at: datetime
    last_used_at: datetime
    source: Source = Source.MANUAL
    expires_at: datetime | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None
    version: int = 1
    updated_at: datetime | None = None
    validated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    superseded_by: str | None = None
    #: why it was superseded, when the supersession said
    superseded_reason: str | None = None
    scope: str = "agent"
    author: str | None = None
    #: times an output drew on the memory after it was shown (cortex.capture.usage); being shown does not count
    used_count: int = 0
    #: where the memory lives: ``cortex`` (this store) or the name of the memory provider a read of the ``both`` or
    #: ``external`` engine brought it from (cortex.providers; such a memory is not in the store)
    origin: str = "cortex"

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        """A memory made from fields: written by its agent, not updated since and valid from its creation."""
        if isinstance(data, dict):
            data = dict(data)
            for name, default in (("author", "agent"), ("updated_at", "created_at"), ("valid_from", "created_at")):
                if data.get(name) is None:
                    data[name] = data.get(default)
        return data

    @classmethod
    def trusted(cls, values: dict[str, Any]) -> "Memory":
        """A memory from values that are already typed and complete (every field, e.g. from the index and
        the store): no validation, ~5x cheaper than ``model_construct``, which a read pays per hit."""
        memory = cls.__new__(cls)
        object.__setattr__(memory, "__dict__", values)
        object.__setattr__(memory, "__pydantic_fields_set__", set(values))
        object.__setattr__(memory, "__pydantic_extra__", None)
        object.__setattr__(memory, "__pydantic_private__", None)
        return memory

    def expired(self, now: datetime) -> bool:
        """Whether the memory's time to live has run out at ``now``."""
        return self.expires_at is not None and self.expires_at <= now

    @property
    def superseded(self) -> bool:
        """Whether a newer memory replaced this one."""
        return self.valid_until is not None


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


_last_id = [0, 0]  # (ms, random part) of the previous id of this process
_id_lock = threading.Lock()


def new_memory_id() -> str:
    """A new URL-safe memory id that sorts by creation time: 12 hex digits of ms, 16 hex digits that are random
    for the first id of a millisecond and one more for each next one (as ULID's monotonic mode), so the ids of
    one process sort in the order they were made."""
    with _id_lock:
        ms = time.time_ns() // 1_000_000
        last_ms, last_random = _last_id
        if ms <= last_ms and last_random < 2**64 - 1:
            ms, random = last_ms, last_random + 1
        else:
            random = int.from_bytes(os.urandom(8), "big") >> 1  # half the range: room to count up
        _last_id[:] = [ms, random]
    return f"{ms:012x}{random:016x}"


@dataclass(frozen=True, order=True)
class Scope:
    """Where memories live: one named graph of the store and one derived index each.

    Today every memory is in its agent's scope (``Scope.agent(name)``: graph ``{ns}:graph:agent:{name}``).
    The scope is the store's and the index's key; who may read or write it is the facade's business.
    """

    kind: str
    name: str = ""

    @classmethod
    def agent(cls, name: str) -> "Scope":
        """The private scope of agent ``name`` (a validated agent name)."""
        return cls("agent", name)

    @classmethod
    def team(cls, name: str) -> "Scope":
        """The shared scope of team ``name`` (graph ``{ns}:graph:team:{name}``)."""
        return cls("team", name)

    @classmethod
    def swarm(cls) -> "Scope":
        """The scope every agent reads (graph ``{ns}:graph:swarm``)."""
        return cls("swarm")

    @property
    def shared(self) -> bool:
        return self.kind != "agent"

    @property
    def relative(self) -> str:
        """The scope as an agent names it: ``agent`` (its own), ``team:{name}`` or ``swarm``."""
        return "agent" if self.kind == "agent" else self.key

    @property
    def key(self) -> str:
        """A stable text key, e.g. ``agent:reviewer``."""
        return f"{self.kind}:{self.name}" if self.name else self.kind

    @property
    def label(self) -> str:
        """How messages name the scope, e.g. ``agent 'reviewer'``."""
        return f"{self.kind} {self.name!r}" if self.name else f"the {self.kind}"

    @property
    def dirname(self) -> str:
        """A file-system name for the scope's derived files (agent scopes keep the bare agent name)."""
        return self.name if self.kind == "agent" else f"@{self.key.replace(':', '.')}"

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True)
class Filters:
    """What a read keeps, applied inside the index before the limit. None means no filter.

    Time: by default only current memories (not expired at ``now``, not superseded); ``include_expired`` and
    ``include_superseded`` widen that; ``as_of`` answers for a past moment instead (recorded by then, valid then,
    not yet expired then). ``tags``: every one of them must be present.
    """

    types: frozenset[MemoryType] | None = None
    projects: frozenset[str] | None = None
    tags: frozenset[str] | None = None
    sources: frozenset[Source] | None = None
    include_expired: bool = False
    include_superseded: bool = False
    as_of: datetime | None = None
    #: The moment "current" is judged at (set by the facade from its clock).
    now: datetime | None = None


NO_FILTERS = Filters()


@dataclass(frozen=True)
class Query:
    """One read: who asks, the text (None: no text), the filters and how many results.

    Built and validated by :meth:`cortex.Cortex.recall`/:meth:`~cortex.Cortex.search` (see
    :func:`cortex.validation.query`); the engine and the index take it as it is.
    """

    agent: str
    text: str | None = None
    filters: Filters = field(default=NO_FILTERS)
    limit: int = config.DEFAULT_LIMIT
    #: The scopes read (default: resolved by the facade: the agent's own, its teams', the swarm).
    scopes: tuple[Scope, ...] = ()


class Hit(BaseModel):
    """One ranked search result."""

    model_config = ConfigDict(defer_build=True)

    memory: Memory
    score: float
    #: With ``explain=True``: the score's components (:func:`cortex.search.search` lists them and their product).
    explain: dict[str, float] | None = None


class SearchResult(BaseModel):
    """Hits of :meth:`cortex.Cortex.search`, best first, with the mode actually used."""

    model_config = ConfigDict(defer_build=True)

    hits: list[Hit]
    mode: str
    requested_mode: str
    #: Set when the requested mode could not be used (e.g. no embedding provider) and what was done instead.
    note: str | None = None
    #: With the ``both`` or ``external`` engine: each memory provider asked and how it answered (``ok``, or why not:
    #: a time-out, an error, its breaker open).
    providers: dict[str, str] | None = None

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self) -> Iterator[Hit]:  # type: ignore[override]
        return iter(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]


class Page(BaseModel):
    """One page of :meth:`cortex.Cortex.list_memories`: newest first; ``next_cursor`` is None at the end."""

    model_config = ConfigDict(defer_build=True)

    items: list[Memory]
    next_cursor: str | None = None


class GeneratedBy(BaseModel):
    """The activity (PROV-O ``prov:Activity``) that created a memory: where the write came from."""

    model_config = ConfigDict(defer_build=True)

    activity: str
    surface: str | None = None
    event: str | None = None
    session: str | None = None
    tool: str | None = None
    #: captured memories: the channel (marker, transcript, llm, task), the file read, which part, the model
    channel: str | None = None
    file: str | None = None
    part: str | None = None
    model: str | None = None
    #: the consolidation run that made it (``cortex consolidate --undo RUN`` takes this id)
    run: str | None = None
    started_at: datetime | None = None
    associated_with: str | None = None


class Revision(GeneratedBy):
    """A change of an existing memory (an activity of its own, with ``agentmem:action``): what was done
    (``update``, ``validate``, ``supersede``), by which agent (``associated_with``, ``prov:wasAssociatedWith``: a
    lead editing a team memory is not its author), when (``started_at``) and through which surface; ``rule``: why,
    when the change says (a secret scan's ``secret scan: 2 github-token``, never the secret)."""

    action: str
    rule: str | None = None


class WrittenMemory(Memory):
    """A memory as a write answers it (HTTP, MCP): the memory, and what the caller must know about it."""

    warnings: list[str] = Field(default_factory=list, description="E.g. that the prune at the agent's next "
                                                                   "agent_end will delete it")

    @classmethod
    def of(cls, memory: Memory, warnings: list[str]) -> "WrittenMemory":
        """``memory`` with ``warnings``."""
        return cls.model_validate({**memory.model_dump(), "warnings": list(warnings)})


class Pruned(BaseModel):
    """A memory deleted by the prune at agent end (reported by ``agent_end``, recorded as a ``prune`` activity)."""

    model_config = ConfigDict(defer_build=True)

    id: str
    agent: str
    content: str
    confidence: float
    #: the rule that selected it (its confidence under the threshold, or unused for too long)
    rule: str


class Captured(list[Memory]):
    """What ``agent_end`` returns: the memories stored or refreshed (a list, as before), in :attr:`pruned` the
    memories its prune deleted, and in :attr:`redacted` how many secrets were replaced before storing, by rule
    (``aws-access-key``, ``assigned-secret``, ... see :mod:`cortex.capture.redact`)."""

    def __init__(self, memories: Iterable[Memory] = (), pruned: Iterable[Pruned] = (),
                 redacted: dict[str, int] | None = None) -> None:
        super().__init__(memories)
        self.pruned: list[Pruned] = list(pruned)
        self.redacted: dict[str, int] = dict(redacted or {})


class CaptureReport(BaseModel):
    """What ``capture_transcript`` did with a transcript (docs/capture.md, "Transcripts")."""

    model_config = ConfigDict(defer_build=True)

    agent: str
    transcript: str
    #: ``claude``, ``codex``, ``cursor``, ``gemini``, ``messages`` or ``text``
    format: str
    #: the session the transcript records, when it says
    session: str | None = None
    #: bytes of the transcript read by this run (from the checkpoint on) and the messages in them
    read_from: int = 0
    read_to: int = 0
    messages: int = 0
    #: the memories stored: marker lines and extracted learnings, then the session summary
    stored: list[Memory] = []
    #: ids of stored memories the capture found again (validated instead of stored twice)
    confirmed: list[str] = []
    #: candidates the quality gate refused, by reason (``session-chatter``, ``too-little-information``, ``only-a-secret``...)
    refused: dict[str, int] = {}
    #: secrets replaced before storing, by rule
    redacted: dict[str, int] = {}
    summary: Memory | None = None
    #: task outcomes recorded from the subagent calls the transcript shows
    tasks: list[Memory] = []
    #: task outcomes for another agent that read as instructions: held for review (``cortex review AGENT``)
    held: list["ReviewItem"] = []
    #: memories shown to the agent that its output drew on (the "used" signal)
    used: list[str] = []
    #: whether a language model extracted learnings (else marker lines only), and why not
    llm: bool = False
    note: str | None = None
    #: what could not be read or extracted (malformed lines, a failed model call), the rest processed
    problems: list[str] = []
    #: the model's part failed for a reason that may pass: not checkpointed, the next run tries it again
    pending: bool = False
    #: ids of existing memories the capture superseded (``SUPERSEDES <id>:`` lines)
    superseded: list[str] = []
    #: the capture's run, when it wrote anything: what ``cortex capture --undo RUN`` takes
    run: str | None = None
    #: a dry run (``dry_run``): what it reports would be stored, confirmed and superseded; nothing was written
    dry_run: bool = False


class NotesReport(BaseModel):
    """What a notes sync did for one agent (docs/capture.md, "Markdown notes")."""

    model_config = ConfigDict(defer_build=True)

    agent: str
    #: notes files read, and those whose memories changed
    files: int = 0
    changed_files: list[str] = []
    #: ids of the memories added, of those that superseded a changed chunk, and of those that left recall
    added: list[str] = []
    updated: list[str] = []
    removed: list[str] = []
    unchanged: int = 0
    #: files (or directories) not read, each with why: binary, too large, unreadable, a link out of the directory
    skipped: list[str] = []


class ImportItem(BaseModel):
    """One item of an import from another memory system: where it was read, its stable key, and what became of
    it."""

    model_config = ConfigDict(defer_build=True)

    #: the file and line (``knowledge.jsonl:3``), item (``get_all.json: results[2]``) or lines it was read from
    where: str
    #: its identity in the source system (a Beads key, a mem0 id, entity + observation, file + heading)
    key: str | None = None
    #: ``memory``, or ``relation`` (a triple between two entities)
    kind: str = "memory"
    #: the memory it became (None in a dry run), or for a skipped item the memory already holding it
    memory_id: str | None = None
    #: the memory of the same key it replaced (a newer version of the item)
    supersedes: str | None = None
    #: why it was skipped or failed
    reason: str | None = None


class ImportReport(BaseModel):
    """What ``import_from`` did with the files of another memory system (docs/capture.md, "Importers")."""

    model_config = ConfigDict(defer_build=True)

    system: str
    agent: str
    #: the files read, in order
    files: list[str] = []
    #: nothing was written: the report says what an import would do
    dry_run: bool = False
    imported: list[ImportItem] = []
    #: already there (an import run again), or older than what is there, or not memory data (a Beads issue line)
    skipped: list[ImportItem] = []
    #: not imported, with the reason (bad JSON, a truncated line, a line without a key, an invalid field)
    failed: list[ImportItem] = []
    #: secrets replaced by placeholders before storing, by rule
    redacted: dict[str, int] = {}
    #: entity nodes written (the MCP memory server's entities, mem0's graph)
    entities: int = 0


class SecretFinding(BaseModel):
    """Secrets a scan found in one place of a store (:meth:`cortex.Cortex.scan_secrets`): a memory as it is now
    (``version`` its current one), one of its earlier versions, or another record of its scope (``where``:
    ``provenance`` for activities and consolidation runs, ``graph`` for entity nodes); how many of each rule.
    The secret itself is never part of a report."""

    model_config = ConfigDict(defer_build=True)

    scope: str
    where: Literal["memory", "version", "provenance", "graph"]
    memory_id: str | None = None
    version: int | None = None
    rules: dict[str, int] = {}


class SecretScan(BaseModel):
    """What a scan of a store for secrets found and (``redacted``) replaced by placeholders, in every version of
    every memory and the other records of each scope; the derived indexes are rebuilt from the redacted store."""

    model_config = ConfigDict(defer_build=True)

    #: False: a dry run (nothing written)
    redacted: bool = False
    #: the scopes scanned (``agent:dev``, ``team:backend``, ``swarm``)
    scopes: list[str] = []
    findings: list[SecretFinding] = []
    #: every secret found, by rule
    total: dict[str, int] = {}


class Provenance(BaseModel):
    """Where a memory comes from, as its PROV-O triples say (:meth:`cortex.Cortex.provenance`)."""

    model_config = ConfigDict(defer_build=True)

    memory_id: str
    scope: str
    #: The agent that wrote it (``prov:wasAttributedTo``).
    attributed_to: str | None
    generated_by: GeneratedBy | None = None
    #: Memories it was derived from (``prov:wasDerivedFrom``: the ones it superseded).
    derived_from: list[str] = Field(default_factory=list)
    superseded_by: str | None = None
    #: Earlier versions kept by updates (``prov:wasRevisionOf``), oldest first.
    versions: list[int] = Field(default_factory=list)
    #: Every change made to it since it was created (update, validation, supersession), oldest first.
    changes: list[Revision] = Field(default_factory=list)


@dataclass(frozen=True)
class IndexStatus:
    """What :meth:`cortex.Cortex.index_status` reports about one scope's derived index."""

    scope: str
    #: memories the index holds, and memory subjects in the store
    memories: int
    stored: int
    #: memories with a vector, and the model that made them
    vectors: int
    vector_model: str | None
    #: full rebuilds from a store scan this process made (0 after a clean start or a replay of the log)
    rebuilds: int
    #: the number of the store's latest change the index reflects, and how many came since its snapshot
    seq: int
    pending: int


# -- problems: of an agent definition file, of an import ----------------------------------------------------

@dataclass(frozen=True)
class AgentProblem:
    """One thing wrong with one definition file."""

    path: Path
    field: str
    message: str
    #: The name the file declares, when it could be read (None: unknown, the file may declare any agent).
    agent: str | None = dataclasses.field(default=None, compare=False)

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"


@dataclass(frozen=True)
class Violation:
    """One problem of an import: the focus node, the property (path) and what is wrong."""

    focus: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.focus} {self.path}: {self.message}"


# -- consolidation: what a run did (docs/consolidation.md) --------------------------------------------------

class Merge(BaseModel):
    """Near duplicates merged: ``merged`` are superseded by ``survivor``, which keeps their summed usage, the union
    of their tags and a ``prov:wasDerivedFrom`` link to each."""

    model_config = ConfigDict(defer_build=True)

    survivor: str
    merged: list[str]
    reason: str


class Supersession(BaseModel):
    """A memory replaced by another (a contradiction resolved, a team entry updated)."""

    model_config = ConfigDict(defer_build=True)

    old: str
    new: str
    reason: str


class Confirmation(BaseModel):
    """A memory a run found again (a learning that recurs): validated, its confidence raised."""

    model_config = ConfigDict(defer_build=True)

    memory_id: str
    reason: str


class Eviction(BaseModel):
    """A memory a run retired (valid until the run; kept in history): a team memory over its bound."""

    model_config = ConfigDict(defer_build=True)

    memory_id: str
    reason: str


class ReviewItem(BaseModel):
    """One item of the review queue (``cortex review``). ``kind`` ``contradiction``: a contradiction the model
    found and a run did not apply: ``supersede`` would be replaced by ``keep``. ``kind`` ``held``: a memory an
    automatic channel would have written where it reaches other agents (a team's or the swarm's memory, another
    agent's), held for review instead (docs/consolidation.md, "Held for review"): ``keep`` is the id it gets when
    approved, ``keep_content`` its content, ``agent`` who it came from, ``origin`` where (channel, run, session,
    file, tool), ``reason`` why it was held, ``entry`` the memory as it would be written; ``supersede`` is empty."""

    model_config = ConfigDict(defer_build=True)

    run: str | None
    scope: str
    keep: str
    supersede: str = ""
    reason: str
    keep_content: str = ""
    supersede_content: str = ""
    kind: Literal["contradiction", "held"] = "contradiction"
    agent: str | None = None
    origin: dict[str, Any] = Field(default_factory=dict)
    entry: dict[str, Any] | None = None


class ConsolidationReport(BaseModel):
    """One consolidation run of one scope (an agent's own memory, a team's or the swarm's). ``run`` is the id to
    undo it with (None for a dry run, or a run that changed nothing). Every list says what the run did, with why."""

    model_config = ConfigDict(defer_build=True)

    run: str | None = None
    scope: str
    actor: str
    dry_run: bool = False
    started_at: datetime
    #: current memories the run looked at
    examined: int = 0
    merges: list[Merge] = Field(default_factory=list)
    superseded: list[Supersession] = Field(default_factory=list)
    #: contradictions listed for review instead of applied
    review: list[ReviewItem] = Field(default_factory=list)
    #: contradictions kept both of, held memories rejected (``resolve_review(..., accept=False)``)
    dismissed: list[ReviewItem] = Field(default_factory=list)
    #: what the run would have written where it reaches other agents, held for review instead (kind ``held``)
    held: list[ReviewItem] = Field(default_factory=list)
    created: list[Memory] = Field(default_factory=list)
    confirmed: list[Confirmation] = Field(default_factory=list)
    evicted: list[Eviction] = Field(default_factory=list)
    #: the sessions (and groups of task outcomes) distilled
    sessions: list[str] = Field(default_factory=list)
    #: what was left out, by reason (a session too short or too old, over the bound of a run...)
    skipped: dict[str, int] = Field(default_factory=dict)
    #: what the model could not do this time (unreachable, bad answer): retried by the next run
    pending: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    llm_calls: int = 0
    note: str | None = None

    @property
    def changed(self) -> bool:
        """Whether the run changes anything in the store."""
        return bool(self.merges or self.superseded or self.created or self.confirmed or self.evicted
                    or self.sessions or self.dismissed or self.held)


class RunInfo(BaseModel):
    """A consolidation run as its record in the store says: when, by whom, what, and whether it was undone."""

    model_config = ConfigDict(defer_build=True)

    run: str
    scope: str
    actor: str | None = None
    kind: str = "consolidate"
    started_at: datetime
    undone_at: datetime | None = None
    merged: int = 0
    superseded: int = 0
    created: int = 0
    confirmed: int = 0
    evicted: int = 0
    sessions: int = 0
    #: what it merged (each survivor and the memories it superseded), with why
    merges: list[Merge] = Field(default_factory=list)
    #: what it superseded (a contradiction resolved, a team entry updated, a review accepted), with why
    supersessions: list[Supersession] = Field(default_factory=list)
    #: what it flagged: the contradictions it listed for review and the memories it held for review
    flagged: list[ReviewItem] = Field(default_factory=list)
    note: str | None = None


class MemberRound(BaseModel):
    """One member of a team in the current round: the memories it stored since the round began (its own
    memories of the sources a round end reads: task outcomes, learnings at agent end, manual and injected ones)."""

    model_config = ConfigDict(defer_build=True)

    agent: str
    lead: bool = False
    memories: list[Memory] = Field(default_factory=list)


class TeamRound(BaseModel):
    """A team's current round (docs/consolidation.md, "Team memory"): since when (the last round end not undone,
    else ``max_age`` back), the run that ended the previous round, and what each member learned since."""

    model_config = ConfigDict(defer_build=True)

    team: str
    leads: list[str] = Field(default_factory=list)
    since: datetime
    last_round_end: RunInfo | None = None
    members: list[MemberRound] = Field(default_factory=list)


class CaptureRunInfo(BaseModel):
    """A transcript capture run as its record says (``cortex capture --runs``): whose, when, which session and
    file, how many memories it created, changed and pruned, and whether it was undone."""

    model_config = ConfigDict(defer_build=True)

    run: str
    agent: str
    started_at: datetime
    session: str | None = None
    file: str | None = None
    created: int = 0
    changed: int = 0
    pruned: int = 0
    undone_at: datetime | None = None


class UndoReport(BaseModel):
    """What ``consolidate --undo`` restored: memories put back as they were before the run, and the ones it had
    created removed."""

    model_config = ConfigDict(defer_build=True)

    run: str
    scope: str
    restored: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    unlinked: int = 0


#: Default of :attr:`Reranking.decay_floor`, chosen by measurement (docs/retrieval.md).
DECAY_FLOOR = 0.9


@dataclass(frozen=True)
class Reranking:
    """Settings of the reranker of ranked search (:func:`cortex.rerank.factors` applies them); every factor can be
    switched off."""

    recency: bool = True
    usage: bool = True
    confidence: bool = True
    #: per-source decay (the half-lives are the agent's :class:`~cortex.lifecycle.Policy`)
    decay: bool = True
    half_life_days: float = 14.0
    recency_floor: float = 0.9
    #: the least weight decay gives an old memory (1: decay has no effect; 0: the bare factor)
    decay_floor: float = DECAY_FLOOR
    max_usage_boost: float = 1.5
    usage_saturation: int = 10
    #: times an agent's output drew on the memory (usedCount)
    used: bool = True
    max_used_boost: float = 1.5
    used_saturation: int = 5
    #: shown over ``unused_grace`` times, never drawn on: weight halves every ``unused_halving`` (cortex.rerank)
    unused: bool = False
    unused_grace: int = 3
    unused_halving: int = 5
    unused_floor: float = 0.5
    #: Candidates fetched per requested result before reranking.
    overfetch: int = 3

    def __post_init__(self) -> None:
        for name in ("recency", "usage", "used", "unused", "confidence", "decay"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidInputError(name, f"must be true or false, not {getattr(self, name)!r}")
        for name in ("half_life_days", "recency_floor", "decay_floor", "max_usage_boost", "max_used_boost",
                     "unused_floor"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InvalidInputError(name, f"must be a finite number, not {value!r}")
        for name, low, high in (("usage_saturation", 1, 10**9), ("used_saturation", 1, 10**9),
                                ("unused_halving", 1, 10**9), ("unused_grace", 0, 10**9), ("overfetch", 1, 100)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidInputError(name, f"must be an integer from {low} to {high:,}, not {value!r}")
        if not 0 < self.half_life_days <= 36_500:
            raise InvalidInputError("half_life_days", f"must be above 0 and at most 36500, not {self.half_life_days!r}")
        for name in ("recency_floor", "decay_floor", "unused_floor"):
            if not 0 <= getattr(self, name) <= 1:
                raise InvalidInputError(name, f"must be between 0 and 1, not {getattr(self, name)!r}")
        for name in ("max_usage_boost", "max_used_boost"):
            if not 1 <= getattr(self, name) <= 100:
                raise InvalidInputError(name, f"must be from 1 to 100, not {getattr(self, name)!r}")

    @property
    def enabled(self) -> bool:
        return self.recency or self.usage or self.used or self.unused or self.confidence or self.decay
