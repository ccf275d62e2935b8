"""Planning a consolidation run of one scope: merges, contradictions, distilled sessions, a team's round
(docs/consolidation.md). What is planned is written by :func:`cortex.consolidation.runs.apply`; a dry run stops
after planning, so it shows exactly what the run would do (the model is asked the same questions)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from cortex.capture.gate import Gate, meaning
from cortex.consolidation import contradictions, distil, team
from cortex.consolidation.duplicates import find_clusters
from cortex.consolidation.report import (
    Confirmation,
    ConsolidationReport,
    Eviction,
    Merge,
    ReviewItem,
    RunInfo,
    Supersession,
)
from cortex.consolidation.runs import Plan, consumed, runs, scope_label
from cortex.consolidation.settings import ConsolidationSettings
from cortex.errors import InvalidInputError, LLMError, LLMUnavailableError
from cortex.index.memory_index import to_micros
from cortex.llm import LLMClient, LLMSettings
from cortex.memories import MemoryRepository
from cortex.model import Memory, Scope, Source

log = logging.getLogger("cortex")

#: Tag of a learning a consolidation run distilled.
DISTILLED_TAG = "distilled"


@dataclass
class Context:
    """What a run needs from the facade."""

    repo: MemoryRepository
    settings: ConsolidationSettings
    llm: LLMSettings | None
    state_dir: Path | None
    now: datetime
    #: makes a new memory of the scope from a ``store`` entry (validated, with its expiry)
    make: Callable[[Mapping[str, Any]], Memory]
    #: redacts captured text
    redact: Callable[[str], str]


def current(repo: MemoryRepository, scope: Scope, now: datetime) -> list[Memory]:
    """The scope's current memories (not expired, not superseded)."""
    index = repo.index(scope)
    return repo.load(scope, index.select(index.current_mask(to_micros(now))))


def _embedder(repo: MemoryRepository) -> Callable[[list[str]], np.ndarray] | None:
    """The embedding function of the semantic rules (:func:`cortex.capture.gate.meaning`), None while the model
    is still loading."""
    provider = repo.embeddings
    return meaning(provider) if provider is not None and getattr(provider, "ready", True) else None


def _vectors(repo: MemoryRepository, scope: Scope, memories: Sequence[Memory]
             ) -> tuple[Callable[[list[str]], np.ndarray] | None, dict[str, np.ndarray]]:
    """The embedding function semantic merges use (:func:`_embedder`) and the stored vectors of ``memories``."""
    embed, provider = _embedder(repo), repo.embeddings
    if embed is None or provider is None:
        return None, {}
    index = repo.index(scope)
    rows = {}
    if index.vector_model == provider.model:
        for memory in memories:
            row = index.vector_of(memory.id)
            if row is not None:
                rows[memory.id] = row
    return embed, rows


def _llm_failed(report: ConsolidationReport, what: str, exc: LLMError) -> None:
    if isinstance(exc, LLMUnavailableError):
        report.pending.append(f"{what}: {exc} (asked again by the next run)")
    else:
        report.problems.append(f"{what}: {exc}")
    log.warning("consolidation of %s: %s: %s", report.scope, what, exc)


def plan_scope(ctx: Context, scope: Scope, actor: str, report: ConsolidationReport, *,
               agent: str | None = None) -> Plan:
    """Plan a run of ``scope`` for ``actor``: merges, contradictions and (for an agent's own scope, ``agent``)
    distilled sessions."""
    plan = Plan(scope, actor, "consolidate", ctx.now)
    memories = current(ctx.repo, scope, ctx.now)
    plan.seen = {m.id: m for m in memories}
    report.examined = len(memories)
    vectors, rows = _vectors(ctx.repo, scope, memories)
    clusters, left = find_clusters(memories, vectors=vectors, rows=rows, most=ctx.settings.max_merges)
    if left:
        report.skipped["over-max-merges"] = left
    plan.clusters = clusters
    report.merges = [Merge(survivor=c.survivor.id, merged=[m.id for m in c.merged], reason=c.reason)
                     for c in clusters]
    merged_into = {m.id: c.survivor.id for c in clusters for m in c.merged}
    remaining = [m for m in memories if m.id not in merged_into]
    if ctx.llm is None:
        report.note = ("no language model configured (CORTEX_LLM_URL): merges only; contradictions and distillation "
                       "need a model (docs/capture.md says how to set one up)")
        return plan
    done, checked = consumed(ctx.repo, scope)
    with LLMClient(ctx.llm, redact=ctx.redact) as client:
        try:
            _contradictions(client, ctx, plan, report, remaining, checked)
            if agent is not None:
                _distil(client, ctx, plan, report, agent, memories, merged_into, done)
        finally:
            report.llm_calls = client.calls
    return plan


