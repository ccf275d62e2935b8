"""Redaction on every channel (issue 29, finding 7): one redaction step on the write path covers every text
field, key, id, name, tag and metadata value (keys too) whatever the channel wrote it: notes (sync and the
watcher, which syncs the same way), each importer (mem0's metadata, ids and user/agent fields; the MCP memory
server's entity names, types, IRIs and keys; CLAUDE.md headings; Beads keys made of the text's first 60
characters), markers, task outcomes, and any write made under a channel's activity. The store is exported whole
(every graph, every version, the entity nodes) and searched for each secret and what a key could keep of it."""

from __future__ import annotations

import io
import json
import warnings
from pathlib import Path

import pytest

from cortex import Cortex
from cortex.importers.beads import key_of
from cortex.provenance import activity
from tests.service_helpers import make_project

#: Random strings in the shape of real keys (none is a real one).
GITHUB = "ghp_" + "Qm7Rt2Xv9Lp4Kd8Wn3Hs6Jf1Zc5Bg0Ny2Ta4"
AWS = "AKIAQ3N7W2XK9RLT5MPD"
OPENAI = "sk-proj-" + "Hw8Kd2Lq9Zr4Tv7Nx1Pc6Jm3Bs5Fg0Yu2Ei8Oa7"
SECRETS = (GITHUB, AWS, OPENAI)


def leaks(cx: Cortex) -> list[str]:
    """What of the secrets the whole store (every scope, version and entity node) still holds: a secret, its
    first 12 characters, or its slug (how a key derived from the text would keep it)."""
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cx.export(out, all=True, format="nquads")
    # IRIs percent-encode: compare the decoded text too
    from urllib.parse import unquote
    dump = out.getvalue().decode("utf-8")
    dump = dump + "\n" + unquote(dump)
    found = []
    for secret in SECRETS:
        slug = "".join(c if c.isalnum() else "-" for c in secret.lower())
        for fragment in (secret, secret[:12], slug[:12]):
            if fragment.lower() in dump.lower():
                found.append(fragment)
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = make_project(tmp_path / "proj", "dev")
    (project / ".cortex" / "notes" / "dev").mkdir(parents=True)
    return project


@pytest.fixture
def cx(project: Path):
    with Cortex.open(project / ".cortex" / "store", agent_dirs=[project / "agent_defs"], embeddings=None) as cx:
        yield cx


def quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


# -- notes ---------------------------------------------------------------------------------------


def test_notes_sync_redacts_text_and_headings_and_stays_idempotent(project, cx):
    notes = project / ".cortex" / "notes" / "dev" / "MEMORY.md"
    notes.write_text(f"# Deploy with {GITHUB}\n\nThe CI token is {AWS} and the model key {OPENAI}.\n\n"
                     "## Plain\n\nNothing secret here.\n")
    first = quiet(cx.sync_notes, "dev")[0]
    assert len(first.added) == 2
    assert leaks(cx) == []
    stored = [cx.get("dev", i) for i in first.added]
    assert any("[REDACTED:github-token]" in str(m.metadata) for m in stored)
    again = quiet(cx.sync_notes, "dev")[0]
    assert (again.added, again.updated, again.removed, again.unchanged) == ([], [], [], 2)
    notes.write_text(notes.read_text().replace("Nothing secret here.", f"Now it is: password={OPENAI[8:]}"))
    changed = quiet(cx.sync_notes, "dev")[0]
    assert len(changed.updated) == 1 and leaks(cx) == []


# -- importers -----------------------------------------------------------------------------------


def test_mem0_import_redacts_ids_metadata_and_user_fields(cx, tmp_path):
    item = {"id": f"mem-{GITHUB}", "memory": "The staging database is on port 5433", "hash": "abc",
            "metadata": {"note": f"key {AWS}", OPENAI: "as a key"}, "user_id": f"user {OPENAI}",
            "agent_id": AWS, "run_id": f"run-{GITHUB}", "categories": ["infra"],
            "created_at": "2026-11-20T10:00:00+00:00", "updated_at": "2026-11-20T10:00:00+00:00"}
    path = tmp_path / "get_all.json"
    path.write_text(json.dumps({"results": [item]}))
    report = quiet(cx.import_from, "mem0", path, agent="dev")
    assert len(report.imported) == 1 and sum(report.redacted.values()) >= 5
    assert leaks(cx) == []
    assert not any(s in report.model_dump_json() for s in SECRETS)
    again = quiet(cx.import_from, "mem0", path, agent="dev")
    assert again.imported == [] and len(again.skipped) == 1  # the redacted key finds the memory again


