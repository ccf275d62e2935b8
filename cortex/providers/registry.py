"""Finding a memory provider by its name: the built-in ones (``mem0``, ``openviking``, spoken over HTTP) or an
installed distribution's entry point in the group ``cortex.providers``.

An entry point is loaded only when ``CORTEX_PROVIDERS`` names it: a package that is merely installed never becomes
a memory backend. Its object is a :class:`~cortex.providers.base.MemoryProvider` subclass (or any class with the
same methods, such as a Hermes Agent provider), constructed without arguments as Hermes does, or a ready instance.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any

from cortex.errors import InvalidInputError
from cortex.providers.base import MemoryProvider

#: The entry-point group of provider plugins.
GROUP = "cortex.providers"
#: The built-in providers: name -> "module:class".
BUILTIN: Mapping[str, str] = {
    "mem0": "cortex.providers.mem0:Mem0Provider",
    "openviking": "cortex.providers.openviking:OpenVikingProvider",
}
#: A provider's name (it labels its hits and names its settings).
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: The methods a provider must have (Hermes's abstract ones that Cortex calls).
REQUIRED = ("is_available", "prefetch")


def check_name(name: str, field: str = "CORTEX_PROVIDERS") -> str:
    """``name`` when it is a provider name (lowercase letters, digits, ``-``, ``_``), else InvalidInputError."""
    if not isinstance(name, str) or not NAME.match(name) or name == "cortex":
        raise InvalidInputError(field, f"{name!r} is not a provider name (lowercase letters, digits, '-' and '_'; "
                                       f"not 'cortex', the store's own label)")
    return name


def load(name: str, options: Mapping[str, Any]) -> MemoryProvider:
    """The provider ``name``: a built-in one constructed with ``options`` (its settings), or the entry point of
    that name in :data:`GROUP`, loaded now. InvalidInputError names what is wrong (an unknown name lists the
    known ones)."""
    check_name(name)
    if name in BUILTIN:
        module, _, cls = BUILTIN[name].partition(":")
        provider: Any = getattr(importlib.import_module(module), cls)(**options)
        return provider  # type: ignore[no-any-return]
    from importlib.metadata import entry_points  # only when a plugin is named (its import costs ~10 ms)

    found = [ep for ep in entry_points(group=GROUP) if ep.name == name]
    if not found:
        installed = sorted({ep.name for ep in entry_points(group=GROUP)})
        raise InvalidInputError("CORTEX_PROVIDERS", f"no memory provider named {name!r}: built in are "
                                f"{', '.join(BUILTIN)}; installed plugins (entry points in {GROUP}): "
                                f"{', '.join(installed) or 'none'}")
    try:
        target = found[0].load()
        provider = target() if isinstance(target, type) else target
    except Exception as exc:  # noqa: BLE001 - a plugin's import error is reported as the setting's problem
        raise InvalidInputError("CORTEX_PROVIDERS", f"the plugin {name!r} ({found[0].value}) could not be "
                                                    f"loaded: {type(exc).__name__}: {exc}") from None
    missing = [m for m in REQUIRED if not callable(getattr(provider, m, None))]
    if missing:
        raise InvalidInputError("CORTEX_PROVIDERS", f"the plugin {name!r} ({found[0].value}) is not a memory "
                                                    f"provider: it has no {', '.join(missing)}")
    return provider  # type: ignore[no-any-return]
