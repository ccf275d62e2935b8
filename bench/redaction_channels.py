"""The channels of the redaction measurement (issue 29): each takes a case's text and returns what of it ended
stored (every N-Quads line the channel's write added to the store: contents, metadata, keys, tags, entity
names and IRIs, provenance) or sent to the model (the chat-completions request bodies), through Cortex's public
API on an on-disk store, with the local stand-in for a hosted model (tests/llm_standin.py).

    with open_channels() as channels:
        for name, channel in channels.items():
            out = channel("the deploy key is AKIA...")
            secret_survived = "AKIA..." in out

Channels: ``store`` (an explicit store with CORTEX_REDACT_STORE on), ``markers`` (agent end), ``transcript``
(capture with a model: what it stored), ``model`` (what the model received during that capture), ``summary``
(a session summary of the model), ``notes`` (a notes file, the text in a heading and the body), ``mem0``,
``mcp-memory``, ``claude`` (CLAUDE.md), ``beads`` (the importers, the text in each one's keys, names and fields
too), ``task`` (a task outcome), ``team`` (the lead's team memory at a round end: stored and sent).

``python bench/redaction_channels.py`` runs a handful of secrets and look-alikes through every channel and prints
the recall and false positives per channel (bench/redaction.py plugs these channels into its corpus).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.llm_standin: the local model stand-in

#: A channel: a case's text in, what ended stored or sent out.
Channel = Callable[[str], str]


class _Run:
    """One store, one stand-in model, and the channels over them."""

    def __init__(self, root: Path, llm: object) -> None:
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
        self.cx.llm = LLMSettings(url=llm.url, model="standin")  # type: ignore[attr-defined]
        self.cx.consolidation = ConsolidationSettings()
        self.explicit = Cortex.open(root / "explicit", embeddings=None)
        self.explicit.agents.register("dev")
        self.explicit.redactor = Redactor(store=True)

    def close(self) -> None:
        self.cx.close()
        self.explicit.close()

    # -- what a call left -------------------------------------------------------------------------

    @staticmethod
    def _lines(cx: object) -> set[str]:
        out = io.BytesIO()
        cx.export(out, all=True, format="nquads")  # type: ignore[attr-defined]
        return set(out.getvalue().decode("utf-8").splitlines())

    def _stored(self, call: Callable[[], object], cx: object | None = None) -> str:
        """The N-Quads lines ``call`` added to the store (IRIs percent-decoded too)."""
        from urllib.parse import unquote

        cx = cx or self.cx
        before = self._lines(cx)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
        added = "\n".join(sorted(self._lines(cx) - before))
        return added + "\n" + unquote(added)

    def _sent(self, call: Callable[[], object]) -> str:
        """The request bodies the model received during ``call``."""
        first = len(self.llm.requests)  # type: ignore[attr-defined]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
        return "\n".join(json.dumps(r) for r in self.llm.requests[first:])  # type: ignore[attr-defined]

    def _file(self, name: str, text: str) -> Path:
        self.n += 1
        path = self.root / f"case{self.n}" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def _transcript(self, text: str) -> Path:
        lines = [{"type": "user", "message": {"role": "user", "content": f"Please fix the deploy. {text}"},
                  "sessionId": f"s-{self.n}", "timestamp": "2026-11-24T10:00:00Z"},
                 {"type": "assistant", "message": {"role": "assistant", "content": [
                     {"type": "text", "text": f"Done.\nLESSON: {text}"}]}, "sessionId": f"s-{self.n}",
                  "timestamp": "2026-11-24T10:01:00Z"}]
        return self._file("s.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")

    # -- the channels -----------------------------------------------------------------------------

    def store(self, text: str) -> str:
        return self._stored(lambda: self.explicit.store("dev", text, metadata={"note": text}), self.explicit)

    def markers(self, text: str) -> str:
        return self._stored(lambda: self.cx.agent_end("dev", f"LEARNED: {text}"))

    def transcript(self, text: str) -> str:
        path = self._transcript(text)
        return self._stored(lambda: self.cx.capture_transcript("dev", path, summary=False))

    def model(self, text: str) -> str:
        path = self._transcript(text)
        return self._sent(lambda: self.cx.capture_transcript("rev", path))

    def summary(self, text: str) -> str:
        path = self._transcript(text)
        return self._stored(lambda: self.cx.capture_transcript("rev", path, summary=True))

    def notes(self, text: str) -> str:
        directory = self.root / ".cortex" / "notes" / "dev"
        directory.mkdir(parents=True, exist_ok=True)
        self.n += 1
        (directory / f"n{self.n}.md").write_text(f"# {text[:60]}\n\n{text}\n", encoding="utf-8")
        return self._stored(lambda: self.cx.sync_notes("dev"))

    def mem0(self, text: str) -> str:
        item = {"id": f"m-{self.n}-{text[:40]}", "memory": text, "metadata": {"note": text},
                "user_id": text[:60], "created_at": "2026-11-20T10:00:00+00:00"}
        path = self._file("get_all.json", json.dumps({"results": [item]}))
        return self._stored(lambda: self.cx.import_from("mem0", path, agent="dev"))

    def mcp_memory(self, text: str) -> str:
        line = {"type": "entity", "name": f"e{self.n} {text[:60]}", "entityType": "note", "observations": [text]}
        path = self._file("memory.jsonl", json.dumps(line))
        return self._stored(lambda: self.cx.import_from("mcp-memory", path, agent="dev"))

    def claude(self, text: str) -> str:
        path = self._file("CLAUDE.md", f"# Project\n\n## {text[:60]}\n\n{text}\n")
        return self._stored(lambda: self.cx.import_from("claude", path, agent="dev"))

    def beads(self, text: str) -> str:
        from cortex.importers.beads import key_of

        line = {"key": key_of("learned", text), "type": "learned", "content": text, "source": "user",
                "tags": ["learned"], "ts": 1788340502 + self.n, "bead": f"b-{self.n}"}
        path = self._file("knowledge.jsonl", json.dumps(line) + "\n")
        return self._stored(lambda: self.cx.import_from("beads", path, agent="dev"))

    def task(self, text: str) -> str:
        return self._stored(lambda: self.cx.record_task("dev", f"deploy: {text[:80]}", f"done: {text}"))

    def team(self, text: str) -> str:
        def round_end() -> object:
            self.cx.record_task("rev", "decide the deploy", f"DECISION: {text}")
            return self.cx.team_round_end("backend")

        sent: list[str] = []
        stored = self._stored(lambda: sent.append(self._sent(round_end)))
        return stored + "\n" + "\n".join(sent)


@contextlib.contextmanager
def open_channels(root: Path | None = None) -> Iterator[dict[str, Channel]]:
    """Every channel, by name, over a fresh store in ``root`` (a temporary directory by default)."""
    from tests.llm_standin import StandIn

    with contextlib.ExitStack() as stack:
        where = root if root is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        llm = stack.enter_context(StandIn())
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
    rows = []
    with open_channels() as channels:
        for name, channel in channels.items():
            outs = [(secret, channel(f"{context.format(secret)} ({name} channel)")) for secret, context in CASES]
            # caught: the secret is gone and its placeholder is there (a channel that stored nothing catches nothing)
            caught = sum(1 for secret, out in outs if not leaked(secret, out) and "[REDACTED:" in out)
            kept = sum(1 for text in LOOK_ALIKES if text.split()[1] in channel(f"{text} ({name} channel)"))
            rows.append((name, caught, len(CASES), len(LOOK_ALIKES) - kept, len(LOOK_ALIKES)))
    print(f"{'channel':<12} {'recall':>8} {'false positives':>16}")
    for name, caught, total, false, looks in rows:
        print(f"{name:<12} {caught:>3}/{total:<4} {false:>8}/{looks}")


if __name__ == "__main__":
    main()
