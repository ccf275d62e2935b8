"""The typed protocol every Cortex front satisfies: the in-process :class:`cortex.Cortex` and the HTTP client
:class:`cortex.api.client.RemoteCortex`. Surfaces (CLI, MCP, hooks) are written against it, so they work the same
with a store opened here or with a running server; a test keeps both signatures equal to these. One protocol per
domain of the facade (the modules of :mod:`cortex.app`), and :class:`MemoryAPI` their union.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable

from cortex import config

if TYPE_CHECKING:  # the client imports this module: no models (pydantic) or engine at run time
    from cortex.model import (
        Captured,
        CaptureReport,
        CaptureRunInfo,
        ConsolidationReport,
        ImportReport,
        IndexStatus,
        Memory,
        MemoryType,
        MemoryUsage,
        NotesReport,
        Page,
        Provenance,
        ReviewItem,
        RunInfo,
        SearchResult,
        SecretScan,
        SessionDetail,
        SessionPage,
        Source,
        TeamRound,
        UndoReport,
        Violation,
    )
    from cortex.model import Reranking
    from cortex.sparql.results import SparqlResult


class MemoriesAPI(Protocol):
    """One memory's life: store, read one, change, supersede, validate, forget, prune."""

    def store(
        self,
        agent: str,
        content: str,
        *,
        type: MemoryType | str = config.DEFAULT_TYPE,
        project: str = config.DEFAULT_PROJECT,
        confidence: float = config.DEFAULT_CONFIDENCE,
        source: Source | str = "manual",
        ttl: timedelta | str | None = None,
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        scope: str = "agent",
    ) -> Memory:
        """Store one memory and return it."""
        ...

    def store_many(self, agent: str, entries: Iterable[Mapping[str, Any]]) -> list[Memory]:
        """Store a batch in one atomic write; returns the memories in input order."""
        ...

    def get(self, agent: str, memory_id: str) -> Memory | None:
        """The memory, or None for an unknown or malformed id."""
        ...

    def update(
        self,
        agent: str,
        memory_id: str,
        *,
        content: str | None = None,
        type: MemoryType | str | None = None,
        project: str | None = None,
        confidence: float | None = None,
        tags: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        """Change fields in place (version + 1, the earlier version kept)."""
        ...

    def history(self, agent: str, memory_id: str) -> list[Memory]:
        """Every version of a memory, oldest first."""
        ...

    def provenance(self, agent: str, memory_id: str) -> Provenance:
        """Where a memory comes from (PROV-O): attribution, generating activity, derivations, versions."""
        ...

    def supersede(
        self,
        agent: str,
        old_id: str,
        content: str | None = None,
        *,
        by: str | None = None,
        reason: str | None = None,
        **fields: Any,
    ) -> Memory:
        """Replace a memory by a new one (or the existing ``by``); the old one is kept, no longer current."""
        ...

    def validate(self, agent: str, memory_id: str) -> Memory:
        """Restart a memory's decay clock and raise its confidence by 0.05."""
        ...

    def inject_learning(
        self,
        lead: str,
        content: str,
        category: str,
        *,
        team: str | None = None,
        to: str | None = None,
        confidence: float = 0.9,
        project: str = config.DEFAULT_PROJECT,
        tags: Iterable[str] = (),
    ) -> Memory:
        """A lead's learning for the swarm, a team or one worker."""
        ...

    def touch(self, agent: str, memory_id: str) -> Memory:
        """Record a use: usageCount + 1 and lastUsedAt = now, atomically."""
        ...

    def forget(self, agent: str, memory_id: str) -> bool:
        """Remove every triple of the memory; False when there was none."""
        ...

    def prune(
        self,
        agent: str,
        min_confidence: float = config.DEFAULT_MIN_CONFIDENCE,
        max_age: timedelta | str | None = None,
        *,
        dry_run: bool = False,
    ) -> int:
        """Delete weak or long-unused memories; returns how many were (or would be) deleted."""
        ...

    def prune_candidates(
        self,
        agent: str,
        min_confidence: float = config.DEFAULT_MIN_CONFIDENCE,
        max_age: timedelta | str | None = None,
        *,
        delete: bool = False,
    ) -> list[str]:
        """The ids ``prune`` selects (deleted when ``delete``)."""
        ...

    def purge_expired(self, agent: str | None = None) -> int:
        """Delete expired memories (of every scope when ``agent`` is None); returns how many."""
        ...


class ReadingAPI(Protocol):
    """Reads over the scopes an agent sees: recall, search, listing, counts, the block."""

    def recall(
        self,
        agent: str,
        query: str | None = None,
        *,
        type: MemoryType | str | None = None,
        project: str | None = None,
        limit: int = config.DEFAULT_LIMIT,
        tags: Iterable[str] | None = None,
        scope: str | None = None,
        source: Source | str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        as_of: datetime | str | None = None,
    ) -> list[Memory]:
        """AND-token recall over the scopes the agent reads, filtered before the limit."""
        ...

    def search(
        self,
        agent: str,
        query: str,
        *,
        mode: str = config.DEFAULT_SEARCH_MODE,
        limit: int = config.DEFAULT_LIMIT,
        project: str | None = None,
        type: MemoryType | str | None = None,
        explain: bool = False,
        rerank: Reranking | bool = True,
        tags: Iterable[str] | None = None,
        scope: str | None = None,
        source: Source | str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        as_of: datetime | str | None = None,
    ) -> SearchResult:
        """Ranked search: ``all``, ``bm25``, ``semantic`` or ``hybrid``."""
        ...

    def list_memories(
        self,
        agent: str,
        *,
        scope: str | None = None,
        type: MemoryType | str | None = None,
        project: str | None = None,
        tags: Iterable[str] | None = None,
        source: Source | str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        cursor: str | None = None,
        limit: int = 50,
        session: str | None = None,
        since: datetime | str | None = None,
    ) -> Page:
        """One page of every memory the agent can see, newest first (``session``: only what that session's writes
        created; ``since``: only what was created since an ISO time or a duration back, ``2h``)."""
        ...

    def stats(self, agent: str) -> dict[str, int]:
        """How many memories of each type the agent has."""
        ...

    def count(self, agent: str) -> int:
        """How many memories the agent has."""
        ...

    def usage_stats(self, agent: str) -> dict[str, dict[str, int | float | None]]:
        """Per source: memories, how many were shown and how many used, the times of each and their ratio."""
        ...

    def memory_usage(self, agent: str, *, order: str = "used", limit: int = 20) -> list[MemoryUsage]:
        """Per memory: how often it was shown and used, and the ratio. ``order``: ``used`` (those used, most
        first: what proved useful), ``ratio``, ``shown`` or ``unused`` (shown and never used)."""
        ...

    def agent_overview(self, agent: str) -> dict[str, Any]:
        """The agent at a glance: counts by type, source and scope, last activity, decay, expiring soon, due
        for the prune."""
        ...

    def agent_start(
        self,
        agent: str,
        task: str | None = None,
        project: str | None = None,
        limit: int | None = None,
        max_chars: int | None = None,
        *,
        tags: Iterable[str] | None = None,
        scope: str | None = None,
        touch: bool = True,
    ) -> str:
        """The ``<agent-memory>`` block to inject at agent start; touches what it shows unless ``touch`` is
        false."""
        ...

    def agent_prompt(
        self,
        agent: str,
        prompt: str,
        limit: int | None = None,
        max_chars: int | None = None,
        *,
        touch: bool = True,
    ) -> str:
        """The ``<agent-memory>`` block of the memories relevant to a prompt that the session's context does not
        hold yet (at most 3 memories, 1,500 characters); "" when there are none."""
        ...

    @staticmethod
    def render(memories: Sequence[Memory], max_chars: int | None = None) -> str:
        """The ``<agent-memory>`` block for ``memories`` (best first); "" when empty."""
        ...


class AdminAPI(Protocol):
    """Agents, scopes and indexes."""

    def describe_agents(self) -> list[dict[str, Any]]:
        """The declared agents with their memory counts."""
        ...

    def resolve_agent(self, name: str) -> str | None:
        """The declared agent with memory that ``name`` stands for (itself, or the agent listing it in
        ``cortex: aliases:``), or None (a built-in or undeclared coding agent)."""
        ...

    def stored_agents(self) -> list[str]:
        """Names of the agents that have memories in the store."""
        ...

    def stored_scopes(self) -> list[str]:
        """Every scope with memories in the store: agent names, ``team:NAME``, ``swarm``."""
        ...

    def reindex(
        self, agent: str, *, force: bool = False, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, int]:
        """Rebuild the agent's indexes from the store and embed what lacks a current vector."""
        ...

    def index_status(self, agent: str) -> IndexStatus:
        """What the agent's derived index holds, against the store."""
        ...

    def info(self) -> dict[str, Any]:
        """The store's location and the embedding model (None without one)."""
        ...

    def health(self) -> dict[str, Any]:
        """The memory engine (``builtin``, ``both``, ``external``, ``none``) and each memory provider's state
        (``ok``, ``failing``, ``open``: skipped while its breaker cools down, ``unavailable``), how it answered a
        one-hit probe just now, its last error and its breaker; the mirror's figures (writes sent, failed,
        dropped). Never an API key."""
        ...

    def scan_secrets(self, agent: str | None = None, *, redact: bool = False) -> SecretScan:
        """Scan the store (or ``agent``'s own scope; ``team:NAME``, ``swarm``) for secrets in every version of
        every memory and the scope's other records; with ``redact``, replace them (one atomic write per scope,
        recorded in provenance; the indexes rebuilt). A dry run by default. Admin only."""
        ...


class SessionsAPI(Protocol):
    """What an agent's work leaves: marker lines, task outcomes, transcripts, the used signal."""

    def agent_end(self, agent: str, output: str, project: str | None = None) -> Captured:
        """Capture marker lines from the agent's output, then prune by the agent's rule; returns what was stored
        or refreshed (``.pruned``: what the prune deleted)."""
        ...

    def record_task(self, agent: str, task: str, output: str = "", status: str = "ok", *,
                    project: str | None = None) -> Memory:
        """Record a finished task's outcome as a ``task_completion`` memory (its time to live): the task, and
        what came of it (bounded); a ``failed`` one says what went wrong, so a later agent start on a similar
        task shows it. Its secrets are redacted first."""
        ...

    def capture_transcript(self, agent: str, path: str | os.PathLike[str], *, format: str | None = None,
                           project: str | None = None, markers: bool = True, summary: bool = True,
                           tasks: bool = True, dry_run: bool = False) -> CaptureReport:
        """Capture what a session transcript (Claude Code JSONL, Codex CLI session, JSON messages, plain text)
        holds for ``agent`` since its last capture: marker lines, with a language model learnings and a session
        summary, the outcomes of the subagent calls it shows, and the "used" signal. Redacted, through the
        quality gate, checkpointed (a second run stores nothing new); one run (``report.run``) that
        :meth:`undo_capture` undoes. ``dry_run``: report what it would store, confirm and supersede; write
        nothing."""
        ...

    def undo_capture(self, agent: str, run: str = "last", *, force: bool = False) -> "UndoReport":
        """Undo a capture run of ``agent`` (its id, or ``last``): what it created removed, what it changed put
        back exactly, the transcript's checkpoint moved back; refuses when a memory changed since, unless
        ``force``."""
        ...

    def capture_runs(self, agent: str) -> list["CaptureRunInfo"]:
        """The capture runs of ``agent``, the latest first, undone ones too."""
        ...

    def record_use(self, agent: str, output: str, *, session: str | None = None,
                   transcript: str | None = None) -> list[Memory]:
        """Mark the memories shown at ``agent``'s latest start (in ``session``) that ``output`` drew on (cited,
        repeated or applied): ``usedCount + 1``, which ranking prefers to having been shown. ``transcript``: the
        path of the transcript the output was read from, kept in the session's record."""
        ...

    def sessions(self, agent: str, *, cursor: str | None = None, limit: int = 50) -> SessionPage:
        """One page of ``agent``'s sessions, newest first: id, first start and task, how many memories its blocks
        showed and its output used, how many it created and changed, its transcripts (``next_cursor``
        continues)."""
        ...

    def session_detail(self, agent: str, session: str) -> SessionDetail:
        """One session of ``agent``: the exact ``<agent-memory>`` block of each start, the memories shown (and
        why each was used), the memories it created and changed (an update's content before and after), its
        transcripts."""
        ...


class NotesAPI(Protocol):
    """Markdown notes as a source of memory."""

    def sync_notes(self, agent: str | None = None, *, file: str | os.PathLike[str] | None = None) -> list[NotesReport]:
        """Index the Markdown notes of ``agent`` (or of every agent), or only ``file``: a chunk per section as a
        ``file_index`` memory; unchanged chunks keep their memory, changed ones are superseded, removed ones
        leave recall (history kept)."""
        ...

    def promote_notes(self, agent: str, file: str | os.PathLike[str], *, team: str | None = None,
                      swarm: bool = False) -> NotesReport:
        """Move a notes file's memories to ``team`` or the swarm; later syncs of the file update them there."""
        ...

    def export_notes(self, agent: str, directory: str | os.PathLike[str]) -> list[str]:
        """Write the agent's memories as editable Markdown files (one per type) in ``directory``; a later sync
        of it applies the edits. Returns the files written."""
        ...


class GraphAPI(Protocol):
    """The memory as RDF: export, import, SHACL, SPARQL, and other memory systems' files."""

    def export(self, out: IO[bytes], *, agent: str | None = None, team: str | None = None, all: bool = False,
               format: str = "trig", progress: Callable[[str, int, int | None], None] | None = None) -> int:
        """Write one agent's, one team's or every scope's graph to ``out`` as RDF; returns the quads written.
        ``progress(stage, done, total)`` hears how far it is."""
        ...

    def import_rdf(self, source: str | os.PathLike[str] | bytes | IO[bytes], *, format: str | None = None,
                   agent: str | None = None, team: str | None = None,
                   progress: Callable[[str, int, int | None], None] | None = None) -> dict[str, int]:
        """Import an export (all or nothing); returns the memories imported per scope. ``progress(stage, done,
        total)`` hears how far it is."""
        ...

    def import_from(self, system: str, path: str | os.PathLike[str] | bytes, *, agent: str, dry_run: bool = False,
                    progress: Callable[[str, int, int | None], None] | None = None,
                    name: str | None = None) -> ImportReport:
        """Import another memory system's files (``beads``, ``mem0``, ``mcp-memory``, ``claude``) into the agent's
        memory: idempotent by each item's key, atomic per file, redacted; the report says what was imported, skipped
        (already there) and failed (with the file and line). ``dry_run``: write nothing, say what would be done."""
        ...

    def export_beads(self, directory: str | os.PathLike[str], *, agent: str) -> dict[str, Any]:
        """Write the agent's memories as a Beads knowledge log (``directory/knowledge.jsonl``, merged with what is
        there, rotated to ``knowledge.archive.jsonl`` past 1,000 lines); returns the counts."""
        ...

    def validate_store(self, *, agent: str | None = None, team: str | None = None,
                       all: bool = True) -> list[Violation]:
        """The SHACL violations of one agent's, one team's or every scope's graph (none: it conforms)."""
        ...

    def sparql(
        self,
        query: str,
        substitutions: Mapping[str, Any] | None = None,
        *,
        agent: str | None = None,
        limit: int | None = None,
        timeout: float | None = None,
        default_graphs: Sequence[str] | None = None,
        named_graphs: Sequence[str] | None = None,
    ) -> SparqlResult:
        """A read-only SPARQL query over the store, or over the graphs ``agent`` reads (docs/sparql.md);
        ``default_graphs``/``named_graphs``: its dataset (the protocol's ``default-graph-uri``/``named-graph-uri``)."""
        ...


class ConsolidationAPI(Protocol):
    """Consolidation runs, their undo, the review of contradictions, a team's round end."""

    def consolidate(self, agent: str | None = None, *, team: str | None = None, swarm: bool = False,
                    dry_run: bool = False) -> "ConsolidationReport":
        """Consolidate one scope (an agent's own memory, ``team=``'s or the swarm's) in one run: near duplicates
        merged, contradictions superseded or listed for review, recent sessions distilled; ``report.run`` is the
        id to undo it with. ``dry_run``: say what a run would do, write nothing."""
        ...

    def team_round_end(self, team: str, *, dry_run: bool = False) -> "ConsolidationReport":
        """The end of a round of ``team``: its lead's extractor distils the round into the team memory (one run,
        undone like any other). Needs a language model."""
        ...

    def team_round(self, team: str) -> "TeamRound":
        """``team``'s current round: since when (its last round end), and what each member stored since. An agent
        acting for itself: a lead of the team sees every member, another member only itself."""
        ...

    def undo_consolidation(self, run: str = "last", *, agent: str | None = None, team: str | None = None,
                           swarm: bool = False, force: bool = False) -> "UndoReport":
        """Undo a consolidation run (its id, or ``last`` of the scope named, or of any scope): what it changed
        back as it was; refuses when a memory changed since, unless ``force``."""
        ...

    def consolidation_runs(self, agent: str | None = None, *, team: str | None = None,
                           swarm: bool = False) -> list["RunInfo"]:
        """The consolidation runs of one scope (or of every scope, naming none), the latest first."""
        ...

    def review(self, agent: str | None = None, *, team: str | None = None,
               swarm: bool = False) -> list["ReviewItem"]:
        """The review queue: the contradictions consolidation found and did not apply, still open (both memories
        current), and the memories held for review (kind ``held``), not yet decided."""
        ...

    def resolve_review(self, keep: str, supersede: str = "", *, accept: bool = True, agent: str | None = None,
                       team: str | None = None, swarm: bool = False) -> "ConsolidationReport":
        """Decide an item of the review queue: a contradiction (``accept`` supersedes ``supersede`` by ``keep``;
        ``accept=False`` keeps both and takes the pair off the list) or a held memory (``keep`` its id,
        ``supersede`` empty: ``accept`` approves and writes it, ``accept=False`` rejects it). Each is a run of its
        own (kind ``review``), undone like any other."""
        ...

    def review_all(self) -> list["ReviewItem"]:
        """Every item the caller may review, of every queue at once: an admin every declared agent's, every team's
        with a lead and the swarm's; an agent's token its own agent's, and a lead's besides the teams it leads,
        the swarm's and the memories held in its teams' members' memory."""
        ...


@runtime_checkable
class MemoryAPI(MemoriesAPI, ReadingAPI, AdminAPI, SessionsAPI, NotesAPI, GraphAPI, ConsolidationAPI,
                Protocol):
    """Persistent memory for AI agents: the operations of the README and the service's needs (each domain's
    protocol above, one row each in :data:`cortex.api.operations.OPERATIONS`), and a front's context manager."""

    def close(self, *, flush: bool = True) -> None:
        """Release what this front holds (an embedded store is flushed first unless ``flush=False``)."""
        ...

    def __enter__(self) -> "MemoryAPI":
        ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        ...
