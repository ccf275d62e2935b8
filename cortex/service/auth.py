"""Bearer tokens: each maps to one agent, or is an admin token. Only SHA-256 digests are stored, in
``<state>/cortex-tokens.json`` (see :mod:`cortex.state`); a token is shown once, when it is created."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cortex import config, jsonsafe
from cortex.errors import AgentNotFoundError, AuthError, InvalidInputError, PermissionDeniedError, TokenFileError
from cortex.files import (
    InputRefused,
    atomic_write,
    check_input,
    confined,
    own_file_reason,
    private_dir,
    read_regular,
    resolved_roots,
)
from cortex.state import tokens_file
from cortex.validation import check_agent_name

log = logging.getLogger("cortex.serve")

_PREFIX = "ctx_"
#: A token's id: the first hex digits of its digest (enough to tell tokens apart, useless to forge one).
ID_LENGTH = 12


@dataclass(frozen=True)
class Principal:
    """Who is calling: an agent's token (``agent`` set) or an admin (``agent`` None)."""

    agent: str | None
    #: which token (its id; "local": the server's own; None: no token, an app run without tokens)
    token: str | None = None

    @property
    def admin(self) -> bool:
        return self.agent is None

    def may_use(self, agent: str) -> bool:
        """True when this principal may read and write ``agent``'s memories."""
        return self.agent is None or self.agent == agent

    def input_roots(self, project: Path | None) -> tuple[Path, ...] | None:
        """The directories whose files this principal may have the server read (transcripts, imports): for an
        agent's token the project of the store being served (``project``, when it is one: it holds ``.cortex/`` or
        ``.git/``) and the coding agents' own directories (their transcripts); None for an admin (any file but
        Cortex's own: :func:`cortex.files.open_input`)."""
        if self.admin:
            return None
        # a store outside any project (no .cortex/ or .git/ above it) gives no project to read: not its parent
        # directory, which may be the user's home
        real = project is not None and any((project / marker).is_dir() for marker in config.PROJECT_MARKERS)
        return resolved_roots([*([project] if real and project is not None else []), *agent_homes()])

    def require_transcript(self, path: str, project: Path | None) -> None:
        """Refuse now (:class:`PermissionDeniedError`) a file this principal may not have the server read
        (:meth:`input_roots`, Cortex's own files): the early answer of a request; the read itself opens the file
        under :func:`cortex.files.confined` and checks the opened file again."""
        try:
            with confined(self.input_roots(project)):
                if os.path.isdir(path):  # a directory to import: its files are checked one by one as read
                    check_input(path, directory=True)
                else:
                    check_input(path)
        except InputRefused as exc:
            raise PermissionDeniedError(input_refusal(exc, self, project)) from None
        except OSError:
            pass  # missing or unreadable: the read names it

    @contextmanager
    def reading(self, path: str | os.PathLike[str], cx: object) -> Iterator[None]:
        """A block in which the server reads ``path`` (and what it names) for this principal: refused now when
        :meth:`require_transcript` refuses it, and every file opened in the block (:func:`cortex.files.open_input`)
        confined to :meth:`input_roots` of ``cx``'s project (the store being served: its ``project_root``)."""
        project = getattr(cx, "project_root", None)
        self.require_transcript(os.fspath(path), project)
        with confined(self.input_roots(project)):
            yield

    @contextmanager
    def writing(self, directory: str | os.PathLike[str], cx: object) -> Iterator[None]:
        """A block in which the server writes files in ``directory`` (and reads what is there) for this
        principal: inside :meth:`input_roots` of ``cx``'s project, never in Cortex's own directories."""
        project = getattr(cx, "project_root", None)
        roots = self.input_roots(project)
        real = Path(os.path.realpath(os.path.expanduser(os.fspath(directory))))
        reason = own_file_reason(real / "_")
        if reason is not None:
            raise PermissionDeniedError(f"{directory}: {reason}: never written by an export")
        if roots is not None and not any(real.is_relative_to(root) for root in roots):
            raise PermissionDeniedError(f"{directory}: an agent's token may write inside the store's project "
                                        f"({project}) and Claude Code's and Codex's directories only; other "
                                        "places need an admin token")
        with confined(roots):
            yield

    def require_admin(self, what: str) -> None:
        """Refuse (:class:`PermissionDeniedError`) unless this is an admin: ``what`` needs an admin token."""
        if not self.admin:
            raise PermissionDeniedError(f"{what} needs an admin token")

    def require_export(self, agent: str | None, resolve: Callable[[str], str | None]) -> None:
        """Refuse an export this principal may not make: an agent token exports its own agent only (``agent``),
        while that agent is declared with memory (``resolve``: the facade's ``resolve_agent``; the token of an
        agent whose definition is gone reads nothing); the rest needs an admin token."""
        if not self.admin and (agent is None or agent != self.agent):
            raise PermissionDeniedError("an agent token exports its own agent only (agent=); the rest needs an "
                                        "admin token", "agent")
        if not self.admin and agent is not None and resolve(agent) != agent:
            raise AgentNotFoundError(agent)

    def require_consolidation(self, agent: str | None, team: str | None, swarm: bool,
                              agents: Callable[[], list[dict[str, Any]]]) -> str | None:
        """Refuse (:class:`PermissionDeniedError`) a consolidation operation (consolidate, undo, its runs, review,
        a team's round end) this principal may not make, and return the agent it names: an admin may anything;
        an agent's token its own agent (the one it names when it names no scope), a team's memory as a lead of
        that team, the swarm's as a lead. ``agents``: the facade's ``describe_agents`` (who leads what)."""
        if self.admin:
            return agent
        if agent is None and team is None and not swarm:
            return self.agent
        if agent is not None:
            if agent != self.agent:
                raise PermissionDeniedError("an agent token consolidates its own agent's memory only; another "
                                            "agent's needs an admin token", "agent")
            return agent
        me = next((a for a in agents() if a.get("name") == self.agent and a.get("memory_enabled")
                   and not a.get("problems")), None)
        if me is None or not me.get("lead") or (team is not None and team not in me.get("teams", ())):
            what, field = (f"team {team!r}", "team") if team is not None else ("the swarm", "swarm")
            raise PermissionDeniedError(f"the memory of {what} is consolidated by an admin token or the token of a "
                                        f"lead of {what}", field)
        return agent

    def require_review(self, agent: str | None, team: str | None, swarm: bool,
                       agents: Callable[[], list[dict[str, Any]]]) -> str | None:
        """Refuse (:class:`PermissionDeniedError`) listing a review queue this principal may not see, and return
        the agent it names: as for consolidation, and besides a lead may list the queue of a member of one of its
        teams (the memories held there wait for its decision)."""
        if agent is not None and not self.admin and agent != self.agent:
            return self.require_held_decision(agent, team, swarm, agents)
        return self.require_consolidation(agent, team, swarm, agents)

    def require_held_decision(self, agent: str | None, team: str | None, swarm: bool,
                              agents: Callable[[], list[dict[str, Any]]]) -> str | None:
        """Refuse (:class:`PermissionDeniedError`) approving or rejecting a memory held for review unless this
        principal is an admin or a lead of where it lands: a team's, as for consolidation (a lead of the team);
        the swarm's, any lead; an agent's own memory (a task outcome captured for it), a lead of one of that
        agent's teams: never the agent itself, whose text (or whose model) may be what steered it."""
        if self.admin or team is not None or swarm:
            return self.require_consolidation(agent, team, swarm, agents)
        named = agent or self.agent
        known = {a.get("name"): a for a in agents() if a.get("memory_enabled") and not a.get("problems")}
        me, them = known.get(self.agent) or {}, known.get(named) or {}
        if not me.get("lead") or not set(me.get("teams", ())) & set(them.get("teams", ())):
            raise PermissionDeniedError(f"a memory held for review in {named!r}'s memory is approved or rejected by "
                                        f"an admin token or the token of a lead of one of its teams", "agent")
        return named


