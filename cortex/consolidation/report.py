"""What a consolidation run did (or, dry, would do): the records every surface returns."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from cortex.model import Memory


class Merge(BaseModel):
    """Near duplicates merged: ``merged`` are superseded by ``survivor``, which keeps their summed usage, the union
    of their tags and a ``prov:wasDerivedFrom`` link to each."""

    survivor: str
    merged: list[str]
    reason: str


class Supersession(BaseModel):
    """A memory replaced by another (a contradiction resolved, a team entry updated)."""

    old: str
    new: str
    reason: str


class Confirmation(BaseModel):
    """A memory a run found again (a learning that recurs): validated, its confidence raised."""

    memory_id: str
    reason: str


class Eviction(BaseModel):
    """A memory a run retired (valid until the run; kept in history): a team memory over its bound."""

    memory_id: str
    reason: str


class ReviewItem(BaseModel):
    """A contradiction the model found and a run did not apply (``cortex review``): ``supersede`` would be replaced
    by ``keep``."""

    run: str | None
    scope: str
    keep: str
    supersede: str
    reason: str
    keep_content: str = ""
    supersede_content: str = ""


class ConsolidationReport(BaseModel):
    """One consolidation run of one scope (an agent's own memory, a team's or the swarm's). ``run`` is the id to
    undo it with (None for a dry run, or a run that changed nothing). Every list says what the run did, with why."""

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
    #: contradictions from the review someone decided to keep both of (``resolve_review(..., accept=False)``)
    dismissed: list[ReviewItem] = Field(default_factory=list)
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
                    or self.sessions or self.dismissed)


class RunInfo(BaseModel):
    """A consolidation run as its record in the store says: when, by whom, what, and whether it was undone."""

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


class UndoReport(BaseModel):
    """What ``consolidate --undo`` restored: memories put back as they were before the run, and the ones it had
    created removed."""

    run: str
    scope: str
    restored: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    unlinked: int = 0


__all__ = ["Confirmation", "ConsolidationReport", "Eviction", "Merge", "ReviewItem", "RunInfo", "Supersession",
           "UndoReport"]
