"""The state directory: files Cortex keeps beside a store, derived from it or about it (the derived indexes,
the token digests, the running server's discovery file, the owner file, spooled hook deliveries).

For the embedded on-disk store it is the store directory itself (so a store is one directory to copy or
back up). A store without a local directory (in memory, or remote) has one only when it is given; without
one, indexes are rebuilt from the store when a process opens it and nothing else is persisted.

Which file holds what (the state directory's are written by the process that holds the store: the server when
one runs):

* ``cortex-index/``: the derived indexes of each scope;
* ``cortex-tokens.json``: the digests of the API tokens;
* ``cortex-server.json`` and ``cortex-server.log``: the running server's discovery file, and its log;
* ``cortex-spool/``: hook captures waiting for delivery (:mod:`cortex.service.spool`);
* ``capture.json``: how far transcript capture has read each transcript, per agent: the marker lines' offset and
  the language model's (:mod:`cortex.capture.checkpoints`);
* ``shown.json``: which memories each agent was last shown, per session, that its later output is matched
  against for the "used" signal (:class:`cortex.capture.usage.ShownLog`);
* ``context.json``: which memories each agent session's context holds, per session: its latest start's block
  and what each prompt added since (``agent_prompt`` adds only what is not there yet);
* ``notes.json``: what syncing notes keeps between runs (the notes files promoted to a team, say);
* ``cortex-sessions/``: the session log, one file per agent: the block each session's starts injected, what its
  output used, the transcripts read for it (:mod:`cortex.capture.sessionlog`).

And in the project, not beside the store: ``.cortex/logs/`` (the hooks' log, detached captures' and round ends'),
and ``.cortex/state/transcripts.json``, the hooks' own record (:mod:`cortex.service.hooks.offsets`): how far each
hook has read a transcript for marker lines, and which coding agent of which session was shown a block (with the
agent it stood for). It is kept apart from ``capture.json`` and ``shown.json`` on purpose: a hook reads it before
it reaches the store, and with a server it must not write the server's files; its offsets count what a hook
reads (a subagent's lines of its parent's transcript are a reading of their own), while ``capture.json``'s count
a transcript capture's (which confirms what hooks captured rather than skipping it); its "shown" entries are
one flag per session (is a used signal worth a request, does a start repeat one), ``shown.json`` the memories.
"""

from __future__ import annotations

import os
from pathlib import Path

INDEX_DIR = "cortex-index"
TOKENS_FILE = "cortex-tokens.json"
SERVER_FILE = "cortex-server.json"
SERVER_LOG = "cortex-server.log"
SESSIONS_DIR = "cortex-sessions"


def index_root(state_dir: Path | None) -> Path | None:
    """Where the derived indexes of each scope live (``<state>/cortex-index``), or None."""
    return state_dir / INDEX_DIR if state_dir is not None else None


def tokens_file(state_dir: Path) -> Path:
    return state_dir / TOKENS_FILE


def server_file(state_dir: Path) -> Path:
    return state_dir / SERVER_FILE


def server_log(state_dir: Path) -> Path:
    return state_dir / SERVER_LOG


#: Where a Cortex server on a remote store keeps its own files.
STATE_DIR_ENV = "CORTEX_STATE_DIR"


def is_remote(location: str | os.PathLike[str] | None) -> bool:
    """Whether a store location names a remote store (a URL), not a directory or memory."""
    return location is not None and "://" in os.fspath(location)


def state_dir_of(location: str | os.PathLike[str] | None) -> Path | None:
    """The state directory of a store location: an embedded store's own directory; for a remote store
    ``$CORTEX_STATE_DIR`` when set (tokens, the discovery file and index snapshots of this Cortex server);
    else None."""
    if location is None or os.fspath(location) == "memory":
        return None
    if is_remote(location):
        env = os.environ.get(STATE_DIR_ENV)
        return Path(env).expanduser() if env else None
    return Path(os.fspath(location)).expanduser()


def printable_location(location: str | os.PathLike[str]) -> str:
    """A store location fit to print: a URL without its user and password."""
    text = os.fspath(location)
    if "://" not in text:
        return text
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError:
        return text.split("://", 1)[0] + "://(an unreadable location)"
    if not parts.username and not parts.password:
        return text
    return urllib.parse.urlunsplit(parts._replace(netloc=(parts.hostname or "") + (f":{port}" if port else "")))


#: Where each running server of this user leaves a pointer to its state directory (``cortex server status
#: --all``): ``$CORTEX_SERVERS_DIR``, else ``$XDG_STATE_HOME/cortex/servers`` (``~/.local/state/...``).
SERVERS_DIR_ENV = "CORTEX_SERVERS_DIR"


def servers_dir() -> Path:
    """The directory of the user's running-server pointers (see :data:`SERVERS_DIR_ENV`)."""
    configured = os.environ.get(SERVERS_DIR_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "cortex" / "servers"