def _contradictions(client: LLMClient, ctx: Context, plan: Plan, report: ConsolidationReport,
                    memories: Sequence[Memory], checked: set[str]) -> None:
    pairs = contradictions.candidate_pairs(memories, checked=checked, most=ctx.settings.max_pairs)
    if not pairs:
        return
    try:
        proposals = contradictions.judge(client, pairs)
    except LLMError as exc:
        _llm_failed(report, "contradictions", exc)
        return
    plan.checked = [p.key for p in pairs]
    by_id = {m.id: m for p in pairs for m in (p.a, p.b)}
    for proposal in proposals:
        if ctx.settings.apply_contradictions:
            plan.supersede.append((proposal.supersede, proposal.keep, f"contradicted by {proposal.keep}: "
                                                                       f"{proposal.reason}"))
            report.superseded.append(Supersession(old=proposal.supersede, new=proposal.keep, reason=proposal.reason))
        else:
            report.review.append(ReviewItem(run=None, scope=scope_label(plan.scope), keep=proposal.keep,
                                            supersede=proposal.supersede, reason=proposal.reason,
                                            keep_content=by_id[proposal.keep].content,
                                            supersede_content=by_id[proposal.supersede].content))


def _gate(ctx: Context, existing: Iterable[Memory]) -> Gate:
    return Gate([(m.id, m.content) for m in existing], vectors=_embedder(ctx.repo))


def _distil(client: LLMClient, ctx: Context, plan: Plan, report: ConsolidationReport, agent: str,
            memories: Sequence[Memory], merged_into: Mapping[str, str], done: set[str]) -> None:
    from cortex.capture.session import tags_of

    found, skipped = distil.sessions(agent, ctx.state_dir, memories, done, ctx.settings, ctx.now)
    for reason, count in skipped.items():
        report.skipped[reason] = report.skipped.get(reason, 0) + count
    if not found:
        return
    gate = _gate(ctx, [m for m in memories if m.id not in merged_into])
    made: dict[str, Memory] = {}
    for session in found:
        try:
            learnings = distil.distil(client, session, ctx.settings.session_entries)
        except LLMError as exc:
            _llm_failed(report, f"session {session.label}", exc)
            continue
        plan.distilled += session.keys
        report.sessions.append(session.label)
        texts = [ctx.redact(str(item["content"])) for item in learnings]
        for item, text, verdict in zip(learnings, texts, gate.judge_all(texts)):
            if verdict.action == "confirm" and verdict.match is not None:
                match = merged_into.get(verdict.match, verdict.match)
                if match in made:  # a learning of an earlier session of this run recurs
                    made[match] = made[match].model_copy(update={"confidence": min(1.0, made[match].confidence + 0.05)})
                else:
                    plan.confirm.append((match, f"recurs in {session.label}"))
                    report.confirmed.append(Confirmation(memory_id=match, reason=f"recurs in {session.label}"))
                continue
            if verdict.action == "refuse":
                key = f"refused-{verdict.reason}"
                report.skipped[key] = report.skipped.get(key, 0) + 1
                continue
            try:
                memory = ctx.make({"content": text, "type": item["type"], "confidence": item["confidence"],
                                   "source": Source.AGENT_END, "tags": [*tags_of(item["tags"]), DISTILLED_TAG],  # type: ignore[arg-type]
                                   "metadata": {"distilled_from": session.label[:200]}})
            except InvalidInputError as exc:
                report.problems.append(f"a distilled learning was not valid: {exc}")
                continue
            made[memory.id] = memory
            gate.add(memory.id, memory.content)
            plan.derived += [(memory.id, source) for source in session.sources]
    plan.created = list(made.values())
    report.created = plan.created


#: The report's ``skipped`` key of the entries a model's answer repeats (merged into the first).
DUPLICATE_IN_ANSWER = "duplicate-in-answer"


def round_start(repo: MemoryRepository, scope: Scope, now: datetime,
                settings: ConsolidationSettings) -> tuple[RunInfo | None, datetime]:
    """Where a team's current round began: its last round end not undone (that run, its start), else
    ``settings.max_age`` before ``now`` (no run)."""
    previous = [r for r in runs(repo, scope) if r.kind == "round-end" and r.undone_at is None]
    return (previous[0], previous[0].started_at) if previous else (None, now - settings.max_age)


