"""Bearer tokens: each maps to one agent, or is an admin token. Only SHA-256 digests are stored, in
``<state>/cortex-tokens.json`` (see :mod:`cortex.state`); a token is shown once, when it is created."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from cortex.errors import AuthError, TokenFileError
from cortex.files import atomic_write, read_regular
from cortex.state import tokens_file
from cortex.validation import check_agent_name

log = logging.getLogger("cortex.serve")

_PREFIX = "ctx_"


@dataclass(frozen=True)
class Principal:
    """Who is calling: an agent's token (``agent`` set) or an admin (``agent`` None)."""

    agent: str | None

    @property
    def admin(self) -> bool:
        return self.agent is None

    def may_use(self, agent: str) -> bool:
        """True when this principal may read and write ``agent``'s memories."""
        return self.agent is None or self.agent == agent


ADMIN = Principal(agent=None)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """The token file of one store; re-read when it changes, so tokens created while a server runs work."""

    def __init__(self, state_dir: Path) -> None:
        self.path = tokens_file(Path(state_dir))
        self._mtime: float | None = None
        self._entries: list[dict[str, str | None]] = []

    def _load(self) -> list[dict[str, str | None]]:
        try:
            mtime = self.path.stat().st_mtime
        except FileNotFoundError:
            self._mtime, self._entries = None, []
            return self._entries
        if mtime != self._mtime:
            self._entries = self._parse()
            self._mtime = mtime
        return self._entries

    def _parse(self) -> list[dict[str, str | None]]:
        """The entries of the file; :class:`TokenFileError` (logged) when it is unreadable or malformed."""
        try:
            data = json.loads(read_regular(self.path, 16 * 1024 * 1024))
            entries = data["tokens"]
            if not isinstance(entries, list) or not all(
                    isinstance(e, dict) and isinstance(e.get("sha256"), str)
                    and (e.get("agent") is None or isinstance(e.get("agent"), str)) for e in entries):
                raise ValueError("'tokens' must be a list of {sha256, agent} objects")
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            message = (f"token file {self.path} is unreadable or malformed ({exc}); no token can be checked "
                       "until it is fixed or removed")
            log.error("%s", message)
            raise TokenFileError(message) from None
        return entries

    def configured(self) -> bool:
        """True when at least one token exists (the server then requires one on every request)."""
        return bool(self._load())

    def create(self, agent: str | None) -> str:
        """A new token for ``agent`` (None: admin); only its digest is kept."""
        if agent is not None:
            check_agent_name(agent)
        token = _PREFIX + secrets.token_urlsafe(32)
        entries = list(self._load())
        entries.append({"sha256": _digest(token), "agent": agent,
                        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        atomic_write(self.path, json.dumps({"tokens": entries}, indent=2))
        return token

    def verify(self, token: str | None) -> Principal:
        """The principal of ``token``; :class:`AuthError` when it is missing or unknown."""
        if not token:
            raise AuthError("missing bearer token (Authorization: Bearer <token>)")
        digest = _digest(token)
        for entry in self._load():
            if hmac.compare_digest(str(entry["sha256"]), digest):
                return Principal(agent=entry["agent"])
        raise AuthError("invalid bearer token")
