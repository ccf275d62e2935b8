"""Regenerate ``cortex/models/all-MiniLM-L6-v2/wordpiece.json``, the character tables of :mod:`cortex.wordpiece`,
read off the ``tokenizers`` package (Hugging Face's Rust tokenizer) one code point at a time, so that the pure
Python tokenizer follows its Unicode data and not Python's (they differ for ~1,500 code points, and Python's moves
with each release); and ``tests/golden/wordpiece.json``, the token ids ``tokenizers`` gives hostile and ordinary
texts, which tests/index/test_wordpiece.py compares :mod:`cortex.wordpiece` with. Needs ``pip install tokenizers``.

    python bench/wordpiece_tables.py
"""

from __future__ import annotations

import json
from pathlib import Path

from tokenizers import Tokenizer

from cortex.wordpiece import TABLES, is_chinese

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "cortex" / "models" / "all-MiniLM-L6-v2"
GOLDEN = ROOT / "tests" / "golden" / "wordpiece.json"


def ranges(codes: list[int]) -> list[list[int]]:
    """Sorted code points as [first, last] runs."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return runs


def golden_texts() -> list[str]:
    """The texts of tests/golden/wordpiece.json: hostile Unicode, special tokens inside the text, over-long words,
    seeded random strings over every code point, and lines of bench/data/gate.jsonl."""
    import random

    texts = [
        "How do I reset my password?",
        "Database migrations must be reviewed by the data team before they are merged into main",
        "[1:56 pm on 8 May, 2023] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        "ΟΔΟΣ Σ σς İstanbul ǅ ﬁ Ⅷ ① ß ẞ Ǆ", "Crème brûlée, naïve café, Ångström, Øresund, Łódź, Dvořák",
        "東京都の天気は晴れです。 北京欢迎你 한국어 텍스트", "豈 更 車 (compatibility ideographs)",
        "emoji 🥰👩‍👩‍👧 ❤️ 🇫🇷 and ZWJ\u200dinside\ufeffBOM",
        "tabs\tnew\nlines\r\x0bvt\x0cff\x1cfs\x85nel\u2028ls\u3000ideo\xa0nbsp",
        "ctrl\x00nul\x07bell\x7fdel\ufffdrepl\ue000private\U000f0000",
        "[CLS] already [SEP] inside [MASK] the [UNK] text [PAD] and [cls] [ SEP ] x[MASK]y",
        "x" * 100, "y" * 101, "supercalifragilisticexpialidocious antidisestablishmentarianism", "word " * 300,
        "C++ / C# / F#: foo_bar-baz.qux@example.com https://example.org/a?b=c&d=e#f ~/.config $HOME %PATH% 3.14e-10",
        "Arabic مرحبا بالعالم Hebrew שלום Hindi नमस्ते Thai สวัสดี Greek Καλημέρα Cyrillic Привет",
        "combining a\u0301\u0327 o\u0308\u0304 \U0001D165\U0001D16D", "math 𝐀𝐁𝐂 ∑∫√∞ ≤≥ ½ ² ³ № ™ © ®", "", " ",
        "?!.,;:'\"`", "don't won't can't it's O'Neil", "\u0890\u08e2\u07fd\u0898 new-unicode Cf/Mn"]
    rng = random.Random(31)
    everything = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    common = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'\"()[]{}-_/\\@#$%^&*+=<>|~`\t\n"
    for _ in range(150):
        texts.append("".join(rng.choice(common) if rng.random() < 0.6 else rng.choice(everything)
                             for _ in range(rng.randint(1, 40))))
    lines = (ROOT / "bench" / "data" / "gate.jsonl").read_text(encoding="utf-8").splitlines()
    texts += [line[:600] for line in rng.sample(lines, 50)]
    return texts


def write_golden(tokenizer: Tokenizer) -> None:
    """tests/golden/wordpiece.json: each golden text with the ids ``tokenizer`` gives it (truncated at 256)."""
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    texts = golden_texts()
    out = [{"text": t, "ids": e.ids} for t, e in zip(texts, tokenizer.encode_batch(texts))]
    GOLDEN.write_text(json.dumps(out, ensure_ascii=True) + "\n", encoding="utf-8")


def main() -> None:
    """Write the tables: what BertNormalizer makes of each code point, and which ones BertPreTokenizer splits on."""
    tokenizer = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    normalizer, pre = tokenizer.normalizer, tokenizer.pre_tokenizer
    removed, spaces, punct, mapped = [], [], [], {}
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:  # surrogates are no str characters
            continue
        char = chr(code)
        out = normalizer.normalize_str(char)
        if out == "":
            removed.append(code)
        elif out == " ":
            spaces.append(code)
        elif is_chinese(code):
            if out != f" {char} ":  # a compatibility ideograph: spaced, then decomposed
                mapped[str(code)] = out
        elif out != char:
            mapped[str(code)] = out
        pieces = [piece for piece, _ in pre.pre_tokenize_str(f"a{char}a")]
        if pieces == [f"a{char}a"]:
            continue
        if pieces == ["a", "a"]:  # whitespace: the normalizer has made it a space or dropped it
            assert out in (" ", ""), (code, out)
            continue
        assert pieces == ["a", char, "a"], (code, pieces)
        punct.append(code)
    tables = {"removed": ranges(removed), "space": ranges(spaces), "punct": ranges(punct), "map": mapped}
    TABLES.write_text(json.dumps(tables, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    write_golden(tokenizer)
    print(f"{TABLES}: {len(removed)} removed, {len(spaces)} spaces, {len(punct)} split, {len(mapped)} mapped")


if __name__ == "__main__":
    main()
