"""Markdown agent definitions: parsing, validation, discovery, registry rules."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cortex import AgentNotFoundError, Cortex, InvalidInputError, MemoryDisabledError
from cortex.agents import AgentRegistry, check_dirs
from tests.paths import ROOT


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """---
name: reviewer
description: Reviews diffs for correctness and security
memory: true
tools: [Read, Grep]
model: sonnet
color: red
cortex:
  project: my-repo
  recall: {limit: 5, max_chars: 8000}
  prune: {min_confidence: 0.4, max_age: 90d}
---
You are a meticulous code reviewer.
"""


def test_parse_full_definition_keeps_unknown_keys(tmp_path):
    path = write(tmp_path / "agent_defs", "reviewer.md", GOOD)
    registry = AgentRegistry()
    assert registry.load([tmp_path / "agent_defs"]) == []
    d = registry.get("reviewer")
    assert d.description == "Reviews diffs for correctness and security"
    assert d.memory is True and d.memory_enabled
    assert d.extra == {"tools": ["Read", "Grep"], "model": "sonnet", "color": "red"}
    assert d.settings.project == "my-repo"
    assert (d.settings.recall_limit, d.settings.recall_max_chars) == (5, 8000)
    assert d.settings.prune_min_confidence == 0.4 and d.settings.prune_max_age == timedelta(days=90)
    assert d.prompt == "You are a meticulous code reviewer." and d.path == path


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("false", False), ("yes", True), ("on", True), ("off", False), ("user", "user"),
     ("project", "project"), ("local", "local"), ("'True'", True)],
)
def test_memory_values(tmp_path, value, expected):
    write(tmp_path, "a.md", f"---\nname: a\ndescription: d\nmemory: {value}\n---\n")
    registry = AgentRegistry()
    assert registry.load([tmp_path]) == []
    assert registry.get("a").memory == expected
    assert registry.get("a").memory_enabled is (expected is not False)


def test_missing_memory_means_disabled(tmp_path):
    write(tmp_path, "a.md", "---\nname: a\ndescription: d\n---\n")
    with Cortex.open(tmp_path / "store", agent_dirs=[tmp_path]) as cx:
        with pytest.raises(MemoryDisabledError, match="'a'"):
            cx.store("a", "x")


PROBLEMS = {
    "yaml.md": ("---\nname: x\ndescription: [unclosed\nmemory: true\n---\n", "frontmatter", "YAML error at line 4"),
    "noname.md": ("---\ndescription: d\nmemory: true\n---\n", "name", "missing"),
    "nodesc.md": ("---\nname: nodesc\nmemory: true\n---\n", "description", "missing"),
    "badname.md": ("---\nname: Bad Name\ndescription: d\n---\n", "name", "invalid agent name 'Bad Name'"),
    "badmem.md": ("---\nname: badmem\ndescription: d\nmemory: sometimes\n---\n", "memory", "sometimes"),
    "unknown.md": ("---\nname: unk\ndescription: d\ncortex:\n  colour: red\n---\n", "cortex.colour", "unknown key"),
    "unknown2.md": ("---\nname: unk2\ndescription: d\ncortex:\n  recall: {top: 3}\n---\n", "cortex.recall.top",
                    "unknown key"),
    "badprune.md": ("---\nname: bp\ndescription: d\ncortex:\n  prune: {min_confidence: 2}\n---\n",
                    "cortex.prune.min_confidence", "between 0 and 1"),
    "badage.md": ("---\nname: ba\ndescription: d\ncortex:\n  prune: {max_age: forever}\n---\n",
                  "cortex.prune.max_age", "duration"),
    "nofm.md": ("just text\n", "frontmatter", "no YAML frontmatter"),
    "list.md": ("---\n- a\n- b\n---\n", "frontmatter", "mapping"),
    "unclosed.md": ("---\nname: u\ndescription: d\n", "frontmatter", "not closed"),
}


@pytest.mark.parametrize("filename", sorted(PROBLEMS))
def test_each_problem_is_reported_with_file_and_field(tmp_path, filename):
    text, field, message = PROBLEMS[filename]
    path = write(tmp_path, filename, text)
    problems = check_dirs([tmp_path])
    assert len(problems) == 1, problems
    assert problems[0].path == path and problems[0].field == field
    assert message in problems[0].message
    assert str(problems[0]).startswith(f"{path}: {field}: ")


def test_broken_files_are_not_loaded_but_reported_and_good_ones_are(tmp_path, caplog):
    write(tmp_path, "good.md", GOOD)
    write(tmp_path, "bad.md", "---\nname: bad\n---\n")
    with Cortex.open(tmp_path / "store", agent_dirs=[tmp_path]) as cx:
        assert "reviewer" in cx.agents and "bad" not in cx.agents
        assert [p.field for p in cx.agents.problems] == ["description"]
    assert "bad.md: description: missing" in caplog.text


def test_duplicate_names_first_directory_wins(tmp_path):
    first = write(tmp_path / "agent_defs", "r.md", GOOD)
    second = write(tmp_path / ".claude" / "agents", "r2.md", GOOD.replace("my-repo", "other"))
    registry = AgentRegistry()
    problems = registry.load([tmp_path / "agent_defs", tmp_path / ".claude" / "agents"])
    assert registry.get("reviewer").path == first
    assert len(problems) == 1 and problems[0].path == second and "duplicate" in problems[0].message


def test_register_in_code_replaces_and_validates():
    registry = AgentRegistry()
    registry.register("coder", memory=True, description="writes code")
    registry.register("coder", memory=False)
    assert registry.get("coder").memory_enabled is False
    for bad in ["Bad Name", "a:b", "../x", "", "x" * 65, "-lead"]:
        with pytest.raises(InvalidInputError, match="agent"):
            registry.register(bad)
    with pytest.raises(InvalidInputError, match="memory"):
        registry.register("ok", memory="maybe")


def test_undeclared_agent(tmp_path):
    with Cortex.open(tmp_path / "s") as cx:
        with pytest.raises(AgentNotFoundError, match="'ghost'"):
            cx.recall("ghost")
        with pytest.raises(InvalidInputError, match="agent"):
            cx.recall("Bad Name")


def test_example_agents_in_the_repository_are_valid():
    root = ROOT
    registry = AgentRegistry()
    assert registry.load([root / "agent_defs"]) == []
    assert len(registry) >= 3
    assert all(d.memory_enabled for d in registry.list())


def test_every_problem_of_a_file_is_reported(tmp_path):
    write(tmp_path, "many.md", "---\nname: many\ndescription: d\ncortex:\n  colour: red\n  size: 3\n"
                               "  prune: {min_confidence: 7, max_age: forever}\n  recall: {limit: 0}\n---\n")
    fields = sorted(p.field for p in check_dirs([tmp_path]))
    assert fields == ["cortex.colour", "cortex.prune.max_age", "cortex.prune.min_confidence",
                      "cortex.recall.limit", "cortex.size"]


def test_numeric_name_is_read_as_text(tmp_path):
    write(tmp_path, "n.md", "---\nname: 2024\ndescription: d\nmemory: true\n---\n")
    registry = AgentRegistry()
    assert registry.load([tmp_path]) == []
    assert registry.get("2024").memory_enabled


def test_cortex_memory_switch_and_claude_code_scopes(tmp_path):
    from cortex.agents import AgentRegistry

    files = {
        "a.md": "---\nname: a\ndescription: x\ncortex: {memory: true}\n---\n",
        "b.md": "---\nname: b\ndescription: x\nmemory: project\ncortex: {memory: false}\n---\n",
        "c.md": "---\nname: c\ndescription: x\nmemory: user\n---\n",
        "d.md": "---\nname: d\ndescription: x\ncortex: {memory: maybe}\n---\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    registry = AgentRegistry()
    problems = registry.load([tmp_path])
    assert [(p.path.name, p.field) for p in problems] == [("d.md", "cortex.memory")]
    assert {d.name: d.memory_enabled for d in registry} == {"a": True, "b": False, "c": True}


def test_the_shipped_agents_do_not_switch_on_claude_codes_memory():
    import yaml

    root = ROOT / "agent_defs"
    for path in root.glob("*.md"):
        meta = yaml.safe_load(path.read_text().split("---")[1])
        assert meta.get("memory") not in ("user", "project", "local"), path.name


def test_definitions_are_picked_up_live(tmp_path, monkeypatch):
    from cortex.agents import AgentRegistry
    from cortex.errors import AgentNotFoundError

    registry = AgentRegistry()
    registry.load([tmp_path])
    with pytest.raises(AgentNotFoundError, match=str(tmp_path)):
        registry.require("late")
    (tmp_path / "late.md").write_text("---\nname: late\ndescription: x\nmemory: true\n---\n")
    assert registry.require("late").name == "late"  # checked again before saying "unknown"
    monkeypatch.setattr(AgentRegistry, "CHECK_INTERVAL", 0.0)  # as a second later
    (tmp_path / "late.md").write_text("---\nname: late\ndescription: x\nmemory: false\nextra: 1\n---\n")
    assert registry.get("late").memory_enabled is False
    (tmp_path / "late.md").unlink()
    with pytest.raises(AgentNotFoundError):
        registry.require("late")
