"""Importers from other memory systems (docs/capture.md, "Importers" and "Beads"): one module per system, each
reading that system's files into items (:class:`cortex.importers.common.Parsed`); :mod:`cortex.importers.common`
holds what every importer shares (the documents, the report, the rules that decide what an item becomes, its
entry, its RDF). :meth:`cortex.app.Cortex.import_from` runs them.

* ``beads`` (:mod:`.beads`): the beads-compound plugin's ``.beads/memory/knowledge.jsonl`` (and its archive), ``bd
  export`` memories;
* ``mem0`` (:mod:`.mem0`): the JSON of mem0's ``Memory.get_all``;
* ``mcp-memory`` (:mod:`.mcp_memory`): the MCP reference memory server's ``memory.jsonl`` (entities, observations,
  relations);
* ``claude`` (:mod:`.claude`): ``CLAUDE.md`` sections, Claude Code's auto-memory directory (``MEMORY.md`` and its
  topic files);
* ``codex`` (:mod:`.codex`): Codex's memory folder (``MEMORY.md``'s task groups of the project,
  ``memory_summary.md``, skills).
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from cortex.errors import InvalidInputError

#: The systems ``import_from`` reads, and their modules.
SYSTEMS = {"beads": "beads", "mem0": "mem0", "mcp-memory": "mcp_memory", "claude": "claude", "codex": "codex"}


def module(system: str) -> ModuleType:
    """The importer of ``system`` (:class:`InvalidInputError` naming the known ones otherwise)."""
    if not isinstance(system, str) or system not in SYSTEMS:
        raise InvalidInputError("system", f"unknown system {system!r}; use one of {', '.join(SYSTEMS)} (an RDF export "
                                          "of Cortex: `cortex import FILE`, import_rdf)")
    return import_module(f"cortex.importers.{SYSTEMS[system]}")


__all__ = ["SYSTEMS", "module"]
