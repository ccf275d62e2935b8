"""The ``<agent-memory>`` block injected into an agent's prompt, and which memories it shows
(:meth:`cortex.app.Cortex.agent_start`).

Showing a memory touches it (usageCount + 1, lastUsedAt = now), so a ranking that read usage or last use would
lift whatever was shown before, for every later task: the block's ranking reads neither. With a task, memories
rank by relevance to it, weighed by confidence and per-source decay (:data:`RANKING`); the words of the agent's
own name and description are not query words (every task of that agent carries them, so they would match the
same memories for every task); one slot is kept for the most confident memory the task did not match
(:data:`GENERAL_MIN_CONFIDENCE`). Without a task (or when nothing matched), memories come by confidence, then
newest first. The same content in two memories (two scopes, a store repeated) is one line.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

from cortex.index.analyzer import analyze
from cortex.model import Filters, Memory, Scope
from cortex.recall import Part
from cortex.rerank import Reranking
from cortex.text import normalize

OPEN_TAG = "<agent-memory>"
CLOSE_TAG = "</agent-memory>"

#: Every kind of line break a reader may honour (str.splitlines's and Unicode's): each becomes a newline, so each
#: line of a memory is a continuation line of its item, never an item of its own.
_BREAKS = re.compile("\r\n|[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
#: Characters that look like ``<`` or ``>`` (after NFKC, which folds the fullwidth and small forms): angle
#: brackets, guillemets, ornaments, Canadian syllabics, modifier letters...
_ANGLES = str.maketrans({**{c: "<" for c in "\u2039\u27e8\u27ea\u27ec\u27ee\u3008\u300a\u2329\u276c\u276e\u2770"
                                           "\u29fc\u1438\u02c2\u226a\u22d8\u2a79\u2a7d\u2aa1\u2bc7\uff1c\ufe64"},
                         **{c: ">" for c in "\u203a\u27e9\u27eb\u27ed\u27ef\u3009\u300b\u232a\u276d\u276f\u2771"
                                           "\u29fd\u1433\u02c3\u226b\u22d9\u2a7a\u2a7e\u2aa2\u2bc8\uff1e\ufe65"}})
#: A ``<`` that could start a tag (followed, spacing aside, by a ``/``, ``!``, ``?`` or a letter of any script, or
#: at once by anything but a digit, ``=``, ``<`` or ``-``): the block's own tags in any case, spelling or script,
#: and any other tag a prompt reader might honour. ``a <= b``, ``x < 3``, ``<<`` and ``<-`` stay as they are.
_TAG_LIKE = re.compile(r"<(?=\s*[/!?]|\s*[^\W\d_]|[^\s\d=<\-])")
#: A continuation line that would read as an item of its own (a list marker at its start).
_ITEM_LIKE = re.compile(r"^(\s*)([-*+\u2022])(?=\s|$)")
_ESCAPED_ITEM = r"\1\\\2"  # Markdown's escape: "\- text" is text, not an item
_KEEP = {"\n", "\t"}


def block_text(text: str) -> str:
    """``text`` as the block shows it, where nothing can close, open or imitate the block's structure: NFKC
    (fullwidth and other compatibility forms folded to their plain letters), every line break kind a newline,
    control, format and unassigned characters dropped (NUL, zero-width spaces and joiners, soft hyphens, bidi
    overrides, Unicode tag characters), look-alikes of ``<`` and ``>`` made plain, and every ``<`` that starts
    something tag-like written ``&lt;``."""
    text = _BREAKS.sub("\n", unicodedata.normalize("NFKC", text))
    text = "".join(c for c in text if c in _KEEP or unicodedata.category(c) not in _DROPPED)
    # again: a dropped character may have stood between a letter and its combining mark (a\u200b\u0301)
    text = unicodedata.normalize("NFKC", text)
    return _TAG_LIKE.sub("&lt;", text.translate(_ANGLES))


#: The Unicode categories the block drops: controls, format characters (Cf: zero-width, bidi, tags, soft hyphen),
#: surrogates, private use, unassigned.
_DROPPED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})


def neutralise(text: str) -> str:
    """Make text that could close or forge the block inert (:func:`block_text`)."""
    return block_text(text)


def render_line(memory: Memory) -> str:
    """``- [type] content``, ``- [type] (team:backend) content`` for a shared memory, from the content's
    :func:`block_text`; further lines of the content are indented continuation lines, a list marker at the start
    of one escaped (``\\-``) so that no line of a memory reads as an item of its own."""
    first, *rest = block_text(memory.content).strip("\n").split("\n")
    # a shared memory names its scope, a memory provider's (cortex.providers) its provider
    shared = (f"({memory.origin}) " if memory.origin != "cortex" else
              f"({memory.scope}) " if memory.scope != "agent" else "")
    lines = [f"- [{memory.type.value}] {shared}{first}"]
    lines.extend("  " + _ITEM_LIKE.sub(_ESCAPED_ITEM, line) for line in rest)
    return "\n".join(lines)


def fit(memories: Sequence[Memory], max_chars: int | None) -> list[Memory]:
    """The longest prefix of ``memories`` (best first) whose block stays within ``max_chars``: the
    lowest-ranked memories are dropped first."""
    if max_chars is None:
        return list(memories)
    size = len(OPEN_TAG) + len(CLOSE_TAG) + 1
    kept: list[Memory] = []
    for memory in memories:
        size += len(render_line(memory)) + 1
        if size > max_chars:
            break
        kept.append(memory)
    return kept


def render(memories: Sequence[Memory], max_chars: int | None = None) -> str:
    """The block for ``memories`` in the order given (best first), or "" when none fits."""
    kept = fit(memories, max_chars)
    if not kept:
        return ""
    return "\n".join([OPEN_TAG, *(render_line(m) for m in kept), CLOSE_TAG])


# -- which memories the block shows ------------------------------------------------------------------

#: The reranking of a task's block: relevance, confidence, decay and use (usedCount); never usage or last use
#: (injection feeds both), except that a memory shown again and again that no output drew on loses weight
#: (``unused``: the block learns from use, docs/capture.md).
RANKING = Reranking(recency=False, usage=False, unused=True)
#: A memory at least this confident keeps a slot in a task's block even when the task does not match it (0.9 is
#: what ``validate`` gives).
GENERAL_MIN_CONFIDENCE = 0.9


def role_terms(name: str, description: str) -> frozenset[str]:
    """The analysed terms of an agent's name (its parts: ``code-reviewer`` -> code, reviewer) and description."""
    return frozenset(analyze(f"{name.replace('-', ' ').replace('_', ' ')} {description}"))


