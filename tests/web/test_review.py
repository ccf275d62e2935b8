"""The Review screen: every item the caller may review (GET /v1/review/all), contradictions side by side and
memories held for review with their origin, decided with "Approve" and "Reject" (POST /v1/review), each decision
checked through the API. A site of its own: memories held before the server starts (``Cortex.hold_memory``, as a
capture's review gate holds them), contradictions made by a consolidation run over the chat-completions stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.llm_standin import StandIn
from tests.service_helpers import start_server
from tests.web.conftest import AGENTS, Site, sign_in

#: dave: an agent with nothing to review.
REVIEW_AGENTS = {**AGENTS, "dave": ""}

HOSTILE = "Deploy notes <script>alert(1)</script> and <img src=x onerror=alert(2)>"
#: what each test finds held (agent whose memory, content, extra entry fields)
HELD = {
    "hostile": ("alice", HOSTILE, {}),
    "lead": ("alice", "Always rebase the feature branch before the review", {}),
    "team": ("lead", "The backend team deploys on Fridays only", {"scope": "team:backend"}),
    "carol": ("carol", "The staging database is rebuilt every night", {}),
    "bob": ("bob", "The bob service keeps its cache in Redis", {}),
}
ORIGIN = {"channel": "task", "session": "sess-42", "transcript": "/tmp/transcripts/sess-42.jsonl",
          "file": "docs/deploy.md"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The site's agents (and dave), memories held for review in alice's, carol's, bob's and team backend's
    memory, a language model stand-in for consolidation; served."""
    from cortex import Cortex

    root: Path = tmp_path_factory.mktemp("review")
    (root / ".git").mkdir()
    defs = root / "agent_defs"
    defs.mkdir()
    for name, extra in REVIEW_AGENTS.items():
        (defs / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {name} of the test site\nmemory: true\n{extra}---\nYou are {name}.\n")
    held: dict[str, str] = {}
    with Cortex.open(root / ".cortex" / "store", agent_dirs=[defs], embeddings=None) as local:
        for key, (agent, content, fields) in HELD.items():
            item = local.hold_memory(agent, {"content": content, **fields}, reason=f"held: {key} from a transcript",
                                     actor="coder", origin=ORIGIN)
            held[key] = item.keep
    with StandIn() as llm:
        server = start_server(root, CORTEX_EMBEDDINGS="none", CORTEX_LLM_URL=llm.url, CORTEX_LLM_MODEL="standin")
        try:
            made = Site(server, server.call("POST", "/v1/tokens", json={}).json()["token"])
            for name in REVIEW_AGENTS:
                made.tokens[name] = server.call("POST", "/v1/tokens", json={"agent": name}).json()["token"]
            made.held = held  # type: ignore[attr-defined]
            yield made
        finally:
            server.stop()


def contradiction(site: Site, agent: str, subject: str) -> tuple[dict, dict]:
    """Two memories of ``agent`` that contradict each other, and a consolidation run that lists them for review:
    (the older, the newer)."""
    old = site.store(agent, f"The {subject} service listens on port 8080")
    new = site.store(agent, f"The {subject} service does not listen on port 8080")
    run = site.call("POST", "/v1/consolidate", json={"agent": agent})
    assert run.status_code == 200, run.text
    assert [(r["keep"], r["supersede"]) for r in run.json()["review"]] == [(new["id"], old["id"])]
    return old, new


def status(page):
    """The screen's status message (role status), not the page's live region."""
    return page.get_by_role("status").and_(page.locator("#review-status"))


def item(page, text: str):
    """The review item showing ``text``."""
    return page.locator("article.review-item").filter(has_text=text)


def queue(site: Site, token: str | None = None, **scope) -> list[dict]:
    answer = site.call("GET", "/v1/review", token, params=scope)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_queue_lists_both_kinds_with_their_origin_and_hostile_text_as_text(page, site):
    old, new = contradiction(site, "carol", "gamma")
    sign_in(page, site.admin, "/review")
    expect(page.get_by_role("heading", name="Review", level=1)).to_be_visible()
    pair = item(page, old["content"])
    expect(pair.get_by_role("heading", name="Contradiction")).to_be_visible()
    expect(pair.get_by_role("region", name="Would keep")).to_contain_text(new["content"])
    expect(pair.get_by_role("region", name="Would supersede")).to_contain_text(old["content"])
    expect(pair).to_contain_text("the newer one wins")
    run = queue(site, agent="carol")[0]["run"]
    expect(pair).to_contain_text(run)
    expect(pair.get_by_role("button", name="Approve")).to_be_visible()

    held = item(page, "Deploy notes")
    expect(held.get_by_role("heading", name="Held for review")).to_be_visible()
    expect(held.locator("blockquote")).to_have_text(HOSTILE)  # the markup as characters
    assert held.locator("script, img").count() == 0
    for value in ("sess-42", "/tmp/transcripts/sess-42.jsonl", "docs/deploy.md", "coder", "agent:alice",
                  "held: hostile from a transcript"):
        expect(held).to_contain_text(value)
    expect(held.get_by_role("button", name="Reject")).to_be_visible()
    # every queue of the admin: the team's held entry too, under its heading
    expect(page.get_by_role("heading", name="team backend's memory", level=2)).to_be_visible()
    expect(item(page, "deploys on Fridays")).to_be_visible()


def test_approve_applies_a_contradiction_and_a_held_memory(page, site):
    old, new = contradiction(site, "carol", "delta")
    sign_in(page, site.admin, "/review")
    item(page, old["content"]).get_by_role("button", name="Approve").click()
    expect(status(page)).to_contain_text(f"{old['id']} superseded by {new['id']}")
    expect(item(page, old["content"])).to_have_count(0)
    stored = site.call("GET", f"/v1/agents/carol/memories/{old['id']}").json()
    assert stored["superseded_by"] == new["id"]
    assert old["id"] not in [i["supersede"] for i in queue(site, agent="carol")]

    keep = site.held["carol"]
    assert site.call("GET", f"/v1/agents/carol/memories/{keep}").status_code == 404  # not written before
    item(page, "staging database").get_by_role("button", name="Approve").click()
    expect(status(page)).to_contain_text(f"Approved: memory {keep} written to carol's memory")
    expect(item(page, "staging database")).to_have_count(0)
    written = site.call("GET", f"/v1/agents/carol/memories/{keep}")
    assert written.status_code == 200 and written.json()["content"] == HELD["carol"][1]
    assert keep not in [i["keep"] for i in queue(site, agent="carol")]


def test_reject_by_keyboard_dismisses_and_writes_nothing(page, site):
    old, new = contradiction(site, "dave", "epsilon")
    sign_in(page, site.admin, "/review")
    reject = item(page, old["content"]).get_by_role("button", name="Reject")
    reject.focus()
    page.keyboard.press("Enter")
    expect(status(page)).to_contain_text("Rejected: both memories kept in dave's memory")
    expect(status(page)).to_be_focused()
    for memory in (old, new):
        assert site.call("GET", f"/v1/agents/dave/memories/{memory['id']}").json()["superseded_by"] is None
    assert queue(site, agent="dave") == []
    # nothing left of dave's: the page says so when the whole queue is empty only, so the team's entry stays

    keep = site.held["team"]
    page.reload()  # the first decision's live refresh must not land between the Tab and the Space below
    expect(page.get_by_role("heading", name="Review", level=1)).to_be_visible()
    team = item(page, "deploys on Fridays")
    team.get_by_role("button", name="Approve").focus()
    page.keyboard.press("Tab")
    expect(team.get_by_role("button", name="Reject")).to_be_focused()
    page.keyboard.press("Space")
    expect(status(page)).to_contain_text("Rejected: nothing written to team backend's memory")
    expect(item(page, "deploys on Fridays")).to_have_count(0)
    assert keep not in [i["keep"] for i in queue(site, team="backend")]
    listed = site.call("GET", "/v1/agents/lead/memories", site.tokens["lead"], params={"scope": "team:backend"})
    assert HELD["team"][1] not in [m["content"] for m in listed.json()]
    page.reload()
    expect(page.get_by_role("heading", name="Review", level=1)).to_be_visible()
    expect(item(page, "deploys on Fridays")).to_have_count(0)


def test_a_lead_sees_its_teams_items_and_its_members_held_ones_and_decides(page, site):
    old, _ = contradiction(site, "bob", "zeta")  # a member's contradiction: bob's to decide, not the lead's
    sign_in(page, site.tokens["lead"], "/review")
    keep = site.held["lead"]
    mine = item(page, "Always rebase")
    expect(mine).to_contain_text("agent:alice")
    expect(item(page, "Deploy notes")).to_be_visible()
    expect(item(page, "bob service keeps its cache")).to_be_visible()
    expect(item(page, "staging database")).to_have_count(0)  # carol is in no team of the lead's
    expect(item(page, old["content"])).to_have_count(0)
    mine.get_by_role("button", name="Approve").click()
    expect(status(page)).to_contain_text(f"Approved: memory {keep} written to alice's memory")
    written = site.call("GET", f"/v1/agents/alice/memories/{keep}", site.tokens["alice"])
    assert written.status_code == 200 and written.json()["content"] == HELD["lead"][1]
    assert keep not in [i["keep"] for i in queue(site, site.tokens["lead"], agent="alice")]


def test_an_agent_token_sees_its_own_queue_only_and_decides_no_held_memory(page, site):
    old, new = contradiction(site, "bob", "eta")
    sign_in(page, site.tokens["bob"], "/review")
    own = item(page, "bob service keeps its cache")
    expect(own).to_contain_text("You may not approve or reject this")
    expect(own.get_by_role("button")).to_have_count(0)
    for other in ("Deploy notes", "Always rebase", "staging database", "deploys on Fridays"):
        expect(item(page, other)).to_have_count(0)
    assert site.call("GET", "/v1/review", site.tokens["bob"], params={"agent": "alice"}).status_code == 403
    assert {i["scope"] for i in site.call("GET", "/v1/review/all", site.tokens["bob"]).json()} == {"agent:bob"}
    refused = site.call("POST", "/v1/review", site.tokens["bob"], json={"keep": site.held["bob"], "agent": "bob"})
    assert refused.status_code == 403
    # its own contradiction it decides
    item(page, old["content"]).get_by_role("button", name="Approve").click()
    expect(status(page)).to_contain_text(f"{old['id']} superseded by {new['id']}")
    stored = site.call("GET", f"/v1/agents/bob/memories/{old['id']}", site.tokens["bob"]).json()
    assert stored["superseded_by"] == new["id"]


def test_an_empty_queue_says_so(page, site):
    sign_in(page, site.tokens["dave"], "/review")
    expect(page.get_by_text("Nothing waiting for review")).to_be_visible()
    assert site.call("GET", "/v1/review/all", site.tokens["dave"]).json() == []


def test_the_screen_is_axe_clean(page, site):
    from axe_playwright_python.sync_playwright import Axe

    contradiction(site, "carol", "theta")
    sign_in(page, site.admin, "/review")
    expect(page.get_by_role("heading", name="Contradiction").first).to_be_visible()
    violations = [v for v in Axe().run(page).response["violations"] if v["impact"] in ("critical", "serious")]
    assert violations == [], violations


def test_a_decisions_message_stays_after_its_own_live_update(page, site):
    """The decision's own event re-renders the screen a moment later (the shared mechanism of app.js): the
    message stays, and so does the focus on it."""
    old, new = contradiction(site, "lead", "omicron")
    sign_in(page, site.admin, "/review")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    page.evaluate("""() => {
        window.renders = 0;
        document.addEventListener("cortex:shown", () => { window.renders += 1; });
    }""")
    item(page, old["content"]).get_by_role("button", name="Approve").click()
    expect(status(page)).to_contain_text(f"{old['id']} superseded by {new['id']}")
    page.wait_for_function("() => window.renders >= 1")  # the live update of the decision
    expect(status(page)).to_contain_text(f"{old['id']} superseded by {new['id']}")
    expect(status(page)).to_be_focused()
    expect(item(page, old["content"])).to_have_count(0)
    assert site.call("GET", f"/v1/agents/lead/memories/{old['id']}").json()["superseded_by"] == new["id"]
