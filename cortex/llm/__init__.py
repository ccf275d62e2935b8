"""The language model: a client for an OpenAI-compatible chat-completions server (OpenAI, Ollama, vLLM, llama.cpp,
LM Studio...), asked for JSON that matches a pydantic model, and the prompts Cortex asks it.

One module per concern: :mod:`.settings` (:class:`LLMSettings`, from ``$CORTEX_LLM_*`` or the ``[llm]`` table of
``.cortex/config.toml``: :func:`llm_settings`; without a URL no model is used), :mod:`.client`
(:class:`LLMClient`, the parsing of its answers), :mod:`.schemas` (the answers of extraction and summary),
:mod:`.prompts` (one module per question: the durable learnings of a session, :func:`extract`, and its summary,
:func:`summarize`, for capture; contradictions, distillation and a team's memory for consolidation).

Errors: :class:`~cortex.errors.LLMUnavailableError` when the server cannot be used for now (the caller retries
later), :class:`~cortex.errors.LLMOutputError` when it answered, twice, with something other than the JSON asked
for, :class:`~cortex.errors.LLMError` when it refused the request.

Importing this package is cheap: httpx (~90 ms) is imported by the first request, pydantic (~50 ms) when a
schema (:class:`ExtractedMemory`, :class:`Extraction`, :class:`Summary`) is first used, so a caller may ask
:func:`llm_settings` whether a model is configured at all without paying for either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cortex.llm import schemas
from cortex.llm.client import LLMClient, estimate_tokens, strict_schema
from cortex.llm.prompts.extract import SYSTEM as EXTRACT_SYSTEM
from cortex.llm.prompts.extract import extract
from cortex.llm.prompts.summary import SYSTEM as SUMMARY_SYSTEM
from cortex.llm.prompts.summary import summarize
from cortex.llm.schemas import MemoryKind
from cortex.llm.settings import LLMSettings, _config_table, _integer, config_table, llm_settings, whole_number

if TYPE_CHECKING:
    from cortex.llm.schemas import ExtractedMemory, Extraction, Summary
else:

    def __getattr__(name: str) -> Any:
        if name in schemas._SCHEMA_NAMES:  # built on first use (pydantic is imported then)
            return getattr(schemas, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EXTRACT_SYSTEM", "ExtractedMemory", "Extraction", "LLMClient", "LLMSettings", "MemoryKind",
           "SUMMARY_SYSTEM", "Summary", "_config_table", "_integer", "config_table", "estimate_tokens", "extract",
           "llm_settings", "schemas", "strict_schema", "summarize", "whole_number"]
