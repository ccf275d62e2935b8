"""The graph domain of the facade: read-only SPARQL, RDF export and import, SHACL, other memory systems."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cortex import caller, config, notices
from cortex.app.admin import AdminOps
from cortex.app.kernel import _redaction_note
from cortex.app.memories import MemoryOps
from cortex.app.reading import ReadingOps
from cortex.errors import (
    AgentNotFoundError,
    CortexError,
    InvalidInputError,
    PermissionDeniedError,
)
from cortex.memories import WRITE_BATCH
from cortex.model import (
    ImportReport,
    Memory,
    Scope,
    Source,
)
from cortex.provenance import activity as provenance_activity
from cortex.store.oxigraph import OxigraphStore
from cortex.validation import (
    check_agent_name,
    check_limit,
    check_team_name,
)

if TYPE_CHECKING:
    import pyoxigraph as ox

    from cortex.model import Violation
    from cortex.sparql.results import SparqlResult
    from cortex.sparql.workers import QueryWorkers


class GraphOps(MemoryOps, ReadingOps, AdminOps):
    """The memory as RDF: SPARQL, export, import, SHACL, and other memory systems' files."""

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
        """Run a read-only SPARQL query (docs/sparql.md). Without ``agent`` it sees the whole store (every
        named graph, and their union as the default graph); with ``agent`` exactly the graphs that agent reads
        (its own, its teams', the swarm), whatever ``FROM`` or ``GRAPH`` the query names. ``substitutions``
        binds variables (by name) to pyoxigraph terms. At most ``limit`` rows (``result.truncated`` says when
        there were more); ``timeout`` seconds, else :class:`QueryTimeoutError`. Updates and ``SERVICE`` are
        refused (:class:`InvalidInputError`, field ``query``). ``default_graphs``/``named_graphs``: the protocol's
        ``default-graph-uri``/``named-graph-uri``, the query's dataset (either given: exactly those graphs, in
        place of its ``FROM``/``FROM NAMED``); with ``agent``, each must be a graph that agent reads
        (:class:`PermissionDeniedError` otherwise): they narrow what it reads, never widen it."""
        from cortex import sparql  # here: the hooks and most commands never run a query

        self._check_open()
        rows = check_limit(limit, "limit", 10**12) if limit is not None else None
        store = self._memories.store
        bindings = sparql.check_substitutions(substitutions)
        graphs = None
        named: list[ox.NamedNode] | None = None
        asked = _protocol_dataset(default_graphs, named_graphs)
        agent = agent if agent is not None else caller.current()  # an agent's token reads what its agent reads
        if agent is not None:
            readable = self._read_scopes(agent, None)
            allowed = {store.vocab.graph(s).value for s in readable}
            if store.shared:  # a server's dataset names graphs that exist (rdflib's engine fails on others)
                existing = set(self._memories.scopes())
                readable = tuple(s for s in readable if s in existing) or readable[:1]
            graphs = [store.vocab.graph(s) for s in readable]
            for field, iris in zip(("default-graph-uri", "named-graph-uri"), asked or ()):
                for iri in iris:
                    if iri.value not in allowed:
                        raise PermissionDeniedError(f"{agent} does not read the graph <{iri.value}>: an agent's "
                                                    f"dataset names only graphs it reads", field)
        if asked is not None:  # the protocol's dataset: exactly those graphs
            graphs, named = asked
        if graphs is not None and not store.confines_queries():
            raise PermissionDeniedError(f"the SPARQL server of this store ({store.location}) reads every graph "
                                        f"whatever dataset a query names, so an agent's query could read other "
                                        f"agents' memories: agents' queries are refused (an admin's run)", "query")
        # the engine runs exactly the text judged here: the agent's graphs written into it, and on a store
        # without native substitutions the bindings too
        prepared = sparql.prepare(query, dataset=[g.value for g in graphs] if graphs is not None else None,
                                  bindings=bindings, inline=not store.substitutes,
                                  named=[g.value for g in named] if named is not None else None)
        dataset = sparql.graphs_clause(graphs, named) if graphs is not None else {"use_default_graph_as_union": True}
        names = named if named is not None else graphs
        started = time.monotonic()
        workers = self._query_workers()
        if workers is not None:  # an on-disk store: a process of its own, killed at the time-out
            if timeout is not None:
                sparql.check_timeout(timeout)
            try:
                return workers.run(prepared.text, default_graph=[g.value for g in graphs] if graphs else None,
                                   named_graphs=[g.value for g in names] if names else None,
                                   union=graphs is None, substitutions=bindings, limit=rows or 2**62,
                                   timeout=timeout)
            except InvalidInputError as exc:
                raise InvalidInputError(exc.field, sparql.engine_error(prepared, exc.reason)) from None

        def work() -> SparqlResult:
            try:
                raw = store.query(prepared.text, bindings if store.substitutes else None, **dataset)
            except InvalidInputError as exc:
                raise InvalidInputError(exc.field, sparql.engine_error(prepared, exc.reason)) from None
            return sparql.collect(raw, rows or 2**62, timeout, started)

        return sparql.run(sparql.guarded(work), timeout)

    def _query_workers(self) -> QueryWorkers | None:
        """The SPARQL worker processes of an embedded on-disk store (started at its first query), else None."""
        from cortex.sparql.workers import QueryWorkers

        store = self._memories.store
        path = store.local_path
        if path is None or not isinstance(store, OxigraphStore) or store.read_only:
            return None  # (read-only: queried here; its checkpoints would be written in the writer's directory)
        with self._memories.lock:
            if self._workers is None:
                self._workers = QueryWorkers(path / "cortex-sparql", lambda: store.writes, store.checkpoint)
            return self._workers

    def export(self, out: IO[bytes], *, agent: str | None = None, team: str | None = None, all: bool = False,
               format: str = "trig", progress: Callable[[str, int, int | None], None] | None = None) -> int:
        """Write the graph of one agent's own memories (``agent``), of a team (``team``) or of every scope
        (``all``) to ``out`` as RDF (``trig``, ``nquads``, ``turtle`` for one scope, ``jsonld``), streaming,
        exactly as stored (versions, supersession, tags, metadata, authors; not the change log). Returns how
        many quads were written. ``import_rdf`` of the file into an empty store gives the same dataset.
        ``progress("export", memories written, memories in the scopes)`` hears how far it is."""
        from cortex import transfer

        self._check_open()
        fmt = transfer.format_of(format)
        targets = self._export_scopes(agent, team, all)
        quads = (q for scope in targets for q in self._memories.export(scope))
        total = sum(len(self._memories.index(scope)) for scope in targets) if progress is not None else None
        return transfer.write(quads, out, fmt, self._memories.store.vocab, graphs=len(targets),
                              progress=progress, total=total)

    def _export_scopes(self, agent: str | None, team: str | None, all: bool) -> list[Scope]:
        if sum((agent is not None, team is not None, bool(all))) != 1:
            raise InvalidInputError("scope", "export one agent (agent=), one team (team=) or everything (all=True)")
        who = caller.current()
        if who is not None and agent != who:  # an agent's token: its own graph only (cortex.caller)
            if agent is not None:
                caller.require(check_agent_name(agent))
            raise PermissionDeniedError("an agent token exports, checks and imports its own agent only (agent=); "
                                        "the rest needs an admin token", "agent")
        if all:
            return self._memories.scopes()
        return [Scope.agent(check_agent_name(agent)) if agent is not None
                else Scope.team(check_team_name(team))]

    def validate_store(self, *, agent: str | None = None, team: str | None = None,
                       all: bool = True) -> list[Violation]:
        """Check one agent's, one team's or (default) every scope's graph against the SHACL shapes of what
        Cortex writes (``cortex/shapes.ttl``); returns the violations (none: the store conforms)."""
        from cortex import shapes, transfer

        self._check_open()
        targets = self._export_scopes(agent, team, all and agent is None and team is None)
        if agent is not None or team is not None:
            self._known_scope(targets[0])
        vocab = self._memories.store.vocab
        with self._memories.lock:
            quads = [q for scope in targets for q in self._memories.export(scope)]
        # pyshacl (the `shacl` extra) is the reference; without it the shapes are checked natively, as an import does
        native = None if shapes.pyshacl_installed() else shapes.native(vocab)
        violations = shapes.validate(quads, vocab) if native is None else []
        try:  # and every memory readable as an import would read it (bounds included): what reads skip
            transfer.check(transfer.group(quads, vocab), vocab, shapes=native.check if native is not None else None)
        except transfer.InvalidDataError as exc:
            seen = {(v.focus, v.path) for v in violations}
            violations += [v for v in exc.violations if (v.focus, v.path) not in seen]
        return violations

    def _known_scope(self, scope: Scope) -> None:
        """Refuse a scope neither declared (an agent, or a team some agent is in) nor holding data."""
        declared = {d.name for d in self.agents.list()} if scope.kind == "agent" else self._teams()
        if scope.name not in declared and scope not in self._memories.scopes():
            if scope.kind == "agent":
                raise AgentNotFoundError(scope.name, self.agents.dirs)
            raise InvalidInputError("team", f"no agent is in team {scope.name!r} and the store holds no memory of it")

    def import_rdf(self, source: str | os.PathLike[str] | bytes | IO[bytes], *, format: str | None = None,
                   agent: str | None = None, team: str | None = None,
                   progress: Callable[[str, int, int | None], None] | None = None) -> dict[str, int]:
        """Import memories exported by :meth:`export` (or written to the same vocabulary): the format from
        ``format`` or the file's extension; a Turtle file (one graph) goes to ``agent``'s or ``team``'s scope.
        The whole file is checked first, against the SHACL shapes too (:class:`~cortex.transfer.InvalidDataError`
        names each focus node, property and problem, and nothing is written), then written in one atomic bulk
        load and indexed. ``progress(stage, done, total)`` hears how far it is. Returns the memories imported
        per scope (``agent:NAME``, ``team:NAME``, ``swarm``)."""
        from cortex import shapes, transfer

        self._check_open()
        name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
        fmt = transfer.format_of(format, name if isinstance(name, str) else None)
        if caller.current() is not None and agent is None:  # a file naming its graphs could name anybody's
            raise PermissionDeniedError("an import of an export naming its graphs needs an admin token", "agent")
        graph = None if agent is None and team is None else self._export_scopes(agent, team, False)[0]
        data = _import_bytes(source)
        vocab = self._memories.store.vocab
        native = shapes.native(vocab)  # the shapes checked in the judging pass; else pyshacl afterwards
        with self._memories.lock:
            parsed = transfer.parse(data, fmt, vocab, graph=graph, progress=progress)
            transfer.fold_uses(parsed, vocab)
            # the store's other scopes (the file's own are existing()'s): their indexes loaded here, before the
            # store takes its write lock for the load that calls check()
            held = [(s, self._memories.index(s)) for s in self._memories.scopes() if s not in parsed.quads]

            def check() -> dict[Scope, list[Memory]]:
                judged = transfer.check(parsed, vocab, existing=self._memories.index,
                                        shapes=native.check if native is not None else None, progress=progress,
                                        elsewhere=lambda i: next((s for s, index in held if i in index), None))
                if native is None:
                    violations = shapes.validate((q for quads in parsed.quads.values() for q in quads), vocab)
                    if violations:
                        raise transfer.InvalidDataError(violations)
                return judged

            if parsed.problems:
                check()  # raises, naming these and whatever else is wrong
            imported = self._memories.import_quads(
                parsed.quads, check, (data, transfer.FORMATS[fmt]) if parsed.verbatim and isinstance(data, bytes)
                else None, progress=progress)
        return {scope.key: n for scope, n in imported.items()}

    def import_from(self, system: str, path: str | os.PathLike[str] | bytes, *, agent: str, dry_run: bool = False,
                    progress: Callable[[str, int, int | None], None] | None = None,
                    name: str | None = None) -> ImportReport:
        """Import another memory system's files into ``agent``'s own memory (docs/capture.md, "Importers"):
        ``beads`` (a knowledge log, or its directory: the archive then the log), ``mem0`` (get_all's JSON),
        ``mcp-memory`` (the MCP memory server's memory.jsonl: observations as memories about their entity, relations
        as triples between entity nodes), ``claude`` (CLAUDE.md sections, or Claude Code's memory directory),
        ``codex`` (Codex's memory folder: its task groups of this project, its summary and skills).
        ``path``: a file, a directory, or a file's bytes (``name``: its file name). Each memory gets source
        ``import``, its tags and the system's, its origin in metadata and a PROV-O activity of channel
        ``import:<system>`` naming the file; its secrets are redacted. Idempotent: an item whose key is stored is
        skipped, a newer version supersedes it. Each file is checked whole (a bad item is reported as failed, the
        rest stored), then embedded and written in atomic batches of :data:`~cortex.memories.WRITE_BATCH` memories,
        the store's lock let go between them so reads go on; a crash in the middle leaves the batches written, and
        running the import again writes the rest. With ``dry_run`` nothing is written and the report says what
        would be. ``progress(stage, done, total)`` hears how far it is: ``import`` (items decided), ``embed`` and
        ``write`` (memories)."""
        from cortex.importers import common

        definition = self._agent(agent)
        files = common.documents(system, path, name)
        scope = self._scope(agent)
        with self._capturing, provenance_activity(channel=f"import:{system}"):
            run = common.Run(system, agent, scope=scope, vocab=self._memories.store.vocab, scrub=self.redactor.scrub,
                             now=self._clock(), expiry=self._policy(agent).expires_at,
                             project=definition.settings.project or config.DEFAULT_PROJECT, dry_run=dry_run,
                             progress=progress, find=self.redactor.find, root=self.project_root)
            read = run.read(files)
            run.remember(self._listed(agent, source=Source.IMPORT, include_expired=True))
            if any(parsed.entities or parsed.relations for _, parsed in read):
                with self._memories.lock:
                    rows = self._memories.store.query(run.graph_query())
                    run.remember_graph([(r["s"].value, r["p"].value, r["o"].value) for r in rows])
            for document, parsed in read:
                batch = run.plan(document, parsed)
                if dry_run or batch.empty:
                    continue
                with provenance_activity(file=document.name):
                    self._memories.add(scope, batch.memories, batch.triples, batch=WRITE_BATCH, progress=progress)
                    self._warn_prunable(batch.memories)
                    for old in batch.supersessions:  # the lifecycle's rules, one atomic write each
                        try:
                            run.superseded(old, self.supersede(agent, old.old, old.content, reason=old.reason,
                                                               **old.fields))
                        except CortexError as exc:
                            run.failed_write(old, str(exc))
            run.finished()
        if run.report.redacted and not dry_run and run.report.imported:  # nothing stored: nothing to say
            notices.notice(f"import of {', '.join(run.report.files)} for agent {agent!r} "
                           f"{_redaction_note(run.report.redacted)} before storing it")
        return run.report

    def export_beads(self, directory: str | os.PathLike[str], *, agent: str) -> dict[str, Any]:
        """Write ``agent``'s current memories as a Beads knowledge log, ``directory/knowledge.jsonl`` (docs/capture.md,
        "Beads"): those imported from Beads as they were read, the others with the plugin's keys; merged with the
        knowledge files already there (same key: the newest ``ts`` wins), more than 1,000 lines rotating the oldest
        500 to ``knowledge.archive.jsonl``. Returns the counts and the files written."""
        from cortex.importers import beads

        return beads.write(directory, self.beads_lines(agent))

    def beads_lines(self, agent: str) -> list[dict[str, Any]]:
        """The Beads knowledge lines of ``agent``'s current memories, oldest first (what :meth:`export_beads`
        writes, before the merge and rotation)."""
        from cortex.importers import beads

        self._agent(agent)
        return beads.lines_of(self._listed(agent))


