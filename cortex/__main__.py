"""The ``cortex`` command. Hooks take a short path that skips the CLI's imports: they run at every agent
start and stop, and with a server running the whole hook must stay near 100 ms."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    rest = argv[2:]
    if argv[:2] == ["hook", "claude"] and (len(rest) == 1 or (len(rest) == 3 and rest[1] == "--agent")) \
            and not rest[0].startswith("-"):
        import os

        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # entry-point scan: ~15 ms per hook
        from cortex.service.hooks import main as hook_main

        sys.exit(hook_main(argv[2:]))
    from cortex.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
