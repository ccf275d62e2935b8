"""Small file-system helpers shared by every module that writes a file of its own (snapshots, tokens,
discovery, settings): atomic replacement under a unique temporary name, and private directories."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import BinaryIO

from cortex.state import INDEX_DIR, SERVER_FILE, SESSIONS_DIR, TOKENS_FILE, servers_dir

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


# -- input files: what Cortex reads on a caller's behalf ----------------------------------------------------------

#: The directories the files read in this context (a request, a queued job) must lie in; None: anywhere (an
#: admin, the command line), Cortex's own files excepted all the same.
_ROOTS: ContextVar[tuple[Path, ...] | None] = ContextVar("cortex_input_roots", default=None)

#: Names that mark a directory as a Cortex state directory (a store's, or a remote store's server's).
#: (the owner file is cortex.store.oxigraph's)
_STATE_MARKERS = (TOKENS_FILE, SERVER_FILE, INDEX_DIR, SESSIONS_DIR, "cortex-owner.json")
#: What of a project's ``.cortex/`` is Cortex's own: the store, the hooks' state, the logs, the settings (keys).
_PROJECT_OWN = ("store", "state", "logs", "config.toml")
#: Pseudo file systems: their "regular files" are the process's memory, environment and the kernel's.
_PSEUDO = ("/proc", "/sys", "/dev")


class InputRefused(PermissionError):
    """A file Cortex will not read as input: outside the caller's directories, or Cortex's own. An ``OSError``
    (``EACCES``), so that readers that name unreadable files name this one too."""

    def __init__(self, path: str, reason: str) -> None:
        import errno

        super().__init__(errno.EACCES, reason, path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.filename}: {self.reason}"


def resolved_roots(roots: Sequence[str | os.PathLike[str]]) -> tuple[Path, ...]:
    """``roots`` as real paths (symbolic links resolved), the form :func:`confined` keeps them in."""
    return tuple(Path(os.path.realpath(os.path.expanduser(os.fspath(r)))) for r in roots)


@contextmanager
def confined(roots: Sequence[str | os.PathLike[str]] | None) -> Iterator[None]:
    """Within the block (this thread or task, and what it copies its context to), every :func:`open_input` must
    open a file whose real path lies under one of ``roots``; None lifts that (Cortex's own files stay refused)."""
    token = _ROOTS.set(None if roots is None else resolved_roots(roots))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def input_roots() -> tuple[Path, ...] | None:
    """The roots of the current context (see :func:`confined`): what a queued job keeps to run under later."""
    return _ROOTS.get()


def own_file_reason(real: Path) -> str | None:
    """Why the real path ``real`` is one of Cortex's own files (a store, its state, tokens, discovery files, the
    project's ``.cortex`` settings and logs) or a pseudo file, or None when it is none of them."""
    text = real.as_posix()
    if any(text == p or text.startswith(p + "/") for p in _PSEUDO):
        return "a file of the system's pseudo file systems, not an input file"
    parts = real.parts
    for k, part in enumerate(parts[:-1]):
        if part == ".cortex" and parts[k + 1] in _PROJECT_OWN:
            return f"Cortex's own ({part}/{parts[k + 1]}: the store, its state, logs or settings)"
    servers = Path(os.path.realpath(servers_dir()))
    if real.is_relative_to(servers):
        return "Cortex's own (the running servers' addresses and tokens)"
    for directory in real.parents:
        if any(os.path.lexists(directory / marker) for marker in _STATE_MARKERS):
            return f"Cortex's own (the store or state directory {directory})"
    if real.name in _STATE_MARKERS:
        return "Cortex's own (a store's token, discovery or owner file)"
    return None


def _real_path(fd: int, path: str) -> Path:
    """The real path of the file open as ``fd`` (opened as ``path``): the kernel's (``/proc/self/fd``), else the
    resolved ``path`` when it still names the very file open (same device and inode)."""
    try:
        link = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        link = None
    if link is not None and link.startswith("/") and not link.endswith(" (deleted)"):
        return Path(link)
    real = os.path.realpath(path)
    opened, named = os.fstat(fd), os.stat(real)
    if (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
        raise InputRefused(path, "the file changed while it was opened: not read")
    return Path(real)


def real_path_of(fh: BinaryIO) -> Path:
    """The real path of the open file ``fh`` (see :func:`open_input`): what was opened, not what its path names
    now."""
    return _real_path(fh.fileno(), fh.name if isinstance(fh.name, str) else f"/proc/self/fd/{fh.fileno()}")


def open_input(path: str | os.PathLike[str], *, within: str | os.PathLike[str] | None = None,
               limit_roots: bool = True) -> BinaryIO:
    """``path`` opened for reading as an input file (a transcript, a file to import, a notes file), checked on
    the handle that is then read, so that nothing swapped in between is: it must be a regular file (a FIFO or a
    device does not block: ``O_NONBLOCK``), its real path (the opened file's, symbolic links anywhere resolved)
    under ``within`` when given (a directory being walked) and under the roots of :func:`confined`, never one of
    Cortex's own files (:func:`own_file_reason`), whoever asks. Under a confinement a file with several hard links
    is refused (a hard link to a file outside cannot be told from its path). :class:`InputRefused` (an
    ``OSError``) when refused; ``OSError`` when it cannot be opened."""
    import stat

    name = os.fspath(path)
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputRefused(name, "not a regular file")
        real = _real_path(fd, name)
        reason = own_file_reason(real)
        if reason is not None:
            raise InputRefused(name, f"{reason}: never read as input")
        roots = _ROOTS.get() if limit_roots else None
        if within is not None and not real.is_relative_to(resolved_roots([within])[0]):
            raise InputRefused(name, f"a link out of {within}: not read")
        if roots is not None and not any(real.is_relative_to(root) for root in roots):
            raise InputRefused(name, "outside the directories this caller may read ("
                               + ", ".join(str(r) for r in roots) + ")")
        if (roots is not None or within is not None) and info.st_nlink > 1:
            raise InputRefused(name, f"has {info.st_nlink} hard links: one of them may be a file outside, not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_input(path: str | os.PathLike[str], *, directory: bool = False) -> None:
    """Refuse now (:class:`InputRefused`, ``OSError``) a file :func:`open_input` would refuse (``directory``: a
    directory whose files would all be refused: outside the roots, or Cortex's own): the early answer of a
    request that reads it later (each read checks again, on its handle)."""
    if not directory:
        with open_input(path):
            return
    name = os.fspath(path)
    real = Path(os.path.realpath(name))
    reason = own_file_reason(real / "_")
    if reason is not None:
        raise InputRefused(name, f"{reason}: never read as input")
    roots = _ROOTS.get()
    if roots is not None and not any(real.is_relative_to(root) for root in roots):
        raise InputRefused(name, "outside the directories this caller may read ("
                           + ", ".join(str(r) for r in roots) + ")")
