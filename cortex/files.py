"""Small file-system helpers shared by every module that writes a file of its own (snapshots, tokens,
discovery, settings): atomic replacement under a unique temporary name, and private directories."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

#: Directories Cortex creates hold memory text, tokens and indexes: owner only.
PRIVATE_DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) readable by the owner only; an existing one is left as it is."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    return path


@contextmanager
def atomic_writer(path: Path, *, mode: int = 0o600) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` atomically when the block ends without error: written under a
    unique temporary name in the same directory (two writers never share one), flushed, then renamed."""
    import tempfile  # here: the hook path imports this module and never writes

    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def open_regular(path: Path | str) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; ``OSError`` for anything else, without blocking: a
    FIFO or a device where Cortex expects a file (its own, or a transcript) must not hang a command."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def append_private(path: Path, text: str) -> None:
    """Append ``text`` to the regular file ``path`` (created 0600), never through a symbolic link: a log that
    someone replaced by a link elsewhere is not written (``OSError``)."""
    import stat

    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def read_regular(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of a regular file (at most ``limit`` of them); see :func:`open_regular`."""
    with open_regular(path) as fh:
        return fh.read() if limit is None else fh.read(limit)


def atomic_write(path: Path, data: bytes | str, *, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path, mode=mode) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)
