"""The channels of the redaction measurement (issue 29): each takes a batch of cases (an id and a text) and returns
what of them ended stored (every N-Quads line the batch added to the store: contents, metadata, keys, tags, entity
names and IRIs, provenance) or sent to the model (the chat-completions request bodies), through Cortex's public
API on an on-disk store, with the local stand-in for a hosted model (tests/llm_standin.py).

    with open_channels() as channels:
        out = channels["notes"]([("s0001", "the deploy key is AKIA...")])
        secret_survived = "AKIA..." in out

Each case's text goes in behind its tag, ``(case <id>)``, so that :func:`attribute` can say which case a
placeholder in the output belongs to. A channel takes many cases at once where Cortex does (one notes file, one
import file, one transcript of several cases, one team round over many task outcomes) and one call per case
where a call is one case (an explicit store, an agent end, a task outcome).

Channels: ``store`` (an explicit store with CORTEX_REDACT_STORE on), ``markers`` (agent end), ``transcript``
(capture with a model: what it stored), ``model`` (what the model received during that capture), ``summary``
(a session summary of the model, which repeats the session), ``notes`` (a notes file, the text in a heading and
the body), ``mem0``, ``mcp-memory``, ``claude`` (CLAUDE.md), ``beads`` (the importers, the text in each one's
keys, names and fields too), ``task`` (a task outcome), ``team`` (the lead's team memory at a round end: stored
and sent).

``python bench/redaction_channels.py`` runs a handful of secrets and look-alikes through every channel and prints
the recall and false positives per channel (bench/redaction.py runs the whole corpus through them).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.llm_standin: the local model stand-in

#: A case: its id and its text.
Case = tuple[str, str]
#: A channel: a batch of cases in, what ended stored or sent out (with each case's tag).
Channel = Callable[[list[Case]], str]
#: How many cases one transcript, notes file or team round holds.
BATCH = 5
#: A case's tag as it ends in the output: as written, or as a key's slug (``case-s0001``).
TAG = re.compile(r"\(?case[ -]([a-z]\d{3,})\)?", re.IGNORECASE)
PLACEHOLDERS = re.compile(r"\[REDACTED:[^\]]*\]")


def tag(case: Case) -> str:
    """The case's text behind its tag."""
    return f"(case {case[0]}) {case[1]}"


def head(case: Case) -> str:
    """The case's first line behind its tag: what a heading, a name or an id made of the case holds (whole: a
    writer does not cut a key in two)."""
    return tag(case).split("\n", 1)[0]


def chunks(cases: list[Case], size: int = BATCH) -> Iterator[list[Case]]:
    """``cases`` in batches of ``size``."""
    for i in range(0, len(cases), size):
        yield cases[i:i + size]


def attribute(output: str) -> tuple[dict[str, list[str]], int]:
    """The placeholders in ``output`` (``[REDACTED:rule]``) per case tag, and how many no tag claims. A
    placeholder belongs to the nearest tag before it on its line; on a line without one, to the first tag of the
    lines about the same subject (an N-Quads line's first term) or, in a request body, of the body."""
    lines = output.splitlines()
    first_of: dict[str, str] = {}
    for line in lines:
        found = TAG.search(line)
        if found:
            first_of.setdefault(line.split(" ", 1)[0], found.group(1).lower())
    per_case: dict[str, list[str]] = {}
    unclaimed = 0
    for line in lines:
        for placeholder in PLACEHOLDERS.finditer(line):
            before = list(TAG.finditer(line, 0, placeholder.start()))
            owner = before[-1].group(1).lower() if before else first_of.get(line.split(" ", 1)[0])
            if owner:
                per_case.setdefault(owner, []).append(placeholder.group(0))
            else:
                unclaimed += 1
    return per_case, unclaimed


