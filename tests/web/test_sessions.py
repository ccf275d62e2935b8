"""The Sessions screens: a session made through the real HTTP API (with its session header) or the real hook
command is listed by its id and agent, newest first; its page shows the exact block the API answered at its start,
which shown memories its output used, what it added and changed (linking to each memory's detail) and its
transcript; an agent token sees its own sessions only; memory text shows as text; axe finds nothing serious."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid

import httpx
import pytest
from playwright.sync_api import expect

from tests.service_helpers import env
from tests.web.conftest import sign_in

HOSTILE = "<img src=x onerror=alert(1)> <script>alert(1)</script> billing rollback notes"
TRANSCRIPT = "/home/dev/.claude/projects/billing/transcript.jsonl"


def in_session(site, method: str, path: str, token: str, session: str, **kwargs) -> httpx.Response:
    """A request as a hook of ``session`` sends it through the server (its activity headers)."""
    headers = {"Authorization": f"Bearer {token}", "Cortex-Session": session, "Cortex-Surface": "hook"}
    return httpx.request(method, f"{site.url}{path}", headers=headers, timeout=60, **kwargs)


@pytest.fixture(scope="module")
def made(site) -> dict:
    """A session of alice made through the API: a start, a use, a memory stored and one updated within it."""
    session = str(uuid.uuid4())
    token = site.tokens["alice"]
    cited = site.store("alice", "billing deploys use the --blue-green flag and deploy/billing.yaml")
    hostile = site.store("alice", HOSTILE)
    changed = site.store("alice", "billing deploys need the on-call approval")
    start = in_session(site, "POST", "/v1/agents/alice/start", token, session,
                       json={"task": "deploy the billing service <b>now</b>"})
    assert start.status_code == 200, start.text
    block = start.json()["block"]
    assert "onerror=alert(1)" in block and "<script>" in HOSTILE  # hostile text the page must show as text
    used = in_session(site, "POST", "/v1/agents/alice/used", token, session,
                      json={"output": f"Deployed with --blue-green as memory {cited['id']} says.",
                            "transcript": TRANSCRIPT})
    assert used.status_code == 200 and [m["id"] for m in used.json()] == [cited["id"]], used.text
    added = in_session(site, "POST", "/v1/agents/alice/memories", token, session,
                       json={"content": "billing deploys finish within four minutes"})
    assert added.status_code == 201, added.text
    updated = in_session(site, "PATCH", f"/v1/agents/alice/memories/{changed['id']}", token, session,
                         json={"content": "billing deploys need the release manager's approval"})
    assert updated.status_code == 200, updated.text
    return {"session": session, "block": block, "cited": cited, "hostile": hostile, "added": added.json(),
            "changed": changed}


def test_the_api_lists_the_session_and_refuses_it_to_another_agent(site, made) -> None:
    session = made["session"]
    listed = site.call("GET", "/v1/agents/alice/sessions", site.tokens["alice"]).json()
    mine = next(s for s in listed["items"] if s["session"] == session)
    assert (mine["agent"], mine["shown"], mine["used"], mine["added"], mine["changed"]) == ("alice", 3, 1, 1, 1)
    assert mine["task"] == "deploy the billing service <b>now</b>" and mine["transcripts"] == [TRANSCRIPT]
    detail = site.call("GET", f"/v1/agents/alice/sessions/{session}").json()
    assert detail["starts"][0]["block"] == made["block"]
    assert [(m["id"], m["used"]) for m in detail["shown"] if m["used"]] == [(made["cited"]["id"], "cited")]
    assert [m["id"] for m in detail["created"]] == [made["added"]["id"]]
    update = detail["changed"][0]
    assert (update["id"], update["action"], update["before"], update["after"]) == (
        made["changed"]["id"], "update", "billing deploys need the on-call approval",
        "billing deploys need the release manager's approval")
    refused = site.call("GET", f"/v1/agents/alice/sessions/{session}", site.tokens["bob"])
    assert refused.status_code == 404
    assert site.call("GET", "/v1/agents/alice/sessions", site.tokens["bob"]).status_code == 404
    assert session not in site.call("GET", "/v1/agents/bob/sessions", site.tokens["bob"]).text


def test_the_list_shows_the_session_by_id_and_agent_newest_first(page, site, made) -> None:
    older = made["session"]
    newer = str(uuid.uuid4())
    assert in_session(site, "POST", "/v1/agents/alice/start", site.tokens["alice"], newer,
                      json={"task": "a later task"}).status_code == 200
    sign_in(page, site.admin, "/sessions")
    expect(page.get_by_role("heading", name="Sessions", level=1)).to_be_visible()
    table = page.get_by_role("table", name=re.compile("Sessions of every agent"))
    link = page.get_by_role("link", name=re.compile("^" + re.escape(older[:8])))
    expect(table.get_by_role("link", name=re.compile("^" + re.escape(older[:8])))).to_be_visible()
    row = table.get_by_role("row").filter(has=link)
    expect(row).to_contain_text("alice")
    expect(row).to_contain_text("deploy the billing service <b>now</b>")  # a task as text
    expect(row).to_contain_text("3 / 1")
    links = table.get_by_role("link", name=re.compile("^(" + re.escape(older[:8]) + "|" + re.escape(newer[:8]) + ")"))
    expect(links).to_have_count(2)
    assert links.nth(0).get_attribute("title") == newer and links.nth(1).get_attribute("title") == older
    # the agent filter: bob's sessions only
    page.get_by_label("Agent").select_option("bob")
    expect(page.get_by_role("main").get_by_role("status")).to_have_text("No session on record yet.")
    page.get_by_label("Agent").select_option("alice")
    expect(page.get_by_role("table", name="Sessions of alice, newest first")
           .get_by_role("link", name=re.compile("^" + re.escape(older[:8])))).to_be_visible()


def test_a_sessions_page_shows_its_exact_block_what_it_used_and_its_diff(page, site, made) -> None:
    session = made["session"]
    sign_in(page, site.admin, "/sessions?agent=alice")
    page.get_by_role("link", name=re.compile("^" + re.escape(session[:8]))).click()
    expect(page.get_by_role("heading", name=f"Session {session}", level=1)).to_be_visible()
    assert session in page.url and session in page.title()
    for name in ("Block", "Used", "Changes", "Transcript"):
        expect(page.get_by_role("heading", name=name, level=2)).to_be_visible()
    block = page.locator("pre.block")
    expect(block).to_be_visible()
    assert block.text_content() == made["block"]  # exactly, hostile text included, as text
    assert page.locator("main img, main script, main b").count() == 0
    used = page.get_by_role("table", name=re.compile("which its output used"))
    cited_row = used.get_by_role("row").filter(has=page.get_by_role("link", name=made["cited"]["content"]))
    expect(cited_row).to_contain_text("Used (cited)")
    hostile_row = used.get_by_role("row").filter(has=page.get_by_role("link", name=HOSTILE))
    expect(hostile_row).to_contain_text("Not used")
    changed = page.get_by_role("table", name="Memories changed in this session")
    expect(changed).to_contain_text("update")
    expect(changed).to_contain_text("billing deploys need the on-call approval")
    expect(changed).to_contain_text("billing deploys need the release manager's approval")
    expect(page.get_by_role("region", name="Transcript")).to_contain_text(TRANSCRIPT)
    added = page.get_by_role("link", name=made["added"]["content"])
    assert added.get_attribute("href") == f"/memories/alice/{made['added']['id']}"
    added.click()
    expect(page).to_have_url(re.compile(f"/memories/alice/{made['added']['id']}$"))


def test_an_agent_token_sees_its_own_sessions_and_not_another_agents(page, site, made) -> None:
    session = made["session"]
    sign_in(page, site.tokens["alice"], "/sessions")
    expect(page.get_by_role("link", name=re.compile("^" + re.escape(session[:8])))).to_be_visible()
    expect(page.get_by_label("Agent")).to_have_count(0)  # no choice of agent: its own
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, site.tokens["bob"], f"/sessions/alice/{session}")
    expect(page.get_by_role("heading", name="Not found", level=1)).to_be_visible()
    expect(page.locator("pre.block")).to_have_count(0)
    page.goto("/sessions")
    expect(page.get_by_role("heading", name="Sessions", level=1)).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("^" + re.escape(session[:8])))).to_have_count(0)


def test_a_session_the_real_hook_command_started_is_listed_with_its_block(page, site) -> None:
    site.store("carol", "carol's builds run make check before every push")
    session = str(uuid.uuid4())
    payload = {"session_id": session, "transcript_path": "", "cwd": str(site.server.project),
               "hook_event_name": "SessionStart", "source": "startup"}
    ran = subprocess.run([sys.executable, "-m", "cortex", "hook", "claude", "SessionStart", "--agent", "carol"],
                         input=json.dumps(payload), cwd=site.server.project, capture_output=True, text=True, check=False,
                         env=env(PYTHONPATH=os.environ.get("PYTHONPATH", "")), timeout=120)
    assert ran.returncode == 0, ran.stderr
    context = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "make check before every push" in context
    sign_in(page, site.tokens["carol"], "/sessions")
    page.get_by_role("link", name=re.compile("^" + re.escape(session[:8]))).click()
    expect(page.get_by_role("heading", name=f"Session {session}", level=1)).to_be_visible()
    block = page.locator("pre.block").text_content()
    assert block and block.startswith("<agent-memory>") and block in context


def test_the_sessions_screens_pass_axe(page, site, made) -> None:
    from axe_playwright_python.sync_playwright import Axe

    sign_in(page, site.admin, "/sessions")
    expect(page.get_by_role("table", name=re.compile("Sessions of every agent"))).to_be_visible()
    for path in ("/sessions", f"/sessions/alice/{made['session']}"):
        if path != "/sessions":
            page.get_by_role("link", name=re.compile("^" + re.escape(made["session"][:8]))).first.click()
            expect(page.get_by_role("heading", name=f"Session {made['session']}")).to_be_visible()
        violations = [v for v in Axe().run(page).response["violations"] if v["impact"] in ("critical", "serious")]
        assert violations == [], (path, [(v["id"], v["nodes"][0]["target"]) for v in violations])


def test_a_session_whose_id_holds_a_slash_opens(page, site) -> None:
    """A session id is the harness's text: one holding "/" is listed and its page opens (the API decoded %2F into
    a second path segment and answered 404)."""
    session = "ci/job-7/attempt-2"
    assert in_session(site, "POST", "/v1/agents/carol/start", site.tokens["carol"], session,
                      json={"task": "a task in CI"}).status_code == 200
    answer = site.call("GET", "/v1/agents/carol/sessions/ci%2Fjob-7%2Fattempt-2")
    assert answer.status_code == 200 and answer.json()["info"]["session"] == session, answer.text
    sign_in(page, site.admin, "/sessions?agent=carol")
    link = page.get_by_role("link").and_(page.get_by_title(session, exact=True))
    assert link.get_attribute("href") == "/sessions/carol/ci%2Fjob-7%2Fattempt-2"
    link.click()
    expect(page.get_by_role("heading", name=f"Session {session}", level=1)).to_be_visible()
    expect(page.get_by_role("main")).to_contain_text("a task in CI")
    page.reload()  # the page's own path: the server answers the page, the page the session
    expect(page.get_by_role("heading", name=f"Session {session}", level=1)).to_be_visible()
