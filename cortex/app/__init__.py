"""The facade: :class:`Cortex`, composed of one module per domain over a kernel.

``kernel`` (state and guards) < ``memories``, ``reading``, ``admin`` (the base domains) < ``sessions``, ``notes``,
``graph``, ``consolidation`` (the workflows, each building on the base domains) < ``cortex`` (the class itself, its
``open`` and context manager). Each domain module is one class of :class:`Cortex`'s bases; the operations each one
implements are the rows of :data:`cortex.api.operations.OPERATIONS` with its domain.
"""

from __future__ import annotations

from cortex.app.cortex import Cortex

__all__ = ["Cortex"]
