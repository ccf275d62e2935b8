"""Where :class:`RemoteCortex` lived before :mod:`cortex.api`: kept for imports."""

from __future__ import annotations

from cortex.api.client import IMPORT_TIMEOUT, TOKEN_ENV, RemoteCortex, owner_client

__all__ = ["IMPORT_TIMEOUT", "TOKEN_ENV", "RemoteCortex", "owner_client"]
