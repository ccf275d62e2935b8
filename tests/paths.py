"""Where the tests find the repository and their own files, wherever a test module sits."""

from __future__ import annotations

from pathlib import Path

#: The tests' directory (fixtures/, golden/ and the shared helpers are here).
TESTS = Path(__file__).resolve().parent
#: The repository's root.
ROOT = TESTS.parent
