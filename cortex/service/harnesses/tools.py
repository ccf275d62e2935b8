"""What a tool call did that an agent's memory cares about, whatever the coding agent that ran it: the Beads
comments a shell command added (``bd comment ID "LEARNED: ..."``, ``bd comments add ID "..."``), whether the command
succeeded, and the files an ``apply_patch`` call wrote. Standard library only (the hook path)."""

from __future__ import annotations

import re
import shlex
from typing import Any

#: A Beads issue id (``bd-a1b2``, ``shop-12.3``).
BEAD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: bd's options that take a value (the next word): they are neither the id nor the comment.
VALUE_OPTIONS = frozenset({"--author", "-a", "--actor", "--db", "--file", "-f"})
#: The words that end a simple command.
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "\n"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: The files of an apply_patch patch: ``*** Add File: path``, ``*** Update File: path``, ``*** Move to: path``.
PATCH_FILE = re.compile(r"^\*\*\* (?:Add File|Update File|Move to): (.+?)[ \t]*$", re.MULTILINE)
#: The most of a command read for Beads comments.
MAX_COMMAND = 1024 * 1024
#: How a shell tool's output says the command's exit status, in its header (Codex: ``exec_command`` writes
#: "Process exited with code N", ``shell_command`` "Exit code: N", each before "Output:").
EXIT_STATUS = re.compile(r"^(?:Process exited with code|Exit code:)[ \t]*(-?\d+)[ \t]*$", re.MULTILINE)
OUTPUT_LINE = re.compile(r"^(?:Final )?[Oo]utput:", re.MULTILINE)
#: The most of an output read for its exit status (its header is first).
HEADER_CHARS = 4096


def _words(command: str) -> list[str]:
    """The command's words as a POSIX shell splits them, operators (``&&``, ``;``, ``|``, a newline,
    redirections) as words of their own; [] when the shell would not parse it either (an open quote)."""
    lexer = shlex.shlex(command[:MAX_COMMAND], posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return []


def _simple_commands(words: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for word in words:
        if word in SEPARATORS:
            out.append([])
        else:
            out[-1].append(word)
    return [c for c in out if c]


def bead_comments(command: str) -> list[tuple[str, str]]:
    """The (bead id, comment) of each ``bd comment ID TEXT...`` or ``bd comments add ID TEXT...`` in a shell
    command, also after ``cd x &&``, ``VAR=1`` or in a pipeline; the comment's words joined by spaces, as bd joins
    them. A comment read from a file (``-f``) is not seen."""
    if "bd" not in command or "comment" not in command:
        return []
    found = []
    for words in _simple_commands(_words(command)):
        while words and _ASSIGNMENT.match(words[0]):
            words = words[1:]
        if not words or not (words[0] == "bd" or words[0].endswith("/bd")):
            continue
        args = iter(words[1:])
        positional: list[str] = []
        for word in args:
            if word and set(word) <= set("<>&"):  # a redirection: the rest is its target
                break
            if word.startswith("-") and word != "-":
                if word in VALUE_OPTIONS:
                    next(args, None)
                continue
            positional.append(word)
        if positional[:2] in (["comments", "add"], ["comment", "add"]):
            positional = positional[2:]
        elif positional[:1] == ["comment"]:
            positional = positional[1:]
        else:
            continue
        if len(positional) >= 2 and BEAD_ID.fullmatch(positional[0]):
            found.append((positional[0], " ".join(positional[1:])))
    return found


def patch_files(value: Any) -> list[str]:
    """The files an ``apply_patch`` input adds, updates or moves to (in any string of it, or of a list or object
    of strings), each once."""
    strings: list[str] = []
    for item in (value.values() if isinstance(value, dict) else [value]):
        strings.extend(s for s in (item if isinstance(item, list) else [item]) if isinstance(s, str))
    found: list[str] = []
    for string in strings:
        for path in PATCH_FILE.findall(string[:MAX_COMMAND]):
            if path not in found:
                found.append(path)
    return found


def _status(value: Any) -> bool | None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    try:
        return int(value) == 0
    except ValueError:
        return None


def shell_outcome(response: Any) -> bool | None:
    """Whether a shell command succeeded, as its tool response says: True for exit status 0, False for another
    status or an error flag, None when the response does not say (Codex 0.145 to 0.171 give a hook the command's
    output alone: ``codex-rs`` ``ExecCommandToolOutput::post_tool_use_response``). Read: an object's ``exit_code``,
    ``exitCode``, ``metadata.exit_code``, ``success``, ``is_error``/``isError``; a JSON text of one; a list of
    content items; the header of an exec output ("Process exited with code N", "Exit code: N")."""
    if isinstance(response, dict):
        metadata = response.get("metadata")
        for value in (response.get("exit_code"), response.get("exitCode"),
                      metadata.get("exit_code") if isinstance(metadata, dict) else None):
            found = _status(value)
            if found is not None:
                return found
        if response.get("is_error") is True or response.get("isError") is True or response.get("success") is False:
            return False
        if response.get("success") is True:
            return True
        return shell_outcome(response.get("output")) if isinstance(response.get("output"), (str, list)) else None
    if isinstance(response, list):
        text = "\n".join(i["text"] for i in response if isinstance(i, dict) and isinstance(i.get("text"), str))
        return shell_outcome(text) if text else None
    if not isinstance(response, str):
        return None
    head = response[:HEADER_CHARS]
    if head.lstrip().startswith("{"):
        from cortex import jsonsafe

        try:
            value = jsonsafe.loads(response[:MAX_COMMAND])
        except ValueError:  # jsonsafe's limits (depth, size) are ValueErrors too
            value = None
        if isinstance(value, dict):
            return shell_outcome(value)
    body = OUTPUT_LINE.search(head)  # what the command printed is not its status, whatever it says
    status = EXIT_STATUS.search(head[:body.start()] if body else head)
    return _status(status.group(1)) if status else None