ADMIN = Principal(agent=None)
#: The server's own token (its discovery file's): an admin.
LOCAL = Principal(agent=None, token="local")


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_id(token: str) -> str:
    """The id :meth:`TokenStore.list` shows for ``token``."""
    return _digest(token)[:ID_LENGTH]


class TokenStore:
    """The token file of one store; re-read when it changes, so tokens created while a server runs work."""

    def __init__(self, state_dir: Path) -> None:
        self.path = tokens_file(Path(state_dir))
        self._mtime: tuple[int, int, int] | None = None
        self._entries: list[dict[str, str | None]] = []

    def _load(self) -> list[dict[str, str | None]]:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self._mtime, self._entries = None, []
            return self._entries
        mtime = (info.st_mtime_ns, info.st_size, info.st_ino)
        if mtime != self._mtime:
            self._entries = self._parse()
            self._mtime = mtime
        return self._entries

    def _parse(self) -> list[dict[str, str | None]]:
        """The entries of the file; :class:`TokenFileError` (logged) when it is unreadable or malformed."""
        try:
            data = jsonsafe.loads(read_regular(self.path, 16 * 1024 * 1024))
            entries = data["tokens"]
            if not isinstance(entries, list) or not all(
                    isinstance(e, dict) and isinstance(e.get("sha256"), str)
                    and (e.get("agent") is None or isinstance(e.get("agent"), str)) for e in entries):
                raise ValueError("'tokens' must be a list of {sha256, agent} objects")
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            log.error("token file %s is unreadable or malformed (%s); no token can be checked until it is fixed or "
                      "removed", self.path, exc)
            # what a client is told names no path: the log, read by whoever runs the server, has it
            raise TokenFileError("the server's token file is unreadable or malformed: no token can be checked "
                                 "until its administrator fixes it (the server's log names the file)") from None
        return entries

    def configured(self) -> bool:
        """True when at least one token exists (the server then requires one on every request)."""
        return bool(self._load())

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        """Serialise read-modify-write of the file between processes (two `token create` at once keep both)."""
        import fcntl

        private_dir(self.path.parent)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._mtime = None  # re-read under the lock
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def create(self, agent: str | None) -> str:
        """A new token for ``agent`` (None: admin); only its digest is kept (its id: :func:`token_id`)."""
        if agent is not None:
            check_agent_name(agent)
        token = _PREFIX + secrets.token_urlsafe(32)
        digest = _digest(token)
        with self._exclusive():
            entries = list(self._load())
            entries.append({"sha256": digest, "agent": agent,
                            "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
            atomic_write(self.path, json.dumps({"tokens": entries}, indent=2))
        return token

    def list(self) -> list[dict[str, str | None]]:
        """Every token as ``{id, agent, created_at}`` (``agent`` None: admin); the tokens themselves are not
        kept anywhere."""
        return [{"id": str(e["sha256"])[:ID_LENGTH], "agent": e.get("agent"), "created_at": e.get("created_at")}
                for e in self._load()]

    def revoke(self, token_id: str) -> bool:
        """Remove the token with this id (the first characters of its digest, as :meth:`list` shows); False
        when there is none. Effective at once: a running server re-reads the file on every check."""
        if not isinstance(token_id, str) or len(token_id) < 8 or not all(c in "0123456789abcdef" for c in token_id):
            raise InvalidInputError("token_id", f"must be a token id as `cortex token list` shows it, not {token_id!r}")
        with self._exclusive():
            entries = list(self._load())
            kept = [e for e in entries if not str(e["sha256"]).startswith(token_id)]
            if len(entries) - len(kept) > 1:
                raise InvalidInputError("token_id", f"{token_id!r} matches several tokens: give more of it")
            if len(kept) == len(entries):
                return False
            atomic_write(self.path, json.dumps({"tokens": kept}, indent=2))
            return True

    def verify(self, token: str | None) -> Principal:
        """The principal of ``token``; :class:`AuthError` when it is missing or unknown."""
        if not token:
            raise AuthError("missing bearer token (Authorization: Bearer <token>)")
        digest = _digest(token)
        for entry in self._load():
            if hmac.compare_digest(str(entry["sha256"]), digest):
                return Principal(agent=entry["agent"], token=digest[:ID_LENGTH])
        raise AuthError("invalid bearer token")


def agent_homes() -> list[Path]:
    """The coding agents' own directories, where their transcripts are: Claude Code's and Codex's."""
    return [Path.home() / ".claude", Path.home() / ".codex",
            *(Path(v) for v in (os.environ.get("CLAUDE_CONFIG_DIR"), os.environ.get("CODEX_HOME")) if v)]


def input_refusal(exc: InputRefused, caller: Principal, project: Path | None) -> str:
    """What a caller is told when a file was refused: why, and what an agent's token may read."""
    if caller.admin or "outside the directories" not in exc.reason:
        return str(exc)
    return (f"{exc.filename}: an agent's token may have the server read files of the store's project ({project}) "
            "and of Claude Code's and Codex's directories only (symbolic links resolved; a file with several hard "
            "links is refused); other files need an admin token")
