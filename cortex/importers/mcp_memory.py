"""The MCP reference memory server (docs/capture.md, "Importers"): its ``memory.jsonl``
(modelcontextprotocol/servers ``src/memory`` 0.6.3, ``saveGraph``): one JSON object a line, every entity
``{"type": "entity", "name", "entityType", "observations": [text...]}`` then every relation ``{"type": "relation",
"from", "to", "relationType"}``; no newline after the last line (the server rewrites the whole file on each change).

Each observation becomes a memory about its entity (``agentmem:about`` the entity node,
``{ns}:agent:{agent}:entity:{percent-encoded name}``, typed ``agentmem:Entity`` with its ``name`` and
``entityType``), its content ``name (entityType): observation``; its key is the entity and a digest of the
observation (the text is the identity: an observation changed by the server is another one). Each relation is a
triple between the two entity nodes, its predicate ``{ns}:agentmem:rel:{percent-encoded relationType}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cortex.importers.common import Document, Item, Parsed, Relation, digest, entity_name, first_objects, json_lines, \
    text_field

LABEL = "the MCP memory server's memory.jsonl (entity and relation lines)"
FILES = "memory.jsonl, memory.json"


def looks_like(text: str) -> bool:
    return any(isinstance(v, dict) and v.get("type") in ("entity", "relation") and ("name" in v or "from" in v)
               for v in first_objects(text))


def files_in(directory: Path) -> list[Path]:
    return [p for p in (directory / "memory.jsonl", directory / "memory.json") if p.is_file()][:1]


def parse(document: Document, text: str) -> Parsed:
    parsed = Parsed()
    for number, line in json_lines(document, text, parsed):
        where = f"{document.name}:{number}"
        kind = line.get("type")
        if kind == "entity":
            _entity(parsed, where, line)
        elif kind == "relation":
            source, target = entity_name(line.get("from")), entity_name(line.get("to"))
            relation = text_field(line.get("relationType"))
            if source is None or target is None or relation is None:
                parsed.fail(where, "a relation needs from, to and relationType (non-empty strings)", kind="relation")
                continue
            parsed.entity(source)
            parsed.entity(target)
            parsed.relations.append(Relation(where, source, relation, target))
        else:
            parsed.fail(where, f"type is {kind!r:.40}: a line is an entity or a relation")
    return parsed


def _entity(parsed: Parsed, where: str, line: dict[str, Any]) -> None:
    name = entity_name(line.get("name"))
    if name is None:
        parsed.fail(where, "an entity without a name (a non-empty string of at most 1024 characters)")
        return
    kind = text_field(line.get("entityType"))
    observations = line.get("observations", [])
    if not isinstance(observations, list):
        parsed.fail(where, "observations is not a list", name)
        return
    parsed.entity(name, kind)
    for i, observation in enumerate(observations):
        at = f"{where} observations[{i}]"
        if not isinstance(observation, str) or not observation.strip():
            parsed.fail(at, "an observation is a non-empty string", name)
            continue
        parsed.items.append(Item(where=at, key=f"{name} #{digest(observation)}",
                                 content=f"{name} ({kind}): {observation}" if kind else f"{name}: {observation}",
                                 tags=[*([kind] if kind else []), "observation"],
                                 fields={"entity": name, **({"entityType": kind} if kind else {}), "observation": i},
                                 about=name))
