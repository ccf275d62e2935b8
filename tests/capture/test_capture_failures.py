"""Three failures of the capture features themselves (issue 29, finding 15): a ``LEARNED:`` line inside a fenced
code block that a transcript splits over several text blocks or lines is code, not a learning; a team's round end
whose model names the same entry twice merges the duplicates; a capture the SessionEnd hook starts records the
hook and the session as its provenance, not the CLI."""

from __future__ import annotations

import json

import pytest

from cortex.markers import marker_lines_of_parts

from tests.conftest import open_agents


def said(*blocks: str, message: str = "msg_1", role: str = "assistant") -> str:
    return json.dumps({"type": role, "sessionId": "s1", "message": {
        "id": message, "role": role, "content": [{"type": "text", "text": b} for b in blocks]}})


def tool_call() -> str:
    return json.dumps({"type": "assistant", "sessionId": "s1", "message": {"id": "msg_2", "role": "assistant",
                       "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}})


@pytest.mark.parametrize("lines", [
    [said("Example:\n```python\n", "LEARNED: code in a second text block\n```")],
    [said("Example:\n```python"), said("LEARNED: code on a second line of the answer\n```")],
    [said("Example:\n~~~"), said("  LEARNED: code under a tilde fence"), said("~~~\nLEARNED: the real one")],
], ids=["two-text-blocks", "two-transcript-lines", "three-lines-tilde"])
def test_a_marker_line_in_a_code_block_split_over_parts_is_not_captured(tmp_path, lines):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    with open_agents(None, "dev") as cx:
        stored = [m.content for m in cx.capture_transcript("dev", transcript).stored]
    assert all("code" not in s for s in stored), stored
    assert stored == (["the real one"] if "tilde" in lines[-1] or "real" in lines[-1] else [])


def test_a_fence_left_open_closes_with_its_message(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join([said("Unclosed:\n```"), tool_call(), said("LEARNED: after the tool call"),
                                     said("```", message="msg_3"), said("hi", role="user"),
                                     said("LEARNED: after the user", message="msg_4")]) + "\n")
    with open_agents(None, "dev") as cx:
        stored = sorted(m.content for m in cx.capture_transcript("dev", transcript).stored)
    assert stored == ["after the tool call", "after the user"]


def test_the_hooks_read_a_message_split_over_lines_as_one(tmp_path):
    from cortex.service.harnesses.claude import parts
    from cortex.service.hooks.end import marker_text

    entries = [json.loads(said("Example:\n```")), json.loads(said("LEARNED: code")),
               json.loads(said("```\nLEARNED: real")), json.loads(tool_call()),
               json.loads(said("```", message="msg_5")), json.loads(said("LEARNED: next message", message="msg_6"))]
    assert marker_text(parts(entries)).splitlines() == ["LEARNED: real", "LEARNED: next message"]
    assert marker_lines_of_parts([(True, None, "```"), (True, None, "LEARNED: no id, its own message")]) == \
        "LEARNED: no id, its own message"
