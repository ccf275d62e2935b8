"""The state directory: files Cortex keeps beside a store, derived from it or about it (the derived indexes,
the token digests, the running server's discovery file, the owner file, spooled hook deliveries).

For the embedded on-disk store it is the store directory itself (so a store is one directory to copy or
back up). A store without a local directory (in memory, or remote) has one only when it is given; without
one, indexes are rebuilt from the store when a process opens it and nothing else is persisted.
"""

from __future__ import annotations

import os
from pathlib import Path

INDEX_DIR = "cortex-index"
TOKENS_FILE = "cortex-tokens.json"
SERVER_FILE = "cortex-server.json"
SERVER_LOG = "cortex-server.log"


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
