"""MiniLM's tokenizer in pure Python: BERT's uncased WordPiece, token for token what the ``tokenizers`` package
makes of the vendored ``tokenizer.json`` (tests/index/test_wordpiece.py compares the two), without that package
and the Hugging Face Hub client it pulls in (~35 MB of the install).

The steps are those the file names: its special tokens are split off the raw text; each piece is normalized
(BertNormalizer: control characters dropped, whitespace made a space, CJK ideographs spaced, accents stripped,
lowercased), split on whitespace and punctuation (BertPreTokenizer), and each word cut greedily into the longest
vocabulary entries (WordPiece, ``##`` before continuations, ``[UNK]`` for a word with no cut or over 100
characters); then ``[CLS] ... [SEP]`` around the first ``max_tokens - 2`` tokens. The character tables come from
the Rust tokenizer's Unicode data, not Python's (``wordpiece.json``, made by bench/wordpiece_tables.py).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The character tables (see bench/wordpiece_tables.py).
TABLES = Path(__file__).parent / "models" / "all-MiniLM-L6-v2" / "wordpiece.json"


def is_chinese(code: int) -> bool:
    """True for the CJK ideographs BertNormalizer puts spaces around."""
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F or 0x2B920 <= code <= 0x2CEAF
            or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F)


class _Ranges:
    """Membership in sorted [first, last] code point runs."""

    def __init__(self, runs: list[list[int]]) -> None:
        self._starts = [first for first, _ in runs]
        self._ends = [last for _, last in runs]

    def __contains__(self, code: int) -> bool:
        at = bisect.bisect_right(self._starts, code) - 1
        return at >= 0 and code <= self._ends[at]


@dataclass(frozen=True)
class Encoding:
    """One text's token ids and attention mask (all ones: texts are never padded)."""

    ids: list[int]
    attention_mask: list[int]


@cache
def _tables() -> tuple[_Ranges, _Ranges, _Ranges, dict[str, str]]:
    data = json.loads(TABLES.read_text(encoding="utf-8"))
    return (_Ranges(data["removed"]), _Ranges(data["space"]), _Ranges(data["punct"]),
            {chr(int(code)): out for code, out in data["map"].items()})


class WordPiece:
    """The tokenizer a BERT-style ``tokenizer.json`` describes (see the module docstring)."""

    def __init__(self, vocab: dict[str, int], specials: dict[str, int], unk: str, prefix: str,
                 max_word_chars: int, max_tokens: int) -> None:
        self._vocab, self._specials = vocab, specials
        self._unk, self._prefix, self._max_word_chars = vocab[unk], prefix, max_word_chars
        self._cls, self._sep = vocab["[CLS]"], vocab["[SEP]"]
        self.max_tokens = max_tokens
        self._split = re.compile("(" + "|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True)) + ")")
        self._words: dict[str, list[int]] = {}

    @classmethod
    def from_file(cls, path: Path, max_tokens: int) -> WordPiece | None:
        """The tokenizer of ``path`` truncating at ``max_tokens`` (``[CLS]`` and ``[SEP]`` included); None when the
        file describes another kind of tokenizer."""
        spec = json.loads(path.read_text(encoding="utf-8"))
        model, normalizer = spec.get("model") or {}, spec.get("normalizer") or {}
        post = (spec.get("post_processor") or {}).get("single")
        bert = (model.get("type") == "WordPiece" and (spec.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
                and normalizer.get("type") == "BertNormalizer" and normalizer.get("lowercase") is True
                and normalizer.get("strip_accents") in (None, True) and normalizer.get("clean_text") is True
                and normalizer.get("handle_chinese_chars") is True
                and post == [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                             {"SpecialToken": {"id": "[SEP]", "type_id": 0}}]
                and all(not t.get("normalized") and not t.get("lstrip") and not t.get("rstrip")
                        and not t.get("single_word") for t in spec.get("added_tokens", [])))
        if not bert:
            return None
        return cls(model["vocab"], {t["content"]: t["id"] for t in spec.get("added_tokens", [])},
                   model["unk_token"], model["continuing_subword_prefix"], model["max_input_chars_per_word"],
                   max_tokens)

    def encode(self, text: str) -> Encoding:
        """``[CLS]``, the text's first ``max_tokens - 2`` tokens, ``[SEP]``."""
        ids: list[int] = []
        for at, piece in enumerate(self._split.split(text)):
            if at % 2:
                ids.append(self._specials[piece])
            elif piece:
                for word in _words(piece):
                    ids.extend(self._word(word))
        ids = [self._cls, *ids[:max(self.max_tokens - 2, 0)], self._sep]
        return Encoding(ids, [1] * len(ids))

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        """:meth:`encode` of each text."""
        return [self.encode(text) for text in texts]

    def _word(self, word: str) -> list[int]:
        found = self._words.get(word)
        if found is not None:
            return found
        found = [self._unk] if len(word) > self._max_word_chars else []
        start = 0
        while start < len(word) and not found == [self._unk]:
            end = len(word)
            while end > start:
                sub = word[start:end] if start == 0 else self._prefix + word[start:end]
                if sub in self._vocab:
                    found.append(self._vocab[sub])
                    break
                end -= 1
            else:
                found = [self._unk]
            start = end
        if len(self._words) < 100_000:
            self._words[word] = found
        return found


def _words(text: str) -> list[str]:
    """The normalized words and punctuation marks of ``text``."""
    removed, space, punct, mapped = _tables()
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code < 128 and not (code < 32 or code == 127):
            out.append(char.lower())
        elif code in removed:
            continue
        elif code in space:
            out.append(" ")
        elif is_chinese(code):
            out.append(mapped.get(char) or f" {char} ")
        else:
            out.append(mapped.get(char, char))
    words: list[str] = []
    for chunk in "".join(out).split(" "):
        current: list[str] = []
        for char in chunk:
            if ord(char) in punct:
                if current:
                    words.append("".join(current))
                    current = []
                words.append(char)
            else:
                current.append(char)
        if current:
            words.append("".join(current))
    return words
