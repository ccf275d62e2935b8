"""The ``cortex`` command. Hooks take a short path that skips the CLI's imports: they run at every agent
start and stop, and with a server running the whole hook must stay near 100 ms."""

from __future__ import annotations

import sys
import types
from typing import Any

#: The environment variable that disables pydantic's plugins, and the values that disable all of them (pydantic's
#: ``pydantic.plugin._loader.get_plugins``).
_PLUGINS_ENV = "PYDANTIC_DISABLE_PLUGINS"
_ALL_DISABLED = ("__all__", "1", "true")
_LOADER = "pydantic.plugin._loader"


class _NoPluginLoader(types.ModuleType):
    """Stands in for ``pydantic.plugin._loader`` while every pydantic plugin is disabled: that module imports
    ``importlib.metadata`` (and with it email, socket, csv: ~1.5x the interpreter's start) when a command builds
    its first validation schema (printing a model does), only to answer that no plugin is loaded. This answers
    the same without the import; with plugins enabled again, and for any other name, the real module answers."""

    def get_plugins(self, *args: Any, **kwargs: Any) -> Any:
        """No plugin while they are all disabled, else the real loader's plugins."""
        import os

        if os.environ.get(_PLUGINS_ENV) in _ALL_DISABLED:
            return ()
        return self.__getattr__("get_plugins")(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        import importlib

        if name.startswith("__"):  # what the import system asks a module (``__path__``...): a plain module's answer
            raise AttributeError(name)
        if sys.modules.get(_LOADER) is self:
            del sys.modules[_LOADER]
        return getattr(importlib.import_module(_LOADER), name)


def skip_plugin_scan() -> None:
    """Disable pydantic's plugins (unless the user chose which) and, when all are disabled, put
    :class:`_NoPluginLoader` in place of pydantic's loader (before pydantic imports it)."""
    import os

    # pydantic's plugin lookup scans every installed distribution's entry points: ~15-20 ms per command and
    # hook. Cortex uses no pydantic plugin; a user who sets the variable keeps their choice.
    os.environ.setdefault(_PLUGINS_ENV, "__all__")
    if os.environ[_PLUGINS_ENV] in _ALL_DISABLED and _LOADER not in sys.modules:
        sys.modules[_LOADER] = _NoPluginLoader(_LOADER)


def main() -> None:
    """Console-script entry point."""
    skip_plugin_scan()
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        from cortex.service.hooks import main as hook_main

        sys.exit(hook_main(argv[1:]))  # always 0: a hook never blocks its agent
    from cortex.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
