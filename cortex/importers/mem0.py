"""mem0 (docs/capture.md, "Importers"): the JSON of ``Memory.get_all`` (mem0ai/mem0 2.0.18,
``mem0/memory/main.py``): ``{"results": [item...]}``, each item ``MemoryItem.model_dump(exclude={"score"})``:
``id`` (a uuid4), ``memory`` (the text), ``hash``, ``metadata`` (null unless the payload had extra keys),
``created_at``, ``updated_at`` (ISO 8601 with an offset), then when present ``user_id``, ``agent_id``, ``run_id``,
``actor_id``, ``role``, ``expiration_date``. Also a bare list of items (1.x), and 1.x's graph answer
``"relations": [{"source", "relationship", "target"|"destination"}]``, kept as relations between entity nodes.

The key of an item is its id; ``updated_at`` orders its versions (a newer one supersedes the memory of its id).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cortex.importers.common import Document, Item, Parsed, Relation, entity_name, moment, text_field, whole_json

LABEL = "the JSON of mem0's get_all ({\"results\": [...]})"
FILES = "*.json"
#: The item fields kept in the memory's metadata (the text is the content; the rest is mem0's own).
KEPT = ("id", "hash", "metadata", "created_at", "updated_at", "user_id", "agent_id", "run_id", "actor_id", "role",
        "expiration_date", "categories", "immutable")


def looks_like(text: str) -> bool:
    value = whole_json(text)
    if isinstance(value, dict):
        value = value.get("results", value.get("memories"))
    return isinstance(value, list) and (not value or any(isinstance(v, dict) and "memory" in v for v in value[:20]))


def files_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.json") if p.is_file())


def parse(document: Document, text: str) -> Parsed:
    parsed = Parsed()
    value = whole_json(text)
    relations: Any = []
    if isinstance(value, dict):
        relations = value.get("relations") or []
        key = "results" if "results" in value else "memories"
        items = value.get(key)
    else:
        key, items = "", value
    if not isinstance(items, list):
        parsed.fail(document.name, "not the JSON of mem0's get_all: no list of results")
        return parsed
    for i, raw in enumerate(items):
        where = f"{document.name}: {key}[{i}]" if key else f"{document.name}: [{i}]"
        _item(parsed, where, raw)
    for i, raw in enumerate(relations if isinstance(relations, list) else []):
        _relation(parsed, f"{document.name}: relations[{i}]", raw)
    return parsed


def _item(parsed: Parsed, where: str, raw: Any) -> None:
    if not isinstance(raw, dict):
        parsed.fail(where, f"a JSON {type(raw).__name__}, not a memory object")
        return
    ident, text = text_field(raw.get("id")), raw.get("memory")
    if ident is None:
        parsed.fail(where, "no id: every mem0 memory has one (its identity)")
        return
    if not isinstance(text, str) or not text.strip():
        parsed.fail(where, "no memory text", ident)
        return
    created, updated = moment(raw.get("created_at")), moment(raw.get("updated_at"))
    for name, got in (("created_at", created), ("updated_at", updated)):
        given = raw.get(name)
        if given is not None and got is None:
            parsed.fail(where, f"{name} is not an ISO 8601 time: {given!r:.40}", ident)
            return
    meta: dict[str, Any] = raw["metadata"] if isinstance(raw.get("metadata"), dict) else {}
    tags: list[Any] = [meta.get("category")] if isinstance(meta.get("category"), str) else []
    if isinstance(raw.get("categories"), list):
        tags += raw["categories"]
    expires = moment(raw.get("expiration_date")) if raw.get("expiration_date") else None
    changed = updated or created
    parsed.items.append(Item(where=where, key=ident, content=text, tags=tags, created_at=created,
                             order=changed.timestamp() if changed is not None else None, changed_at=changed,
                             fields={k: raw[k] for k in KEPT if k in raw and raw[k] is not None},
                             expires_at=expires))


def _relation(parsed: Parsed, where: str, raw: Any) -> None:
    if not isinstance(raw, dict):
        parsed.fail(where, "a relation is an object {source, relationship, target}", kind="relation")
        return
    source, target = entity_name(raw.get("source")), entity_name(raw.get("target", raw.get("destination")))
    kind = text_field(raw.get("relationship", raw.get("relation")))
    if source is None or target is None or kind is None:
        parsed.fail(where, "a relation needs a source, a relationship and a target (non-empty strings)",
                    kind="relation")
        return
    parsed.entity(source, text_field(raw.get("source_type")))
    parsed.entity(target, text_field(raw.get("target_type", raw.get("destination_type"))))
    parsed.relations.append(Relation(where, source, kind, target))
