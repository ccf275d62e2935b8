"""Where :class:`Cortex` lived before the facade was split by domain (:mod:`cortex.app`): kept for imports."""

from __future__ import annotations

from cortex.app.cortex import Cortex
from cortex.app.kernel import WRITE_ATTEMPTS

__all__ = ["Cortex", "WRITE_ATTEMPTS"]