def test_mcp_memory_import_redacts_entity_names_types_iris_and_keys(cx, tmp_path):
    lines = [{"type": "entity", "name": f"token {GITHUB}", "entityType": f"cred {AWS}",
              "observations": [f"rotated monthly, the old one was {OPENAI}", "used by CI"]},
             {"type": "entity", "name": "CI", "entityType": "system", "observations": []},
             {"type": "relation", "from": "CI", "to": f"token {GITHUB}", "relationType": "uses"}]
    path = tmp_path / "memory.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    report = quiet(cx.import_from, "mcp-memory", path, agent="dev")
    assert len([i for i in report.imported if i.kind == "memory"]) == 2 and report.entities == 2
    assert leaks(cx) == []
    assert not any(s in report.model_dump_json() for s in SECRETS)
    again = quiet(cx.import_from, "mcp-memory", path, agent="dev")
    assert [i for i in again.imported] == []


def test_claude_md_import_redacts_headings_in_key_and_metadata(cx, tmp_path):
    path = tmp_path / "CLAUDE.md"
    path.write_text(f"# Project\n\nUse pnpm.\n\n## Token {GITHUB}\n\nDeploys read it from the vault.\n")
    report = quiet(cx.import_from, "claude", path, agent="dev")
    assert len(report.imported) == 2
    assert leaks(cx) == []
    assert not any(s in report.model_dump_json() for s in SECRETS)
    assert quiet(cx.import_from, "claude", path, agent="dev").imported == []


def test_beads_key_made_of_the_texts_first_60_characters_loses_the_secret(cx, tmp_path):
    content = f"deploy token {GITHUB} lives in the vault; rotate it monthly"
    line = {"key": key_of("learned", content), "type": "learned", "content": content, "source": "user",
            "tags": ["learned"], "ts": 1788340502, "bead": "b-1"}
    assert GITHUB[:12].lower().replace("_", "-") in line["key"]  # the plugin's key keeps the secret's start
    path = tmp_path / "knowledge.jsonl"
    path.write_text(json.dumps(line) + "\n")
    report = quiet(cx.import_from, "beads", path, agent="dev")
    assert len(report.imported) == 1
    assert leaks(cx) == [] and GITHUB[:12].lower().replace("_", "-") not in report.model_dump_json().lower()
    assert quiet(cx.import_from, "beads", path, agent="dev").imported == []


# -- markers, task outcomes, any channel's write, explicit stores ------------------------------------


def test_markers_and_task_outcomes_redact_content_and_metadata(cx):
    quiet(cx.agent_end, "dev", f"LEARNED: the staging deploy reads {AWS} from the environment")
    quiet(cx.record_task, "dev", f"rotate {GITHUB}", f"done; the new key is {OPENAI}")
    assert leaks(cx) == []


def test_every_write_of_a_channel_is_redacted_in_content_metadata_and_tags(cx):
    with activity(channel="consolidation"):
        memory = quiet(cx.store, "dev", f"merged: deploys use {GITHUB}", metadata={"from": AWS, OPENAI: [OPENAI]},
                       tags=["ops"])
    assert memory.content == "merged: deploys use [REDACTED:github-token]"
    assert leaks(cx) == []
    injected = quiet(cx.store, "dev", f"summary: key {AWS}", source="session_summary")
    assert AWS not in injected.content


def test_an_explicit_store_keeps_its_text_unless_switched_on(cx, monkeypatch):
    kept = cx.store("dev", f"my own note: {AWS}")
    assert kept.content == f"my own note: {AWS}"
    monkeypatch.setenv("CORTEX_REDACT_STORE", "1")
    from cortex.capture.redact import Redactor
    cx.redactor = Redactor.from_env()
    with pytest.warns(Warning, match="CORTEX_REDACT_STORE is on"):
        redacted = cx.store("dev", "a note", metadata={"deploy": f"uses {GITHUB}"})
    assert GITHUB not in json.dumps(redacted.metadata)


# -- what is left after redaction (finding 15) --------------------------------------------------------


def test_a_learning_that_is_little_more_than_a_secret_is_dropped(cx):
    from cortex.capture.gate import Gate

    assert Gate().judge("The deploy uses key [REDACTED:openai-key].").reason == "only-a-secret"
    assert Gate().judge("Rotate the staging deploy key [REDACTED:aws-access-key] monthly via vault").action == "store"
    with pytest.warns(Warning, match="only-a-secret"):
        captured = cx.agent_end("dev", f"LEARNED: The deploy uses key {OPENAI}.\n"
                                       f"LEARNED: Rotate the staging deploy key {AWS} monthly via vault")
    assert [m.content for m in captured] == ["Rotate the staging deploy key [REDACTED:aws-access-key] monthly via vault"]
    assert [m.content for m in cx.recall("dev", "deploy key")] == [captured[0].content]
