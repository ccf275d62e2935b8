"""Killable processes that run SPARQL queries on a checkpoint of an embedded store.

pyoxigraph cannot cancel a query, and one that computes everything before its first row (an aggregate over a
large join, a long property-path sequence) goes on burning a core after its time-out if it runs in a thread of
the owning process. So on an embedded on-disk store each query runs in a worker process, on a checkpoint of the
store (``Store.backup``: hard links, ~10 ms; a checkpoint is read-only, and another process may open it while
the owner writes the store). A query past its time-out is answered with :class:`QueryTimeoutError` and its
worker is killed at once: nothing of it goes on running.

* Read your writes: a query runs on a checkpoint taken after every write the store acknowledged before the
  query started (the store's write count is compared; a new checkpoint costs ~10 ms, opening it in a worker
  ~10-30 ms).
* At most :data:`DEFAULT_WORKERS` workers (``CORTEX_SPARQL_WORKERS``); a query waits for a free one within its
  time-out. Each worker has one checkpoint open; older checkpoints are removed once no worker has them open.
* A worker dies with its parent (``PR_SET_PDEATHSIG`` on Linux; everywhere, it exits when its input closes).

Run as ``python -m cortex.sparql.workers``: one request, one answer, as length-prefixed JSON frames on stdin and
stdout.
"""

from __future__ import annotations

import gc
import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cortex import jsonsafe
from cortex.errors import InvalidInputError, QueryTimeoutError, StoreError
from cortex.sparql.results import SparqlResult, collect, from_json

#: Worker processes at most (``CORTEX_SPARQL_WORKERS``): twice what one token may run at once
#: (``CORTEX_SPARQL_PER_TOKEN``, 2), so one token cannot hold every worker.
DEFAULT_WORKERS = 4
WORKERS_ENV = "CORTEX_SPARQL_WORKERS"
#: The address space of a worker, in MiB (``CORTEX_SPARQL_MEMORY``): a query that needs more is stopped. An idle
#: worker (Python, pyoxigraph, a checkpoint open) already maps ~500 MiB.
DEFAULT_MEMORY_MIB = 2048
MEMORY_ENV = "CORTEX_SPARQL_MEMORY"
_HEADER = struct.Struct(">I")


def configured_workers() -> int:
    """``$CORTEX_SPARQL_WORKERS`` (default 4, at least 1)."""
    try:
        return max(1, int(os.environ.get(WORKERS_ENV) or DEFAULT_WORKERS))
    except ValueError:
        return DEFAULT_WORKERS


def configured_memory() -> int:
    """``$CORTEX_SPARQL_MEMORY`` MiB (default 2048, at least 768)."""
    try:
        return max(768, int(os.environ.get(MEMORY_ENV) or DEFAULT_MEMORY_MIB))
    except ValueError:
        return DEFAULT_MEMORY_MIB


class _Died(OSError):
    """A worker ended while it ran a query (``status``: its exit status, negative for a signal)."""

    def __init__(self, status: int | None) -> None:
        self.status = status
        super().__init__(f"it exited with status {status}")


def _write_frame(out: IO[bytes], message: Mapping[str, Any]) -> None:
    data = json.dumps(message).encode("utf-8")
    out.write(_HEADER.pack(len(data)) + data)
    out.flush()


