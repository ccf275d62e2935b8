"""The answers the extraction and summary prompts ask for, as pydantic models: :class:`ExtractedMemory`,
:class:`Extraction` (also the distillation's answer, :mod:`cortex.llm.prompts.distil`), :class:`Summary`.

pydantic (~50 ms) is imported when a schema is first used (this module's ``__getattr__``, or
:func:`_define_schemas`), not by importing the module.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Annotated, Any, Literal

if TYPE_CHECKING:
    from pydantic import BaseModel, Field

#: The memory types an extraction may give (``config.MEMORY_TYPES``, spelled out for the type checker).
MemoryKind = Literal["pattern", "convention", "insight", "decision"]


if TYPE_CHECKING:
    # What the type checker sees. The classes themselves, with their bounds, are built by _define_schemas() on
    # first use; tests/llm/test_llm.py checks both declare the same fields.

    class ExtractedMemory(BaseModel):
        content: str
        type: MemoryKind
        confidence: float
        tags: list[Annotated[str, Field(min_length=1, max_length=64)]]

    class Extraction(BaseModel):
        memories: list[ExtractedMemory]

    class Summary(BaseModel):
        summary: str


_SCHEMA_NAMES = ("ExtractedMemory", "Extraction", "Summary")
_schemas_lock = threading.Lock()


def _define_schemas() -> None:
    """Build the pydantic models into this module's namespace, once."""
    with _schemas_lock:
        if "Summary" in globals():
            return
        from pydantic import BaseModel, ConfigDict, Field

        class ExtractedMemory(BaseModel):
            """One durable learning of a session, as the model gives it."""

            model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
            content: str = Field(min_length=1, max_length=2000)
            type: MemoryKind
            confidence: float = Field(ge=0, le=1)
            tags: list[Annotated[str, Field(min_length=1, max_length=64)]] = Field(max_length=10)

        class Extraction(BaseModel):
            """What :func:`extract` asks for: the learnings, possibly none."""

            model_config = ConfigDict(extra="forbid")
            memories: list[ExtractedMemory]

        class Summary(BaseModel):
            """What :func:`summarize` asks for."""

            model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
            summary: str = Field(min_length=1, max_length=4000)

        for cls in (ExtractedMemory, Extraction, Summary):
            cls.__qualname__ = cls.__name__
        globals().update(ExtractedMemory=ExtractedMemory, Extraction=Extraction, Summary=Summary)


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name in _SCHEMA_NAMES:
            _define_schemas()
            return globals()[name]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