def task_text(task: str, role: frozenset[str]) -> str:
    """``task`` without the words whose every analysed term is one of the agent's ``role`` terms ("" when
    nothing else is left)."""
    kept = [word for word in task.split() if not (set(analyze(word)) and set(analyze(word)) <= role)]
    return " ".join(kept)


def general_ids(parts: Sequence[Part], filters: Filters, limit: int) -> list[tuple[Scope, str]]:
    """The (scope, id) of the ``limit`` memories passing ``filters`` with the highest confidence (lifted up to 1.5x
    by the times the agent's output drew on it), then newest (then the latest written), across ``parts``: an order
    showing a memory does not change."""
    rows: list[tuple[float, int, int, Scope, str]] = []
    for part in parts:
        index = part.index
        docs = np.arange(len(index.ids))
        docs = docs[index.keep(docs, filters)]
        if not len(docs):
            continue
        # drawn on by the agent's output lifts a memory (being shown does not: usedCount, not usageCount)
        used = index.col("used")[docs].astype(np.float64)
        confidence = index.col("confidence")[docs].astype(np.float64) * (1 + 0.5 * np.minimum(1.0, np.log1p(used) /
                                                                                           np.log1p(5)))
        created = index.col("created")[docs]
        best = np.lexsort((-docs, -created, -confidence))[:limit]  # the last key sorts first
        rows.extend((-float(confidence[k]), -int(created[k]), -int(docs[k]), part.scope, str(index.ids[docs[k]]))
                    for k in best)
    rows.sort(key=lambda r: r[:3])
    return [(scope, memory_id) for _, _, _, scope, memory_id in rows[:limit]]


def distinct(memories: Iterable[Memory]) -> list[Memory]:
    """``memories`` in order without a later one whose content (normalised, trimmed) an earlier one has."""
    seen: set[str] = set()
    out = []
    for memory in memories:
        key = " ".join(normalize(memory.content).split())
        if key not in seen:
            seen.add(key)
            out.append(memory)
    return out


def compose(hits: Sequence[Memory], general: Sequence[Memory], limit: int) -> list[Memory]:
    """The block's memories, best first: the task's ``hits`` (distinct), with the most confident of ``general``
    (by confidence, best first) that they miss in the last of ``limit`` slots when it is confident enough; without
    hits, ``general``."""
    hits = distinct(hits)
    if not hits:
        return distinct(general)[:limit]
    shown = {" ".join(normalize(m.content).split()) for m in hits}
    extra = next((m for m in general if " ".join(normalize(m.content).split()) not in shown), None)
    if extra is None or extra.confidence < GENERAL_MIN_CONFIDENCE or limit < 2:
        return hits[:limit]
    return [*hits[:max(0, limit - 1)], extra]
