"""Capture benchmark: what automatic capture keeps out, how fast it runs, and what the hooks pay for it.

    python bench/capture.py                          # every section, ~2 minutes on 2 cores
    python bench/capture.py --only usage hooks       # some sections (the others' results in the JSON are kept)

* **redaction**: on the labelled set (bench/data/redaction.jsonl, made by bench/data/make_redaction_set.py: secrets
  of every kind Cortex redacts in the sentences agents write, and near-misses that must stay: commit hashes,
  digests, UUIDs, memory ids, identifiers, paths, placeholders). Recall: secrets no longer in the output.
  Precision: redacted spans that cover a labelled secret, over all redacted spans. Per kind and overall. A
  held-out labelled set (bench/data/redaction_heldout.jsonl): other templates and near-misses, written after the
  rules were tuned and never used to change them. False redactions in real conversations: every redaction in the
  LongMemEval and LoCoMo dialogue turns (../shared/bench/data: public chat data without credentials) counts as a
  false positive; per MB (the rules were tuned on the LongMemEval subset and LoCoMo; the sessions of
  longmemeval_oracle.json outside the subset are held out). Throughput in MB/s.
* **gate**: the quality gate (cortex/capture/gate.py) on its labelled sets (bench/data/gate.jsonl, tuned on, and
  bench/data/gate_heldout.jsonl, written after tuning; made by bench/data/make_gate_set.py): each candidate is
  judged against the memories stored before it. Per action precision and recall, accuracy, the precision of
  refuse and confirm together (a wrong refusal or merge loses a learning: the costly error; a confirm of the
  wrong memory counts as wrong), and how often a right refusal gives the expected reason. Lexical only, then
  with the local embedding model's vectors (all-MiniLM-L6-v2 int8) when it is installed.
* **transcripts**: ``capture_transcript`` without a model, per MB: Claude Code JSONL sessions of about 1, 10 and
  50 MB written here (user prompts, assistant thinking, text and tool calls, tool results with their
  ``toolUseResult`` copies, subagent calls whose lines are sidechain lines, two main-agent marker lines a MB and
  one per subagent), captured on a fresh on-disk store whose session was shown a block; then captured again
  (nothing new); and the transcript reader alone on the same file in the same run (the ratio).
* **queue**: a real ``cortex serve`` whose model is the local chat-completions stand-in (tests/llm_standin.py):
  N small sessions POSTed with ``wait: false``, ``GET /v1/capture/queue`` polled until drained: jobs a second,
  the model's requests, the learnings stored; then with a stand-in that answers after a delay (the queue is
  bound by the model).
* **hooks**: ``python -m cortex hook claude Stop|SubagentStop|SessionEnd`` processes, each after a turn written to
  its transcript, with and without ``CORTEX_LLM_URL`` (alternating, the same run), against a running server
  (with a model, SubagentStop and SessionEnd queue the model's part in it; the stand-in takes seconds an answer
  to show the hooks do not wait) and without one (the hook starts a detached ``cortex capture``; each hook is
  timed alone). Median and p90 against bench/service.py's hook targets (<= 3x ``python -c pass`` with a server,
  <= 5x without).
* **usage**: the "used" signal (``cortex.capture.usage.drawn_on``) on labelled recorded sessions
  (bench/data/usage.jsonl, on which the detector's weights were fitted with bench/usage.py's dev split, and
  bench/data/usage_heldout.jsonl, written after; made by bench/data/make_usage_set.py): precision and recall of
  "used" per shown memory, by kind of item.
* **notes**: Markdown notes: the first sync of 1,000 generated notes files, a sync with nothing changed and one
  after 1% of the files changed (the reading and chunking alone as the baseline); the watcher of a real
  ``cortex serve``: from writing a notes file to recall finding it (the recall round trip alone as the baseline).
* **importers**: ``import_from`` of a generated file of about 10,000 items in each system's format (the fixtures'
  formats, tests/fixtures/importers: a Beads knowledge log, mem0's get_all JSON, the MCP memory server's
  memory.jsonl with 5 observations an entity and a relation each, a CLAUDE.md of one section each) into a fresh
  on-disk store without embeddings: a dry run, the import (memories/s), the same import again (nothing new);
  ``export_beads`` of the Beads agent (rotation included); and the Beads import with the local embedding model
  when it is installed (the model's time shows).

Prints tables and writes bench/results/capture.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import string
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # tests.llm_standin: the local model stand-in
from _common import RESULTS, print_table, write_json  # noqa: E402

from cortex.capture.gate import Gate  # noqa: E402
from cortex.capture.redact import Redactor  # noqa: E402

LABELLED = Path(__file__).parent / "data" / "redaction.jsonl"
#: Written after the rules were tuned, never used to change them (bench/data/make_redaction_set.py).
HELD_OUT = Path(__file__).parent / "data" / "redaction_heldout.jsonl"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "bench" / "data"
#: The quality gate's labelled sets (bench/data/make_gate_set.py): tuned on, and written after tuning.
GATE = Path(__file__).parent / "data" / "gate.jsonl"
GATE_HELD_OUT = Path(__file__).parent / "data" / "gate_heldout.jsonl"
ACTIONS = ("store", "confirm", "refuse")


def labelled(redactor: Redactor, path: Path = LABELLED) -> dict:
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    examples: list[str] = []
    for line in path.read_text().splitlines():
        item = json.loads(line)
        text, secrets = item["text"], item["secrets"]
        out = redactor.redact(text).text
        kind = per_kind[item["kind"]]
        for secret in secrets:
            kind["caught" if secret not in out else "missed"] += 1
        places = [(text.find(s), len(s)) for s in secrets]
        for start, end, rule in redactor.find(text):
            hit = any(p <= start < p + n or start <= p < end for p, n in places if p >= 0)
            kind["true_spans" if hit else "false_spans"] += 1
            if not hit and len(examples) < 10:
                examples.append(f"{rule}: {text[start:end][:60]!r}")
        kind["items"] += 1
    total: Counter[str] = Counter()
    for counts in per_kind.values():
        total.update(counts)
    return {"per_kind": {k: dict(v) for k, v in per_kind.items()}, "total": dict(total),
            "false_examples": examples}


def _lme_turns(name: str, skip: set[str]) -> tuple[list[str], set[str]]:
    """The user and assistant turns of the sessions of a LongMemEval file (each session once, none of
    ``skip``), and the ids of those sessions."""
    turns: list[str] = []
    seen: set[str] = set()
    path = SHARED / name
    if path.exists():
        for question in json.loads(path.read_text()):
            for session_id, session in zip(question["haystack_session_ids"], question["haystack_sessions"]):
                if session_id not in seen and session_id not in skip:
                    seen.add(session_id)
                    turns += [turn["content"] for turn in session]
    return turns, seen


def conversations() -> list[str]:
    """The turns the context rules were tuned on (their false redactions were looked at): the LongMemEval
    subset's sessions and LoCoMo's dialogues."""
    turns, _ = _lme_turns("longmemeval_s_subset101.json", set())
    locomo = SHARED / "locomo10.json"
    if locomo.exists():
        for sample in json.loads(locomo.read_text()):
            conversation = sample["conversation"]
            for key, value in conversation.items():
                if key.startswith("session_") and isinstance(value, list):
                    turns += [turn["text"] for turn in value]
    return turns


def held_out() -> list[str]:
    """Sessions never looked at while tuning: those of longmemeval_oracle.json that are not in the subset."""
    _, tuned = _lme_turns("longmemeval_s_subset101.json", set())
    return _lme_turns("longmemeval_oracle.json", tuned)[0]


def real_text(redactor: Redactor, turns: list[str]) -> dict:
    size = sum(len(t.encode()) for t in turns)
    started = time.perf_counter()
    found: Counter[str] = Counter()
    examples: list[str] = []
    for turn in turns:
        for start, end, rule in redactor.find(turn):
            found[rule] += 1
            if len(examples) < 15:
                examples.append(f"{rule}: {turn[start:end][:60]!r}")
    seconds = time.perf_counter() - started
    return {"turns": len(turns), "mb": size / 1e6, "seconds": seconds, "mb_per_s": size / 1e6 / seconds,
            "redactions": dict(found), "per_mb": sum(found.values()) / (size / 1e6), "examples": examples}


def _cached(embed: Callable[[list[str]], np.ndarray]) -> Callable[[list[str]], np.ndarray]:
    """``embed`` remembering each text's row (the sets repeat their pool memories)."""
    rows: dict[str, np.ndarray] = {}

    def vectors(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in rows]
        if missing:
            rows.update(zip(missing, embed(missing)))
        return np.stack([rows[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)

    return vectors


def gate(path: Path, vectors: Callable[[list[str]], np.ndarray] | None = None) -> dict:
    """The gate's verdicts on a labelled set: per action precision and recall, accuracy, refuse+confirm
    precision (a confirm of another memory than the labelled one is wrong), reasons of the right refusals."""
    confusion: Counter[tuple[str, str]] = Counter()
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    costly: list[str] = []
    reasons: Counter[str] = Counter()
    started = time.perf_counter()
    items = [json.loads(line) for line in path.read_text().splitlines()]
    for item in items:
        existing = [(f"m{i}", text) for i, text in enumerate(item["existing"])]
        verdict = Gate(existing, vectors=vectors).judge(item["candidate"])
        expected, got = item["expected"], verdict.action
        if got == expected == "confirm" and verdict.match is not None:
            matched = item["existing"][int(verdict.match[1:])]
            if matched != item["existing"][item["match"]]:
                got = "confirm-other"
        confusion[expected, got] += 1
        per_kind[item["kind"]]["right" if got == expected else "wrong"] += 1
        if got == expected == "refuse":
            reasons["same" if verdict.reason == item["reason"] else "other"] += 1
        if got != expected and got != "store" and len(costly) < 12:
            costly.append(f"{expected} -> {got} ({verdict.reason}): {item['candidate'][:90]!r}")
    seconds = time.perf_counter() - started

    def share(a: int, b: int) -> float | None:
        return a / b if b else None

    actions = {}
    for action in ACTIONS:
        said = sum(n for (_, got), n in confusion.items() if got == action or (action == "confirm"
                                                                                   and got == "confirm-other"))
        truth = sum(n for (expected, _), n in confusion.items() if expected == action)
        right = confusion[action, action]
        actions[action] = {"said": said, "expected": truth, "precision": share(right, said),
                           "recall": share(right, truth)}
    right = sum(confusion[a, a] for a in ACTIONS)
    not_stored = actions["refuse"]["said"] + actions["confirm"]["said"]
    return {"items": len(items), "accuracy": right / len(items), "actions": actions,
            "refuse_confirm_precision": share(confusion["refuse", "refuse"] + confusion["confirm", "confirm"],
                                              not_stored),
            "wrong_refusals": sum(n for (e, g), n in confusion.items() if g == "refuse" and e != "refuse"),
            "wrong_merges": sum(n for (e, g), n in confusion.items() if g.startswith("confirm") and e != g),
            "reason_agreement": share(reasons["same"], reasons["same"] + reasons["other"]),
            "per_kind": {k: dict(v) for k, v in sorted(per_kind.items())},
            "confusion": {f"{e}->{g}": n for (e, g), n in sorted(confusion.items())},
            "costly_examples": costly, "ms_per_item": seconds * 1000 / max(1, len(items))}


def gate_runs() -> dict:
    """The gate on both sets, lexical only and (when the model is installed) with local embeddings."""
    from cortex.embeddings import OnnxEmbeddings, local_available

    runs = {"tuned": gate(GATE), "held_out": gate(GATE_HELD_OUT)}
    if local_available():
        model = OnnxEmbeddings()
        vectors = _cached(lambda texts: model.embed(texts))
        runs["tuned_local"], runs["held_out_local"] = gate(GATE, vectors), gate(GATE_HELD_OUT, vectors)
    return runs



# -- transcripts: realistic Claude Code sessions ------------------------------------------------------------------

CWD = "/home/dev/shop"
_WORDS = ("order invoice customer payment cart checkout price tax shipping refund account session token user admin "
          "report export import queue worker retry timeout cache index query migration schema table column fixture "
          "mock config settings handler route service client server request response error status total discount "
          "currency batch job event webhook").split()
_MODULES = ("billing", "orders", "catalog", "accounts", "shipping", "search", "auth", "reports")
_SUBAGENTS = ("db-expert", "reviewer", "Explore")  # Explore: built in, no memory (its outcome is skipped)
#: One main-agent marker line about every this many bytes of transcript (2 a MB).
MARKER_EVERY = 500_000


class SessionWriter:
    """Writes a Claude Code (2.1.x) main transcript as its files have them, one compact JSON object a line: user
    prompts; assistant thinking, text and tool calls (Read, Bash, Grep, Edit), each line with its model, usage and
    request id; tool results with their ``toolUseResult`` copies; stop-hook system lines; and subagent calls
    (``Agent``) whose lines are sidechain lines of the same file (``isSidechain``, ``agentId``), marker lines
    included (they are the subagent's, not the main agent's). Deterministic for a seed."""

    def __init__(self, fh: Any, seed: int, session: str) -> None:
        self.fh, self.rng, self.session = fh, random.Random(seed), session
        self.parent: str | None = None
        self.size = 0
        self.lines = 0
        self.markers: list[str] = []  # the main agent's marker lines (what a capture for it stores)
        self.side_markers = 0
        self.calls = 0
        self.turns = 0
        self.clock = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
        self._next_marker = MARKER_EVERY // 2

    # -- pieces of text
    def _hex(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def _id(self, prefix: str) -> str:
        return prefix + "".join(self.rng.choice(string.ascii_letters + string.digits) for _ in range(24))

    def _w(self) -> str:
        return self.rng.choice(_WORDS)

    def _sentence(self) -> str:
        words = [self._w() for _ in range(self.rng.randint(6, 16))]
        return " ".join(words).capitalize() + "."

    def _path(self) -> str:
        return f"{self.rng.choice(_MODULES)}/{self._w()}_{self._w()}.py"

    def _code(self, lines: int) -> str:
        out = []
        for n in range(1, lines + 1):
            a, b, f = self._w(), self._w(), f"{self._w()}_{self._w()}"
            line = self.rng.choice((f"def {f}({a}, {b}=None):", f"    return {a}.{f}({b})", f"    if {a} is None:",
                                    f"        raise ValueError(\"{a} {b} is missing\")", f"from {a}.{b} import {f}",
                                    f"class {a.capitalize()}{b.capitalize()}:", f"    {a} = {b}.get(\"{f}\", {n})",
                                    f"    # {self._sentence()}", f"    for {a} in {b}s:", f"        {a}s.append({b})",
                                    f"    log.debug(\"{a} %s {b} %s\", {a}, {b})", ""))
            out.append(f"{n:>6}\t{line}")
        return "\n".join(out)

    def _pytest(self) -> str:
        lines = [f"tests/test_{self._w()}.py::test_{self._w()}_{self._w()} PASSED" for _ in range(self.rng.randint(5, 40))]
        return "\n".join(lines + [f"{len(lines)} passed in {self.rng.uniform(0.2, 30):.2f}s"])

    def _grep(self) -> str:
        return "\n".join(f"{self._path()}:{self.rng.randint(1, 400)}:    {self._w()} = {self._w()}_{self._w()}()"
                         for _ in range(self.rng.randint(3, 30)))

    def _stamp(self) -> str:
        self.clock += timedelta(milliseconds=self.rng.randint(200, 9000))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    # -- lines
    def line(self, kind: str, content: Any, *, agent: str | None = None, extra: dict | None = None) -> None:
        uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        entry: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": agent is not None, "userType": "external",
                                 "cwd": CWD, "sessionId": self.session, "version": "2.1.47", "gitBranch": "main"}
        if agent is not None:
            entry["agentId"] = agent
        if kind == "assistant":
            entry["message"] = {"model": "claude-sonnet-4-5-20250929", "id": self._id("msg_01"), "type": "message",
                                "role": "assistant", "content": content, "stop_reason": None, "stop_sequence": None,
                                "usage": {"input_tokens": 4, "cache_creation_input_tokens": self.rng.randint(0, 4000),
                                          "cache_read_input_tokens": self.rng.randint(10_000, 90_000),
                                          "output_tokens": self.rng.randint(5, 900), "service_tier": "standard"}}
            entry["requestId"] = self._id("req_011")
        elif kind == "user":
            entry["message"] = {"role": "user", "content": content}
        else:
            entry.update(content)
        entry.update(type=kind, uuid=uid, timestamp=self._stamp(), **(extra or {}))
        self.parent = uid
        data = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        self.fh.write(data)
        self.size += len(data.encode())
        self.lines += 1

    def _tool_step(self, agent: str | None = None) -> None:
        tool = self.rng.choice(("Read", "Read", "Bash", "Bash", "Grep", "Edit"))
        tool_id = self._id("toolu_01")
        path = f"{CWD}/{self._path()}"
        if tool == "Read":
            call: dict[str, Any] = {"file_path": path}
            text = self._code(self.rng.randint(40, 400))
            copy: Any = {"type": "text", "file": {"filePath": path, "content": text, "numLines": text.count("\n") + 1,
                                                  "startLine": 1, "totalLines": text.count("\n") + 1}}
        elif tool == "Bash":
            call = {"command": f"pytest tests/test_{self._w()}.py -q", "description": "Run the tests"}
            text = self._pytest()
            copy = {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
        elif tool == "Grep":
            call = {"pattern": f"{self._w()}_{self._w()}", "path": CWD, "output_mode": "content"}
            text = self._grep()
            copy = {"mode": "content", "numFiles": text.count("\n") + 1, "filenames": [], "content": text}
        else:
            old, new = self._code(3), self._code(4)
            call = {"file_path": path, "old_string": old, "new_string": new}
            text = f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet:\n{new}"
            copy = {"filePath": path, "oldString": old, "newString": new}
        self.line("assistant", [{"type": "tool_use", "id": tool_id, "name": tool, "input": call}], agent=agent)
        self.line("user", [{"tool_use_id": tool_id, "type": "tool_result", "content": text, "is_error": False}],
                  agent=agent, extra={"toolUseResult": copy})

    def _learned(self) -> str:
        n = len(self.markers) + self.side_markers
        module = self.rng.choice(_MODULES)
        return (f"LEARNED: {module}/{self._w()}_{n}.py reads {self._w().upper()}_{n} from config/{module}.toml at "
                f"import time; restart the {self._w()} worker after changing it")

    def subagent(self) -> None:
        """An ``Agent`` call, the subagent's sidechain lines (one marker line of its own), its result."""
        agent_type = self.rng.choice(_SUBAGENTS)
        tool_id, agent = self._id("toolu_01"), self._hex(7)
        task = f"Find where {self._w()} {self._w()}s are computed in {self._path()} and why {self._sentence().lower()}"
        self.line("assistant", [{"type": "tool_use", "id": tool_id, "name": "Agent", "input": {
            "description": task[:40], "prompt": task, "subagent_type": agent_type}}])
        self.line("user", task, agent=agent)
        for _ in range(self.rng.randint(1, 4)):
            self._tool_step(agent)
        self.side_markers += 1
        final = f"{self._sentence()} {self._sentence()}\n{self._learned()}"
        self.line("assistant", [{"type": "text", "text": final}], agent=agent)
        self.calls += 1
        self.line("user", [{"tool_use_id": tool_id, "type": "tool_result", "content": [
            {"type": "text", "text": final}, {"type": "text", "text": f"agentId: {agent} (for resuming)"}]}],
            extra={"toolUseResult": {"status": "completed", "agentId": agent, "totalDurationMs": 28910}})

    def turn(self) -> None:
        """A user prompt and the agent's turn: thinking, text, 2-6 tool steps, maybe a subagent, a final answer
        (a marker line about every :data:`MARKER_EVERY` bytes), the stop hook's system line."""
        self.turns += 1
        self.line("user", f"The {self.rng.choice(_MODULES)} tests fail with a {self._w()} {self._w()} error since "
                          f"the last merge. {self._sentence()} Find out why and fix it.")
        self.line("assistant", [{"type": "thinking", "thinking": " ".join(self._sentence() for _ in range(3)),
                                 "signature": self._id("Eq")}])
        self.line("assistant", [{"type": "text", "text": f"I'll look at {self._path()} first."}])
        for _ in range(self.rng.randint(2, 6)):
            self._tool_step()
        if self.turns % 6 == 0:
            self.subagent()
        final = " ".join(self._sentence() for _ in range(self.rng.randint(2, 6)))
        if self.size >= self._next_marker:
            self._next_marker += MARKER_EVERY
            marker = self._learned()
            self.markers.append(marker[len("LEARNED: "):])
            final += f"\n\n{marker}"
        self.line("assistant", [{"type": "text", "text": final}])
        self.line("system", {"subtype": "stop_hook_summary", "hookCount": 1, "hookErrors": [],
                             "preventedContinuation": False, "level": "suggestion"})


def write_session(path: Path, size: int, seed: int, session: str) -> SessionWriter:
    """A Claude Code main transcript of about ``size`` bytes."""
    with open(path, "w", encoding="utf-8") as fh:
        writer = SessionWriter(fh, seed, session)
        fh.write(json.dumps({"type": "summary", "summary": "Fix the failing tests", "leafUuid": str(uuid.uuid4())}) + "\n")
        while writer.size < size:
            writer.turn()
    return writer


def transcript_capture(root: Path, sizes_mb: Sequence[float]) -> dict:
    """``capture_transcript`` without a model on a fresh on-disk store, per transcript size: the first capture,
    a second one (nothing new), and the transcript reader alone on the same file, in the same run."""
    from cortex import Cortex
    from cortex import provenance
    from cortex.capture.transcripts import read

    out: dict[str, Any] = {}
    for mb in sizes_mb:
        session = str(uuid.UUID(int=int(mb * 1000), version=4))
        path = root / f"session-{mb:g}mb.jsonl"
        writer = write_session(path, int(mb * 1e6), seed=int(mb * 1000), session=session)
        size = path.stat().st_size
        reads = []
        for _ in range(2):  # the first read warms nothing the capture would not have (the file was just written)
            t0 = time.perf_counter()
            transcript = read(path)
            reads.append(time.perf_counter() - t0)
        messages = len(transcript.messages)
        del transcript
        with Cortex.open(root / f"store-{mb:g}", embeddings=None) as cx:
            assert isinstance(cx, Cortex)  # a fresh store: no server owns it
            cx.llm = None
            for name in ("lead", "db-expert", "reviewer"):
                cx.agents.register(name)
            cx.store_many("lead", [{"content": f"The {m} service reads its settings from config/{m}.toml"}
                                   for m in _MODULES])
            with provenance.activity(session=session):  # the session was shown a block (its SessionStart)
                cx.agent_start("lead", "fix the failing tests")
            t0 = time.perf_counter()
            report = cx.capture_transcript("lead", path)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = cx.capture_transcript("lead", path)
            second = time.perf_counter() - t0
        stored = sorted(m.content for m in report.stored)
        assert stored == sorted(writer.markers), (len(stored), len(writer.markers))
        assert again.stored == [] and again.tasks == [], again
        out[f"{mb:g}"] = {
            "bytes": size, "lines": writer.lines, "turns": writer.turns, "messages": messages, "subagent_calls": writer.calls,
            "markers": len(writer.markers), "sidechain_markers": writer.side_markers,
            "stored": len(report.stored), "tasks": len(report.tasks), "used": len(report.used),
            "problems": len(report.problems), "read_s": min(reads), "read_mb_per_s": size / 1e6 / min(reads),
            "capture_s": first, "capture_mb_per_s": size / 1e6 / first, "ratio_to_read": first / min(reads),
            "second_s": second, "second_stored": len(again.stored)}
        path.unlink()
    return out


# -- the capture queue and the hooks, with a real server and the local stand-in model ---------------------------

AGENT_MD = "---\nname: {name}\ndescription: {name} of the shop project\nmemory: true\n---\nYou are {name}.\n"


def _project(root: Path, agents: Sequence[str]) -> Path:
    """A project (a ``.git`` marker, agent definitions in ``agent_defs/``) whose store is ``.cortex/store``."""
    (root / ".git").mkdir(parents=True)
    (root / "agent_defs").mkdir()
    for name in agents:
        (root / "agent_defs" / f"{name}.md").write_text(AGENT_MD.format(name=name))
    return root


def _env(**extra: str) -> dict[str, str]:
    """This process's environment as a user's shell has it (bytecode caches written; no store, token or model
    settings of ours), with ``extra``."""
    drop = ("CORTEX_STORE", "CORTEX_TOKEN", "CORTEX_EMBEDDINGS", "PYTHONDONTWRITEBYTECODE", "CORTEX_LLM_URL",
            "CORTEX_LLM_MODEL", "CORTEX_LLM_API_KEY", "CORTEX_LLM_TIMEOUT")
    return {k: v for k, v in os.environ.items() if k not in drop} | extra


class _Server:
    """``cortex serve --port 0`` in a project (its log in the project's ``server.log``), once it answers."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.log = open(project / "server.log", "ab")
        self.process = subprocess.Popen([sys.executable, "-m", "cortex", "serve", "--port", "0"], cwd=project,
                                        env=env, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        discovery = project / ".cortex" / "store" / "cortex-server.json"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}): see {project / 'server.log'}")
            try:
                info = json.loads(discovery.read_text())
                if info["pid"] == self.process.pid and httpx.get(f"{info['url']}/healthz").status_code == 200:
                    self.url = info["url"]
                    self.client = httpx.Client(base_url=info["url"], timeout=60,
                                               headers={"Authorization": f"Bearer {info['token']}"})
                    return
            except (OSError, ValueError, KeyError, httpx.HTTPError):
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("the server did not start")

    def queue(self) -> dict:
        return self.client.get("/v1/capture/queue").raise_for_status().json()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if hasattr(self, "client"):
            self.client.close()
        self.log.close()


def _small_session(path: Path, n: int, agent: str) -> int:
    """A short Claude Code session for the queue: a prompt, tool calls and answers, ``LESSON:`` lines in the
    middle of the agent's messages (the stand-in proposes each as a learning). Returns the lessons written."""
    module = _MODULES[n % len(_MODULES)]
    lessons = [f"The {module} worker reads {module.upper()}_BATCH_{n} from config/{module}.toml at startup; restart "
               f"it after changing the value",
               f"Run tests/test_{module}_{n}.py with --randomly-seed=1234: test order leaks {module} fixtures"]
    with open(path, "w", encoding="utf-8") as fh:
        writer = SessionWriter(fh, n, f"queue-{agent}-{n}")
        writer.line("user", f"The {module} batch job fails on staging since the last deploy. Find out why.")
        writer.line("assistant", [{"type": "text", "text": f"I'll look at {module}/worker.py and its config."}])
        writer._tool_step()
        writer.line("assistant", [{"type": "text", "text": f"Found it: the batch size is read once.\nLESSON: "
                                   f"{lessons[0]}\nI'll now fix the reload."}])
        writer._tool_step()
        writer.line("assistant", [{"type": "text", "text": f"Fixed and tested.\nLESSON: {lessons[1]}\nAll green."}])
    return len(lessons)


def queue_throughput(root: Path, jobs: int, delay: float) -> dict:
    """``jobs`` transcripts POSTed with ``wait: false`` to a real server whose model is the stand-in (answering
    after ``delay`` seconds), then ``GET /v1/capture/queue`` polled until the queue drained: jobs a second, the
    model's requests, what was stored."""
    from cortex import Cortex
    from cortex.model import Source
    from tests.llm_standin import Delay, StandIn

    agents = ("lead", "db-expert", "reviewer", "frontend", "ops")
    project = _project(root / f"queue-{delay:g}", agents)
    sessions = project / "sessions"
    sessions.mkdir()
    lessons = 0
    paths = []
    for n in range(jobs):
        agent = agents[n % len(agents)]
        path = sessions / f"{agent}-{n}.jsonl"
        lessons += _small_session(path, n, agent)
        paths.append((agent, path))
    with StandIn() as llm:
        if delay:
            llm.script(*[Delay(delay)] * (2 * jobs + 10))
        server = _Server(project, _env(CORTEX_EMBEDDINGS="none", CORTEX_LLM_URL=llm.url,
                                       CORTEX_LLM_MODEL="stand-in"))
        try:
            t0 = time.perf_counter()
            for agent, path in paths:
                answer = server.client.post(f"/v1/agents/{agent}/transcripts", json={"path": str(path), "wait": False})
                assert answer.status_code == 202 and answer.json()["queued"], answer.text
            posted = time.perf_counter() - t0
            deadline = time.monotonic() + 60 + 4 * jobs * delay
            while time.monotonic() < deadline:
                status = server.queue()
                if not status["waiting"] and not status["running"] and status["done"] + status["failed"] >= jobs:
                    break
                time.sleep(0.02)
            seconds = time.perf_counter() - t0
        finally:
            server.stop()
        requests = len(llm.requests)
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        memories = [m for a in agents for m in cx.list_memories(a, limit=1000).items]
    return {"jobs": jobs, "delay_s": delay, "seconds": seconds, "jobs_per_s": jobs / seconds,
            "post_ms": posted * 1000 / jobs, "done": status["done"], "failed": status["failed"],
            "model_requests": requests, "model_floor_s": requests * delay,
            "lessons": lessons, "stored": sum(m.source is Source.AGENT_END for m in memories),
            "summaries": sum(m.source is Source.SESSION_SUMMARY for m in memories)}


HOOK_EVENTS = ("Stop", "SubagentStop", "SessionEnd")


class _HookSession:
    """A Claude Code session the hooks are run for, as Claude Code runs them: transcripts under
    ``$CLAUDE_CONFIG_DIR/projects/``, the payloads it sends, one ``python -m cortex hook claude EVENT`` process per
    event, timed from its start to its exit."""

    def __init__(self, root: Path, project: Path, name: str) -> None:
        self.project, self.session = project, f"hooks-{name}"
        self.claude = root / "claude"
        self.main = self.claude / "projects" / "shop" / f"{self.session}.jsonl"
        self.main.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.main, "a", encoding="utf-8")
        self.writer = SessionWriter(self.fh, zlib.crc32(name.encode()), self.session)
        self.subagents = 0

    def run(self, event: str, env: dict[str, str], agent: str | None = "lead", **payload: Any) -> tuple[float, str]:
        body = {"session_id": self.session, "transcript_path": str(self.main), "cwd": str(self.project),
                "permission_mode": "default", "hook_event_name": event, **payload}
        args = [sys.executable, "-m", "cortex", "hook", "claude", event, *(["--agent", agent] if agent else [])]
        t0 = time.perf_counter()
        done = subprocess.run(args, input=json.dumps(body), capture_output=True, text=True, cwd=self.project,
                              env=env | {"CLAUDE_CONFIG_DIR": str(self.claude)}, timeout=120)
        elapsed = time.perf_counter() - t0
        assert done.returncode == 0, done.stderr
        return elapsed, done.stdout

    def start(self, env: dict[str, str]) -> None:
        """SessionStart: the block shown (the Stop hooks then report what the session used of it)."""
        _, out = self.run("SessionStart", env, source="startup")
        assert "additionalContext" in out, out

    def event(self, event: str, env: dict[str, str]) -> float:
        """A turn of the session written to its transcript, then ``event``'s hook: Stop after a main turn,
        SubagentStop after a subagent ran (its own transcript, the parent's Agent call), SessionEnd at the end."""
        self.writer.turn()
        self.fh.flush()
        if event == "Stop":
            return self.run("Stop", env, stop_hook_active=False)[0]
        if event == "SessionEnd":
            return self.run("SessionEnd", env, reason="prompt_input_exit")[0]
        self.subagents += 1
        agent_id = f"b{self.subagents:06x}"
        task = f"Check the {_MODULES[self.subagents % len(_MODULES)]} migration for a missing index"
        self.writer.line("assistant", [{"type": "tool_use", "id": f"toolu_sub{self.subagents}", "name": "Agent",
                                        "input": {"description": task[:40], "prompt": task,
                                                  "subagent_type": "db-expert"}}])
        self.fh.flush()
        own = self.main.parent / self.session / "subagents" / f"agent-{agent_id}.jsonl"
        own.parent.mkdir(parents=True, exist_ok=True)
        with open(own, "w", encoding="utf-8") as fh:
            sub = SessionWriter(fh, self.subagents, self.session)
            sub.line("user", task, agent=agent_id)
            for _ in range(3):
                sub._tool_step(agent_id)
            final = (f"The migration lacks an index on orders.customer_id; added it.\n"
                     f"LEARNED: orders migrations need CREATE INDEX CONCURRENTLY on orders.customer_id_{agent_id}")
            sub.line("assistant", [{"type": "text", "text": final}], agent=agent_id)
        return self.run("SubagentStop", env, agent=None, agent_id=agent_id, agent_type="db-expert",
                        agent_transcript_path=str(own), last_assistant_message=final, stop_hook_active=False)[0]

    def close(self) -> None:
        self.fh.close()


def _detached_captures(marker: str) -> list[int]:
    """The ids of the ``cortex capture`` processes the hooks started for this run's transcripts (their command line
    names ``marker``, a path of this run): waited for, never stopped."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"capture" in args and any(marker.encode() in a for a in args):
                found.append(int(proc.name))
    return found


def _wait_detached(marker: str, timeout: float = 120) -> float:
    t0 = time.perf_counter()
    while _detached_captures(marker) and time.perf_counter() - t0 < timeout:
        time.sleep(0.05)
    return time.perf_counter() - t0


def hook_latency(root: Path, runs: int, runs_without_server: int, delay: float) -> dict:
    """Stop, SubagentStop and SessionEnd hooks as processes, each after a turn written to its transcript, without
    a model configured (the baseline) and with one (``CORTEX_LLM_URL``: SubagentStop and SessionEnd have the
    model's part captured later), alternating, in the same run; against a running server (the stand-in answers
    after ``delay`` seconds: a hook that waited for it would show it), then without a server (the hook starts a
    detached ``cortex capture``: each hook is timed alone, after the captures started before it finished)."""
    from tests.llm_standin import Delay, StandIn

    project = _project(root / "hooks", ("lead", "db-expert"))
    from cortex import Cortex

    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        for name in ("lead", "db-expert"):
            cx.store_many(name, [{"content": f"The {m} tests need the {m}_fixture database from "
                                             f"tests/{m}/conftest.py"} for m in _MODULES])
    python = [_time_process([sys.executable, "-c", "pass"], project) for _ in range(max(runs, 10))]
    out: dict[str, Any] = {"python_start": _spread(python), "delay_s": delay}
    with StandIn() as llm:
        llm.script(*[Delay(delay)] * 10_000)
        base = _env(CORTEX_EMBEDDINGS="none")
        with_llm = base | {"CORTEX_LLM_URL": llm.url, "CORTEX_LLM_MODEL": "stand-in"}
        modes = {"no_llm": base, "llm": with_llm}
        # against a running server (whose queue asks the slow stand-in)
        server = _Server(project, with_llm)
        times: dict[str, dict[str, list[float]]] = {m: {e: [] for e in HOOK_EVENTS} for m in modes}
        try:
            sessions = {m: _HookSession(root, project, f"server-{m}") for m in modes}
            for m, s in sessions.items():
                s.start(modes[m])
            for i in range(runs):
                for event in HOOK_EVENTS:
                    for m in (("no_llm", "llm") if i % 2 == 0 else ("llm", "no_llm")):
                        times[m][event].append(sessions[m].event(event, modes[m]))
            queue = server.queue()
        finally:
            server.stop()
            for s in sessions.values():
                s.close()
        out["server"] = {m: {e: _spread(t) for e, t in by.items()} for m, by in times.items()}
        out["server_queue"] = queue
        out["server_model_requests"] = len(llm.requests)
        # without a server: the hook opens the store itself, and with a model starts `cortex capture` detached
        marker = str(root / "claude")
        times = {m: {e: [] for e in HOOK_EVENTS} for m in modes}
        waited = []
        sessions = {m: _HookSession(root, project, f"alone-{m}") for m in modes}
        try:
            for m, s in sessions.items():
                s.start(modes[m])
            for i in range(runs_without_server):
                for event in HOOK_EVENTS:
                    for m in (("no_llm", "llm") if i % 2 == 0 else ("llm", "no_llm")):
                        times[m][event].append(sessions[m].event(event, modes[m]))
                        waited.append(_wait_detached(marker))
            # the next hook while a detached capture still waits for the model: it needs the store too
            sessions["llm"].event("SubagentStop", with_llm)
            t0 = time.perf_counter()
            while not _detached_captures(marker) and time.perf_counter() - t0 < 5:
                time.sleep(0.01)
            time.sleep(0.5)  # the capture has opened the store and asks the model
            contended = sessions["llm"].event("Stop", with_llm)
            _wait_detached(marker)
        finally:
            for s in sessions.values():
                s.close()
        out["alone"] = {m: {e: _spread(t) for e, t in by.items()} for m, by in times.items()}
        out["alone_detached_wait_s"] = max(waited) if waited else 0.0
        out["alone_next_hook_during_capture_ms"] = contended * 1000
        out["alone_model_requests"] = len(llm.requests) - out["server_model_requests"]
    log = project / ".cortex" / "logs" / "hooks.log"
    problems = log.read_text().splitlines() if log.exists() else []
    out["hook_log_lines"], out["hook_log_examples"] = len(problems), problems[:5]
    return out


def _time_process(args: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=_env(), check=True, capture_output=True)
    return time.perf_counter() - t0


# -- the "used" signal on recorded sessions ------------------------------------------------------------------------

#: The used signal's labelled sets (bench/data/make_usage_set.py): tuned on, and written after.
USAGE = Path(__file__).parent / "data" / "usage.jsonl"
USAGE_HELD_OUT = Path(__file__).parent / "data" / "usage_heldout.jsonl"


def usage_signal(path: Path) -> dict:
    """``drawn_on`` on a labelled set: per shown memory, whether the output drew on it. Precision and recall of
    "used", per kind of item (a near-miss kind has no used memory: its errors are false positives), the rule that
    fired for each detection, and the errors."""
    from cortex.capture.usage import drawn_on

    counts: Counter[str] = Counter()
    per_kind: dict[str, Counter[str]] = defaultdict(Counter)
    why: Counter[str] = Counter()
    errors: list[str] = []
    items = [json.loads(line) for line in path.read_text().splitlines()]
    started = time.perf_counter()
    for item in items:
        found = dict(drawn_on([(i, c) for i, c in item["memories"]], item["output"]))
        per_kind[item["kind"]]["items"] += 1
        for memory_id, content in item["memories"]:
            truth, got = memory_id in item["used"], memory_id in found
            outcome = "tp" if truth and got else "fp" if got else "fn" if truth else "tn"
            counts[outcome] += 1
            per_kind[item["kind"]][outcome] += 1
            if got:
                why[f"{found[memory_id]} ({'right' if truth else 'wrong'})"] += 1
            if outcome in ("fp", "fn") and len(errors) < 20:
                errors.append(f"{outcome} {item['kind']} {item['session']}"
                              f"{' (' + found[memory_id] + ')' if got else ''}: {content[:80]!r}")
    seconds = time.perf_counter() - started

    def share(a: int, b: int) -> float | None:
        return a / b if b else None

    return {"items": len(items), "shown": sum(counts.values()), "used": counts["tp"] + counts["fn"],
            "precision": share(counts["tp"], counts["tp"] + counts["fp"]),
            "recall": share(counts["tp"], counts["tp"] + counts["fn"]), "counts": dict(counts),
            "per_kind": {k: dict(v) for k, v in sorted(per_kind.items())}, "rules": dict(why), "errors": errors,
            "ms_per_item": seconds * 1000 / max(1, len(items))}


def _spread(samples: Sequence[float]) -> dict:
    """Median, 90th percentile and maximum in milliseconds."""
    ms = sorted(s * 1000 for s in samples)
    return {"median_ms": statistics.median(ms), "p90_ms": ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))],
            "max_ms": ms[-1], "n": len(ms)}


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def redaction_section(results: dict) -> None:
    redactor = Redactor()
    results.update({"labelled": labelled(redactor), "labelled_held_out": labelled(redactor, HELD_OUT),
                    "real": real_text(redactor, conversations()), "held_out": real_text(redactor, held_out())})
    rows = []
    for kind, c in sorted(results["labelled"]["per_kind"].items()):
        secrets = c.get("caught", 0) + c.get("missed", 0)
        rows.append((kind, str(c["items"]), _ratio(c.get("caught", 0), secrets),
                     _ratio(c.get("true_spans", 0), c.get("true_spans", 0) + c.get("false_spans", 0)),
                     str(c.get("false_spans", 0))))
    t = results["labelled"]["total"]
    recall = t.get("caught", 0) / (t.get("caught", 0) + t.get("missed", 0))
    precision = t.get("true_spans", 0) / (t.get("true_spans", 0) + t.get("false_spans", 0))
    rows.append(("all", str(t["items"]), f"{recall:.3f}", f"{precision:.3f}", str(t.get("false_spans", 0))))
    results["precision"], results["recall"] = precision, recall
    print_table("Redaction on the labelled set (bench/data/redaction.jsonl)", rows,
                ("kind", "items", "recall", "precision", "false spans"))
    for example in results["labelled"]["false_examples"]:
        print("  false:", example)
    h = results["labelled_held_out"]["total"]
    results["held_out_recall"] = h.get("caught", 0) / max(1, h.get("caught", 0) + h.get("missed", 0))
    results["held_out_precision"] = h.get("true_spans", 0) / max(1, h.get("true_spans", 0) + h.get("false_spans", 0))
    missed = {k: c.get("missed", 0) for k, c in results["labelled_held_out"]["per_kind"].items() if c.get("missed")}
    print_table("Held-out labelled set (bench/data/redaction_heldout.jsonl: never used to tune the rules)", [
        (str(h["items"]), f"{results['held_out_recall']:.3f}", f"{results['held_out_precision']:.3f}",
         str(h.get("false_spans", 0)), ", ".join(f"{k} {n}" for k, n in sorted(missed.items())) or "-")],
        ("items", "recall", "precision", "false spans", "missed by kind"))
    for example in results["labelled_held_out"]["false_examples"]:
        print("  false:", example)
    rows = [(name, f"{r['turns']:,} turns, {r['mb']:.1f} MB", str(sum(r["redactions"].values())),
             f"{r['per_mb']:.2f}", f"{r['mb_per_s']:.1f}")
            for name, r in (("tuned on", results["real"]), ("held out", results["held_out"]))]
    print_table("Redaction of real conversations (no credentials in them: every redaction is a false one)", rows,
                ("set", "text", "redactions", "per MB", "MB/s"))
    for example in results["real"]["examples"] + results["held_out"]["examples"]:
        print("  false:", example)


def gate_section(results: dict) -> None:
    results["gate"] = gate_runs()
    names = {"tuned": "tuned on (gate.jsonl)", "held_out": "held out (gate_heldout.jsonl)",
             "tuned_local": "tuned on, local vectors", "held_out_local": "held out, local vectors"}
    rows = []
    for name, r in results["gate"].items():
        a = r["actions"]
        rows.append((names[name], str(r["items"]), _fmt(r["accuracy"]),
                     *(f"{_fmt(a[x]['precision'])} / {_fmt(a[x]['recall'])}" for x in ACTIONS),
                     _fmt(r["refuse_confirm_precision"]), f"{r['wrong_refusals']} / {r['wrong_merges']}",
                     _fmt(r["reason_agreement"])))
    print_table("Quality gate on its labelled sets (bench/data/gate*.jsonl)", rows,
                ("set", "items", "accuracy", "store P / R", "confirm P / R", "refuse P / R",
                 "refuse+confirm P", "wrong refusals / merges", "reasons"))
    for name, r in results["gate"].items():
        for example in r["costly_examples"]:
            print(f"  {name}: {example}")


def transcripts_section(results: dict, sizes: Sequence[float]) -> None:
    import cortex.capture.checkpoints  # noqa: F401 - imported before the clock starts, as in a server
    import cortex.capture.gate  # noqa: F401
    import cortex.capture.session  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp:
        results["transcripts"] = r = transcript_capture(Path(tmp), sizes)
    rows = [(f"{x['bytes'] / 1e6:.1f} MB", f"{x['lines']:,} lines, {x['messages']:,} messages",
             f"{x['markers']} / {x['sidechain_markers']} / {x['subagent_calls']}",
             f"{x['read_s']:.3f} s ({x['read_mb_per_s']:.0f} MB/s)",
             f"{x['capture_s']:.3f} s ({x['capture_mb_per_s']:.0f} MB/s)", f"{x['ratio_to_read']:.1f}x",
             f"{x['stored']} / {x['tasks']} / {x['used']}", f"{x['second_s'] * 1000:.1f} ms ({x['second_stored']})")
            for x in r.values()]
    print_table("Transcript capture without a model (Claude Code JSONL, a fresh on-disk store, the session shown a "
                "block of 8 memories)", rows,
                ("transcript", "content", "markers main / sidechain / subagent calls", "reader alone",
                 "capture_transcript", "capture / read", "stored / tasks / used", "second run (stored)"))


def queue_section(results: dict, jobs: int, delayed_jobs: int, delay: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = {"immediate": queue_throughput(Path(tmp), jobs, 0.0)}
        if delayed_jobs:
            runs["delayed"] = queue_throughput(Path(tmp), delayed_jobs, delay)
    results["queue"] = runs
    rows = [(f"{r['delay_s']:g} s", str(r["jobs"]), f"{r['post_ms']:.1f}", f"{r['seconds']:.2f}",
             f"{r['jobs_per_s']:.2f}", f"{r['seconds'] * 1000 / r['jobs']:.0f}",
             f"{r['model_requests']} ({r['model_floor_s']:.1f} s)", f"{r['done']} / {r['failed']}",
             f"{r['stored']} of {r['lessons']} / {r['summaries']}")
            for r in runs.values()]
    print_table("The capture queue of a real server (cortex serve, POST /transcripts wait=false, the local stand-in "
                "as the model)", rows,
                ("stand-in delay", "jobs", "POST ms/job", "drained in s", "jobs/s", "ms/job",
                 "model requests (their delay)", "done / failed", "learnings stored / summaries"))


def hooks_section(results: dict, runs: int, runs_alone: int, delay: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results["hooks"] = h = hook_latency(Path(tmp), runs, runs_alone, delay)
    base = h["python_start"]["median_ms"]
    rows = []
    for where, factor in (("server", 3), ("alone", 5)):
        for event in HOOK_EVENTS:
            off, on = h[where]["no_llm"][event], h[where]["llm"][event]
            rows.append((f"{event}, {'server running' if where == 'server' else 'no server'}",
                         f"{off['median_ms']:.0f} / {off['p90_ms']:.0f}", f"{on['median_ms']:.0f} / {on['p90_ms']:.0f}",
                         f"{on['median_ms'] - off['median_ms']:+.0f}", f"{on['max_ms']:.0f}",
                         f"{off['median_ms'] / base:.1f}x / {on['median_ms'] / base:.1f}x",
                         f"<= {factor}x ({factor * base:.0f} ms)"))
    print_table(f"Hook latency (python -m cortex hook claude EVENT, a process each, after a turn written to the "
                f"transcript; python -c pass: {base:.0f} ms median; the stand-in answers after {delay:g} s)", rows,
                ("hook", "no model: median / p90 ms", "CORTEX_LLM_URL set: median / p90", "added ms (median)",
                 "max ms (model set)", "median / python", "target (bench/service.py)"))
    q = h["server_queue"]
    print(f"  server: the queue after the hooks: {q['waiting']} waiting, running {q['running']}, {q['done']} done; the "
          f"stand-in got {h['server_model_requests']} requests meanwhile (the hooks did not wait for them)")
    print(f"  no server: each hook timed alone (the detached `cortex capture` it started waited for, up to "
          f"{h['alone_detached_wait_s']:.1f} s; {h['alone_model_requests']} model requests); a Stop hook run while "
          f"such a capture waits for the model took {h['alone_next_hook_during_capture_ms']:.0f} ms")
    print(f"  hooks.log: {h['hook_log_lines']} lines" + "".join(f"\n    {x}" for x in h["hook_log_examples"]))


def usage_section(results: dict) -> None:
    runs = {"tuned": usage_signal(USAGE), "held_out": usage_signal(USAGE_HELD_OUT)}
    results["usage"] = runs
    rows = []
    for name, label in (("tuned", "tuned on (usage.jsonl)"), ("held_out", "held out (usage_heldout.jsonl)")):
        r = runs[name]
        c = r["counts"]
        rows.append((label, str(r["items"]), f"{r['shown']} / {r['used']}", _fmt(r["precision"]), _fmt(r["recall"]),
                     f"{c.get('tp', 0)} / {c.get('fp', 0)} / {c.get('fn', 0)}", f"{r['ms_per_item']:.2f}"))
    print_table('The "used" signal on recorded sessions (cortex.capture.usage.drawn_on, per shown memory)', rows,
                ("set", "items", "memories shown / used", "precision", "recall", "TP / FP / FN", "ms/item"))
    kinds = sorted(set(runs["tuned"]["per_kind"]) | set(runs["held_out"]["per_kind"]))
    rows = []
    for kind in kinds:
        cells = []
        for name in ("tuned", "held_out"):
            c = runs[name]["per_kind"].get(kind)
            cells.append("-" if c is None else f"{c['items']}: {c.get('tp', 0)} / {c.get('fp', 0)} / {c.get('fn', 0)}")
        rows.append((kind, *cells))
    print_table("  by kind of item (items: TP / FP / FN; near-miss kinds have no used memory)", rows,
                ("kind", "tuned", "held out"))
    for name in ("tuned", "held_out"):
        for error in runs[name]["errors"]:
            print(f"  {name}: {error}")


# -- Markdown notes ------------------------------------------------------------------------------------


def _notes_file(rng: random.Random, n: int) -> str:
    topics = ["Deploy", "Testing", "Database", "CI", "Conventions", "Decisions", "Gotchas"]
    parts = [f"# Notes {n}\n", f"Project notes file {n}: {' '.join(rng.choice(WORDS) for _ in range(20))}\n"]
    for topic in rng.sample(topics, 5):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(25, 60)))
        parts.append(f"## {topic}\n\n{body}. Port {rng.randint(1000, 9999)}, flag --{rng.choice(WORDS)}.\n")
    return "\n".join(parts)


WORDS = ("cache build deploy staging runner pytest fixture schema migration index lockfile pnpm docker compose "
         "token retry backoff queue worker release tag branch review flaky timeout config secret vault proxy "
         "header route handler service client server replica shard partition").split()


def notes_sync(root: Path, files: int, changed: int) -> dict:
    """A first sync of ``files`` notes files, a sync with nothing changed, and one after ``changed`` files changed
    (on an on-disk store without embeddings); the reader and chunker alone as the baseline of the same run."""
    from cortex import Cortex
    from cortex.capture import notes

    project = _project(root, ["dev"])
    directory = project / ".cortex" / "notes" / "dev"
    directory.mkdir(parents=True)
    rng = random.Random(7)
    for n in range(files):
        (directory / f"note-{n:04d}.md").write_text(_notes_file(rng, n))
    t0 = time.perf_counter()
    chunk_count = sum(len(notes.chunks(notes.read_text(p))) for p in sorted(directory.glob("*.md")))
    parse_s = time.perf_counter() - t0
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        t0 = time.perf_counter()
        first = cx.sync_notes("dev")[0]
        first_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        idle = cx.sync_notes("dev")[0]
        idle_s = time.perf_counter() - t0
        for n in rng.sample(range(files), changed):
            path = directory / f"note-{n:04d}.md"
            path.write_text(path.read_text().replace("## Testing", "## Testing\n\nChanged: run the suite twice.", 1)
                            + "\n## Added\n\nA new section.\n")
        t0 = time.perf_counter()
        incremental = cx.sync_notes("dev")[0]
        incremental_s = time.perf_counter() - t0
    return {"files": files, "chunks": chunk_count, "parse_s": parse_s, "first_s": first_s,
            "first_added": len(first.added), "files_per_s": files / first_s, "idle_s": idle_s,
            "idle_unchanged": idle.unchanged, "changed_files": changed, "incremental_s": incremental_s,
            "incremental_added": len(incremental.added), "incremental_updated": len(incremental.updated),
            "ratio_first_to_parse": first_s / parse_s}


def watcher_latency(root: Path, runs: int) -> dict:
    """From writing a notes file to its text being recalled through the server that watches the directory;
    the recall round trip alone as the baseline."""
    project = _project(root, ["dev"])
    (project / ".cortex" / "notes" / "dev").mkdir(parents=True)
    server = _Server(project, _env(CORTEX_EMBEDDINGS="none"))
    try:
        url = "/v1/agents/dev/memories"
        http = server.client
        if True:
            latencies, rounds = [], []
            for n in range(runs):
                word = f"zq{n}x{random.randrange(10**6)}"
                t0 = time.perf_counter()
                http.get(url, params={"query": "nothing-like-this"})
                rounds.append(time.perf_counter() - t0)
                path = project / ".cortex" / "notes" / "dev" / f"run-{n}.md"
                t0 = time.perf_counter()
                path.write_text(f"## Run {n}\n\nThe marker word is {word}.\n")
                while time.perf_counter() - t0 < 30:
                    if http.get(url, params={"query": word}).json():
                        break
                    time.sleep(0.01)
                latencies.append(time.perf_counter() - t0)
    finally:
        server.stop()
    return {"runs": runs, "write_to_recall": _spread(latencies), "recall_round_trip": _spread(rounds)}


def notes_section(results: dict, files: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sync = notes_sync(Path(tmp) / "sync", files, max(1, files // 100))
        watch = watcher_latency(Path(tmp) / "watch", runs)
    results["notes"] = {"sync": sync, "watcher": watch}
    print_table(f"Markdown notes: {sync['files']} files, {sync['chunks']} sections (on-disk store, no embeddings)", [
        ("read and chunk alone", f"{sync['parse_s']:.2f} s", ""),
        ("first sync", f"{sync['first_s']:.2f} s", f"{sync['first_added']} memories, {sync['files_per_s']:.0f} files/s, "
                                                     f"{sync['ratio_first_to_parse']:.0f}x the reading"),
        ("sync, nothing changed", f"{sync['idle_s']:.2f} s", f"{sync['idle_unchanged']} unchanged"),
        (f"sync, {sync['changed_files']} files changed", f"{sync['incremental_s']:.2f} s",
         f"{sync['incremental_added']} added, {sync['incremental_updated']} superseded"),
    ], ("operation", "time", "result"))
    w, r = watch["write_to_recall"], watch["recall_round_trip"]
    print_table(f"The watcher: a notes file written, until recall finds it ({watch['runs']} runs, settle "
                f"{0.3:.1f} s)", [
        ("write to recall", _fmt(w["median_ms"]), _fmt(w["p90_ms"]), _fmt(w["max_ms"])),
        ("recall round trip alone", _fmt(r["median_ms"]), _fmt(r["p90_ms"]), _fmt(r["max_ms"])),
    ], ("", "median ms", "p90 ms", "max ms"))


# -- importers from other memory systems ----------------------------------------------------------------

def importer_files(root: Path, n: int) -> dict[str, tuple[Path, int]]:
    """A generated file of about ``n`` items in each system's format: its path and the memories it should give."""
    import hashlib

    from _common import Corpus
    from cortex.importers.beads import encode, key_of

    texts = Corpus(seed=11).contents(n)
    rng = random.Random(11)
    start = datetime(2026, 3, 1, tzinfo=timezone.utc).timestamp()
    files: dict[str, tuple[Path, int]] = {}
    kinds = ("learned", "decision", "fact", "pattern", "investigation")
    path = root / "beads" / "knowledge.jsonl"
    path.parent.mkdir(parents=True)
    with open(path, "w", encoding="utf-8") as fh:
        for i, text in enumerate(texts):
            kind = kinds[i % len(kinds)]
            words = [w.strip(".").lower() for w in text.split()[1:4]]
            fh.write(encode({"key": f"{key_of(kind, text)}-{i}", "type": kind, "content": text,
                             "source": rng.choice(("user", "supervisor")), "tags": [kind, *words[:2]],
                             "ts": int(start) + 60 * i, "bead": f"shop-{i // 20:03x}"}) + "\n")
    files["beads"] = (path, n)
    items = []
    for i, text in enumerate(texts):
        made = datetime.fromtimestamp(start + 60 * i, timezone.utc).isoformat()
        items.append({"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "memory": text,
                      "hash": hashlib.md5(text.encode()).hexdigest(),
                      "metadata": {"category": rng.choice(("convention", "preference", "infrastructure"))}
                      if i % 3 else None, "created_at": made, "updated_at": made, "user_id": "dev"})
    path = root / "mem0" / "get_all.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"results": items}, indent=2), encoding="utf-8")
    files["mem0"] = (path, n)
    entities = n // 5
    lines = [json.dumps({"type": "entity", "name": f"component-{e}", "entityType": rng.choice(("service", "module",
                                                                                              "person", "project")),
                         "observations": texts[5 * e:5 * e + 5]}, separators=(",", ":")) for e in range(entities)]
    lines += [json.dumps({"type": "relation", "from": f"component-{e}", "to": f"component-{rng.randrange(entities)}",
                          "relationType": rng.choice(("depends_on", "calls", "maintains", "owns"))},
                         separators=(",", ":")) for e in range(entities)]
    path = root / "mcp-memory" / "memory.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines), encoding="utf-8")  # as the server writes it: no newline at the end
    files["mcp-memory"] = (path, 5 * entities)
    path = root / "claude" / "CLAUDE.md"
    path.parent.mkdir()
    path.write_text("# Project\n\n" + "".join(f"## Topic {i}\n\n{text}\n\n" for i, text in enumerate(texts)),
                    encoding="utf-8")
    files["claude"] = (path, n)
    return files


def importer_rates(root: Path, n: int) -> dict:
    """Each importer on its generated file, a fresh on-disk store each (no embeddings): the dry run, the import, the
    import again; the Beads export; the Beads import with the local model when installed."""
    from cortex import Cortex
    from cortex.embeddings import local_available

    files = importer_files(root / "files", n)
    out: dict[str, Any] = {}
    for system, (path, expected) in files.items():
        with Cortex.open(root / f"store-{system}", embeddings=None) as cx:
            assert isinstance(cx, Cortex)
            cx.agents.register("dev")
            t0 = time.perf_counter()
            dry = cx.import_from(system, path, agent="dev", dry_run=True)
            dry_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            report = cx.import_from(system, path, agent="dev")
            import_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = cx.import_from(system, path, agent="dev")
            again_s = time.perf_counter() - t0
            memories = sum(1 for i in report.imported if i.kind == "memory")
            assert memories == expected == cx.count("dev") and not report.failed, (system, memories, report.failed[:3])
            assert again.imported == [] and len(dry.imported) == len(report.imported)
            row = {"bytes": path.stat().st_size, "items": len(report.imported), "memories": memories,
                   "relations": len(report.imported) - memories, "entities": report.entities,
                   "dry_run_s": dry_s, "dry_items_per_s": len(dry.imported) / dry_s,
                   "import_s": import_s, "memories_per_s": memories / import_s,
                   "items_per_s": len(report.imported) / import_s,
                   "again_s": again_s, "again_items_per_s": len(again.skipped) / again_s}
            if system == "beads":
                t0 = time.perf_counter()
                written = cx.export_beads(root / "beads-out", agent="dev")
                row["export_s"] = time.perf_counter() - t0
                row["export_lines_per_s"] = written["exported"] / row["export_s"]
                row["export_files"] = {"knowledge": written["knowledge"], "archive": written["archive"]}
            out[system] = row
    if local_available():
        path, expected = files["beads"]
        with Cortex.open(root / "store-beads-local", embeddings="local") as cx:
            assert isinstance(cx, Cortex)
            cx.agents.register("dev")
            cx.embeddings.embed(["warm the model up"])  # type: ignore[union-attr]
            t0 = time.perf_counter()
            report = cx.import_from("beads", path, agent="dev")
            seconds = time.perf_counter() - t0
            assert len(report.imported) == expected
            out["beads_local_model"] = {"memories": expected, "import_s": seconds, "memories_per_s": expected / seconds,
                                        "model": cx.embeddings.model}  # type: ignore[union-attr]
    return out


def importers_section(results: dict, items: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results["importers"] = r = importer_rates(Path(tmp), items)
    rows = []
    for system in ("beads", "mem0", "mcp-memory", "claude"):
        x = r[system]
        made = f"{x['memories']:,}" + (f" + {x['relations']:,} relations, {x['entities']:,} entities" if x["relations"]
                                       else "")
        rows.append((system, f"{x['bytes'] / 1e6:.1f} MB", made,
                     f"{x['dry_run_s']:.2f} s ({x['dry_items_per_s']:,.0f}/s)",
                     f"{x['import_s']:.2f} s", f"{x['memories_per_s']:,.0f}",
                     f"{x['again_s']:.2f} s ({x['again_items_per_s']:,.0f}/s)"))
    print_table("Importers: a generated file each, a fresh on-disk store without embeddings (import_from)", rows,
                ("system", "file", "memories", "dry run", "import", "memories/s", "again (nothing new)"))
    b = r["beads"]
    files = b["export_files"]
    print(f"  export_beads of those {b['memories']:,} memories: {b['export_s']:.2f} s ({b['export_lines_per_s']:,.0f} "
          f"lines/s; knowledge.jsonl {files['knowledge']:,} lines, archive {files['archive']:,})")
    if "beads_local_model" in r:
        x = r["beads_local_model"]
        print(f"  Beads import with the local model ({x['model']}): {x['import_s']:.1f} s, {x['memories_per_s']:,.0f} "
              "memories/s (embedding each memory is most of it)")


SECTIONS = ("redaction", "gate", "transcripts", "queue", "hooks", "usage", "notes", "importers")


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=list(SECTIONS), metavar="SECTION",
                        help=f"run these sections only ({', '.join(SECTIONS)}); the others' results are kept")
    parser.add_argument("--sizes", default="1,10,50", help="transcript sizes in MB (default 1,10,50)")
    parser.add_argument("--jobs", type=int, default=50, help="transcripts queued (stand-in without delay)")
    parser.add_argument("--delayed-jobs", type=int, default=20, help="transcripts queued with a slow stand-in")
    parser.add_argument("--delay", type=float, default=0.2, help="the slow stand-in's seconds per answer")
    parser.add_argument("--hook-runs", type=int, default=15, help="runs of each hook with a server")
    parser.add_argument("--hook-runs-alone", type=int, default=8, help="runs of each hook without a server")
    parser.add_argument("--hook-delay", type=float, default=2.0, help="the stand-in's seconds per answer (hooks)")
    parser.add_argument("--notes-files", type=int, default=1000, help="notes files synced (notes)")
    parser.add_argument("--watch-runs", type=int, default=10, help="files written for the watcher's latency")
    parser.add_argument("--import-items", type=int, default=10_000, help="items of each importer's file (importers)")
    args = parser.parse_args()
    target = RESULTS / "capture.json"
    results: dict = {}
    if set(args.only) != set(SECTIONS) and target.exists():  # a partial run keeps the other sections' results
        results = {k: v for k, v in json.loads(target.read_text()).items() if k not in ("benchmark", "machine")}
    sections: dict[str, Callable[[], None]] = {
        "redaction": lambda: redaction_section(results),
        "gate": lambda: gate_section(results),
        "transcripts": lambda: transcripts_section(results, [float(s) for s in args.sizes.split(",")]),
        "queue": lambda: queue_section(results, args.jobs, args.delayed_jobs, args.delay),
        "hooks": lambda: hooks_section(results, args.hook_runs, args.hook_runs_alone, args.hook_delay),
        "usage": lambda: usage_section(results),
        "notes": lambda: notes_section(results, args.notes_files, args.watch_runs),
        "importers": lambda: importers_section(results, args.import_items),
    }
    for name in SECTIONS:
        if name in args.only:
            t0 = time.perf_counter()
            sections[name]()
            results.setdefault("seconds", {})[name] = time.perf_counter() - t0
    written = write_json("capture", results)
    print(f"\nresults written to {written} (sections: "
          + ", ".join(f"{k} {v:.0f} s" for k, v in results["seconds"].items()) + ")")
    return results


if __name__ == "__main__":
    main()
