"""The one redaction step of the write path (docs/capture.md, "Redaction"): every memory a write creates or
changes passes :func:`scrub_memory` when the write is automatic, whatever channel produced it.

:mod:`cortex.capture.redact` says what a secret is; this module says *where* it is looked for: the content,
every metadata value and key (recursively: an importer's ids, user and agent fields, a heading, a note's key)
and the tags (a tag that holds a secret is dropped: a placeholder is not a tag). Which writes: every write of
an automatic channel (a provenance activity naming a ``channel``: marker, transcript, llm, task, notes,
``import:<system>``, beads, consolidation) and every memory whose source is not ``manual`` (captured,
summarised, imported, injected); an explicit ``store``/``update`` of an agent's own text only when
``CORTEX_REDACT_STORE`` is on. Cortex's own RDF import (:mod:`cortex.transfer`) never comes here: it is a
lossless copy of a store.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from cortex.capture.redact import Redactor
from cortex.model import Memory, Source
from cortex.text import STOP_WORDS

#: How deep a metadata value is followed (metadata is at most 8 KiB; deeper values are left to validation).
_MAX_DEPTH = 64


def automatic(memory: Memory, channel: str | None) -> bool:
    """Whether ``memory``, written under an activity of ``channel``, comes from an automatic channel (always
    redacted) rather than an agent's explicit write of its own text."""
    return channel is not None or memory.source is not Source.MANUAL


def scrub_value(redactor: Redactor, value: Any, counts: Counter[str], depth: int = 0) -> Any:
    """``value`` with the secrets of every string in it replaced: strings, the keys and values of mappings and
    the items of lists, recursively; other values as they are."""
    if isinstance(value, str):
        return redactor.scrub(value, counts)
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, Mapping):
        return {scrub_value(redactor, k, counts, depth + 1) if isinstance(k, str) else k:
                scrub_value(redactor, v, counts, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_value(redactor, v, counts, depth + 1) for v in value)
    return value


def scrub_tags(redactor: Redactor, tags: Sequence[str], counts: Counter[str]) -> tuple[str, ...]:
    """The tags without those that hold a secret (counted by rule)."""
    kept = []
    for tag in tags:
        found = redactor.find(tag)
        if found:
            counts.update(name for _, _, name in found)
        else:
            kept.append(tag)
    return tuple(kept)


def scrub_memory(redactor: Redactor, memory: Memory, counts: Counter[str]) -> Memory:
    """``memory`` with the secrets of its content, metadata (keys and values) and tags replaced; the same object
    when it held none."""
    found: Counter[str] = Counter()
    content = redactor.scrub(memory.content, found)
    metadata = scrub_value(redactor, memory.metadata, found) if memory.metadata else memory.metadata
    tags = scrub_tags(redactor, memory.tags, found) if memory.tags else memory.tags
    reason = redactor.scrub(memory.superseded_reason, found) if memory.superseded_reason else memory.superseded_reason
    if not found:
        return memory
    counts.update(found)
    return memory.model_copy(update={"content": content, "metadata": metadata, "tags": tags,
                                     "superseded_reason": reason})


#: The gate's reason for a text that is little more than a secret's placeholder.
ONLY_SECRET = "only-a-secret"
#: A redaction placeholder (:data:`cortex.capture.redact.PLACEHOLDER`).
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
#: Words that only say what the redacted secret was (``the deploy uses key [REDACTED:...]``): no substance.
_SECRET_WORDS = frozenset(
    """api key keys token tokens secret secrets password passwords passwd pwd passphrase credential credentials
    creds auth authorization authentication access private bearer basic header value values env environment
    variable variables use uses used using is are was set sets id ids string config configured new old current
    real actual same here""".split())
#: Words and numbers of a text (a token of letters, digits and ``_./-``).
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]*")
#: Informative words a redacted text needs besides its placeholders and the words about the secret.
MIN_SUBSTANCE = 2


def only_secret(text: str) -> bool:
    """Whether a redacted ``text`` is little more than its placeholders: with the placeholders, stop words and
    the words that only name the secret (key, token, password, uses...) taken out, fewer than
    :data:`MIN_SUBSTANCE` words are left (``The deploy uses key [REDACTED:openai-key].``). A text without a
    placeholder never is (the gate's other rules judge it)."""
    if not _PLACEHOLDER.search(text):
        return False
    words = [w.lower() for w in _WORD.findall(_PLACEHOLDER.sub(" ", text))]
    return sum(1 for w in words if len(w) >= 2 and w not in STOP_WORDS and w not in _SECRET_WORDS) < MIN_SUBSTANCE