def plan_round(ctx: Context, scope: Scope, lead: str, members: Sequence[str], report: ConsolidationReport,
               member_memories: Callable[[str, datetime | None], list[Memory]]) -> Plan:
    """Plan a team's round end: the round's task outcomes and the members' new learnings (``member_memories(
    member, since)``) distilled by the model into the team memory, updated by supersession, confirmed when they
    repeat an entry, and evictions to stay under the bound."""
    plan = Plan(scope, lead, "round-end", ctx.now)
    if ctx.llm is None:
        raise InvalidInputError("llm", "a team's round end needs a language model (CORTEX_LLM_URL): its extractor "
                                       "distils the round; docs/capture.md says how to set one up")
    since = round_start(ctx.repo, scope, ctx.now, ctx.settings)[1]
    everything = current(ctx.repo, scope, ctx.now)
    plan.seen = {m.id: m for m in everything}
    entries = [m for m in everything if team.TEAM_MEMORY_TAG in m.tags]
    report.examined = len(entries)
    outcomes: list[Memory] = []
    learnings: list[Memory] = []
    for member in members:
        for memory in member_memories(member, since):
            (outcomes if memory.source is Source.TASK_COMPLETION else learnings).append(memory)
    learnings += [m for m in everything if team.TEAM_MEMORY_TAG not in m.tags and m.created_at > since]
    if not outcomes and not learnings:
        report.note = "nothing happened in the round (no new task outcomes or learnings of the members)"
        return plan
    text = team.round_text(entries, outcomes, learnings, ctx.settings.session_tokens * 4)
    with LLMClient(ctx.llm, redact=ctx.redact) as client:
        try:
            proposed, repeated = team.extract(client, text, {m.id for m in entries}, ctx.settings.session_entries * 4)
        except LLMError as exc:
            _llm_failed(report, "the round's extraction", exc)
            return plan
        finally:
            report.llm_calls = client.calls
    plan.distilled = [f"round:{since.isoformat()}"]
    gate = _gate(ctx, entries)
    replaced: set[str] = set()
    made: list[Memory] = []
    if repeated:  # the model named the same entry more than once: merged into one
        report.skipped[DUPLICATE_IN_ANSWER] = repeated
    for entry in proposed:
        content = ctx.redact(entry.content)
        verdict = gate.judge(content) if entry.replaces is None else None
        if verdict is not None and verdict.action == "confirm" and verdict.match in {m.id for m in made}:
            report.skipped[DUPLICATE_IN_ANSWER] = report.skipped.get(DUPLICATE_IN_ANSWER, 0) + 1
            continue  # it repeats an entry of this answer: one entry
        if verdict is not None and verdict.action == "confirm" and verdict.match is not None:
            if verdict.match not in {i for i, _ in plan.confirm}:
                plan.confirm.append((verdict.match, "the round repeats it"))
                report.confirmed.append(Confirmation(memory_id=verdict.match, reason="the round repeats it"))
            continue
        if verdict is not None and verdict.action == "refuse":
            key = f"refused-{verdict.reason}"
            report.skipped[key] = report.skipped.get(key, 0) + 1
            continue
        try:
            memory = ctx.make({"content": content, "type": team.CATEGORIES[entry.category].value,
                               "source": Source.INJECTED, "confidence": 0.8,
                               "tags": [team.TEAM_MEMORY_TAG, entry.category]})
        except InvalidInputError as exc:
            report.problems.append(f"a team memory entry was not valid: {exc}")
            continue
        held = team.held_reason(content, [*outcomes, *learnings])
        if held is not None:  # not written: it waits in the review queue (kind "held") for a lead or an admin
            report.held.append(ReviewItem(
                run=None, scope=scope_label(scope), keep=memory.id, reason=held, keep_content=memory.content,
                kind="held", agent=lead, entry=memory.model_dump(mode="json"),
                origin={"channel": "team-round-end", "extractor": ctx.llm.model, "replaces": entry.replaces}))
            plan.held.append(memory.id)
            continue
        made.append(memory)
        gate.add(memory.id, memory.content)
        if entry.replaces is not None:
            replaced.add(entry.replaces)
            plan.supersede.append((entry.replaces, memory.id, "updated at the round's end"))
            report.superseded.append(Supersession(old=entry.replaces, new=memory.id,
                                                  reason="updated at the round's end"))
    bound = ctx.settings.team_bound
    if len(made) > bound:  # more new entries than the memory holds: the model's first ones
        dropped = {m.id for m in made[bound:]}
        report.skipped["over-team-bound"] = len(dropped)
        made = made[:bound]
        plan.supersede = [s for s in plan.supersede if s[1] not in dropped]
        report.superseded = [s for s in report.superseded if s.new not in dropped]
        replaced = {old for old, _, _ in plan.supersede}
    plan.created = made
    report.created = made
    report.sessions = [f"round since {since.isoformat()}"]
    kept = [m for m in entries if m.id not in replaced]
    over = len(kept) + len(made) - ctx.settings.team_bound
    if over > 0:
        confirmed = {i for i, _ in plan.confirm}
        for memory in team.eviction_order([m for m in kept if m.id not in confirmed], ctx.now)[:over]:
            reason = f"evicted: the team memory keeps at most {ctx.settings.team_bound} entries"
            plan.evict.append((memory.id, reason))
            report.evicted.append(Eviction(memory_id=memory.id, reason=reason))
    return plan


__all__ = ["Context", "DISTILLED_TAG", "current", "plan_round", "plan_scope", "round_start"]
