"""The reading domain of the facade: recall, ranked search, listing, counts and the ``<agent-memory>`` block."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from cortex import config, lifecycle, listing
from cortex.app.kernel import Kernel, announced
from cortex.errors import InvalidInputError
from cortex.model import (
    Hit,
    Memory,
    MemoryType,
    MemoryUsage,
    Page,
    Query,
    Scope,
    SearchResult,
    Source,
)
from cortex.provenance import current as current_activity
from cortex.recall import recall_ids
from cortex.render import RANKING as BLOCK_RANKING
from cortex.render import compose, fit, general_ids, role_terms, task_text
from cortex.render import render as render_block
from cortex.rerank import NO_RERANKING, Reranking
from cortex.search import SearchMode, check_mode
from cortex.search import search as run_search
from cortex.temporal import looks_back
from cortex.validation import (
    check_limit,
    check_project,
    check_query_text,
)

if TYPE_CHECKING:
    from cortex.providers.engine import PendingSearch

log = logging.getLogger("cortex")


class ReadingOps(Kernel):
    """Reads over the scopes an agent sees: AND-token recall, ranked search, listing, counts, the block."""

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
        """AND-token recall (see :func:`cortex.recall.recall_scored`) over every scope the agent reads (its own,
        its teams', the swarm; or the one ``scope`` names), filtered inside the indexes before the limit: by
        type, project, tags (all of them), source, and time (current memories unless ``include_expired`` /
        ``include_superseded``; ``as_of``: what was recorded and valid then)."""
        q = self._query(agent, query, type=type, project=project, limit=limit, tags=tags, scope=scope,
                        source=source, include_expired=include_expired, include_superseded=include_superseded,
                        as_of=as_of)
        pending = self._ask_providers(q, scope)
        own: list[Memory] = []
        if self.engine_settings.own:
            with self._memories.lock:
                own = self._as_of(self._memories.load_many(recall_ids(self._parts(q.scopes), q)), q)
        if pending is None:
            return own
        return [m for m, _ in self._merged(agent, q, own, pending)[0]]

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
        """Ranked search: ``all`` (AND-token), ``bm25``, ``semantic`` or ``hybrid`` (see
        :mod:`cortex.search`), over the scopes and with the filters of :meth:`recall`. ``semantic`` and
        ``hybrid`` fall back to ``bm25`` when they cannot run (no provider, vectors of another model, provider
        failure) and say why in ``result.note``.

        Ranked modes over-fetch candidates and rerank them by recency, use, confidence and decay by source (see
        :mod:`cortex.rerank`); ``rerank=False`` or a :class:`Reranking` changes that. ``all`` keeps the
        contract's order. With ``explain`` each hit carries its score components. A ranked query that asks
        about the past of a fact ("what did we use previously", :func:`cortex.temporal.looks_back`) includes
        superseded memories, as ``include_superseded=True`` would.
        """
        requested = check_mode(mode)
        if requested is not SearchMode.ALL and as_of is None and isinstance(query, str) and looks_back(query):
            include_superseded = True
        q = self._query(agent, query, text_required=True, type=type, project=project, limit=limit, tags=tags,
                        scope=scope, source=source, include_expired=include_expired,
                        include_superseded=include_superseded, as_of=as_of)
        settings = rerank if isinstance(rerank, Reranking) else (Reranking() if rerank else NO_RERANKING)
        pending = self._ask_providers(q, scope)
        if not self.engine_settings.own:
            result = SearchResult(hits=[], mode=str(requested), requested_mode=str(requested))
        else:  # merging needs each hit's cosine, which the explanation holds
            result = run_search(self._memories, q.scopes, q, requested, reranking=settings,
                                explain=explain or pending is not None, fusion=self.fusion, now=self._clock(),
                                policy=self._policy(agent))
            if q.filters.as_of is not None:
                then = self._as_of([h.memory for h in result.hits], q)
                result.hits = [h.model_copy(update={"memory": m}) for h, m in zip(result.hits, then)]
        if pending is None:
            return result
        own = {h.memory.id: h for h in result.hits}
        merged, status = self._merged(agent, q, [h.memory for h in result.hits], pending, _cosines(result))
        hits = []
        for memory, score in merged:
            details = None
            if explain:
                details = dict((own[memory.id].explain or {}) if memory.origin == "cortex" else {})
                details["merged"] = score
            hits.append(Hit(memory=memory, score=score, explain=details))
        return result.model_copy(update={"hits": hits, "providers": status})

    def _ask_providers(self, q: Query, scope: str | None) -> PendingSearch | None:
        """The memory providers' search for ``q`` started, when the engine asks them and the read is one they can
        answer: a text, over the scopes the agent reads, without filters (a provider's memories have no type,
        project, tags, source or valid time)."""
        f = q.filters
        if (not self.engine_settings.external or not q.text or scope is not None or f.types is not None
                or f.projects is not None or f.tags is not None or f.sources is not None or f.include_expired
                or f.include_superseded or f.as_of is not None):
            return None
        return self.engine.search(q.agent, q.text, q.limit)

    def _merged(self, agent: str, q: Query, own: list[Memory], pending: PendingSearch,
                cosines: list[float] | None = None) -> tuple[list[tuple[Memory, float]], dict[str, str]]:
        """``own`` and the providers' hits, merged (:func:`cortex.providers.merge.merge`), and each provider's
        status. ``cosines``: ``own``'s, when the search computed them (with the model, the merge then embeds only
        the providers' hits). Every candidate is scored on one scale: when embedding fails, all of them are scored
        lexically, never Cortex's by cosine and the providers' by BM25."""
        from cortex.providers.merge import lexical_relevance, merge

        external, status = pending.collect()
        semantic = self.embeddings is not None and getattr(self.embeddings, "ready", True)
        common: dict[str, Any] = {"agent": agent, "limit": q.limit, "now": self._clock(), "query": q.text or "",
                                  "weight": self.engine_settings.weight, "redact": self._outbound}
        try:
            return merge(own, external, relevance=self._relevance, own_relevance=cosines if semantic else None,
                         **common), status
        except Exception:  # noqa: BLE001 - a model that fails here fails the lexical way, not the read
            if not semantic:
                raise
            log.warning("embedding the merge's candidates failed: ranked lexically", exc_info=True)
            return merge(own, external, relevance=lexical_relevance, **common), status

    def _relevance(self, query: str, texts: Sequence[str]) -> Sequence[float]:
        """How relevant each text is to ``query`` on one scale for Cortex's memories and the providers': the cosine
        of the store's embedding model when it is ready, else BM25 over the texts themselves."""
        from cortex.providers.merge import lexical_relevance, semantic_relevance

        embeddings = self.embeddings
        if embeddings is not None and getattr(embeddings, "ready", True):
            return semantic_relevance(embeddings.embed)(query, texts)
        return lexical_relevance(query, texts)

    def _as_of(self, memories: list[Memory], q: Query) -> list[Memory]:
        """With ``as_of``, each memory as it was then (the version current at that moment; matching was on
        the current content)."""
        moment = q.filters.as_of
        if moment is None:
            return memories
        scopes = {s.relative: s for s in q.scopes}
        return [lifecycle.version_at(self._memories.history(scopes[m.scope], m.id) or [m], moment)
                if m.version > 1 and (m.updated_at or m.created_at) > moment else m for m in memories]

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
        """Page through every memory the agent can see (or those of ``scope``), newest first, filtered as
        :meth:`recall` is. ``page.next_cursor`` continues the listing (None after the last page). ``session``:
        only the memories the writes of that agent session created (a capture of its transcript, its hooks; as
        provenance records it); ``since``: only those created at that time or later (an ISO 8601 time, or a
        duration back from now: ``2h``, ``7d``)."""
        q = self._query(agent, None, type=type, project=project, limit=limit, tags=tags, scope=scope, source=source,
                        include_expired=include_expired, include_superseded=include_superseded)
        after = listing.check_since(since, self._clock()) if since is not None else None
        with self._memories.lock:
            only = {s: listing.made_in_session(self._memories, s, session) for s in q.scopes} \
                if session is not None else None
            wanted, next_cursor = listing.page(self._parts(q.scopes), q.filters, cursor, q.limit, since=after,
                                               only=only)
            return Page.model_construct(items=self._memories.load_many(wanted), next_cursor=next_cursor)

    def stats(self, agent: str) -> dict[str, int]:
        """How many memories of each type the agent has (all four keys, always)."""
        self._agent(agent)
        return {t.value: n for t, n in self._memories.index(self._scope(agent)).type_counts().items()}

    def count(self, agent: str) -> int:
        """How many memories the agent has."""
        self._agent(agent)
        return len(self._memories.index(self._scope(agent)))

    def usage_stats(self, agent: str) -> dict[str, dict[str, int | float | None]]:
        """Per source of the agent's current memories: how many there are (``memories``), how many were shown
        at least once (``shown``) and how many an output drew on (``used``), the totals of showings and uses
        (``times_shown``: usageCount, which explicit touches add to; ``times_used``: usedCount) and their
        ``ratio`` (None when none was shown). Per memory: :meth:`memory_usage`."""
        self._agent(agent)
        return listing.usage_by_source(self._memories.index(self._scope(agent)))

    def memory_usage(self, agent: str, *, order: str = "used", limit: int = 20) -> list[MemoryUsage]:
        """The agent's own memories by their use (what a "proved useful" panel shows): per memory how often it was
        shown (usageCount: in a block, or touched), how often an output drew on it (usedCount) and the ratio.
        ``order``: ``used`` (those used, most uses first), ``ratio`` (those shown, by uses per showing),
        ``shown`` (those shown, most first) or ``unused`` (shown and never used, most shown first)."""
        self._agent(agent)
        if order not in config.USAGE_ORDERS:
            raise InvalidInputError("order", f"must be one of {', '.join(config.USAGE_ORDERS)}, not {order!r}")
        limit = check_limit(limit, "limit", 1000)
        scope = self._scope(agent)
        with self._memories.lock:
            ids = listing.usage_by_memory(self._memories.index(scope), order, limit)
            memories = self._memories.load_many([(scope, i) for i in ids])
        return [MemoryUsage(id=m.id, content=m.content, type=m.type.value, source=m.source.value,
                            shown=m.usage_count, used=m.used_count,
                            ratio=listing.use_ratio(m.used_count, m.usage_count),
                            last_used_at=m.last_used_at) for m in memories]

    def agent_overview(self, agent: str) -> dict[str, Any]:
        """The agent at a glance, from the derived indexes: its own current memories' figures
        (:func:`cortex.listing.overview`: counts by type and source, last activity, decay, expiring soon, never
        shown or used, mean confidence), ``by_scope``: how many current memories each scope it reads holds
        (its own, ``team:NAME``, ``swarm``), and ``prune_due``: how many of its own memories the prune at its next
        ``agent_end`` deletes by its ``cortex.prune`` settings (:func:`cortex.lifecycle.prune_candidates`)."""
        settings = self._agent(agent).settings
        now = self._clock()
        own = self._scope(agent)
        with self._memories.lock:
            figures = listing.overview(self._memories.index(own), self._policy(agent), now)
            figures["prune_due"] = len(lifecycle.prune_candidates(
                self._memories.index(own), min_confidence=settings.prune_min_confidence,
                max_age=settings.prune_max_age, now=now))
            by_scope = {scope.relative: (figures["total"] if scope == own else
                                         listing.current_count(self._memories.index(scope), now))
                        for scope in self._read_scopes(agent, None)}
        return {"agent": agent, **figures, "by_scope": by_scope}

    @staticmethod
    def render(memories: Sequence[Memory], max_chars: int | None = None) -> str:
        """The ``<agent-memory>`` block for ``memories`` (best first); "" when empty."""
        if max_chars is not None:
            max_chars = check_limit(max_chars, "max_chars", 10_000_000)
        return render_block(memories, max_chars)

    @announced("injection", "start")
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
        """The block to inject when ``agent`` starts on ``task``; touches every memory it renders (unless
        ``touch`` is false: the same session's block shown again).

        Considers the current memories of every scope the agent reads (or of ``scope``; shared ones are marked
        with their scope), of ``project`` (default: the agent's ``cortex.project``, else all projects) and of
        ``global``, with all ``tags``. ``limit`` and ``max_chars`` default to the agent's ``cortex.recall``
        settings, else 5 memories and 8000 characters. What is shown is ranked without usage or last use, so
        being shown never lifts a memory (:mod:`cortex.render`); the same content is one line.
        """
        if task is not None:
            task = check_query_text(task, "task")
        definition = self._agent(agent)
        settings = definition.settings
        limit = check_limit(limit if limit is not None else settings.recall_limit or config.DEFAULT_START_LIMIT)
        budget = check_limit(max_chars if max_chars is not None else
                             settings.recall_max_chars or config.DEFAULT_START_MAX_CHARS, "max_chars", 10_000_000)
        project = project if project is not None else settings.project
        q = self._query(agent, None, limit=limit, tags=tags, scope=scope)
        if not self.engine_settings.own and not self.engine_settings.external:
            return ""  # the engine is none: no memory is shown
        pending = (self.engine.search(agent, task, limit) if task and self.engine_settings.external
                   and scope is None and tags is None else None)
        if project is not None:
            q = replace(q, filters=replace(q.filters, projects=frozenset([check_project(project),
                                                                           config.DEFAULT_PROJECT])))
        hits: list[Memory] = []
        cosines: list[float] | None = None
        text = task_text(task, role_terms(definition.name, definition.description)) if task else ""
        if text.strip() and self.engine_settings.own:  # hybrid falls back to bm25 without embeddings
            result = run_search(self._memories, q.scopes, replace(q, text=text, limit=2 * limit), SearchMode.HYBRID,
                                reranking=BLOCK_RANKING, explain=pending is not None, fusion=self.fusion,
                                now=self._clock(), policy=self._policy(agent))
            hits = [h.memory for h in result]
            cosines = _cosines(result)
        if pending is not None:
            hits = [m for m, _ in self._merged(agent, replace(q, text=task, limit=2 * limit), hits, pending,
                                               cosines)[0]]
        with self._memories.lock:
            # twice the limit: room for what the same content repeated takes out
            general = (self._memories.load_many(general_ids(self._parts(q.scopes), q.filters, 2 * limit))
                       if self.engine_settings.own else [])
            shown = fit(compose(hits, general, limit), budget)
            grouped = _by_scope([m for m in shown if m.origin == "cortex"], q.scopes)
            # a store opened read-only while another process writes it: the block is shown, not counted as shown
            touch = touch and not self._memories.store.read_only
            if touch:
                now = self._clock()
                for scope_, ids in grouped.items():
                    self._memories.touch(scope_, ids, now)
            pairs = [(scope_.key, i) for scope_, ids in grouped.items() for i in ids]
            session = current_activity().session
            if touch:  # what is matched for the "used" signal: a use counts once per showing that was counted
                self._shown.record(agent, session, pairs)
            self._context.record(agent, session, pairs)  # a start (a new, cleared or compacted context) holds this
            block = render_block(shown)
        if session:
            self._note_session(lambda: self._sessions.started(agent, session, self._clock(), task, block, pairs,
                                                              touched=touch))
        return block

    @announced("injection", "prompt")
    def agent_prompt(
        self,
        agent: str,
        prompt: str,
        limit: int | None = None,
        max_chars: int | None = None,
        *,
        touch: bool = True,
    ) -> str:
        """The memories relevant to ``prompt`` that the session's context does not hold yet, as an
        ``<agent-memory>`` block ("" when there are none): at most ``limit`` (3) memories in ``max_chars`` (1,500)
        characters. Touches what it shows (unless ``touch`` is false).

        What the context holds is the session's (the activity's ``session``): the block of its latest start, what
        earlier prompts added, and the memories its own writes created. Only memories the prompt matches are
        shown (a shared term, or a close enough vector: search's relevance floor), of the agent's project and
        ``global``, ranked as a task's block is (relevance, confidence, decay; never usage)."""
        prompt = check_query_text(prompt, "prompt")
        definition = self._agent(agent)
        limit = check_limit(limit if limit is not None else config.DEFAULT_PROMPT_LIMIT)
        budget = check_limit(max_chars if max_chars is not None else config.DEFAULT_PROMPT_MAX_CHARS, "max_chars",
                             10_000_000)
        text = task_text(prompt, role_terms(definition.name, definition.description))
        if not text.strip() or (not self.engine_settings.own and not self.engine_settings.external):
            return ""
        session = current_activity().session
        own = self._scope(agent)
        with self._memories.lock:
            held = {i for _, i in self._context.shown(agent, session)} if session else set()
            if session and self.engine_settings.own:
                held |= listing.made_in_session(self._memories, own, session)
        wanted = min(config.MAX_LIMIT, 2 * limit + len(held))  # room for what the context holds already
        q = self._query(agent, None, limit=wanted)
        if definition.settings.project is not None:
            q = replace(q, filters=replace(q.filters, projects=frozenset([
                check_project(definition.settings.project), config.DEFAULT_PROJECT])))
        pending = self.engine.search(agent, prompt, wanted) if self.engine_settings.external else None
        hits: list[Memory] = []
        cosines: list[float] | None = None
        if self.engine_settings.own:
            result = run_search(self._memories, q.scopes, replace(q, text=text), SearchMode.HYBRID,
                                reranking=BLOCK_RANKING, explain=pending is not None, fusion=self.fusion,
                                now=self._clock(), policy=self._policy(agent))
            hits, cosines = [h.memory for h in result], _cosines(result)
        if pending is not None:
            hits = [m for m, _ in self._merged(agent, replace(q, text=prompt), hits, pending, cosines)[0]]
        with self._memories.lock:
            shown = fit(compose([m for m in hits if m.id not in held], [], limit), budget)
            grouped = _by_scope([m for m in shown if m.origin == "cortex"], q.scopes)
            touch = touch and not self._memories.store.read_only
            if touch:
                now = self._clock()
                for scope_, ids in grouped.items():
                    self._memories.touch(scope_, ids, now)
            pairs = [(scope_.key, i) for scope_, ids in grouped.items() for i in ids]
            if pairs and touch:  # what the session's later output is matched against for the "used" signal, too
                self._shown.add(agent, session, pairs)
            if pairs and session:
                self._context.add(agent, session, pairs)
            return render_block(shown)

    def _listed(self, agent: str, **filters: Any) -> list[Memory]:
        """Every memory of ``agent``'s own scope that passes ``filters`` (those of :meth:`list_memories`)."""
        out: list[Memory] = []
        cursor = None
        while True:
            page = self.list_memories(agent, scope="agent", cursor=cursor, limit=config.MAX_LIMIT, **filters)
            out.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                return out


def _cosines(result: SearchResult) -> list[float] | None:
    """Each hit's cosine with the query, from its explanation, when the search computed them all."""
    found = [h.explain.get("semantic") if h.explain else None for h in result.hits]
    if result.mode not in ("hybrid", "semantic") or any(c is None for c in found):
        return None
    return [float(c) for c in found if c is not None]


def _by_scope(memories: Sequence[Memory], scopes: Sequence[Scope]) -> dict[Scope, list[str]]:
    """The ids of ``memories`` grouped by the scope (among ``scopes``) each one is in."""
    by_name = {s.relative: s for s in scopes}
    out: dict[Scope, list[str]] = {}
    for memory in memories:
        out.setdefault(by_name[memory.scope], []).append(memory.id)
    return out
