"""Live updates in the browser: what the API commits (a write, an agent's start) appears on the open screen
without a reload, is announced in the status region, reaches an agent's page only when that agent may read it,
and never re-renders a screen under the reader's hands (a dialog open: a "Refresh" button instead)."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.web.conftest import sign_in


def memories_of(site, agent: str) -> int:
    listed = site.call("GET", "/v1/agents").json()
    agents = listed["agents"] if isinstance(listed, dict) else listed
    return next(a["memories"] for a in agents if a["name"] == agent)


def agent_row(page, agent: str):
    return page.get_by_role("table", name="Agents with memory").get_by_role("row").filter(
        has=page.get_by_role("link", name=agent, exact=True))


def mark_the_page(page) -> None:
    """A value only this page (not a reloaded one) has, and every event the page received."""
    page.evaluate("""() => {
        window.notReloaded = true;
        window.heard = [];
        document.addEventListener("cortex:event", (e) => window.heard.push(e.detail));
    }""")


def test_a_write_appears_on_the_agents_screen_without_a_reload(page, site) -> None:
    sign_in(page, site.admin, "/agents")
    header = page.get_by_role("banner")
    expect(header.get_by_text("Live", exact=True)).to_be_visible()
    before = memories_of(site, "alice")
    expect(agent_row(page, "alice").get_by_role("cell").nth(1)).to_have_text(str(before))
    mark_the_page(page)
    site.store("alice", "the nightly build runs at 02:00")
    expect(agent_row(page, "alice").get_by_role("cell").nth(1)).to_have_text(str(before + 1))
    expect(page.locator("#live")).to_contain_text("New memory for alice")
    assert page.get_by_role("status").filter(has_text="New memory for alice").count() == 1
    assert page.evaluate("window.notReloaded") is True
    assert memories_of(site, "alice") == before + 1
    # the screen kept its place: the heading is the screen's, the navigation still marks Agents
    expect(page.get_by_role("heading", name="Agents", level=1)).to_be_visible()


def test_an_agent_start_and_its_capture_are_announced_to_that_agent(page, site) -> None:
    site.store("carol", "carol deploys with the blue-green script")
    sign_in(page, site.tokens["carol"], "/agents")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    mark_the_page(page)
    started = site.call("POST", "/v1/agents/carol/start", token=site.tokens["carol"], json={"task": "deploy"})
    assert started.status_code == 200 and "blue-green" in started.json()["block"]
    expect(page.locator("#live")).to_contain_text(re.compile(r"carol started: \d+ memor(y|ies) injected"))
    heard = page.evaluate("window.heard")
    assert [e["kind"] for e in heard] == ["injection"] and heard[0]["agent"] == "carol"
    before = memories_of(site, "carol")
    ended = site.call("POST", "/v1/agents/carol/end", token=site.tokens["carol"],
                      json={"output": "Done.\nLEARNED: the blue-green switch takes 40 seconds\n"})
    assert ended.status_code == 200
    expect(page.locator("#live")).to_contain_text("New capture for carol")
    expect(agent_row(page, "carol").get_by_role("cell").nth(1)).to_have_text(str(before + 1))
    assert memories_of(site, "carol") == before + 1
    assert page.evaluate("window.notReloaded") is True


def test_an_agent_token_hears_nothing_of_another_agents_private_memory(page, site) -> None:
    sign_in(page, site.tokens["bob"], "/agents")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    mark_the_page(page)
    site.store("alice", "alice's private: the admin password hint is <img src=x onerror=alert(1)>")
    site.store("alice", "backend: the API freezes on Fridays", scope="team:backend")
    site.store("bob", "bob's own: tests run in parallel")
    expect(page.locator("#live")).to_contain_text("New memory for bob")
    heard = page.evaluate("window.heard")
    assert [(e["agent"], e["scope"]) for e in heard] == [("alice", "team:backend"), ("bob", "agent:bob")]
    assert "alice's private" not in page.content() and "onerror" not in page.content()


def test_no_refresh_under_an_open_dialog_but_a_refresh_button(page, site) -> None:
    sign_in(page, site.admin, "/agents")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    mark_the_page(page)
    before = memories_of(site, "carol")
    cell = agent_row(page, "carol").get_by_role("cell").nth(1)
    expect(cell).to_have_text(str(before))
    # a dialog of the page is open (the one every screen's Forget uses): the screen must not change under it
    page.evaluate("""() => import("/static/js/dom.js").then((dom) => {
        window.answer = dom.confirmDialog("Forget this memory?", "It cannot be undone.", "Forget");
    })""")
    dialog = page.get_by_role("dialog", name="Forget this memory?")
    expect(dialog).to_be_visible()
    site.store("carol", "carol: the staging cluster is in eu-west-1")
    expect(page.locator("#live")).to_contain_text("New memory for carol")
    refresh = page.get_by_role("banner").get_by_role("button", name="Refresh")
    expect(refresh).to_be_visible()
    expect(page.get_by_role("banner")).to_contain_text("New activity")
    expect(cell).to_have_text(str(before))  # not re-rendered while the dialog is open
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    refresh.click()
    expect(cell).to_have_text(str(before + 1))
    expect(refresh).to_be_hidden()
    expect(page.get_by_role("heading", name="Agents", level=1)).to_be_focused()
    assert page.evaluate("window.notReloaded") is True


def test_no_refresh_while_typing_in_a_field_of_the_screen(page, site) -> None:
    sign_in(page, site.admin, "/agents")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    before = memories_of(site, "bob")
    cell = agent_row(page, "bob").get_by_role("cell").nth(1)
    expect(cell).to_have_text(str(before))
    # a field of the screen, being typed in (a screen's filter or edit box)
    page.evaluate("""() => import("/static/js/dom.js").then((dom) => {
        document.querySelector("#main section").append(dom.h("label", {for: "note"}, "Note"),
            dom.h("input", {id: "note", type: "text"}));
    })""")
    page.get_by_label("Note").fill("half a thought")
    site.store("bob", "bob: flaky test in the payments suite")
    expect(page.get_by_role("banner").get_by_role("button", name="Refresh")).to_be_visible()
    expect(cell).to_have_text(str(before))
    expect(page.get_by_label("Note")).to_have_value("half a thought")
    expect(page.get_by_label("Note")).to_be_focused()


def test_rapid_writes_refresh_the_screen_at_most_about_once_a_second(page, site) -> None:
    sign_in(page, site.admin, "/agents")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    expect(page.get_by_role("table", name="Agents with memory")).to_be_visible()  # the screen is drawn
    page.evaluate("""() => {
        window.renders = 0;
        document.addEventListener("cortex:shown", () => { window.renders += 1; });
    }""")
    before = memories_of(site, "lead")
    answer = site.call("POST", "/v1/agents/lead/memories/batch",
                       json={"entries": [{"content": f"lead note {i}"} for i in range(3)]})
    assert answer.status_code == 201
    for i in range(5):
        site.store("lead", f"lead single note {i}")
    expect(agent_row(page, "lead").get_by_role("cell").nth(1)).to_have_text(str(before + 8))
    expect(page.locator("#live")).to_contain_text("New memory for lead")
    renders = page.evaluate("window.renders")
    assert 1 <= renders <= 4, renders  # six events, a few seconds at most: not one rendering each


def test_the_header_says_in_words_when_the_page_is_not_live_and_it_comes_back(page, site) -> None:
    page.route("**/v1/events", lambda route: route.fulfill(status=404, body="gone for now"))
    sign_in(page, site.admin, "/agents")
    header = page.get_by_role("banner")
    expect(header.get_by_text("Offline", exact=True)).to_be_visible()
    page.unroute("**/v1/events")
    expect(header.get_by_text("Live", exact=True)).to_be_visible(timeout=15_000)  # it tries again by itself
    mark_the_page(page)
    site.store("alice", "alice: back online")
    expect(page.locator("#live")).to_contain_text("New memory for alice")


def test_the_live_parts_pass_the_accessibility_check(page, site) -> None:
    from axe_playwright_python.sync_playwright import Axe

    sign_in(page, site.admin, "/agents")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    expect(page.get_by_role("table", name="Agents with memory")).to_be_visible()  # the screen is drawn
    page.evaluate("""() => import("/static/js/dom.js").then((dom) => {
        document.querySelector("#main section").append(dom.h("label", {for: "note"}, "Note"),
            dom.h("input", {id: "note", type: "text"}));
    })""")
    page.get_by_label("Note").focus()
    site.store("alice", "alice: one more")
    expect(page.get_by_role("banner").get_by_role("button", name="Refresh")).to_be_visible()
    results = Axe().run(page)
    bad = [v["id"] for v in results.response["violations"] if v["impact"] in ("critical", "serious")]
    assert bad == []


def test_the_refresh_table_covers_every_screen(page, site) -> None:
    """Which event re-renders which screen (live.js's REFRESH), asked of the page's own module."""
    sign_in(page, site.admin, "/agents")
    cases = [
        ("/agents", {"kind": "write", "agent": "alice", "scope": "agent:alice"}, True),
        ("/agents", {"kind": "injection", "agent": "alice", "scope": "agent:alice"}, True),
        ("/agents/alice", {"kind": "capture", "agent": "alice", "scope": "agent:alice"}, True),
        ("/agents/alice", {"kind": "write", "agent": "bob", "scope": "agent:bob"}, False),
        ("/agents/alice", {"kind": "write", "agent": "bob", "scope": "team:backend"}, True),
        ("/memories/alice/01abc", {"kind": "write", "agent": "alice", "scope": "agent:alice", "ids": ["01abc"]}, True),
        ("/memories/alice/01abc", {"kind": "write", "agent": "alice", "scope": "agent:alice", "ids": ["01xyz"]}, False),
        ("/memories/alice/01abc", {"kind": "consolidation", "scope": "agent:alice", "ids": ["01abc", "01d"]}, True),
        ("/sessions", {"kind": "injection", "agent": "alice", "scope": "agent:alice"}, True),
        ("/sessions/alice/s-1", {"kind": "capture", "agent": "alice", "scope": "agent:alice"}, True),
        ("/sessions", {"kind": "consolidation", "scope": "agent:alice"}, False),
        ("/review", {"kind": "review", "agent": "alice", "scope": "team:backend"}, True),
        ("/review", {"kind": "consolidation", "scope": "team:backend", "review": 2}, True),
        ("/review", {"kind": "injection", "agent": "alice", "scope": "agent:alice"}, False),
        ("/team", {"kind": "write", "agent": "alice", "scope": "team:backend"}, True),
        ("/team/backend", {"kind": "consolidation", "scope": "team:backend"}, True),
        ("/runs", {"kind": "consolidation", "scope": "agent:alice"}, True),
        ("/runs", {"kind": "write", "agent": "alice", "scope": "agent:alice"}, False),
        ("/search", {"kind": "write", "agent": "alice", "scope": "agent:alice"}, False),  # a query is not re-run
        ("/admin", {"kind": "consolidation", "scope": "swarm"}, False),
        ("/review", {"kind": "gap", "dropped": 3}, True),
        ("/search", {"kind": "gap", "dropped": 3}, False),
    ]
    answers = page.evaluate("""(cases) => import("/static/js/live.js").then((live) =>
        cases.map(([path, event]) => live.changes(event, path)))""", [[p, e] for p, e, _ in cases])
    assert [(p, e["kind"], a) for (p, e, _), a in zip(cases, answers)] == [(p, e["kind"], w) for p, e, w in cases]
    said = page.evaluate("""() => import("/static/js/live.js").then((live) => [
        live.describe({kind: "capture", action: "transcript", agent: "alice", scope: "agent:alice"}),
        live.describe({kind: "write", action: "store", agent: "alice", scope: "team:backend", count: 3}),
        live.describe({kind: "review", action: "held", agent: "bob", scope: "agent:bob"}),
        live.describe({kind: "consolidation", action: "consolidate", scope: "team:backend", review: 2}),
    ])""")
    assert said == ["New capture for alice", "3 new memories for alice in team:backend",
                    "New memory held for review for bob", "Consolidation run in team:backend: 2 contradictions for review"]


def test_seven_tabs_of_one_browser_all_load_and_the_last_one_is_live(page, site) -> None:
    """A browser opens at most 6 connections to a host; a stream per tab left a 6th tab nothing to load with. One
    tab reads the stream for all the tabs of the browser, and another takes over when it closes."""
    sign_in(page, site.admin, "/agents")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    errors: list[str] = []
    tabs = [page]
    for _ in range(6):
        tab = page.context.new_page()
        tab.set_default_timeout(10_000)
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.goto("/agents")
        expect(tab.get_by_role("heading", name="Agents", level=1)).to_be_visible()
        tabs.append(tab)
    last = tabs[-1]
    expect(last.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    before = memories_of(site, "alice")
    site.store("alice", "seven tabs hear this one")
    for tab in (last, page):
        expect(agent_row(tab, "alice").get_by_role("cell").nth(1)).to_have_text(str(before + 1))
        expect(tab.locator("#live")).to_contain_text("New memory for alice")
    # the tab that reads for the others goes: another one takes over, and the last tab still hears
    page.close()
    site.store("alice", "still heard with the first tab gone")
    expect(agent_row(last, "alice").get_by_role("cell").nth(1)).to_have_text(str(before + 2))
    expect(last.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    assert memories_of(site, "alice") == before + 2
    assert not errors, errors
