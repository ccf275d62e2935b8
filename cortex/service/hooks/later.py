"""What a hook has run after it answered, with a language model configured: a transcript's extraction
(``SubagentStop``, ``SessionEnd``) and a lead's team round ends (``Stop``), in the owning server's queue, else in
a detached ``cortex`` process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cortex import config, jsonsafe
from cortex.errors import TooBusyError
from cortex.service.harnesses.base import log as _log
from cortex.service.hooks.session import HookSession


def llm_configured(root: Path) -> bool:
    """Whether a language model is configured for the project (a bad setting is named in the log: False)."""
    from cortex.llm import llm_settings

    try:
        return llm_settings(project_root=root) is not None
    except Exception as exc:  # the hook goes on
        _log(root, f"language model settings: {exc}")
        return False


def extract(session: HookSession, agent_type: str, transcript: str) -> None:
    """With a language model configured, have the transcript's learnings and summary extracted after the hook
    has answered: in the server's queue, else by a detached ``cortex capture`` process."""
    root = session.root
    if not llm_configured(root):
        return
    try:
        server = session.server()
        if server is not None:
            if session.agent(agent_type) is not None:  # the hooks captured the markers and tasks already
                session.with_agent(agent_type, lambda cx, name: server.queue_transcript(name, transcript,
                                                                                        markers=False, tasks=False))
            return
    except TooBusyError as exc:  # the agent's share of the queue is waiting: a later capture reads this part
        _log(root, f"capture not queued: {exc}")
        return
    except Exception as exc:
        _log(root, f"capture queue not reachable ({type(exc).__name__}: {exc}); capturing in a process")
    session.close()  # the process opens the store: this call lets go of it first (nothing follows)
    import subprocess
    import sys

    from cortex.files import private_dir

    logs = private_dir(root / ".cortex" / "logs")
    with open(logs / "capture.log", "ab") as out:
        subprocess.Popen([sys.executable, "-m", "cortex", "capture", agent_type, "--transcript", transcript,
                          "--no-markers", "--no-tasks", "--model-first"], cwd=root, stdin=subprocess.DEVNULL, stdout=out,
                         stderr=out, start_new_session=True, env=_handed_on())


def _handed_on() -> dict[str, str]:
    """The environment of a process the hook starts: its own, with the hook's activity (its event and session),
    which the process records as its writes' provenance (not ``cli``)."""
    from cortex import provenance

    env = {k: v for k, v in os.environ.items() if k not in provenance.ENVIRONMENT.values()}
    return {**env, **provenance.current().environment()}


def _led_teams(agents: list[dict[str, Any]], agent: str) -> list[str]:
    """The teams ``agent`` leads (all of its teams when it is a lead with memory; none otherwise), of the server's
    description of its agents, temporary teams left out."""
    entry = next((a for a in agents if a.get("name") == agent), None)
    if entry is None or not entry.get("lead") or not entry.get("memory_enabled"):
        return []
    temporary = {t for a in agents if a.get("memory_enabled") for t in a.get("temporary_teams") or {}}
    return [str(t) for t in entry.get("teams") or [] if t not in temporary]


def round_end(session: HookSession, agent_type: str) -> None:
    """A lead ended a turn: with a language model configured, have the round end of each (non-temporary) team it
    leads run after the hook has answered: in the server's queue, else by a detached ``cortex team round-end TEAM``
    process (one at a time per team). Another agent costs the check that the model is configured, and one
    request to the server (or reading the definitions)."""
    root = session.root
    if not llm_configured(root):
        return
    try:
        server = session.server()
        if server is not None:
            from urllib.parse import quote

            from cortex.errors import CortexError, ServiceError

            name = session.agent(agent_type)
            for team in _led_teams(session.ask(lambda cx: cx.describe_agents()), name) if name is not None else []:
                try:
                    server._call("POST", f"/teams/{quote(team, safe='')}/round-end", json={"wait": False})
                except ServiceError:
                    raise  # not answering: the round ends run in processes
                except CortexError as exc:
                    _log(root, f"round end of team {team!r} not queued: {exc}")
            return
    except Exception as exc:
        _log(root, f"the server's queue not reachable for round ends ({type(exc).__name__}: {exc}); "
                   "running them in a process")
    from cortex.agents import AgentRegistry

    registry = AgentRegistry()
    registry.load(config.discover_agent_dirs(root))
    name = registry.resolve(agent_type)
    definition = registry.get(name) if name is not None else None
    if definition is None or not definition.memory_enabled or not definition.settings.lead:
        return
    temporary = {t for d in registry.list() if d.memory_enabled for t in d.settings.parents}
    teams = [team for team in definition.settings.teams if team not in temporary]
    if teams:
        session.close()  # the processes open the store: this call lets go of it first (nothing follows)
    for team in teams:
        spawn_round_end(root, team)


def spawn_round_end(root: Path, team: str) -> None:
    """``cortex team round-end TEAM`` in a detached process, unless the one started before still runs."""
    import subprocess
    import sys

    from cortex.files import atomic_write, private_dir, read_regular

    logs = private_dir(root / ".cortex" / "logs")
    pids = logs / "round-end.json"
    try:
        running = jsonsafe.loads(read_regular(pids, 64 * 1024))
        running = running if isinstance(running, dict) else {}
    except (OSError, ValueError):
        running = {}
    pid = running.get(team)
    if isinstance(pid, int) and pid > 0:
        try:
            os.kill(pid, 0)
            return  # the round end started at an earlier turn still runs: it reads this round too
        except ProcessLookupError:
            pass
        except OSError:  # alive, another user's: not ours to wait for
            pass
    with open(logs / "round-end.log", "ab") as out:
        process = subprocess.Popen([sys.executable, "-m", "cortex", "team", "round-end", team], cwd=root,
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                                   env=_handed_on())
    running[team] = process.pid
    atomic_write(pids, json.dumps(running))
