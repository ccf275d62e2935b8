"""The OpenAI-compatible embedding provider against a small local server speaking /v1/embeddings."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from cortex import CortexError, InvalidInputError
from cortex.embeddings import EmbeddingError, EmbeddingProvider, OpenAIEmbeddings


class _Handler(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"model crashed")
            return
        # a deterministic fake embedding: letter counts, answered in reverse order to test re-sorting by index
        data = [{"index": i, "embedding": [text.count(c) for c in "abcde"], "object": "embedding"}
                for i, text in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "data": data[::-1], "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_embeds_in_order_normalised_and_batched(server):
    provider = OpenAIEmbeddings(server, "fake-model", api_key="sk-test", batch_size=2)
    assert isinstance(provider, EmbeddingProvider)
    vectors = provider.embed(["aaa", "bb", "abc"])
    assert vectors.shape == (3, 5) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(vectors[0], [1, 0, 0, 0, 0])
    np.testing.assert_allclose(vectors[1], [0, 1, 0, 0, 0])
    assert len(_Handler.requests) == 2  # batches of 2
    first = _Handler.requests[0]
    assert first["path"] == "/v1/embeddings" and first["auth"] == "Bearer sk-test"
    assert first["body"] == {"model": "fake-model", "input": ["aaa", "bb"]}
    provider.close()


def test_errors_are_cortex_errors_with_the_cause(server):
    with pytest.raises(EmbeddingError, match="answered 500: model crashed"):
        OpenAIEmbeddings(server, "broken").embed(["x"])
    with pytest.raises(CortexError, match="failed"):
        OpenAIEmbeddings("http://127.0.0.1:9/v1", "m", timeout=2).embed(["x"])
    with pytest.raises(InvalidInputError, match="base_url"):
        OpenAIEmbeddings("localhost:11434", "m")


def test_local_provider_loads_the_shipped_model_offline(local):
    assert local.model == "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
    vectors = local.embed([
        "How do I reset my password?",
        "Steps to recover the login credentials of an account",
        "The cat sat on the mat in the sun",
    ])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > 0.4 > unrelated


def test_local_provider_reports_a_missing_model_directory(tmp_path, local):
    from cortex.embeddings import OnnxEmbeddings

    with pytest.raises(EmbeddingError, match="does not exist"):
        OnnxEmbeddings(tmp_path / "nope")


def test_cortex_stores_and_searches_through_an_openai_compatible_endpoint(server, tmp_path):
    from cortex import Cortex

    provider = OpenAIEmbeddings(server, "fake-model")
    with Cortex.open(tmp_path / "store", embeddings=provider) as cx:
        cx.agents.register("a")
        cx.store_many("a", [{"content": "aaaa"}, {"content": "eeee"}, {"content": "abab"}])
        result = cx.search("a", "eee", mode="semantic", limit=1)
        assert result.mode == "semantic" and result[0].memory.content == "eeee"
    batches = [r["body"]["input"] for r in _Handler.requests]
    assert batches == [["aaaa", "eeee", "abab"], ["eee"]]  # one call for the batch, one for the query
    provider.close()