def _read_exactly(source: IO[bytes], size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = source.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_frame(source: IO[bytes]) -> Any:
    header = _read_exactly(source, _HEADER.size)
    if header is None:
        return None
    body = _read_exactly(source, _HEADER.unpack(header)[0])
    return jsonsafe.loads(body) if body is not None else None


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    #: the checkpoint it has open (None: none yet)
    opened: Path | None = None


@dataclass
class _Checkpoint:
    path: Path
    generation: int


@dataclass
class QueryWorkers:
    """The worker processes of one embedded store. ``directory``: where checkpoints go (inside the store's
    directory: hard links need the same file system); ``generation()``: the store's write count now;
    ``checkpoint(target)``: write a checkpoint of the store at ``target`` and return the write count it holds."""

    directory: Path
    generation: Callable[[], int]
    checkpoint: Callable[[Path], int]
    size: int = field(default_factory=configured_workers)
    _idle: list[_Worker] = field(default_factory=list)
    #: each busy worker and the checkpoint its query runs on
    _running: dict[int, tuple[_Worker, Path]] = field(default_factory=dict)
    _busy: int = 0
    _latest: _Checkpoint | None = None
    _lock: threading.Condition = field(default_factory=threading.Condition)
    _closed: bool = False
    _serial: int = 0
    _spawner: "_Spawner" = field(default_factory=lambda: _Spawner())

    def __post_init__(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)  # what a process that died left behind

    def run(self, text: str, *, default_graph: Sequence[str] | None, named_graphs: Sequence[str] | None,
            union: bool, substitutions: Mapping[str, Any], limit: int, timeout: float | None) -> SparqlResult:
        """Run a judged query in a worker (waiting for a free one within ``timeout``): its rows, at most
        ``limit``. Past ``timeout`` the worker is killed and :class:`QueryTimeoutError` raised."""
        deadline = time.monotonic() + timeout if timeout is not None else None
        worker, checkpoint = self._take(deadline, timeout)
        request = {"checkpoint": str(checkpoint.path), "query": text, "default_graph": default_graph,
                   "named_graphs": named_graphs, "union": union, "limit": limit,
                   "substitutions": {name: _term_text(term) for name, term in substitutions.items()}}
        try:
            assert worker.process.stdin is not None
            _write_frame(worker.process.stdin, request)
            answer = self._answer(worker, deadline)
        except QueryTimeoutError:
            self._kill(worker)
            raise QueryTimeoutError(timeout or 0) from None
        except _Died as died:
            self._kill(worker)
            if died.status == -signal.SIGABRT:  # an allocation beyond its address space aborts the engine
                raise _too_large() from None
            raise StoreError(f"a SPARQL worker process failed: {died}") from None
        except (OSError, ValueError) as exc:
            self._kill(worker)
            raise StoreError(f"a SPARQL worker process failed: {exc}") from None
        except BaseException:
            self._kill(worker)
            raise
        worker.opened = checkpoint.path
        self._give_back(worker)
        if "error" in answer:
            kind, message = answer["error"], answer.get("message", "")
            if kind == "syntax":
                raise InvalidInputError("query", f"is not valid SPARQL: {message}")
            if kind == "memory":
                raise _too_large()
            if kind == "store":
                raise StoreError(f"query failed: {message}")
            raise InvalidInputError("query", f"failed while it ran: {message}")
        return from_json(answer["result"])

    def _take(self, deadline: float | None, timeout: float | None) -> tuple[_Worker, _Checkpoint]:
        with self._lock:
            while not self._idle and self._busy >= self.size:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise QueryTimeoutError(timeout or 0)
                self._lock.wait(left)
                if self._closed:
                    raise StoreError("the store is closed")
            checkpoint = self._current()
            worker = self._idle.pop() if self._idle else None
            self._busy += 1
            if worker is None:
                try:
                    worker = _Worker(self._spawner.spawn())
                except OSError as exc:
                    self._busy -= 1
                    self._lock.notify()
                    raise StoreError(f"cannot start a SPARQL worker process: {exc}") from None
            self._running[id(worker)] = (worker, checkpoint.path)
        return worker, checkpoint

    def _current(self) -> _Checkpoint:
        """A checkpoint holding every write acknowledged so far (taken now when the store changed since the
        latest). Called with the lock held."""
        generation = self.generation()
        if self._latest is None or self._latest.generation != generation:
            self._serial += 1
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            path = self.directory / f"{self._serial}"
            shutil.rmtree(path, ignore_errors=True)
            self._latest = _Checkpoint(path, self.checkpoint(path))
            self._collect()
        return self._latest

    def _answer(self, worker: _Worker, deadline: float | None) -> Any:
        out = worker.process.stdout
        assert out is not None
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise QueryTimeoutError(0)
            ready, _, _ = select.select([out], [], [], left)
            if ready:
                answer = _read_frame(out)
                if answer is None:
                    try:
                        status = worker.process.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        status = None
                    raise _Died(status)
                return answer

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._busy -= 1
            self._running.pop(id(worker), None)
            if self._closed:
                self._stop(worker)
            else:
                self._idle.append(worker)
                self._collect()
            self._lock.notify()

    def _kill(self, worker: _Worker) -> None:
        """Stop a worker at once (its query with it) and forget it."""
        self._stop(worker, kill=True)
        with self._lock:
            self._busy -= 1
            self._running.pop(id(worker), None)
            self._collect()
            self._lock.notify()

    @staticmethod
    def _stop(worker: _Worker, kill: bool = False) -> None:
        process = worker.process
        try:
            if kill:
                process.kill()
            else:
                assert process.stdin is not None
                process.stdin.close()  # it exits when its input closes
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None and not stream.closed:
                stream.close()

    def _collect(self) -> None:
        """Remove the checkpoints no worker may have open: not the latest, not one an idle worker has open, not
        one a running query uses or its worker had open. Called with the lock held."""
        if not self.directory.exists():
            return
        keep = {w.opened for w in self._idle} | {p for _, p in self._running.values()} \
            | {w.opened for w, _ in self._running.values()}
        if self._latest is not None:
            keep.add(self._latest.path)
        for path in self.directory.iterdir():
            if path not in keep:
                shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        """Stop every worker (a running query is killed) and remove the checkpoints."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
            self._lock.notify_all()
        for worker in idle:
            self._stop(worker)
        self._spawner.stop()
        if self._busy == 0:
            shutil.rmtree(self.directory, ignore_errors=True)


def _too_large() -> InvalidInputError:
    return InvalidInputError("query", f"needed more than the {configured_memory()} MiB a query may use ({MEMORY_ENV}): "
                                      f"narrow it, or ask for less")


def _term_text(term: Any) -> str:
    """A bound term as N-Triples text (read back by the worker)."""
    import pyoxigraph as ox

    if isinstance(term, ox.Triple):
        return f"<<( {_term_text(term.subject)} {term.predicate} {_term_text(term.object)} )>>"
    return str(term)


class _Spawner:
    """Starts workers from one long-lived thread: a worker asks the kernel to kill it when the thread that started
    it ends (``PR_SET_PDEATHSIG`` follows the thread, not the process), so that must be a thread that ends only
    with the pool, or with the process."""

    def __init__(self) -> None:
        self._requests: list[tuple[threading.Event, list[Any]]] = []
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def spawn(self) -> subprocess.Popen[bytes]:
        done, box = threading.Event(), []  # type: ignore[var-annotated]
        with self._wake:
            if self._stopped:
                raise OSError("the SPARQL workers are stopped")
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="cortex-sparql-spawner", daemon=True)
                self._thread.start()
            self._requests.append((done, box))
            self._wake.notify()
        done.wait()
        if isinstance(box[0], BaseException):
            raise box[0]
        process: subprocess.Popen[bytes] = box[0]
        return process

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._requests and not self._stopped:
                    self._wake.wait()
                if self._stopped and not self._requests:
                    return
                done, box = self._requests.pop(0)
            try:
                box.append(_spawn())
            except BaseException as exc:  # handed to the caller
                box.append(exc)
            done.set()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify_all()


def _spawn() -> subprocess.Popen[bytes]:
    root = str(Path(__file__).resolve().parents[2])  # the directory cortex/ is in: the same code in the worker
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    return subprocess.Popen([sys.executable, "-m", "cortex.sparql.workers"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, close_fds=True)


# -- the worker process ------------------------------------------------------------------------------------------


def _die_with_parent() -> None:
    if sys.platform == "linux":
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _parse_term(text: str) -> Any:
    import pyoxigraph as ox

    quad = next(iter(ox.parse(f"<urn:s> <urn:p> {text} .".encode("utf-8"), ox.RdfFormat.N_TRIPLES)))
    return quad.object


def main() -> None:
    """The worker's loop: read a request, run it on the checkpoint it names, write the answer."""
    import pyoxigraph as ox

    _die_with_parent()
    try:  # a query that needs more memory than this is stopped (the engine aborts on a failed allocation)
        import resource

        limit = configured_memory() * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
    parent = os.getppid()
    source, out = sys.stdin.buffer, sys.stdout.buffer
    store: Any = None
    opened: str | None = None
    while True:
        request = _read_frame(source)
        if request is None or os.getppid() != parent:
            return
        try:
            if request["checkpoint"] != opened:
                store, opened = None, None
                gc.collect()  # the previous checkpoint's files are closed before it may be removed
                store, opened = ox.Store.read_only(request["checkpoint"]), request["checkpoint"]
            options: dict[str, Any] = {}
            if request["union"]:
                options["use_default_graph_as_union"] = True
            else:
                options["default_graph"] = [ox.NamedNode(g) for g in request["default_graph"] or ()] \
                    or [ox.DefaultGraph()]
                options["named_graphs"] = [ox.NamedNode(g) for g in request["named_graphs"] or ()]
            substitutions = {ox.Variable(k): _parse_term(v) for k, v in request["substitutions"].items()}
            raw = store.query(request["query"], substitutions=substitutions or None, **options)
            answer: dict[str, Any] = {"result": collect(raw, request["limit"]).to_json()}
        except SyntaxError as exc:
            answer = {"error": "syntax", "message": str(exc)}
        except MemoryError:
            answer = {"error": "memory"}
        except OSError as exc:
            answer = {"error": "store", "message": str(exc)}
        except (RuntimeError, ValueError, TypeError) as exc:
            answer = {"error": "query", "message": str(exc)}
        _write_frame(out, answer)


if __name__ == "__main__":
    main()
