"""Helpers for the tests that run real processes: a project directory, `cortex` as a subprocess, a server, and
requests to the HTTP app in process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

AGENT = """---
name: {name}
description: Test agent {name}
memory: true
---
You are {name}.
"""


def make_project(root: Path, *agents: str) -> Path:
    """A project with a .git marker and agent definitions in agent_defs/."""
    (root / ".git").mkdir(parents=True, exist_ok=True)
    defs = root / "agent_defs"
    defs.mkdir(exist_ok=True)
    for name in agents:
        (defs / f"{name}.md").write_text(AGENT.format(name=name))
    return root


#: The checkout's root: a subprocess run in a scratch directory can import test modules (``-m tests.X``) from it.
ROOT = Path(__file__).resolve().parent.parent


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("CORTEX_STORE", "CORTEX_TOKEN")}
    base["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), base.get("PYTHONPATH")) if p)
    return base | extra


def cortex(project: Path, *args: str, stdin: str | None = None, timeout: float = 120,
           **extra_env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cortex.cli", *args], cwd=project, input=stdin,
                          capture_output=True, text=True, env=env(**extra_env), timeout=timeout)


@dataclass
class Server:
    process: subprocess.Popen
    project: Path
    url: str
    token: str

    @property
    def store(self) -> Path:
        return self.project / ".cortex" / "store"

    def call(self, method: str, path: str, token: str | None = None, **kwargs) -> httpx.Response:
        """One request to the server with ``token`` (default: its own, an admin's)."""
        return httpx.request(method, f"{self.url}{path}", timeout=60,
                             headers={"Authorization": f"Bearer {token or self.token}"}, **kwargs)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)


def start_server(project: Path, *args: str, timeout: float = 30, state_dir: Path | None = None,
                 module: str = "cortex.cli", **extra_env: str) -> Server:
    """`cortex serve --port 0` in ``project``, once it answers /healthz. With ``state_dir`` (a remote store in
    ``CORTEX_STORE``) the server keeps its discovery file there. ``module``: what runs the command line
    (``tests.slow_embeddings``: with embeddings held at a gate)."""
    discovery = (state_dir or project / ".cortex" / "store") / "cortex-server.json"
    if state_dir is not None:
        extra_env = {"CORTEX_STATE_DIR": str(state_dir), **extra_env}
    process = subprocess.Popen([sys.executable, "-m", module, "serve", "--port", "0", *args], cwd=project,
                               env=env(**extra_env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}: {process.stderr.read()}")
        try:
            info = json.loads(discovery.read_text())
            if info["pid"] == process.pid and httpx.get(f"{info['url']}/healthz", timeout=1).status_code == 200:
                return Server(process, project, info["url"], info["token"])
        except (OSError, ValueError, KeyError, httpx.HTTPError):
            pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("server did not start")


@dataclass
class Ran:
    """What a CLI run produced (the shape of subprocess.CompletedProcess)."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(cwd: Path, *args: str, stdin: str | bytes | None = None, env: dict[str, str | None] | None = None) -> Ran:
    """The real ``cortex`` CLI, run in this process (click's runner) from ``cwd``: the same code as the console
    script without a Python start-up and imports per call, and the embedding model loaded once per test
    session. Tests of process behaviour (locks, signals, entry point) use :func:`cortex` instead."""
    from click.testing import CliRunner

    from cortex.cli import cli

    full_env: dict[str, str | None] = {"CORTEX_STORE": None, "CORTEX_TOKEN": None} | (env or {})
    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, list(args), input=stdin, env=full_env, prog_name="cortex")
    finally:
        os.chdir(here)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def asgi_request(app, method: str, path: str, token: str | None = None, **kwargs) -> httpx.Response:
    """One request to the HTTP app in this process (its lifespan run around it), with a bearer ``token``;
    ``headers`` are added to the authorization header."""
    async def go() -> httpx.Response:
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            headers = ({"Authorization": f"Bearer {token}"} if token else {}) | kwargs.pop("headers", {})
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                return await client.request(method, path, headers=headers, **kwargs)

    return asyncio.run(go())