def _protocol_dataset(default_graphs: Sequence[str] | None, named_graphs: Sequence[str] | None,
                      ) -> tuple[list[ox.NamedNode], list[ox.NamedNode]] | None:
    """The dataset the protocol's ``default-graph-uri``/``named-graph-uri`` name (None: neither given): absolute
    IRIs, else :class:`InvalidInputError` naming the parameter."""
    if default_graphs is None and named_graphs is None:
        return None
    import pyoxigraph as ox

    out: list[list[ox.NamedNode]] = []
    for field, iris in (("default-graph-uri", default_graphs), ("named-graph-uri", named_graphs)):
        if isinstance(iris, str) or not isinstance(iris, (Sequence, type(None))):
            raise InvalidInputError(field, "must be a list of IRIs")
        nodes = []
        for iri in iris or ():
            try:
                if not isinstance(iri, str) or ":" not in iri:
                    raise ValueError("not an absolute IRI")
                nodes.append(ox.NamedNode(iri))
            except ValueError:
                raise InvalidInputError(field, f"{str(iri)[:200]!r} is not an absolute IRI") from None
        out.append(nodes)
    return out[0], out[1]


def _import_bytes(source: object) -> bytes | IO[bytes]:
    """What ``import_rdf`` reads: a file's bytes (a path), bytes, or a binary stream."""
    if isinstance(source, (str, os.PathLike)):
        try:
            return Path(source).read_bytes()
        except OSError as exc:
            raise InvalidInputError("file", f"cannot read {os.fspath(source)!r}: {exc.strerror or exc}") from None
    if isinstance(source, (bytes, bytearray)):
        return bytes(source)
    if hasattr(source, "read"):
        return source  # type: ignore[return-value]
    raise InvalidInputError("source", f"must be a path, bytes or a binary stream, not {type(source).__name__}")
