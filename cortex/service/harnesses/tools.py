"""What a tool call did that an agent's memory cares about, whatever the coding agent that ran it: the Beads
comments a shell command added (``bd comment ID "LEARNED: ..."``, ``bd comments add ID "..."``) and the files an
``apply_patch`` call wrote. Standard library only (the hook path)."""

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
