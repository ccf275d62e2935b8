"""Real SPARQL 1.1 servers for the remote-backend tests: a private, throw-away Oxigraph or Virtuoso on loopback.

Importable without pytest (the measurement scripts use it too)::

    from tests.sparql_servers import start_oxigraph, start_virtuoso, servers_available

    server = start_virtuoso(tmpdir)        # free loopback ports, waits until ready, random passwords
    server.url                             # the Cortex store location (sparql+http://...)
    server.clear()                         # drop all data (Virtuoso: user graphs only, see Server.clear)
    server.stop()

Binaries: ``oxigraph`` (PyPI ``oxigraph==0.5.13``, the dev extra) and ``virtuoso-t`` + ``isql-vt`` (Debian
``virtuoso-opensource-7``). A missing binary raises :class:`ServerUnavailable` (``servers_available()`` tells
beforehand). Each server runs in its own directory under ``tmpdir`` and gets SIGTERM if the process that started it
dies (Linux ``PR_SET_PDEATHSIG``), so a killed test run leaves no server behind.

Virtuoso settings (from /work/shared/notes/virtuoso.md): both ``ServerPort`` lines on ``127.0.0.1``, buffers raised
(``CORTEX_VIRTUOSO_BUFFERS``, default 50 000 pages = 400 MB at most), ``ResultSetMaxRows`` raised so SELECT results
are never silently truncated, ``MaxQueryExecutionTime = 0`` and ``MaxQueryCostEstimationTime = 0`` so no "anytime"
partial results (those are flagged only by an ``X-SQL-State`` response header; :func:`partial_result_state` reads it).
Beware: a Virtuoso query without ``FROM``/``GRAPH`` reads the union of *all* graphs, system graphs included.
Cortex talks to it as user ``cortex`` (SPARQL_SELECT, SPARQL_UPDATE, read/write on all graphs) with HTTP digest auth
on ``/sparql-auth``; Graph Store Protocol at ``/sparql-graph-crud-auth``.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

import httpx

__all__ = [
    "VIRTUOSO_SYSTEM_GRAPH_PREFIXES",
    "Server",
    "ServerUnavailable",
    "external_store",
    "partial_result_state",
    "servers_available",
    "start_oxigraph",
    "start_server",
    "start_virtuoso",
]

READY_TIMEOUT = float(os.environ.get("CORTEX_SERVER_READY_TIMEOUT", "60"))
VIRTUOSO_USER = "cortex"
VIRTUOSO_INI_CANDIDATES = (
    "/etc/virtuoso-opensource-7/virtuoso.ini",
    "/usr/share/virtuoso-opensource-7/virtuoso.ini",
)
# Graphs Virtuoso itself keeps data in; clear() never touches them. A fresh 7.2.5 database holds
# http://www.openlinksw.com/schemas/virtrdf# (2 479 triples of quad-map metadata SPARQL itself depends on),
# http://www.w3.org/ns/ldp# (3), http://HOST:PORT/sparql (14, the service description) and http://HOST:PORT/DAV/ (3),
# HOST:PORT being [URIQA] DefaultHost. Besides these prefixes, clear() keeps every graph present right after start.
VIRTUOSO_SYSTEM_GRAPH_PREFIXES = (
    "http://www.openlinksw.com/",
    "http://www.w3.org/ns/ldp",
    "http://www.w3.org/2002/07/owl",
    "http://localhost:8890/",
)


class ServerUnavailable(RuntimeError):
    """The server's binary is not installed, or the server did not become ready."""


def _find_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    # pip installs console scripts next to the interpreter, which may not be on PATH (a venv not activated)
    for directory in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _virtuoso_ini() -> str | None:
    return next((path for path in VIRTUOSO_INI_CANDIDATES if os.path.isfile(path)), None)


def servers_available() -> dict[str, bool]:
    """Which servers can be started here: ``{"oxigraph": bool, "virtuoso": bool}``."""
    return {
        "oxigraph": _find_binary("oxigraph") is not None,
        "virtuoso": all(_find_binary(name) for name in ("virtuoso-t", "isql-vt")) and _virtuoso_ini() is not None,
    }


