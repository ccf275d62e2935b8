"""Storage backends behind one small interface (:class:`~cortex.store.base.MemoryStore`), chosen by the store
location: a directory is the embedded on-disk pyoxigraph store, None the in-memory one."""

from __future__ import annotations

import os
from pathlib import Path

from cortex import config
from cortex.errors import InvalidInputError
from cortex.store.base import MemoryStore
from cortex.vocab import Vocabulary

#: What ``Cortex.open`` accepts as a store location.
Location = str | os.PathLike[str] | None


def open_store(location: Location, vocabulary: Vocabulary, *, read_only: bool = False) -> MemoryStore:
    """The backend for ``location``: None (or ``"memory"``) for an in-memory store, a directory path for the
    embedded on-disk store (created if needed), ``sparql+http(s)://[user:password@]host:port/path[?update=
    &gsp=&auth=digest|basic&timeout=]`` for a remote SPARQL 1.1 server (:mod:`cortex.store.remote`). Raises
    :class:`~cortex.errors.StoreLockedError` when another process holds an on-disk store, and
    :class:`~cortex.errors.StoreError` when a remote server cannot be reached or refuses. ``read_only``: an
    on-disk store is opened without its lock, to read while another process writes it (ignored elsewhere)."""
    from cortex.store.oxigraph import OxigraphStore

    if location is None or (isinstance(location, str) and location == "memory"):
        return OxigraphStore(None, vocabulary)
    text = os.fspath(location)
    if "://" in text and text.split("://", 1)[0] in config.REMOTE_SCHEMES:
        from cortex.store.remote import RemoteStore

        return RemoteStore(text, vocabulary)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise InvalidInputError("store", f"unknown store scheme {scheme!r}: give a directory, "
                                         "sparql+http(s)://host:port/path, or None for memory")
    return OxigraphStore(Path(text).expanduser(), vocabulary, read_only=read_only)


__all__ = ["Location", "MemoryStore", "open_store"]
