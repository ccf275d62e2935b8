"""The Agents screens: every agent with memory and its figures (as the API gives them), the broken agent files,
one agent's page with a paged list of its memories; an agent token sees only itself."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.web.conftest import HOSTILE, assert_inert, serious_axe_violations, sign_in


def test_the_agents_screen_shows_each_agent_with_the_apis_figures_and_the_broken_files(page, site) -> None:
    site.store("carol", "Carol keeps the changelog in sync", type="decision")
    site.store("carol", "Carol tags releases with vX.Y.Z", type="convention", source="agent_end")
    want = site.call("GET", "/v1/agents/carol/overview").json()
    sign_in(page, site.admin, "/agents")
    agents = page.get_by_role("table", name="Agents with memory")
    row = agents.get_by_role("row").filter(has=page.get_by_role("link", name="carol", exact=True))
    cells = row.get_by_role("cell")
    expect(cells.nth(1)).to_have_text(str(want["total"]))
    expect(cells.nth(2)).to_contain_text("1 decision")
    expect(cells.nth(2)).to_contain_text("1 convention")
    expect(cells.nth(4)).to_contain_text("1 agent_end")
    expect(cells.nth(3)).to_have_text(f"{want['by_scope']['agent']} own")
    expect(cells.nth(5)).to_contain_text(f"({want['last_activity'][:16].replace('T', ' ')} UTC)")
    expect(cells.nth(6)).to_contain_text(f"{want['decay']['fresh']} fresh")
    expect(cells.nth(7)).to_have_text(f"{want['expiring_soon']} expiring within a week, "
                                      f"{want['prune_due']} due for the prune")
    for name in ("alice", "bob", "lead"):
        expect(agents.get_by_role("link", name=name, exact=True)).to_be_visible()
    broken = page.get_by_role("table", name="Agent files with problems")
    expect(broken).to_contain_text("broken")
    expect(broken).to_contain_text("limit")
    assert serious_axe_violations(page) == []


def test_an_agent_token_sees_only_its_own_agent(page, site) -> None:
    sign_in(page, site.tokens["bob"], "/agents")
    agents = page.get_by_role("table", name="Agents with memory")
    expect(agents.get_by_role("link", name="bob", exact=True)).to_be_visible()
    expect(agents.get_by_role("link", name="alice", exact=True)).to_have_count(0)
    page.goto("/agents/alice")
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    assert site.call("GET", "/v1/agents/alice/overview", token=site.tokens["bob"]).status_code == 404
    assert site.call("GET", "/v1/agents/bob/overview", token=site.tokens["bob"]).status_code == 200


def test_an_agents_page_shows_its_figures_and_the_team_and_swarm_memories_it_reads(page, site) -> None:
    site.store("bob", "Bob prefers small pull requests", type="convention")
    site.store("lead", "The backend team deploys on Tuesdays", scope="team:backend")
    site.store("lead", "Every agent writes tests first", scope="swarm")
    site.store("alice", "Alice's private note about the cache")
    want = site.call("GET", "/v1/agents/bob/overview", token=site.tokens["bob"]).json()
    assert want["by_scope"]["team:backend"] >= 1 and want["by_scope"]["swarm"] >= 1
    sign_in(page, site.tokens["bob"], "/agents/bob")
    glance = page.get_by_role("region", name="At a glance")
    expect(glance).to_contain_text(f"{want['by_scope']['team:backend']} team:backend")
    expect(glance).to_contain_text(f"{want['by_scope']['swarm']} swarm")
    expect(glance).to_contain_text(f"{want['total']} ")
    rows = page.get_by_role("table", name="Memories (the newest)").get_by_role("row")
    team = rows.filter(has=page.get_by_role("link", name="The backend team deploys on Tuesdays"))
    expect(team).to_contain_text("team:backend")
    expect(rows.filter(has=page.get_by_role("link", name="Every agent writes tests first"))).to_contain_text("swarm")
    expect(rows.filter(has=page.get_by_role("link", name="Bob prefers small pull requests"))).to_contain_text("own")
    expect(page.get_by_text("Alice's private note about the cache")).to_have_count(0)
    assert serious_axe_violations(page) == []


def test_an_agents_page_pages_through_its_memories(page, site) -> None:
    answer = site.call("POST", "/v1/agents/lead/memories/batch",
                       json={"entries": [{"content": f"Lead note number {i:03d} about the release"}
                                         for i in range(60)]})
    assert answer.status_code == 201
    sign_in(page, site.admin, "/agents/lead")
    expect(page.get_by_role("heading", name="At a glance")).to_be_visible()
    first = page.get_by_role("table", name="Memories (the newest)")
    expect(first.get_by_role("row")).to_have_count(51)  # a page of 50 and its header
    newest = set(first.get_by_role("link").all_inner_texts())
    page.get_by_role("link", name="Next page").click()
    expect(page).to_have_url(re.compile(r"/agents/lead\?cursor="))
    later = page.get_by_role("table", name="Memories (a later page)")
    expect(later.get_by_role("row")).not_to_have_count(0)
    older = set(later.get_by_role("link").all_inner_texts())
    assert len(newest) == 50 and len(older) >= 10 and not newest & older
    later.get_by_role("link").first.click()
    expect(page.get_by_role("heading", name="History")).to_be_visible()
    assert serious_axe_violations(page) == []


def test_hostile_text_in_the_list_is_text(page, site) -> None:
    hostile = HOSTILE.format("carol")
    site.store("carol", hostile)
    sign_in(page, site.admin, "/agents/carol")
    expect(page.get_by_role("link", name=hostile)).to_be_visible()
    assert_inert(page)


def test_an_agents_page_shows_what_proved_useful_and_what_was_shown_and_never_used(page, site) -> None:
    """The "proved useful" panel reads GET /v1/agents/{agent}/usage/memories: the memory the agent's output
    applied in other words, with its counts; the one shown every time and never used below it."""
    token = site.tokens["bob"]
    useful = site.call("POST", "/v1/agents/bob/memories", token=token, json={
        "content": "Run database migrations with alembic upgrade head before deploying"}).json()
    idle = site.call("POST", "/v1/agents/bob/memories", token=token, json={
        "content": f"Invoice PDFs are rendered with WeasyPrint {HOSTILE}"}).json()
    for _ in range(3):
        assert site.call("POST", "/v1/agents/bob/start", token=token, json={"limit": 100}).status_code == 200
        used = site.call("POST", "/v1/agents/bob/used", token=token,
                         json={"output": "I ran alembic upgrade head before deploying: migrations go first."})
        assert [m["id"] for m in used.json()] == [useful["id"]]
    want = {m["id"]: m for m in site.call("GET", "/v1/agents/bob/usage/memories?order=shown&limit=1000",
                                          token=token).json()}
    sign_in(page, token, "/agents/bob")
    panel = page.get_by_role("region", name="Proved useful")
    proved = panel.get_by_role("table", name="Memories that proved useful")
    row = proved.get_by_role("row").filter(has=page.get_by_role("link", name=re.compile("alembic upgrade head")))
    expect(row.get_by_role("cell").nth(1)).to_have_text(str(want[useful["id"]]["shown"]))
    expect(row.get_by_role("cell").nth(2)).to_have_text(str(want[useful["id"]]["used"]))
    expect(proved).not_to_contain_text("WeasyPrint")
    never = panel.get_by_role("table", name="Memories shown and never used")
    expect(never).to_contain_text("WeasyPrint")
    expect(never.get_by_role("row").filter(has_text="WeasyPrint").get_by_role("cell").nth(2)).to_have_text("0")
    assert want[idle["id"]]["used"] == 0 and want[idle["id"]]["shown"] >= 3
    assert_inert(page)
    assert serious_axe_violations(page) == []