def partial_result_state(response: httpx.Response) -> str | None:
    """Virtuoso's ``X-SQL-State`` header (e.g. ``S1TAT``: an "anytime" query hit its time limit and the result is
    partial though the status is 200), or None. Oxigraph never sends it."""
    return response.headers.get("X-SQL-State")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _spawn(args: list[str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            # prctl only, no Python-level locks touched: safe even with threads running
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509
        )


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _wait_ready(process: subprocess.Popen[bytes], probe: str, log: Path, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise ServerUnavailable(
                    f"{what} exited with code {process.returncode} before it was ready:\n{_tail(log)}"
                )
            try:
                response = client.get(probe, params={"query": "ASK {}"})
                if response.status_code == 200:
                    return
                last = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                last = repr(exc)
            time.sleep(0.1)
    process.kill()
    raise ServerUnavailable(f"{what} not ready after {timeout:.0f} s ({last}):\n{_tail(log)}")


@dataclass
class Server:
    """A running server. ``url`` is the Cortex store location; the other URLs are plain http endpoints."""

    name: str  # "oxigraph" or "virtuoso"
    url: str
    query_url: str
    update_url: str
    gsp_url: str
    auth: httpx.Auth | None
    port: int
    workdir: Path
    process: subprocess.Popen[bytes] | None = field(repr=False)  # None: an external store we did not start
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    sql_port: int | None = None  # Virtuoso's SQL (isql) port
    dba_password: str | None = field(default=None, repr=False)
    system_graphs: frozenset[str] = frozenset()  # Virtuoso: graphs present right after start, kept by clear()
    _client: httpx.Client | None = field(default=None, repr=False)

    @property
    def client(self) -> httpx.Client:
        """A kept-alive client with the server's auth (one per Server; reusing it also reuses the digest nonce)."""
        if self._client is None:
            self._client = httpx.Client(auth=self.auth, timeout=120.0)
        return self._client

    def update(self, text: str) -> httpx.Response:
        """POST a SPARQL update (form-encoded, SPARQL 1.1 protocol); raises on an HTTP error."""
        response = self.client.post(self.update_url, data={"update": text})
        response.raise_for_status()
        return response

    def query(self, text: str) -> dict:
        """POST a SPARQL query, return the parsed SPARQL JSON results; raises on an HTTP error or a partial result."""
        response = self.client.post(
            self.query_url, data={"query": text}, headers={"Accept": "application/sparql-results+json"}
        )
        response.raise_for_status()
        if partial_result_state(response):
            raise RuntimeError(f"partial result from {self.name}: X-SQL-State {partial_result_state(response)}")
        return response.json()

    def clear(self) -> None:
        """Drop all data.

        Oxigraph: ``CLEAR ALL`` (default graph and every named graph).
        External store: like Virtuoso (named graphs one by one, sparing the system prefixes and
        ``http://HOST:PORT/`` of the store's own host), then ``CLEAR SILENT DEFAULT`` unless the store is a
        Virtuoso (it has a ``virtrdf#`` graph).
        Virtuoso: ``CLEAR ALL`` there would also empty its system graphs (``virtrdf#`` holds the quad-map metadata
        every SPARQL query needs), so the named graphs are listed and each one that was not there right after start
        (``system_graphs``) and whose IRI starts neither with one of :data:`VIRTUOSO_SYSTEM_GRAPH_PREFIXES` nor with
        ``http://127.0.0.1:PORT/`` (the server's own DefaultHost) is cleared with ``CLEAR SILENT GRAPH <g>``
        (20 operations per update request). Virtuoso keeps every triple in some graph, so nothing else remains.
        Full-text index rules (``RDF_OBJ_FT_RULE_ADD``) a test declared are left in place.
        """
        if self.name == "oxigraph":
            self.update("CLEAR ALL")
            return
        host = urlsplit(self.query_url)
        protected = (*VIRTUOSO_SYSTEM_GRAPH_PREFIXES, f"http://{host.netloc.rpartition('@')[2]}/")
        present = self._graphs()
        graphs = [g for g in present if g not in self.system_graphs and not g.startswith(protected)]
        for start in range(0, len(graphs), 20):
            self.update(" ;\n".join(f"CLEAR SILENT GRAPH <{g}>" for g in graphs[start : start + 20]))
        if self.name == "external" and "http://www.openlinksw.com/schemas/virtrdf#" not in present:
            self.update("CLEAR SILENT DEFAULT")

    def _graphs(self) -> list[str]:
        rows = self.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")["results"]["bindings"]
        return [row["g"]["value"] for row in rows if row["g"]["type"] == "uri"]

    def stop(self) -> None:
        """Stop the server (Virtuoso: isql ``shutdown``, then SIGTERM/SIGKILL if it lingers). Idempotent."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.process is None or self.process.poll() is not None:
            return
        if self.name == "virtuoso" and self.sql_port and self.dba_password:
            try:
                _isql(self.sql_port, "dba", self.dba_password, "shutdown;", timeout=20)
            except (ServerUnavailable, subprocess.TimeoutExpired):
                pass
            try:
                self.process.wait(timeout=20)
                return
            except subprocess.TimeoutExpired:
                pass
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def _register(server: Server) -> Server:
    atexit.register(server.stop)
    return server


def start_oxigraph(tmpdir: str | os.PathLike[str]) -> Server:
    """Start ``oxigraph serve`` on a free loopback port with an on-disk store under ``tmpdir``."""
    binary = _find_binary("oxigraph")
    if binary is None:
        raise ServerUnavailable("the oxigraph server binary is not installed (pip install oxigraph==0.5.13)")
    workdir = Path(tempfile.mkdtemp(prefix="oxigraph-", dir=tmpdir))
    log = workdir / "server.log"
    for attempt in range(3):  # a freed port can be taken again before the server binds it
        port = _free_port()
        process = _spawn(
            [binary, "serve", "--location", str(workdir / "data"), "--bind", f"127.0.0.1:{port}"], workdir, log
        )
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(process, f"{base}/query", log, "oxigraph", READY_TIMEOUT)
        except ServerUnavailable:
            if attempt == 2 or process.returncode is None:
                raise
            continue
        return _register(
            Server(
                name="oxigraph",
                url=f"sparql+http://127.0.0.1:{port}/query?update=/update&gsp=/store",
                query_url=f"{base}/query",
                update_url=f"{base}/update",
                gsp_url=f"{base}/store",
                auth=None,
                port=port,
                workdir=workdir,
                process=process,
            )
        )
    raise AssertionError("unreachable")


def _isql(sql_port: int, user: str, password: str, sql: str, timeout: float = 60) -> str:
    binary = _find_binary("isql-vt")
    if binary is None:
        raise ServerUnavailable("isql-vt is not installed (apt-get install virtuoso-opensource-7)")
    done = subprocess.run(
        [binary, f"127.0.0.1:{sql_port}", user, password, f"exec={sql}"],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    output = done.stdout + done.stderr
    if done.returncode != 0 or "*** Error" in output:
        raise ServerUnavailable(f"isql failed ({done.returncode}): {output.strip()}")
    return output


def _virtuoso_config(template: str, workdir: Path, sql_port: int, http_port: int) -> str:
    """The packaged ini with database files in ``workdir``, loopback ports, and no truncation or time limits."""
    buffers = int(os.environ.get("CORTEX_VIRTUOSO_BUFFERS", "50000"))
    settings = {
        "Database": {
            "DatabaseFile": workdir / "virtuoso.db",
            "ErrorLogFile": workdir / "virtuoso.log",
            "LockFile": workdir / "virtuoso.lck",
            "TransactionFile": workdir / "virtuoso.trx",
            "xa_persistent_file": workdir / "virtuoso.pxa",
        },
        "TempDatabase": {
            "DatabaseFile": workdir / "virtuoso-temp.db",
            "TransactionFile": workdir / "virtuoso-temp.trx",
        },
        "Parameters": {
            "ServerPort": f"127.0.0.1:{sql_port}",
            "NumberOfBuffers": buffers,
            "MaxDirtyBuffers": buffers * 3 // 4,
            "MaxClientConnections": 30,
        },
        "HTTPServer": {"ServerPort": f"127.0.0.1:{http_port}", "ServerThreads": 20, "MaxClientConnections": 20},
        "URIQA": {"DefaultHost": f"127.0.0.1:{http_port}"},
        "SPARQL": {
            "ResultSetMaxRows": 1_000_000_000,
            "MaxQueryExecutionTime": 0,
            "MaxQueryCostEstimationTime": 0,
        },
    }
    out: list[str] = []
    section = ""
    seen: set[tuple[str, str]] = set()

    def missing(sec: str) -> list[str]:
        return [f"{k} = {v}" for k, v in settings.get(sec, {}).items() if (sec, k) not in seen]

    for line in template.splitlines():
        header = re.match(r"\s*\[([^\]]+)\]", line)
        if header:
            out.extend(missing(section))
            section = header.group(1).strip()
            out.append(line)
            continue
        key = re.match(r"\s*([A-Za-z_]+)\s*=", line)
        if key and key.group(1) in settings.get(section, {}):
            name = key.group(1)
            if (section, name) not in seen:
                out.append(f"{name} = {settings[section][name]}")
                seen.add((section, name))
            continue  # a duplicate of a key we set
        out.append(line)
    out.extend(missing(section))
    return "\n".join(out) + "\n"


def start_virtuoso(tmpdir: str | os.PathLike[str]) -> Server:
    """Start a private Virtuoso 7 on free loopback ports with a database under ``tmpdir``; random passwords for
    ``dba`` and for the SPARQL user ``cortex``."""
    binary = _find_binary("virtuoso-t")
    ini = _virtuoso_ini()
    if binary is None or _find_binary("isql-vt") is None or ini is None:
        raise ServerUnavailable(
            "Virtuoso is not installed (apt-get install --no-install-recommends virtuoso-opensource-7: "
            "needs virtuoso-t, isql-vt and " + VIRTUOSO_INI_CANDIDATES[0] + ")"
        )
    template = Path(ini).read_text()
    for attempt in range(3):
        workdir = Path(tempfile.mkdtemp(prefix="virtuoso-", dir=tmpdir))
        log = workdir / "server.log"
        sql_port, http_port = _free_port(), _free_port()
        while http_port == sql_port:
            http_port = _free_port()
        config = workdir / "virtuoso.ini"
        config.write_text(_virtuoso_config(template, workdir, sql_port, http_port))
        process = _spawn([binary, "+configfile", str(config), "+foreground"], workdir, log)
        base = f"http://127.0.0.1:{http_port}"
        try:
            _wait_ready(process, f"{base}/sparql", log, "virtuoso", READY_TIMEOUT)
        except ServerUnavailable as exc:
            if process.returncode is None or attempt == 2:
                raise
            exc.add_note(_tail(workdir / "virtuoso.log"))
            continue
        dba_password, password = secrets.token_hex(12), secrets.token_hex(12)
        try:
            _isql(
                sql_port,
                "dba",
                "dba",
                f"USER_SET_PASSWORD('dba', '{dba_password}'); "
                f"DB.DBA.USER_CREATE('{VIRTUOSO_USER}', '{password}'); "
                f'GRANT SPARQL_SELECT TO "{VIRTUOSO_USER}"; '
                f'GRANT SPARQL_UPDATE TO "{VIRTUOSO_USER}"; '
                f"DB.DBA.RDF_DEFAULT_USER_PERMS_SET('{VIRTUOSO_USER}', 3);",
            )
        except BaseException:
            process.kill()
            process.wait()
            raise
        server = _register(
            Server(
                name="virtuoso",
                url=(
                    f"sparql+http://{VIRTUOSO_USER}:{quote(password, safe='')}@127.0.0.1:{http_port}/sparql-auth"
                    "?update=/sparql-auth&gsp=/sparql-graph-crud-auth&auth=digest"
                ),
                query_url=f"{base}/sparql-auth",
                update_url=f"{base}/sparql-auth",
                gsp_url=f"{base}/sparql-graph-crud-auth",
                auth=httpx.DigestAuth(VIRTUOSO_USER, password),
                port=http_port,
                workdir=workdir,
                process=process,
                user=VIRTUOSO_USER,
                password=password,
                sql_port=sql_port,
                dba_password=dba_password,
            )
        )
        server.system_graphs = frozenset(server._graphs())
        return server
    raise AssertionError("unreachable")


def external_store(location: str) -> Server:
    """A :class:`Server` for a store location we did not start (``CORTEX_TEST_SPARQL``): endpoints and auth parsed
    from ``sparql+http(s)://[user:password@]host[:port]/query-path?update=PATH&gsp=PATH&auth=digest|basic``;
    ``stop()`` does nothing, ``clear()`` wipes its data (use a dedicated test store)."""
    parts = urlsplit(location)
    if not parts.scheme.startswith("sparql+"):
        raise ValueError(f"not a sparql+http(s):// store location: {location!r}")
    scheme = parts.scheme.removeprefix("sparql+")
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    hostport = parts.netloc.rpartition("@")[2]
    base = f"{scheme}://{hostport}"
    query_path = parts.path or "/sparql"
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    auth: httpx.Auth | None = None
    if user is not None:
        kind = options.get("auth", "basic")
        auth = httpx.DigestAuth(user, password or "") if kind == "digest" else httpx.BasicAuth(user, password or "")
    return Server(
        name="external",
        url=location,
        query_url=base + query_path,
        update_url=base + options.get("update", query_path),
        gsp_url=base + options.get("gsp", "/store"),
        auth=auth,
        port=parts.port or (443 if scheme == "https" else 80),
        workdir=Path(tempfile.gettempdir()),
        process=None,
        user=user,
        password=password,
    )


def start_server(name: str, tmpdir: str | os.PathLike[str]) -> Server:
    """``start_oxigraph`` or ``start_virtuoso`` by name."""
    starters = {"oxigraph": start_oxigraph, "virtuoso": start_virtuoso}
    if name not in starters:
        raise ValueError(f"unknown server {name!r}; expected one of {sorted(starters)}")
    return starters[name](tmpdir)


if __name__ == "__main__":  # python -m tests.sparql_servers [oxigraph|virtuoso]: start one, print its URL, wait
    which = sys.argv[1] if len(sys.argv) > 1 else "oxigraph"
    running = start_server(which, tempfile.mkdtemp(prefix="cortex-sparql-"))
    print(running.url, flush=True)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: sys.exit(0))
    try:
        signal.pause()
    finally:
        running.stop()
