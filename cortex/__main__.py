"""The ``cortex`` command. Hooks take a short path that skips the CLI's imports: they run at every agent
start and stop, and with a server running the whole hook must stay near 100 ms."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        import os

        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # entry-point scan: ~15 ms per hook
        from cortex.service.hooks import main as hook_main

        sys.exit(hook_main(argv[1:]))  # always 0: a hook never blocks its agent
    from cortex.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
