"""The ``cortex`` command. Hooks take a short path that skips the CLI's imports: they run at every agent
start and stop, and with a server running the whole hook must stay near 100 ms."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    import os

    # pydantic's plugin lookup scans every installed distribution's entry points: ~15-20 ms per command and
    # hook. Cortex uses no pydantic plugin; a user who sets the variable keeps their choice.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        from cortex.service.hooks import main as hook_main

        sys.exit(hook_main(argv[1:]))  # always 0: a hook never blocks its agent
    from cortex.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
