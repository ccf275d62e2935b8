"""A slow model holds nothing others need (issue 29, finding 8): every call to the model has a total deadline
(``CORTEX_LLM_DEADLINE``) that a server trickling its answer a byte at a time cannot stretch, and a transcript
capture asks the model before it takes the capture lock, so imports, notes sync and stores go on meanwhile."""

from __future__ import annotations

import json
import threading
import time

import pytest

from cortex import Cortex
from cortex.errors import InvalidInputError, LLMUnavailableError
from cortex.llm import LLMClient, LLMSettings, llm_settings, summarize
from tests.llm_standin import StandIn, Trickle
from tests.paths import TESTS
from tests.service_helpers import make_project


@pytest.fixture
def llm():
    with StandIn() as standin:
        yield standin


def test_a_trickling_model_is_cut_off_at_the_deadline(llm):
    client = LLMClient(LLMSettings(url=llm.url, model="stand-in", timeout=30, deadline=1.0))
    summarize(client, "warm up: imports and schemas are not the model's time")
    llm.script(Trickle(0.2))  # a ~400-byte answer at 5 bytes a second: 80 s, each byte well within the timeout
    began = time.monotonic()
    with pytest.raises(LLMUnavailableError, match=r"deadline of 1 s \(CORTEX_LLM_DEADLINE\)"):
        summarize(client, "hello")
    assert time.monotonic() - began < 1.5
    assert summarize(client, "the next call gets a connection of its own")  # the client still works


@pytest.mark.parametrize("value, problem", [("0", "above 0"), ("soon", "number of seconds"),
                                            ("86400", "at most 3600")])
def test_the_deadline_is_validated(tmp_path, value, problem):
    env = {"CORTEX_LLM_URL": "http://127.0.0.1:9/v1", "CORTEX_LLM_MODEL": "m", "CORTEX_LLM_DEADLINE": value}
    with pytest.raises(InvalidInputError, match=problem) as caught:
        llm_settings(env, tmp_path)
    assert caught.value.field == "CORTEX_LLM_DEADLINE"
    assert llm_settings({**env, "CORTEX_LLM_DEADLINE": "2.5"}, tmp_path).deadline == 2.5
    assert llm_settings({k: v for k, v in env.items() if k != "CORTEX_LLM_DEADLINE"}, tmp_path).deadline == 120


def test_a_slow_model_blocks_no_import_notes_sync_nor_store(tmp_path, llm):
    project = make_project(tmp_path / "proj", "dev")
    notes = project / ".cortex" / "notes" / "dev"
    notes.mkdir(parents=True)
    (notes / "MEMORY.md").write_text("## Deploy\nRun make deploy-staging for staging.\n")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "s1", "message": {
        "role": "user", "content": "LESSON: pin boto3 to fix the flaky upload test"}}) + "\n" + json.dumps({
        "type": "assistant", "sessionId": "s1", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Pinned it."}]}}) + "\n")
    deadline = 3.0
    llm.script(Trickle(0.3), Trickle(0.3))  # the extraction, then the summary
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        cx.llm = LLMSettings(url=llm.url, model="stand-in", timeout=30, deadline=deadline)
        done: dict[str, object] = {}

        def capture() -> None:
            began = time.monotonic()
            done["report"] = cx.capture_transcript("dev", transcript)
            done["took"] = time.monotonic() - began

        worker = threading.Thread(target=capture, daemon=True)
        worker.start()
        while not llm.requests:  # the capture is waiting for the model now
            time.sleep(0.02)
        began = time.monotonic()
        imported = cx.import_from("mem0", TESTS / "fixtures" / "importers" / "mem0" / "get_all.json",
                                    agent="dev")
        synced = cx.sync_notes("dev")
        stored = cx.store("dev", "Stored while the model was slow.")
        meanwhile = time.monotonic() - began
        worker.join(4 * deadline)
        assert not worker.is_alive(), "the capture outlived its model's deadline"
    assert imported.imported and synced[0].added and stored.id
    assert meanwhile < deadline / 2, f"other work waited {meanwhile:.1f} s for the slow model"
    report = done["report"]
    assert report.pending and any("CORTEX_LLM_DEADLINE" in p for p in report.problems), report.problems
    assert done["took"] < 2 * deadline + 1  # two calls (extraction, summary), each cut off at the deadline
