"""Deep JSON is no poison pill (issue 29, finding 11): every reader of JSON from outside goes through one bounded
reader (:mod:`cortex.jsonsafe`), so a transcript line, a model's answer, an importer's file, a hook's payload or
a request body nested 100,000 levels deep becomes a problem entry or a clear 4xx, and a capture moves past it."""

from __future__ import annotations

import json

import pytest

from cortex import jsonsafe
from cortex.errors import InvalidInputError
from cortex.llm import LLMSettings
from cortex.service.http import create_app
from tests.conftest import open_agents
from tests.llm_standin import StandIn
from tests.service_helpers import asgi_request

DEPTH = 100_000
DEEP_ARRAY = "[" * DEPTH + "1" + "]" * DEPTH
DEEP_OBJECT = '{"a":' * DEPTH + "1" + "}" * DEPTH


def said(role: str, text: str) -> str:
    content = [{"type": "text", "text": text}] if role == "assistant" else text
    return json.dumps({"type": role, "sessionId": "s1", "message": {"role": role, "content": content}})


@pytest.fixture
def dev(tmp_path):
    with open_agents(tmp_path / "store", "dev") as cx:
        yield cx


def test_the_reader_refuses_depth_and_size_not_brackets_in_strings():
    assert jsonsafe.loads('{"a": "' + "[" * 5000 + '"}') == {"a": "[" * 5000}
    assert jsonsafe.loads("[" * 100 + "]" * 100) is not None
    for bad in ("[" * 101 + "]" * 101, DEEP_ARRAY, DEEP_OBJECT, "[" * DEPTH):
        with pytest.raises(jsonsafe.JSONLimitError):
            jsonsafe.loads(bad)
    with pytest.raises(jsonsafe.JSONLimitError, match="more than the 10 read"):
        jsonsafe.loads('"' + "x" * 20 + '"', max_chars=10)


def test_a_deep_transcript_line_is_a_problem_and_the_capture_moves_past_it(dev, tmp_path):
    transcript = tmp_path / "t.jsonl"
    deep = '{"type":"assistant","sessionId":"s1","message":{"role":"assistant","content":' + DEEP_ARRAY + "}}"
    transcript.write_text("\n".join([said("assistant", "LEARNED: before the deep line"), deep,
                                     said("assistant", "LEARNED: after the deep line")]) + "\n")
    report = dev.capture_transcript("dev", transcript)
    assert sorted(m.content for m in report.stored) == ["after the deep line", "before the deep line"]
    assert report.problems == ["line 2: skipped: the JSON nests deeper than 100 levels: not read"]
    assert report.read_to == transcript.stat().st_size  # the checkpoint is past the poison pill
    with transcript.open("a") as fh:
        fh.write(said("assistant", "LEARNED: a later line") + "\n")
    again = dev.capture_transcript("dev", transcript)
    assert [m.content for m in again.stored] == ["a later line"] and again.problems == []


def test_a_deep_model_answer_is_a_bad_answer_not_a_crash(dev, tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(said("user", "LESSON: pin boto3") + "\n" + said("assistant", "Done.") + "\n")
    with StandIn() as llm:
        llm.script(DEEP_OBJECT, "prose then " + DEEP_ARRAY)  # the answer, then the corrected answer
        dev.llm = LLMSettings(url=llm.url, model="stand-in", timeout=10)
        report = dev.capture_transcript("dev", transcript, summary=False)
    assert any("extraction skipped" in p and "deeper than 100 levels" in p for p in report.problems), report.problems
    assert not report.pending  # a bad answer is not retried: the part is done
    assert len(llm.requests) == 2  # asked once more, with what was wrong


@pytest.mark.parametrize("system, name, text, problem", [
    ("beads", "knowledge.jsonl", '{"key":"k","content":"c","meta":' + DEEP_OBJECT + '}\n'
                                 '{"key":"k2","content":"a fine line"}\n', "knowledge.jsonl:1"),
    ("mcp-memory", "memory.jsonl", '{"type":"entity","name":"e","entityType":"t","observations":["fine"]}\n'
                                   '{"type":"entity","name":"f","entityType":"t","observations":' + DEEP_ARRAY +
                                   '}\n', "memory.jsonl:2"),
], ids=["beads", "mcp-memory"])
def test_a_deep_line_of_an_import_fails_alone(dev, tmp_path, system, name, text, problem):
    path = tmp_path / name
    path.write_text(text)
    report = dev.import_from(system, path, agent="dev")
    assert [f.where for f in report.failed] == [problem]
    assert "deeper than 100 levels" in report.failed[0].reason
    assert report.imported


def test_a_deep_mem0_file_is_refused_saying_why(dev, tmp_path):
    path = tmp_path / "get_all.json"
    path.write_text('{"results":[{"id":"x","memory":"hello","metadata":' + DEEP_OBJECT + "}]}")
    with pytest.raises(InvalidInputError, match="deeper than 100 levels"):
        dev.import_from("mem0", path, agent="dev")
    assert dev.count("dev") == 0


def test_a_deep_hook_payload_is_refused_not_a_crash(tmp_path):
    from cortex.service import hooks

    assert hooks.run("Stop", DEEP_OBJECT, agent="dev") == ""  # never raises; nothing to print


@pytest.mark.parametrize("body", [DEEP_ARRAY, '{"content":"x","metadata":' + DEEP_OBJECT + "}"],
                         ids=["deep-body", "deep-metadata"])
def test_a_deep_request_body_is_a_4xx(dev, body):
    app = create_app(dev, mcp=False)
    r = asgi_request(app, "POST", "/v1/agents/dev/memories", None, content=body,
                     headers={"Content-Type": "application/json"})
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    assert dev.count("dev") == 0
