"""``python -m cortex.cli``: the command line (the background server starts its hub this way)."""

from __future__ import annotations

from cortex.cli import main

if __name__ == "__main__":
    main()
