"""The language-model client (cortex.llm), over real HTTP against the local stand-in (tests/llm_standin.py)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from cortex import config, llm
from cortex.errors import InvalidInputError, LLMError, LLMOutputError, LLMUnavailableError
from cortex.llm import LLMClient, LLMSettings, estimate_tokens, extract, llm_settings, summarize
from tests.llm_standin import Delay, Garbage, StandIn, Status

GOOD = {"memories": [{"content": "Migrations run before the deploy job", "type": "convention", "confidence": 0.9,
                      "tags": ["deploy"]}]}


@pytest.fixture
def standin() -> Iterator[StandIn]:
    with StandIn() as server:
        yield server


@pytest.fixture
def client(standin: StandIn) -> Iterator[LLMClient]:
    with LLMClient(LLMSettings(url=standin.url, model="standin", api_key="sk-test")) as c:
        yield c


# -- settings -------------------------------------------------------------------------------------------------

def write_config(root: Path, text: str) -> Path:
    path = root / ".cortex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_no_url_means_no_model(tmp_path):
    assert llm_settings({}, tmp_path) is None
    assert llm_settings({"CORTEX_LLM_MODEL": "qwen"}, tmp_path) is None
    write_config(tmp_path, "[llm]\nmodel = 'qwen'\n")
    assert llm_settings({"CORTEX_LLM_URL": ""}, tmp_path) is None  # an empty variable is unset


def test_settings_from_the_environment(tmp_path):
    settings = llm_settings({"CORTEX_LLM_URL": "http://localhost:11434/v1/", "CORTEX_LLM_MODEL": "qwen2.5",
                             "CORTEX_LLM_API_KEY": "sk-1", "CORTEX_LLM_TIMEOUT": "12.5",
                             "CORTEX_LLM_TOKEN_BUDGET": "8000", "CORTEX_LLM_MAX_MEMORIES": "7"}, tmp_path)
    assert settings == LLMSettings(url="http://localhost:11434/v1", model="qwen2.5", api_key="sk-1", timeout=12.5,
                                   token_budget=8000, max_memories=7)
    assert "sk-1" not in repr(settings)


def test_defaults(tmp_path):
    settings = llm_settings({"CORTEX_LLM_URL": "https://api.example.com/v1", "CORTEX_LLM_MODEL": "m"}, tmp_path)
    assert settings == LLMSettings(url="https://api.example.com/v1", model="m")
    assert (settings.api_key, settings.timeout, settings.token_budget, settings.max_memories) == (
        None, 60.0, 30_000, 5)


def test_settings_from_config_toml_and_the_environment_wins(tmp_path):
    write_config(tmp_path, "[other]\nx = 1\n\n[llm]\nurl = 'http://127.0.0.1:8089/v1'\nmodel = 'from-file'\n"
                           "api_key = 'sk-file'\ntimeout = 30\ntoken_budget = 5000\nmax_memories = 3\n")
    assert llm_settings({}, tmp_path) == LLMSettings(url="http://127.0.0.1:8089/v1", model="from-file",
                                                     api_key="sk-file", timeout=30.0, token_budget=5000,
                                                     max_memories=3)
    mixed = llm_settings({"CORTEX_LLM_MODEL": "from-env", "CORTEX_LLM_MAX_MEMORIES": "9"}, tmp_path)
    assert mixed is not None
    assert (mixed.url, mixed.model, mixed.max_memories, mixed.token_budget) == (
        "http://127.0.0.1:8089/v1", "from-env", 9, 5000)


def test_the_environment_is_read_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv(config.LLM_URL_ENV, "http://localhost:1234/v1")
    monkeypatch.setenv(config.LLM_MODEL_ENV, "env-model")
    settings = llm_settings(project_root=tmp_path)
    assert settings is not None and settings.model == "env-model"


@pytest.mark.parametrize(("env", "field", "problem"), [
    ({"CORTEX_LLM_URL": "ftp://host/v1"}, "CORTEX_LLM_URL", "http(s) URL"),
    ({"CORTEX_LLM_URL": "localhost:11434/v1"}, "CORTEX_LLM_URL", "http(s) URL"),
    ({}, "CORTEX_LLM_MODEL", "is required"),
    ({"CORTEX_LLM_TIMEOUT": "soon"}, "CORTEX_LLM_TIMEOUT", "number of seconds"),
    ({"CORTEX_LLM_TIMEOUT": "0"}, "CORTEX_LLM_TIMEOUT", "above 0"),
    ({"CORTEX_LLM_TOKEN_BUDGET": "999"}, "CORTEX_LLM_TOKEN_BUDGET", "at least 1000"),
    ({"CORTEX_LLM_TOKEN_BUDGET": "lots"}, "CORTEX_LLM_TOKEN_BUDGET", "whole number"),
    ({"CORTEX_LLM_MAX_MEMORIES": "0"}, "CORTEX_LLM_MAX_MEMORIES", "between 1 and 50"),
    ({"CORTEX_LLM_MAX_MEMORIES": "51"}, "CORTEX_LLM_MAX_MEMORIES", "between 1 and 50"),
])
def test_a_bad_variable_is_named(tmp_path, env, field, problem):
    base = {"CORTEX_LLM_URL": "http://localhost:11434/v1"}
    if field != "CORTEX_LLM_MODEL":
        base["CORTEX_LLM_MODEL"] = "m"
    with pytest.raises(InvalidInputError, match=problem.replace("(", r"\(").replace(")", r"\)")) as caught:
        llm_settings({**base, **env}, tmp_path)
    assert caught.value.field == field


@pytest.mark.parametrize(("text", "line", "problem"), [
    ("[llm]\nurl = 'http://h/v1'\nmodel = 'm'\ntimeout = 'soon'\n", 4, "number of seconds"),
    ("[llm]\nurl = 'http://h/v1'\nmodel = 'm'\n\nmax_memories = 80\n", 5, "between 1 and 50"),
    ("[llm]\nurl = 'http://h/v1'\nmodel = 'm'\ntoken_budget = true\n", 4, "whole number"),
    ("[llm]\nurl = 'ws://h/v1'\nmodel = 'm'\n", 2, "http(s) URL"),
    ("[llm]\nurl = 'http://h/v1'\nmodle = 'm'\n", 3, "is not a setting"),
    ("[llm]\nurl = 'http://h/v1'\nmodel = \n", 3, "not valid TOML"),
    ("llm = 3\n", 1, "must be a table"),
])
def test_a_bad_config_file_is_named_with_its_line(tmp_path, text, line, problem):
    path = write_config(tmp_path, text)
    with pytest.raises(InvalidInputError, match=problem.replace("(", r"\(").replace(")", r"\)")) as caught:
        llm_settings({}, tmp_path)
    assert caught.value.field.startswith(f"{path}:{line}")


def test_a_url_in_the_file_without_a_model_is_named(tmp_path):
    write_config(tmp_path, "[llm]\nurl = 'http://h/v1'\n")
    with pytest.raises(InvalidInputError, match="config.toml") as caught:
        llm_settings({}, tmp_path)
    assert caught.value.field == "CORTEX_LLM_MODEL"


# -- the schemas ----------------------------------------------------------------------------------------------

def test_importing_the_module_costs_neither_httpx_nor_pydantic():
    code = ("import sys, cortex.llm as m; m.llm_settings({}); "
            "print(sorted(n for n in ('httpx', 'pydantic') if n in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_declared_schemas_match_the_built_ones():
    """The classes the type checker sees (under TYPE_CHECKING) declare the fields the built ones have."""
    tree = ast.parse(Path(llm.schemas.__file__).read_text(encoding="utf-8"))

    def fields(scope: list[ast.stmt]) -> dict[str, list[tuple[str, str]]]:
        return {node.name: [(s.target.id, ast.unparse(s.annotation)) for s in node.body
                            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
                for node in scope if isinstance(node, ast.ClassDef)}

    declared = next(fields(n.body) for n in tree.body
                    if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
                    and any(isinstance(c, ast.ClassDef) for c in n.body))
    builder = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_define_schemas")
    built = fields([n for n in ast.walk(builder) if isinstance(n, ast.ClassDef)])
    assert set(declared) == {"ExtractedMemory", "Extraction", "Summary"}
    assert declared == {name: [f for f in built[name] if f[0] != "model_config"] for name in declared}
    assert typing.get_args(llm.MemoryKind) == config.MEMORY_TYPES
    assert list(llm.ExtractedMemory.model_fields) == ["content", "type", "confidence", "tags"]


def test_the_schemas_bound_what_the_model_gives():
    from pydantic import ValidationError

    llm.ExtractedMemory(content="x", type="insight", confidence=1, tags=["a"])
    for bad in ({"content": "", "type": "insight", "confidence": 0.5, "tags": []},
                {"content": "x" * 2001, "type": "insight", "confidence": 0.5, "tags": []},
                {"content": "x", "type": "fact", "confidence": 0.5, "tags": []},
                {"content": "x", "type": "insight", "confidence": 1.5, "tags": []},
                {"content": "x", "type": "insight", "confidence": 0.5, "tags": ["t"] * 11},
                {"content": "x", "type": "insight", "confidence": 0.5, "tags": ["t" * 65]},
                {"content": "x", "type": "insight", "confidence": 0.5, "tags": [""]},
                {"content": "x", "type": "insight", "confidence": 0.5, "tags": [], "extra": 1}):
        with pytest.raises(ValidationError):
            llm.ExtractedMemory.model_validate(bad)
    with pytest.raises(ValidationError):
        llm.Summary(summary="")
    assert llm.ExtractedMemory.__qualname__ == "ExtractedMemory"


def test_estimate_tokens():
    assert [estimate_tokens(t) for t in ("", "a", "abcd", "abcde", "x" * 400)] == [0, 1, 1, 2, 100]


# -- the client -----------------------------------------------------------------------------------------------

def test_a_good_extraction(standin, client):
    memories = extract(client, "user: deploy it\nLESSON: Migrations run first\nassistant: ok\n"
                               "LESSON: The cache is redis", 5)
    assert [(m.content, m.type, m.confidence, m.tags) for m in memories] == [
        ("Migrations run first", "insight", 0.8, []), ("The cache is redis", "insight", 0.8, [])]
    assert len(standin.requests) == 1
    assert client.calls == 1 and client.prompt_tokens > 0 and client.completion_tokens > 0


def test_nothing_worth_keeping_is_an_empty_list(standin, client):
    assert extract(client, "user: hello\nassistant: hi", 5) == []
    assert extract(client, "   \n", 5) == []  # a blank transcript is not sent
    assert len(standin.requests) == 1


def test_the_request_carries_the_schema_the_model_and_the_key(standin, client):
    extract(client, "LESSON: x", 4)
    body, headers = standin.requests[0], standin.headers[0]
    assert headers["authorization"] == "Bearer sk-test"
    assert body["model"] == "standin" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "at most 4 memories" in body["messages"][0]["content"]
    assert "{max_memories}" not in body["messages"][0]["content"]
    assert "LESSON: x" in body["messages"][1]["content"]
    form = body["response_format"]
    assert form["type"] == "json_schema"
    assert (form["json_schema"]["name"], form["json_schema"]["strict"]) == ("extraction", True)
    schema = form["json_schema"]["schema"]
    assert schema["additionalProperties"] is False and schema["required"] == ["memories"]
    item = schema["$defs"]["ExtractedMemory"]
    assert item["additionalProperties"] is False
    assert item["required"] == ["content", "type", "confidence", "tags"]
    assert item["properties"]["type"]["enum"] == list(config.MEMORY_TYPES)
    assert item["properties"]["content"]["maxLength"] == 2000


def test_no_key_no_authorization_header(standin):
    with LLMClient(LLMSettings(url=standin.url, model="standin")) as keyless:
        summarize(keyless, "we fixed the login bug")
    assert "authorization" not in standin.headers[0]


def test_a_summary(standin, client):
    summary = summarize(client, "user: fix the login bug\nassistant: fixed in auth.py")
    assert summary.endswith("...") and "fix the login bug" in summary
    assert standin.requests[0]["response_format"]["json_schema"]["name"] == "summary"
    with pytest.raises(InvalidInputError, match="transcript"):
        summarize(client, "  ")


def test_fenced_json_with_prose_around_it_is_accepted(standin, client):
    standin.script(f"Here is the JSON you asked for:\n```json\n{json.dumps(GOOD)}\n```\nLet me know!",
                   f"Sure. {json.dumps(GOOD)} Hope this helps.",
                   f"```\n{json.dumps(GOOD)}\n```")
    for _ in range(3):
        assert [m.content for m in extract(client, "LESSON: x", 5)] == ["Migrations run before the deploy job"]
    assert len(standin.requests) == 3  # no retries


def test_garbage_then_good_is_one_retry(standin, client):
    standin.script(Garbage, GOOD)
    memories = extract(client, "some transcript", 5)
    assert [m.type for m in memories] == ["convention"]
    assert len(standin.requests) == 2 and client.calls == 2
    retry = standin.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == Garbage().text
    assert "not a JSON object" in retry[3]["content"]
    assert retry[:2] == standin.requests[0]["messages"]


def test_an_answer_outside_the_schema_is_retried_with_what_is_wrong(standin, client):
    bad = {"memories": [{"content": "x", "type": "fact", "confidence": 0.5, "tags": []}]}
    standin.script(bad, GOOD)
    assert len(extract(client, "t", 5)) == 1
    correction = standin.requests[1]["messages"][3]["content"]
    assert "memories.0.type" in correction and "does not match the schema" in correction


def test_garbage_twice_is_an_output_error(standin, client):
    standin.script(Garbage("not json at all " * 30), Garbage("still not json " * 30))
    with pytest.raises(LLMOutputError, match="twice") as caught:
        extract(client, "t", 5)
    message = str(caught.value)
    assert "still not json" in message and "not json at all" not in message
    assert len(standin.requests) == 2
    assert len(message) < 500  # the answer's head, not all of it


def test_a_server_error_is_unavailable(standin, client):
    for status in (503, 500, 429):
        standin.script(Status(status))
        with pytest.raises(LLMUnavailableError, match=f"HTTP {status}"):
            extract(client, "t", 5)
    assert len(standin.requests) == 3  # not retried: the caller retries later


def test_a_client_error_is_an_llm_error_not_unavailable(standin, client):
    standin.script(Status(400, {"error": {"message": "model 'standin' not found"}}))
    with pytest.raises(LLMError, match="HTTP 400.*model 'standin' not found") as caught:
        extract(client, "t", 5)
    assert not isinstance(caught.value, LLMUnavailableError)


def test_an_answer_that_is_not_a_chat_completion_is_an_llm_error(standin, client):
    standin.script(Status(200, "<html>proxy login</html>"))
    with pytest.raises(LLMError, match="not answer with a chat completion.*proxy login"):
        extract(client, "t", 5)


def test_a_slow_answer_times_out(standin):
    standin.script(Delay(5, GOOD))
    started = time.monotonic()
    with LLMClient(LLMSettings(url=standin.url, model="standin", timeout=0.5)) as slow:
        with pytest.raises(LLMUnavailableError, match="within 0.5 s"):
            extract(slow, "t", 5)
    assert time.monotonic() - started < 3


def test_nothing_listening_is_unavailable(tmp_path):
    with StandIn() as gone:
        url = gone.url
    with LLMClient(LLMSettings(url=url, model="m", timeout=2)) as client:
        with pytest.raises(LLMUnavailableError, match="cannot be reached"):
            summarize(client, "t")


def test_max_memories_truncates(standin, client):
    many = {"memories": [{"content": f"lesson {i}", "type": "insight", "confidence": 0.7, "tags": []}
                         for i in range(4)]}
    standin.script(many)
    assert [m.content for m in extract(client, "t", 2)] == ["lesson 0", "lesson 1"]
    with pytest.raises(InvalidInputError, match="max_memories"):
        extract(client, "t", 0)


def test_usage_is_counted(standin, client):
    summarize(client, "a" * 400)
    summarize(client, "b" * 400)
    assert client.calls == 2
    assert client.prompt_tokens > 200 and client.completion_tokens > 40
