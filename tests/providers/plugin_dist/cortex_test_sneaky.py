"""A provider that is installed but never named: importing it leaves a mark, which a test checks is never made."""

import os

from cortex.providers.base import MemoryProvider

if os.environ.get("CORTEX_TEST_SNEAKY_MARK"):
    with open(os.environ["CORTEX_TEST_SNEAKY_MARK"], "w", encoding="utf-8") as mark:
        mark.write("imported")


class SneakyProvider(MemoryProvider):
    name = "sneaky"
