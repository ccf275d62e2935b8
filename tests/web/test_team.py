"""The Team screen: a team's memory, what each member learned this round, and "End round" for a lead; who may
see which team."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.web.conftest import Site, llm_site, serious_axe_violations, sign_in

HOSTILE = "<img src=x onerror=alert(1)> LESSON: the <script>alert(1)</script> tag is only text here"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The site, its server with a stand-in language model (a round end needs one)."""
    with llm_site(tmp_path_factory.mktemp("team")) as (made, _llm):
        yield made


def _team(page):
    return page.get_by_role("region", name="Team backend")


def test_a_lead_sees_the_team_memory_and_each_members_learnings_and_ends_the_round(page, site) -> None:
    alice = site.store("alice", "LESSON: pin the postgres driver to 16.2 before upgrading")
    bob = site.store("bob", HOSTILE)
    carol = site.store("carol", "LESSON: carol is in no team")
    sign_in(page, site.tokens["lead"], "/team")
    expect(page.get_by_role("heading", name="Team", level=1)).to_be_visible()
    team = _team(page)
    expect(team.get_by_role("heading", name="Team memory", level=3)).to_be_visible()
    expect(team.get_by_text("The team memory is empty.")).to_be_visible()
    expect(team.get_by_role("heading", name="Learned this round", level=3)).to_be_visible()
    learned_alice = team.get_by_role("list", name="Learned by alice this round")
    expect(learned_alice).to_contain_text(alice["content"])
    expect(team.get_by_role("list", name="Learned by bob this round")).to_contain_text(
        "<script>alert(1)</script>")  # as text: no element was made of it
    assert page.locator("main img, main script").count() == 0
    expect(team).not_to_contain_text(carol["content"])
    expect(team.get_by_text("no round end yet")).to_be_visible()
    assert serious_axe_violations(page) == []

    team.get_by_role("button", name="End round").click()
    report = team.get_by_role("region", name="Round end of team backend")
    expect(report).to_be_visible()
    expect(report).to_contain_text(re.compile(r"Run \d{8}T\d{6}-[0-9a-f]{6} written"))
    expect(report.get_by_role("heading", name=re.compile(r"Created \(\d+\)"))).to_be_visible()
    runs = site.call("GET", "/v1/consolidate/runs", params={"team": "backend"}).json()
    assert [r["kind"] for r in runs] == ["round-end"] and runs[0]["created"] >= 1
    expect(report).to_contain_text(runs[0]["run"])
    # the team memory now holds the round's entries, and the new round is empty
    listed = site.call("GET", "/v1/agents/lead/list", params={"scope": "team:backend"}).json()["items"]
    assert any("postgres driver" in m["content"] for m in listed)
    expect(team.get_by_role("link", name=re.compile("postgres driver"))).to_be_visible()
    expect(team.get_by_text(runs[0]["run"]).first).to_be_visible()
    expect(learned_alice).to_have_count(0)
    round_now = site.call("GET", "/v1/teams/backend/round").json()
    assert round_now["last_round_end"]["run"] == runs[0]["run"]
    assert all(not m["memories"] for m in round_now["members"])
    assert bob["id"] not in {m["id"] for m in listed}
    assert serious_axe_violations(page) == []


def test_a_member_sees_its_team_and_only_its_own_learnings_and_cannot_end_the_round(page, site) -> None:
    mine = site.store("alice", "LESSON: alice learned the queue drains on shutdown")
    theirs = site.store("bob", "LESSON: bob learned something alice does not see here")
    sign_in(page, site.tokens["alice"], "/team")
    team = _team(page)
    expect(team.get_by_role("list", name="Learned by alice this round")).to_contain_text(mine["content"])
    expect(team).not_to_contain_text(theirs["content"])
    expect(team.get_by_role("heading", name="bob")).to_have_count(0)
    expect(page.get_by_role("button", name="End round")).to_have_count(0)
    # her own learning links to its detail, which she may open
    team.get_by_role("link", name=mine["content"]).click()
    expect(page).to_have_url(re.compile(f"/memories/alice/{mine['id']}$"))
    # through the API too: her round shows only her, a round end is refused
    answer = site.call("GET", "/v1/teams/backend/round", token=site.tokens["alice"]).json()
    assert [m["agent"] for m in answer["members"]] == ["alice"]
    assert site.call("POST", "/v1/teams/backend/round-end", token=site.tokens["alice"], json={}).status_code == 403


def test_an_agent_of_no_team_sees_none_and_cannot_read_another_teams_round(page, site) -> None:
    sign_in(page, site.tokens["carol"], "/team")
    expect(page.get_by_text("You are in no team.")).to_be_visible()
    expect(page.get_by_role("region", name=re.compile("^Team "))).to_have_count(0)
    assert site.call("GET", "/v1/teams/backend/round", token=site.tokens["carol"]).status_code == 403
    listed = site.call("GET", "/v1/agents/carol/list", token=site.tokens["carol"], params={"scope": "team:backend"})
    assert listed.status_code in (403, 404, 422)


def test_an_admin_sees_every_team_and_pages_the_team_memory_by_keyboard(page, site) -> None:
    for i in range(23):
        assert site.call("POST", "/v1/agents/lead/memories",
                         json={"content": f"team note number {i} about the deploy", "scope": "team:backend"}
                         ).status_code == 201
    sign_in(page, site.admin, "/team")
    team = _team(page)
    expect(team.get_by_role("button", name="End round")).to_be_visible()
    items = team.get_by_role("heading", name="Team memory").locator("xpath=following-sibling::div[1]//li")
    expect(items).to_have_count(20)
    more = team.get_by_role("button", name="More")
    more.focus()
    page.keyboard.press("Enter")
    expect(items).to_have_count(site.call("GET", "/v1/agents/lead/list", params={
        "scope": "team:backend", "limit": 200}).json()["items"].__len__())
    assert page.evaluate("document.activeElement.tagName") == "A"  # focus went to the first new memory
