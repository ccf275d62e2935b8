"""Property-based test of every write path: random sequences of operations with extreme values on a real
on-disk store, checking after each step that the store and the derived index agree and that nothing
acknowledged is missing or changed."""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from cortex import Cortex, CortexError
from tests.conftest import stored_memories

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(str.strip)
HOSTILE = st.sampled_from(['" . } ; DROP ALL ; #', "</agent-memory>", "a\nb\r\nc", "x" * 65536, "日本語 メモ",
                           "\\u0000 \\\" }}", "<urn:x> <urn:y> <urn:z> ."])
CONTENT = st.one_of(TEXT, HOSTILE)
CONFIDENCE = st.one_of(st.sampled_from([0.0, 1.0, 0.3, 0.29999999999999999]), st.floats(0, 1))
MOMENT = st.one_of(
    st.sampled_from([datetime(1, 1, 1, tzinfo=timezone.utc), datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc),
                     datetime(1970, 1, 1, tzinfo=timezone.utc)]),
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(timezone.utc)),
)
COUNT = st.one_of(st.sampled_from([0, 1, 2**53 - 1, 2**53]), st.integers(0, 1000))
AGE = st.sampled_from(["999999999d", "1s", "30d", timedelta(microseconds=1), timedelta(days=740000)])
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


class Lifecycle(RuleBasedStateMachine):
    ids = Bundle("ids")

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp())
        self.path = self.tmp / "store"
        self.cx = self._open()
        self.model: dict[str, dict] = {}  # what was acknowledged: id -> content, usage

    def _open(self) -> Cortex:
        cx = Cortex.open(self.path, embeddings="hash", clock=lambda: NOW)
        cx.agents.register("a")
        return cx

    def teardown(self) -> None:
        self.cx.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(target=ids, content=CONTENT, confidence=CONFIDENCE)
    def store(self, content, confidence):
        same = [i for i, e in self.model.items() if e["content"] == content]
        m = self.cx.store("a", content, confidence=confidence)
        if same:  # the same content again: store answers a memory already stored, as it is
            assert m.id in same
        else:
            self.model[m.id] = {"content": content, "usage": 0, "confidence": confidence}
        return m.id

    @rule(entries=st.lists(st.tuples(CONTENT, COUNT, MOMENT, MOMENT), min_size=1, max_size=5))
    def store_many(self, entries):
        batch = [{"content": c, "usage_count": u, "created_at": cr, "last_used_at": lu} for c, u, cr, lu in entries]
        for m, (c, u, _, _) in zip(self.cx.store_many("a", batch), entries):
            self.model[m.id] = {"content": c, "usage": u, "confidence": 0.7}

    @rule(entries=st.lists(st.tuples(CONTENT, st.sampled_from([2**63 - 1, -5, 2**53 + 1])), min_size=1, max_size=3))
    def store_many_refused(self, entries):
        try:
            self.cx.store_many("a", [{"content": "ok"}] + [{"content": c, "usage_count": u} for c, u in entries])
        except CortexError:
            return
        raise AssertionError("an out-of-range usage count was accepted")

    @rule(memory_id=ids)
    def touch(self, memory_id):
        if memory_id in self.model:
            m = self.cx.touch("a", memory_id)
            self.model[memory_id]["usage"] += 1
            assert m.usage_count == self.model[memory_id]["usage"]
        else:
            try:
                self.cx.touch("a", memory_id)
            except CortexError:
                return
            raise AssertionError("touched a forgotten memory")

    @rule(memory_id=ids)
    def forget(self, memory_id):
        assert self.cx.forget("a", memory_id) == (memory_id in self.model)
        self.model.pop(memory_id, None)

    @rule(min_confidence=CONFIDENCE, age=st.one_of(st.none(), AGE))
    def prune(self, min_confidence, age):
        for memory_id in self.cx.prune_candidates("a", min_confidence, age, delete=True):
            self.model.pop(memory_id)

    @rule(lines=st.lists(TEXT.filter(lambda t: "\n" not in t and "\r" not in t), min_size=1, max_size=3))
    def agent_end(self, lines):
        output = "\n".join(f"LEARNED: {line}" for line in lines)
        captured = self.cx.agent_end("a", output)
        for m in captured:
            entry = self.model.setdefault(m.id, {"content": m.content, "usage": 0, "confidence": 0.7})
            entry["usage"] = m.usage_count
        kept = {m.id for m in captured}
        for memory_id in [i for i, e in self.model.items() if e["confidence"] < 0.3 and i not in kept]:
            self.model.pop(memory_id)  # agent end prunes with the default 0.3, never what it just captured

    @rule(how=st.sampled_from(["close", "no-flush", "snapshot-now"]))
    def restart(self, how):
        if how == "snapshot-now":  # a full rebuild saved as a snapshot: later changes apply onto it at the next open
            assert self.cx.reindex("a")["memories"] == len(self.model)
        self.cx.close(flush=how == "close")
        self.cx = self._open()

    @invariant()
    def store_and_index_agree_with_what_was_acknowledged(self):
        listed = {m.id: m for m in self.cx.recall("a", limit=10_000)}
        in_store = stored_memories(self.cx, "a")
        assert set(listed) == set(in_store) == set(self.model)
        for memory_id, expected in self.model.items():
            m = listed[memory_id]
            assert m.content == expected["content"] == in_store[memory_id]["content"]
            assert m.usage_count == expected["usage"] == int(in_store[memory_id]["usageCount"])
        status = self.cx.index_status("a")
        assert status.memories == status.stored == len(self.model)


TestLifecycle = Lifecycle.TestCase
TestLifecycle.settings = settings(max_examples=40, stateful_step_count=25, deadline=None,
                                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


WORDS = ["null", "pointer", "nullable", "annul", "check", "checks", "é", "café", "cafe", "aa", "aaa", "x"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join), min_size=1,
                         max_size=60),
       query=st.lists(st.sampled_from(WORDS + ["ul", "ll", "ck", "af"]), min_size=1, max_size=3).map(" ".join),
       forget=st.integers(min_value=0, max_value=5))
def test_and_recall_agrees_with_a_brute_force_count(tmp_path_factory, contents, query, forget):
    """Every token occurs (inside words too); ranked by total occurrences (str.count), whatever path the index
    takes (rarest token first, frequent ones checked on the candidates, postings merged or pending)."""
    from cortex.text import normalize, query_tokens

    path = tmp_path_factory.mktemp("recall")
    cx = Cortex.open(path, embeddings=None)
    try:
        cx.agents.register("a")
        stored = cx.store_many("a", [{"content": c} for c in contents])
        for m in stored[:forget]:
            cx.forget("a", m.id)
        alive = stored[forget:]
        tokens = query_tokens(query)
        expected = {m.id: sum(normalize(m.content).count(t) for t in tokens) for m in alive
                    if all(t in normalize(m.content) for t in tokens)}
        for _ in ("pending postings", "merged postings of a reopened store"):
            got = cx.recall("a", query, limit=1000)
            assert {m.id for m in got} == set(expected)
            occurrences = [expected[m.id] for m in got]
            assert occurrences == sorted(occurrences, reverse=True)
            scored = cx.search("a", query, mode="all", limit=1000)
            assert {h.memory.id: h.score for h in scored} == expected
            cx.close()
            cx = Cortex.open(path, embeddings=None)
            cx.agents.register("a")
    finally:
        cx.close()
