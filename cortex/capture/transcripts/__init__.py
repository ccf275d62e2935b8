"""Agent session transcripts, read into one uniform list of messages, incrementally from a byte offset.

One module per format: :mod:`~cortex.capture.transcripts.claude` (Claude Code JSONL, subagent transcripts
included), :mod:`~cortex.capture.transcripts.codex` (Codex CLI rollout JSONL),
:mod:`~cortex.capture.transcripts.cursor` (Cursor agent transcripts), :mod:`~cortex.capture.transcripts.gemini`
(Gemini CLI chat JSONL, and its session JSON before 0.39) and :mod:`~cortex.capture.transcripts.messages` (a JSON
list of chat messages, and plain text); a Claude Code session exported as one JSON object (``loglines``) is read as
Claude Code's. :func:`read` finds the format and returns a :class:`Transcript`; :func:`render` writes messages as plain
text for a model, within a token budget.

JSON-lines formats are streamed line by line, at most ``max_bytes`` a read; a last line without its newline is
not consumed (the agent may still be writing it), so ``Transcript.end`` is where the next read starts. The
whole-document formats (``messages``, ``text``, and a session exported as one JSON object) are read whole. Content never raises: a malformed line is
skipped and named in ``Transcript.problems``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

from cortex import jsonsafe
from cortex.capture.transcripts import claude, codex, cursor, gemini
from cortex.capture.transcripts._common import MAX_PROBLEMS, LineParser, Message, Problems, SubagentCall, \
    Transcript
from cortex.capture.transcripts.messages import message_list, parse_messages, parse_text
from cortex.errors import InvalidInputError
from cortex.files import open_input

__all__ = ["FORMATS", "MAX_PROBLEMS", "MAX_READ", "Message", "SubagentCall", "Transcript", "open_transcript", "read",
           "render"]

FORMATS = ("claude", "codex", "cursor", "gemini", "messages", "text")
#: The most one read takes by default (the rest is read by the next one).
MAX_READ = 64 * 1024 * 1024
#: How many lines, and bytes, of the beginning of a file format detection looks at.
HEAD_LINES = 32
HEAD_BYTES = 8 * 1024 * 1024
#: The size of the reads a JSON-lines transcript is streamed with.
CHUNK = 1024 * 1024


def open_transcript(path: str | os.PathLike[str]) -> BinaryIO:
    """The transcript at ``path`` opened as an input file (:func:`cortex.files.open_input`: a regular file, checked
    on its handle against the caller's confinement and Cortex's own files); :class:`InvalidInputError` naming why
    not. A capture opens it once and reads that handle (:func:`read`'s ``handle``)."""
    name = os.fspath(path)
    try:
        return open_input(name)
    except FileNotFoundError:
        raise InvalidInputError("transcript", f"{name}: no such file") from None
    except OSError as exc:
        reason = f" ({exc.strerror})" if exc.strerror else ""
        raise InvalidInputError("transcript", f"{name}: not a readable regular file{reason}") from None


def read(path: str | os.PathLike[str], start: int = 0, *, format: str | None = None,
         max_bytes: int = MAX_READ, handle: BinaryIO | None = None) -> Transcript:
    """The messages of the transcript at ``path`` from byte ``start`` on.

    The format (``claude``, ``codex``, ``cursor``, ``gemini``, ``messages`` or ``text``) is found from the first
    lines of the file unless ``format`` names it. A JSON-lines transcript is read up to the end of its last
    complete line, at most ``max_bytes`` after ``start``: ``end`` is where that line ends and the next read starts
    (a line longer than ``max_bytes`` is skipped and named in problems, so that reading moves on). A whole-document
    transcript is read whole (:class:`InvalidInputError` when it is larger than ``max_bytes``) and ``end`` is its
    size; with ``start`` at that size (nothing written since) it gives no messages. A ``start`` past the end of the
    file (it was truncated or replaced) gives no messages, a problem, and ``end`` 0. Malformed content is skipped and
    listed in ``problems``; only a path that is not a readable regular file, or a bad argument, raises
    (:class:`InvalidInputError`). With ``handle`` (from :func:`open_transcript`) that open file is read, not
    ``path`` again (which only names it), and left open."""
    if format is not None and format not in FORMATS:
        raise InvalidInputError("format", f"must be one of {', '.join(FORMATS)}, not {format!r}")
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise InvalidInputError("start", f"must be a byte offset (an integer >= 0), not {start!r}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise InvalidInputError("max_bytes", f"must be a positive integer, not {max_bytes!r}")
    name = os.fspath(path)
    if handle is not None:
        return _read_open(handle, name, start, format, max_bytes)
    with open_transcript(name) as fh:
        return _read_open(fh, name, start, format, max_bytes)


def _read_open(fh: BinaryIO, name: str, start: int, format: str | None, max_bytes: int) -> Transcript:
    """:func:`read` of the open file ``fh``."""
    size = os.fstat(fh.fileno()).st_size
    document: str | None = None
    if format is None:
        format, document = _detect(fh, size, max_bytes)
        if format is None:
            return Transcript("text", [], start, problems=[
                "the first line is not complete yet and does not tell the format: read again later"])
    if start > size:
        return Transcript(format, [], 0, problems=[
            f"start {start} is past the end of the file ({size} bytes): it was truncated or replaced; "
            "read it again from 0"])
    if format in ("messages", "text"):
        return _read_document(fh, name, format, document, start, size, max_bytes)
    if document is None and format in ("claude", "gemini"):
        document = _whole(fh, size, max_bytes)
    if document is not None:  # a whole session as one JSON object: a pre-0.39 Gemini CLI one, a Claude Code export
        return _read_export(fh, name, format, document, start, size)
    return _read_lines(fh, format, start, max_bytes)


def _whole(fh: BinaryIO, size: int, max_bytes: int) -> str | None:
    """The file's text when it is one JSON object that spans lines (a session exported whole), else None."""
    fh.seek(0)
    first = fh.readline(65536).strip().lstrip(b"\xef\xbb\xbf")
    if first != b"{" or size > max_bytes:  # a JSONL line is a whole object; a pretty-printed document opens alone
        return None
    fh.seek(0)
    text = fh.read(max_bytes).decode("utf-8", errors="replace")
    try:
        document = jsonsafe.loads(text.lstrip("\ufeff"))
    except ValueError:
        return None
    return text if gemini.is_record(document) or claude.is_export(document) else None


def _read_export(fh: BinaryIO, name: str, format: str, text: str, start: int, size: int) -> Transcript:
    """A session exported as one JSON object (``format`` names whose lines it holds), read whole: a record of
    Gemini CLI before 0.39, or Claude Code lines under ``loglines``."""
    problems = Problems()
    if start == size and start > 0:
        return Transcript(format, [], size)
    try:
        document = jsonsafe.loads(text.lstrip("\ufeff"))
    except ValueError as exc:
        return Transcript(format, [], size, problems=[f"{name}: not JSON: {exc}"])
    parser: LineParser
    if format == "gemini" and gemini.is_record(document):
        parser = gemini.Parser(problems)
        parser.feed(document, "the session")
    elif format == "claude" and claude.is_export(document):
        parser = claude.Parser(problems)
        for number, entry in enumerate(document["loglines"], 1):
            try:
                parser.feed(entry, f"logline {number}")
            except (TypeError, ValueError, AttributeError, KeyError) as exc:
                problems.add(f"logline {number}: skipped ({type(exc).__name__}: {exc})")
    else:
        return Transcript(format, [], size, problems=[f"{name}: one JSON object, not a {format} session"])
    parser.finish()
    return Transcript(format, parser.messages, size, parser.session_id, problems.result(), parser.subagent_calls())


def _read_document(fh: BinaryIO, name: str, format: str, document: str | None, start: int, size: int,
                   max_bytes: int) -> Transcript:
    """A whole-document transcript, read whole."""
    if start == size and start > 0:
        return Transcript(format, [], size)
    if size > max_bytes:
        raise InvalidInputError("transcript", f"{name}: a {format} transcript is read whole and this one has "
                                              f"{size} bytes, more than {max_bytes}")
    if document is None:
        fh.seek(0)
        document = fh.read(max_bytes).decode("utf-8", errors="replace")
    problems = Problems()
    messages: list[Message] = []
    if format == "messages":
        try:
            items = message_list(jsonsafe.loads(document))
        except ValueError as exc:
            items = None
            problems.add(f"not JSON: {exc}")
        if items is None:
            problems.add("not a list of {role, content} messages (nor {\"messages\": [...]})")
        else:
            messages = parse_messages(items, problems)
    else:
        messages = parse_text(document.lstrip("\ufeff"))
    return Transcript(format, messages, size, problems=problems.result())


def _read_lines(fh: BinaryIO, format: str, start: int, max_bytes: int) -> Transcript:
    """A JSON-lines transcript from ``start``, streamed line by line."""
    problems = Problems()
    parser: LineParser
    if format == "claude":
        parser = claude.Parser(problems)
    elif format == "cursor":
        parser = cursor.Parser(problems)
    elif format == "gemini":
        parser = gemini.Parser(problems)
    else:
        # a read from the middle of a rollout: whether the file has response items is in its first lines
        known = start > 0 and any(e.get("type") == "response_item" for e in _head(fh) if isinstance(e, dict))
        parser = codex.Parser(problems, response_items=known)
    end = start
    for number, (offset, line, complete) in enumerate(_lines(fh, start, max_bytes), 1):
        where = f"line {number} (byte {offset})" if start else f"line {number}"
        if not complete:  # a whole read without a newline: skipped, or no read would ever move past it
            problems.add(f"{where}: longer than {max_bytes} bytes: skipped")
            end = offset + len(line)
            continue
        end = offset + len(line) + 1
        text = line.decode("utf-8", errors="replace").strip()
        if number == 1 and start == 0:
            text = text.lstrip("\ufeff")
        if not text:
            continue
        try:
            entry = jsonsafe.loads(text)
        except jsonsafe.JSONLimitError as exc:  # a poison pill: reported, and the capture moves past it
            problems.add(f"{where}: skipped: {exc}")
            continue
        except ValueError:
            problems.add(f"{where}: not JSON (truncated?)")
            continue
        try:
            parser.feed(entry, where)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:  # a shape no reader expected
            problems.add(f"{where}: skipped ({type(exc).__name__}: {exc})")
    parser.finish()
    return Transcript(format, parser.messages, end, parser.session_id, problems.result(), parser.subagent_calls())


def _lines(fh: BinaryIO, start: int, max_bytes: int) -> Iterator[tuple[int, bytes, bool]]:
    """(offset, bytes without the newline, complete) of each line from ``start``, within ``max_bytes``: complete
    lines, then, when the whole window holds no newline at all, that window as one incomplete line. A last line
    without its newline is not given (it may still be being written)."""
    fh.seek(start)
    remaining = max_bytes
    offset = start
    pending: list[bytes] = []
    pending_size = 0
    found = False
    while remaining > 0:
        chunk = fh.read(min(CHUNK, remaining))
        if not chunk:
            break
        remaining -= len(chunk)
        cut = chunk.find(b"\n")
        if cut < 0:
            pending.append(chunk)
            pending_size += len(chunk)
            continue
        found = True
        first = b"".join(pending) + chunk[:cut] if pending else chunk[:cut]
        pending, pending_size = [], 0
        yield offset, first, True
        offset += len(first) + 1
        rest = chunk[cut + 1:]
        parts = rest.split(b"\n")
        tail = parts.pop()
        for part in parts:
            yield offset, part, True
            offset += len(part) + 1
        if tail:
            pending, pending_size = [tail], len(tail)
    if not found and pending_size >= max_bytes:
        yield offset, b"".join(pending), False


def _head(fh: BinaryIO) -> list[Any]:
    """The JSON values of the first complete lines of the file (up to :data:`HEAD_LINES` non-empty lines within
    :data:`HEAD_BYTES`; a line that is not JSON, or too long to read here, is None)."""
    fh.seek(0)
    values: list[Any] = []
    budget = HEAD_BYTES
    while len(values) < HEAD_LINES and budget > 0:
        line = fh.readline(budget)
        if not line.endswith(b"\n"):
            break  # the end of the file, an incomplete last line, or a line longer than the budget
        budget -= len(line)
        text = line.decode("utf-8", errors="replace").strip().lstrip("\ufeff")
        if not text:
            continue
        try:
            values.append(jsonsafe.loads(text))
        except ValueError:
            values.append(None)
    return values


def _detect(fh: BinaryIO, size: int, max_bytes: int) -> tuple[str | None, str | None]:
    """The format of the file, and its text when it had to be read whole to tell; (None, None) when it cannot be
    told yet (a first JSON line still being written)."""
    for entry in _head(fh):
        if claude.looks_like(entry):
            return "claude", None
        if codex.looks_like(entry):
            return "codex", None
        if gemini.looks_like(entry):
            return "gemini", None
        if cursor.looks_like(entry):
            return "cursor", None
    fh.seek(0)
    first = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if first in (b"[", b"{") and size <= max_bytes:
        fh.seek(0)
        raw = fh.read(max_bytes)
        text = raw.decode("utf-8", errors="replace")
        try:
            document = jsonsafe.loads(text.lstrip("\ufeff"))
        except ValueError:
            if first == b"{" and b"\n" not in raw:  # one JSON line, not complete yet: a transcript being written
                return _sniff(raw[:65536]), None
            return "text", text
        if gemini.is_record(document):
            return "gemini", text
        if claude.is_export(document):
            return "claude", text
        return ("messages" if message_list(document) is not None else "text"), text
    return "text", None


def _sniff(start: bytes) -> str | None:
    """The format of a transcript whose first line is still being written, from the keys it begins with; None
    when they do not tell."""
    if b'"session_meta"' in start or b'"response_item"' in start:
        return "codex"
    if any(key in start for key in (b'"sessionId"', b'"isSidechain"', b'"parentUuid"')):
        return "claude"
    return None


# -- rendering ---------------------------------------------------------------------------------------------------

#: A tool result is cut to this many characters (its beginning and end) before anything else.
MAX_RESULT_CHARS = 2_000
#: A tool call's input is cut to this many characters.
MAX_INPUT_CHARS = 500
DROPPED = "[tool output dropped]"
SEPARATOR = "\n\n"


def _default_estimate(text: str) -> int:
    """About four characters a token."""
    return (len(text) + 3) // 4


def _cut(text: str, limit: int) -> str:
    """``text``, or its beginning and end around a note of what was left out when longer than ``limit``."""
    if len(text) <= limit:
        return text
    half = max(1, (limit - 40) // 2)
    return f"{text[:half]} [... {len(text) - 2 * half} characters ...] {text[-half:]}"


def _fit(text: str, room: int, estimate: Callable[[str], int], *, keep: str) -> str:
    """The longest cut of ``text`` that ``estimate`` puts within ``room`` tokens: its end (``keep="tail"``) or its
    beginning and end (``"both"``), marked with "..."; "" when not even that fits."""
    if estimate(text) <= room:
        return text

    def cut(n: int) -> str:
        if keep == "tail":
            return "..." + text[len(text) - n:]
        head = (n + 1) // 2
        return text[:head] + " [...] " + text[len(text) - (n - head):]

    low, high = 0, len(text)
    while low < high:  # the largest n with estimate(cut(n)) <= room
        mid = (low + high + 1) // 2
        if estimate(cut(mid)) <= room:
            low = mid
        else:
            high = mid - 1
    return cut(low) if low > 0 and estimate(cut(low)) <= room else ""


class _Line:
    """One message as rendered: a label and a body that compression may drop or cut."""

    def __init__(self, message: Message) -> None:
        self.kind: str = message.kind
        tool = message.tool or "tool"
        who = f" (subagent {message.agent_id})" if message.sidechain and message.agent_id else \
            " (subagent)" if message.sidechain else ""
        if message.kind == "tool_use":
            self.label = f"Tool call {tool}{who}: "
            self.body = _cut(_compact(message.text), MAX_INPUT_CHARS)
        elif message.kind == "tool_result" or message.role == "tool":
            self.kind = "tool_result"
            self.label = f"Tool result {tool}{who}: " if message.tool else f"Tool result{who}: "
            self.body = _cut(message.text, MAX_RESULT_CHARS)
        else:
            self.label = f"{'User' if message.role == 'user' else 'Assistant'}{who}: "
            self.body = message.text.strip()

    @property
    def text(self) -> str:
        return self.label + self.body


def _compact(text: str) -> str:
    """A tool call's JSON input on one line (other text as it is)."""
    try:
        return json.dumps(jsonsafe.loads(text), ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return text


def render(messages: Sequence[Message], budget_tokens: int, *,
           estimate: Callable[[str], int] = _default_estimate) -> str:
    """``messages`` as plain text for a model ("User: ...", "Assistant: ...", "Tool call <name>: <input>",
    "Tool result <name>: ..."), within ``budget_tokens`` as ``estimate`` counts them.

    Each tool result is cut to :data:`MAX_RESULT_CHARS` (its beginning and end) and each tool input to
    :data:`MAX_INPUT_CHARS` first. Over the budget, the oldest tool output goes first (tool results, then tool
    inputs, oldest first, each replaced by "[tool output dropped]"), then the oldest messages (the last one to go
    is cut to what still fits, keeping its end). The last assistant message is always kept (cut in its middle
    when it alone is over the budget)."""
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 1:
        raise InvalidInputError("budget_tokens", f"must be a positive integer, not {budget_tokens!r}")
    lines = [_Line(m) for m in messages]
    if not lines:
        return ""
    keep = max((k for k, m in enumerate(messages) if m.role == "assistant" and m.kind == "text"), default=-1)
    sep = estimate(SEPARATOR)
    costs = [estimate(line.text) + sep for line in lines]
    total = sum(costs)

    for kind in ("tool_result", "tool_use"):  # the oldest tool output first
        for k, line in enumerate(lines):
            if total <= budget_tokens:
                break
            if line.kind == kind and line.body != DROPPED:
                cost = estimate(line.label + DROPPED) + sep
                if cost < costs[k]:  # a short input costs less than the note that it was dropped
                    line.body = DROPPED
                    total += cost - costs[k]
                    costs[k] = cost

    dropped = 0
    for k, line in enumerate(lines):  # then the oldest messages
        if total + (estimate(_omitted(dropped)) + sep if dropped else 0) <= budget_tokens:
            break
        if k == keep:
            continue
        rest = total - costs[k]
        room = budget_tokens - rest - estimate(_omitted(dropped + 1)) - 2 * sep - estimate(line.label)
        if room >= 16:  # enough left for the end of this one: cut it rather than drop it
            line.body = _fit(line.body, room, estimate, keep="tail")
            total = rest + estimate(line.text) + sep
            costs[k] = estimate(line.text) + sep
            continue
        lines[k] = _Gone()
        total, costs[k] = rest, 0
        dropped += 1

    shown = [line for line in lines if not isinstance(line, _Gone)]
    out = SEPARATOR.join(([_omitted(dropped)] if dropped else []) + [line.text for line in shown])
    if estimate(out) > budget_tokens and keep >= 0:  # the last assistant message alone is (nearly) over the budget
        last = lines[keep]
        body = last.body
        head = ([_omitted(dropped)] if dropped else []) + [line.text for line in shown if line is not last]
        room = budget_tokens - estimate(SEPARATOR.join(head) + SEPARATOR if head else "") - estimate(last.label)
        last.body = _fit(body, max(room, 0), estimate, keep="both")
        if head and len(last.body) < min(len(body), 64):  # too little of it left: it alone, then
            head = []
            last.body = _fit(body, max(budget_tokens - estimate(last.label), 0), estimate, keep="both")
        out = SEPARATOR.join(head + [last.text])
    if estimate(out) > budget_tokens:  # whatever the estimate's quirks: keep the end, where the last answer is
        out = _fit(out, budget_tokens, estimate, keep="tail")
    return out


class _Gone(_Line):
    """A message left out of the rendering."""

    def __init__(self) -> None:  # noqa: D107 - nothing to show
        self.kind, self.label, self.body = "gone", "", ""


def _omitted(count: int) -> str:
    return f"[{count} earlier message{'s' if count != 1 else ''} omitted]"
