"""The HTTP API's request bodies and answers (pydantic models: OpenAPI names each schema after its class) and the
query parameters several routes share (the read filters, tags, the search's reranking, a query's bounds)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from cortex import config, jsonsafe
from cortex.errors import InvalidInputError
from cortex.model import Memory, Pruned
from cortex.rerank import Reranking
from cortex.validation import Number


class _Body(BaseModel):
    """A request body: unknown fields are an error (422 naming the field), never silently dropped."""

    model_config = ConfigDict(extra="forbid")


#: A JSON value Cortex validates itself (so a bad one is a field error that names the problem).
Loose = Any


class StoreBody(_Body):
    content: str = Field(description="What to remember (at most 64 KiB of UTF-8)")
    type: str = Field(config.DEFAULT_TYPE, description="pattern, convention, insight or decision")
    project: str = Field(config.DEFAULT_PROJECT, description="Project the memory belongs to")
    confidence: Number = Field(config.DEFAULT_CONFIDENCE, description="How sure the agent is, 0..1")
    source: str = Field("manual", description="manual, agent_end, task_completion, session_summary, file_index, "
                                              "import or injected: sets the default time to live")
    ttl: str | None = Field(None, description="Time to live, e.g. 12h or 7d, or 'never' (default: the source's)")
    tags: Loose = Field(default_factory=list, description="Lowercase slugs, at most 32")
    metadata: Loose = Field(None, description="A JSON object, at most 8 KiB")
    scope: str = Field("agent", description="agent (its own), team:NAME (a team it is in) or swarm (leads)")


class BatchBody(_Body):
    entries: list[Loose] = Field(description="Entries as for store, plus usage_count, created_at, last_used_at, "
                                             "expires_at and valid_from (imports keep them)")


class UpdateBody(_Body):
    content: str | None = None
    type: str | None = None
    project: str | None = None
    confidence: Number | None = None
    tags: Loose = Field(None, description="The new tags ([] clears them)")
    metadata: Loose = Field(None, description="The new metadata ({} clears it)")
    expected_version: int | None = Field(None, description="Change only if the memory is still at this version "
                                                           "(else 409 VersionConflictError)")


class SupersedeBody(_Body):
    content: str | None = Field(None, description="The new memory's content (or give by)")
    by: str | None = Field(None, description="The id of an existing memory that replaces this one")
    reason: str | None = None
    type: str | None = None
    project: str | None = None
    confidence: Number | None = None
    source: str | None = None
    ttl: str | None = None
    tags: Loose = None
    metadata: Loose = None
    valid_from: str | None = Field(None, description="When the new memory became valid (ISO 8601; default now)")


class InjectBody(_Body):
    content: str
    category: str = Field(description="mistake-pattern, best-practice, codebase-knowledge or preference")
    team: str | None = Field(None, description="Into this team's memory (one the lead leads)")
    to: str | None = Field(None, description="Into this worker's own memory")
    confidence: Number = 0.9
    project: str = config.DEFAULT_PROJECT
    tags: Loose = Field(default_factory=list)


class PurgeBody(_Body):
    agent: str | None = Field(default=None, description="Only this agent's own memories (default: every scope)")


class ScanSecretsBody(_Body):
    agent: str | None = Field(default=None, description="Only this agent's own scope (team:NAME, swarm: a shared "
                                                        "one; default: every scope)")
    redact: bool = Field(default=False, description="Replace what is found by placeholders (default: a dry run)")


class PurgeResult(BaseModel):
    count: int = Field(description="How many expired memories were deleted")


class PruneBody(_Body):
    min_confidence: Number = config.DEFAULT_MIN_CONFIDENCE
    max_age: str | None = Field(default=None, description="e.g. 30d, 12h, 90m")
    dry_run: bool = False


class StartBody(_Body):
    task: str | None = None
    project: str | None = None
    limit: int | None = None
    max_chars: int | None = None
    tags: Loose = None
    scope: str | None = None
    #: false: the same session's block shown again (resumed, compacted), not a new use
    touch: StrictBool = True


class EndBody(_Body):
    output: str
    project: str | None = None


class TranscriptBody(_Body):
    path: str = Field(description="The transcript's path on the server's machine")
    format: Literal["claude", "codex", "cursor", "gemini", "messages", "text"] | None = Field(
        None, description="Default: detected")
    project: str | None = None
    markers: bool = Field(True, description="Capture marker lines (LEARNED: ...)")
    summary: bool = Field(True, description="With a language model: a session_summary memory")
    tasks: bool = Field(True, description="Record the outcomes of the subagent calls it shows")
    wait: bool = Field(True, description="false: queue it in the server and answer 202 at once")
    dry_run: bool = Field(False, description="Report what it would store, confirm and supersede; write nothing")


class NotesSyncBody(_Body):
    agent: str | None = Field(None, description="Whose notes (default: every agent's; an agent token: its own)")
    file: str | None = Field(None, description="Only this file (in a notes directory)")


class NotesExportBody(_Body):
    directory: str = Field(description="Where to write the files (a notes directory of the agent, to sync edits)")


class PromoteBody(_Body):
    file: str = Field(description="A file of the agent's notes directory")
    team: str | None = Field(None, description="The team to share it with")
    swarm: bool = Field(False, description="Share it with the swarm (a lead)")


class UseBody(_Body):
    output: str = Field(description="What the agent wrote and did after its start (text, tool calls)")
    session: str | None = Field(None, description="The session of the start (default: the request's)")
    transcript: str | None = Field(None, description="The path of the transcript the output was read from, kept in "
                                                     "the session's record")


class TaskBody(_Body):
    task: str = Field(description="What the task was")
    output: str = Field("", description="What the agent wrote at its end (kept bounded)")
    status: Literal["ok", "failed"] = Field("ok", description="How it ended")
    project: str | None = None


class ConsolidateBody(_Body):
    agent: str | None = Field(default=None, description="An agent's own memory (an agent token: its own, the "
                                                        "default)")
    team: str | None = Field(default=None, description="A team's memory (an admin token, or a lead of the team)")
    swarm: bool = Field(default=False, description="The swarm's memory (an admin token, or a lead)")
    dry_run: bool = Field(default=False, description="Say exactly what the run would do; write nothing")


class UndoBody(_Body):
    run: str = Field(default="last", description="The run's id, as consolidate answered it (e.g. "
                                                 "20261124T190501-3fa9c2), or 'last': the latest run not undone of "
                                                 "the scope named (else of any)")
    agent: str | None = Field(default=None, description="Of this agent's own memory (an agent token: its own, the "
                                                        "default)")
    team: str | None = Field(default=None, description="Of this team's memory (an admin token, or a lead of the "
                                                       "team)")
    swarm: bool = Field(default=False, description="Of the swarm's memory (an admin token, or a lead)")
    force: bool = Field(default=False, description="Undo even when a memory was changed since the run (those "
                                                   "changes are lost)")


class ReviewBody(_Body):
    keep: str = Field(description="The memory the contradiction keeps, or the held memory's id, as the review "
                                  "lists it")
    supersede: str = Field(default="", description="The memory the contradiction supersedes, as the review lists "
                                                   "it (empty for a held memory)")
    accept: bool = Field(default=True, description="true: supersede it by keep (a held memory: approve and write "
                                                   "it); false: keep both, and take the pair off the list (a held "
                                                   "memory: reject it)")
    agent: str | None = Field(default=None, description="In this agent's own memory (an agent token: its own, the "
                                                        "default)")
    team: str | None = Field(default=None, description="In this team's memory (an admin token, or a lead of the "
                                                       "team)")
    swarm: bool = Field(default=False, description="In the swarm's memory (an admin token, or a lead)")


class RoundEndBody(_Body):
    dry_run: bool = Field(default=False, description="Say exactly what the round end would do; write nothing")
    wait: bool = Field(default=True, description="false: queue it in the server and answer 202 at once (what a "
                                                 "lead's Stop hook does)")


class EndAnswer(BaseModel):
    """``/end?pruned=true``: what was captured, and what the prune at agent end deleted."""

    memories: list[Memory]
    pruned: list[Pruned]
    redacted: dict[str, int] = Field(default_factory=dict, description="Secrets replaced by placeholders before "
                                     "storing, by rule (e.g. aws-access-key)")


class TokenBody(_Body):
    agent: str | None = Field(default=None, description="The agent the token may use; none: an admin token")
    force: bool = Field(default=False, description="Create it even for an agent that is not declared")


class SignInBody(_Body):
    token: str = Field(min_length=1, max_length=4096, description="A bearer token (an admin's or an agent's)")


class Block(BaseModel):
    block: str = Field(description="The <agent-memory> block ('' when there is nothing to show)")


class PruneResult(BaseModel):
    count: int = Field(description="How many memories were deleted (with dry_run: would be)")
    ids: list[str]
    dry_run: bool


#: Tags in a query string: ``tags=a&tags=b`` or ``tags=a,b``.
Tags = Annotated[list[str] | None, Query(description="Only memories with all of these tags (repeat, or a,b)")]


class ReadFilters:
    """The filters every read route takes (a FastAPI dependency: query parameters)."""

    def __init__(
        self,
        tags: Tags = None,
        scope: Annotated[str | None, Query(description="agent, team:NAME or swarm (default: all it reads)")] = None,
        source: str | None = None,
        include_expired: bool = False,
        include_superseded: bool = False,
        as_of: Annotated[str | None, Query(description="ISO 8601: what was recorded and valid then")] = None,
    ) -> None:
        self.values = {"tags": tag_list(tags), "scope": scope, "source": source, "include_expired": include_expired,
                       "include_superseded": include_superseded, "as_of": as_of}

    def given(self) -> dict[str, Any]:
        return self.values


def bounded(value: Any, field: str, cap: float, kind: type) -> Any:
    """A query's limit or timeout: the server's cap unless the request asks for less."""
    if value is None or value == "":
        return kind(cap)
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidInputError(field, f"must be a number, not {value!r}") from None
    if not 0 < number <= cap:
        raise InvalidInputError(field, f"must be above 0 and at most {cap:g} (the server's cap)")
    return number


def tag_list(tags: Any) -> Any:
    """Tags from a query string: comma-separated values split (a body gives a JSON list, as it is)."""
    if isinstance(tags, str):
        tags = [tags]
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        return [part.strip() for t in tags for part in t.split(",") if part.strip()]
    return tags


def reranking(value: str) -> Reranking | bool:
    """``rerank`` of the search route: ``true``/``false`` or a JSON object of :class:`Reranking` fields."""
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    try:
        fields = jsonsafe.loads(value)
    except (ValueError, RecursionError):
        raise InvalidInputError("rerank", "must be true, false or a JSON object of reranking settings") from None
    if not isinstance(fields, dict):
        raise InvalidInputError("rerank", "must be true, false or a JSON object of reranking settings")
    try:
        return Reranking(**fields)
    except TypeError as exc:
        raise InvalidInputError("rerank", f"unknown reranking setting: {exc}") from None