def _summary_echo(body: dict[str, Any]) -> str:
    """The stand-in's answers, but a session summary repeats the whole session (the most a model could keep)."""
    from tests.llm_standin import default_answer

    name = (((body.get("response_format") or {}).get("json_schema")) or {}).get("name")
    if name == "summary":
        user = next((m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"), "")
        return json.dumps({"summary": user[:3900]})
    return default_answer(body)


class _Run:
    """One store, one stand-in model, and the channels over them."""

    def __init__(self, root: Path, llm: Any) -> None:
        from cortex import Cortex
        from cortex.agents import AgentSettings
        from cortex.capture.redact import Redactor
        from cortex.consolidation.settings import ConsolidationSettings
        from cortex.llm import LLMSettings

        self.root, self.llm, self.n = root, llm, 0
        (root / ".git").mkdir(exist_ok=True)  # a project: its notes live in .cortex/notes
        self.cx = Cortex.open(root / ".cortex" / "store", embeddings=None)
        for name in ("dev", "rev"):
            self.cx.agents.register(name, settings=AgentSettings(teams=("backend",)))
        self.cx.agents.register("boss", settings=AgentSettings(teams=("backend",), lead=True))
        self.cx.llm = LLMSettings(url=llm.url, model="standin")
        self.cx.consolidation = ConsolidationSettings()
        self.explicit = Cortex.open(root / "explicit", embeddings=None)
        self.explicit.agents.register("dev")
        self.explicit.redactor = Redactor(store=True)

    def close(self) -> None:
        self.cx.close()
        self.explicit.close()

    # -- what a call left -------------------------------------------------------------------------

    @staticmethod
    def _lines(cx: Any) -> set[str]:
        out = io.BytesIO()
        cx.export(out, all=True, format="nquads")
        return set(out.getvalue().decode("utf-8").splitlines())

    def _stored(self, call: Callable[[], object], cx: Any = None) -> str:
        """The N-Quads lines ``call`` added to the store (IRIs percent-decoded too)."""
        from urllib.parse import unquote

        cx = cx or self.cx
        before = self._lines(cx)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
        added = sorted(self._lines(cx) - before)
        return "\n".join(added + [unquote(line) for line in added if "%" in line])

    def _sent(self, call: Callable[[], object]) -> str:
        """The request bodies the model received during ``call``, one a line."""
        first = len(self.llm.requests)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
        return "\n".join(json.dumps(r) for r in self.llm.requests[first:])

    def _file(self, name: str, text: str) -> Path:
        self.n += 1
        path = self.root / f"case{self.n}" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def _transcript(self, cases: list[Case]) -> Path:
        lines = []
        for case in cases:
            self.n += 1
            lines += [{"type": "user", "message": {"role": "user", "content": f"Please fix the deploy. {tag(case)}"},
                       "sessionId": f"s-{self.n}", "timestamp": "2026-11-24T10:00:00Z"},
                      {"type": "assistant", "message": {"role": "assistant", "content": [
                          {"type": "text", "text": f"Done.\nLESSON: {tag(case)}"}]}, "sessionId": f"s-{self.n}",
                       "timestamp": "2026-11-24T10:01:00Z"}]
        return self._file("s.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")

    def _each(self, cases: list[Case], call: Callable[[list[Case]], object], cx: Any = None,
              size: int = BATCH) -> str:
        """What ``call`` stored, called on each batch of ``cases``."""
        return self._stored(lambda: [call(batch) for batch in chunks(cases, size)], cx)

    # -- the channels -----------------------------------------------------------------------------

    def store(self, cases: list[Case]) -> str:
        return self._each(cases, lambda b: [self.explicit.store("dev", tag(c), metadata={"note": tag(c)}) for c in b],
                          self.explicit)

    def markers(self, cases: list[Case]) -> str:
        return self._each(cases, lambda b: [self.cx.agent_end("dev", f"LEARNED: {tag(c)}") for c in b])

    def transcript(self, cases: list[Case]) -> str:
        return self._each(cases, lambda b: self.cx.capture_transcript("dev", self._transcript(b), summary=False))

    def model(self, cases: list[Case]) -> str:
        return self._sent(lambda: [self.cx.capture_transcript("rev", self._transcript(b), summary=False)
                                   for b in chunks(cases)])

    def summary(self, cases: list[Case]) -> str:
        return self._each(cases, lambda b: self.cx.capture_transcript("rev", self._transcript(b), markers=False,
                                                                      tasks=False, summary=True))

    def notes(self, cases: list[Case]) -> str:
        directory = self.root / ".cortex" / "notes" / "dev"
        directory.mkdir(parents=True, exist_ok=True)
        for batch in chunks(cases, 25):
            self.n += 1
            (directory / f"n{self.n}.md").write_text(
                "".join(f"# {head(c)}\n\n{tag(c)}\n\n" for c in batch), encoding="utf-8")
        return self._stored(lambda: self.cx.sync_notes("dev"))

    def mem0(self, cases: list[Case]) -> str:
        items = [{"id": f"m-{head(c)}", "memory": tag(c), "metadata": {"note": tag(c)},
                  "user_id": head(c), "created_at": "2026-11-20T10:00:00+00:00"} for c in cases]
        path = self._file("get_all.json", json.dumps({"results": items}))
        return self._stored(lambda: self.cx.import_from("mem0", path, agent="dev"))

    def mcp_memory(self, cases: list[Case]) -> str:
        lines = [{"type": "entity", "name": head(c), "entityType": "note", "observations": [tag(c)]}
                 for c in cases]
        path = self._file("memory.jsonl", "\n".join(json.dumps(x) for x in lines))
        return self._stored(lambda: self.cx.import_from("mcp-memory", path, agent="dev"))

    def claude(self, cases: list[Case]) -> str:
        path = self._file("CLAUDE.md", "# Project\n\n" + "".join(f"## {head(c)}\n\n{tag(c)}\n\n" for c in cases))
        return self._stored(lambda: self.cx.import_from("claude", path, agent="dev"))

    def beads(self, cases: list[Case]) -> str:
        from cortex.importers.beads import key_of

        lines = []
        for c in cases:
            self.n += 1
            lines.append({"key": key_of("learned", tag(c)), "type": "learned", "content": tag(c), "source": "user",
                          "tags": ["learned"], "ts": 1788340502 + self.n, "bead": f"b-{self.n}"})
        path = self._file("knowledge.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
        return self._stored(lambda: self.cx.import_from("beads", path, agent="dev"))

    def task(self, cases: list[Case]) -> str:
        return self._each(cases, lambda b: [self.cx.record_task("dev", f"deploy: {head(c)}", f"done: {tag(c)}")
                                            for c in b])

    def team(self, cases: list[Case]) -> str:
        def round_end(batch: list[Case]) -> object:
            for c in batch:
                self.cx.record_task("rev", f"decide the deploy {c[0]}", f"DECISION: {tag(c)}")
            return self.cx.team_round_end("backend")

        sent: list[str] = []
        stored = self._each(cases, lambda b: sent.append(self._sent(lambda: round_end(b))))
        return stored + "\n" + "\n".join(sent)


#: The channels, by name: what each measures.
NAMES = {"store": "explicit `store` with `CORTEX_REDACT_STORE=1` (content and metadata)",
         "markers": "`agent_end` markers (`LEARNED: <text>`)",
         "transcript": "transcript capture with a model: what it stored",
         "model": "what the model receives during that capture (the request bodies)",
         "summary": "session summary of the model (a model that repeats the whole session)",
         "notes": "notes file sync (the text in a heading and its body)",
         "mem0": "mem0 import (memory, metadata, id, user id)",
         "mcp-memory": "MCP memory server import (entity name and observation)",
         "claude": "CLAUDE.md import (a `##` heading and its body)",
         "beads": "Beads import (content and the key made of its first 60 characters)",
         "task": "`record_task` (task and outcome, content and metadata)",
         "team": "team memory at a round end (what the lead's model receives and what is stored)"}


@contextlib.contextmanager
def open_channels(root: Path | None = None) -> Iterator[dict[str, Channel]]:
    """Every channel, by name, over a fresh store in ``root`` (a temporary directory by default)."""
    from tests.llm_standin import StandIn

    with contextlib.ExitStack() as stack:
        where = root if root is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        llm = stack.enter_context(StandIn(answer=_summary_echo))
        run = _Run(where, llm)
        stack.callback(run.close)
        yield {"store": run.store, "markers": run.markers, "transcript": run.transcript, "model": run.model,
               "summary": run.summary, "notes": run.notes, "mem0": run.mem0, "mcp-memory": run.mcp_memory,
               "claude": run.claude, "beads": run.beads, "task": run.task, "team": run.team}


#: A few secrets (random strings in the shape of real keys) and the text around them.
CASES = [
    ("ghp_" + "Qm7Rt2Xv9Lp4Kd8Wn3Hs6Jf1Zc5Bg0Ny2Ta4", "the CI token is {} for the deploy job"),
    ("AKIAQ3N7W2XK9RLT5MPD", "AWS_ACCESS_KEY_ID={} in the staging env file"),
    ("sk-proj-" + "Hw8Kd2Lq9Zr4Tv7Nx1Pc6Jm3Bs5Fg0Yu2Ei8Oa7", "the model key {} is billed to the research team"),
    ("xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "the Slack bot posts with {} in #deploys"),
    ("Vt8q2LmZr4Kx9Wn", "connect with postgres://app:{}@db:5432/app for the reports"),
]
#: Look-alikes that must come through unchanged.
LOOK_ALIKES = ["commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the flaky deploy test",
               "run 123e4567-e89b-12d3-a456-426614174000 failed on the staging cluster"]


def leaked(secret: str, out: str) -> bool:
    """Whether ``out`` still holds ``secret``, or the start of it as a key derived from the text would keep it (12
    characters, as they are or as a slug)."""
    slug = "".join(c if c.isalnum() else "-" for c in secret.lower())
    return secret in out or secret[:12] in out or slug[:12] in out.lower()


def main() -> None:
    """Run :data:`CASES` and :data:`LOOK_ALIKES` through every channel; print recall and false positives."""
    os.environ.setdefault("CORTEX_LOG_LEVEL", "error")
    secrets = [(f"s{i:04d}", context.format(secret)) for i, (secret, context) in enumerate(CASES)]
    looks = [(f"l{i:04d}", text) for i, text in enumerate(LOOK_ALIKES)]
    print(f"{'channel':<12} {'recall':>8} {'false positives':>16}")
    with open_channels() as channels:
        for name, channel in channels.items():
            out = channel(secrets)
            caught = sum(1 for secret, _ in CASES if not leaked(secret, out))
            false = attribute(channel(looks))[0]
            print(f"{name:<12} {caught:>3}/{len(CASES):<4} {len(false):>8}/{len(looks)}")


if __name__ == "__main__":
    main()
