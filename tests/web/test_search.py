"""The Search screen: a box named Search, Enter shows hits with their fields, filters, why each ranked, the URL
keeps the query, a hit opens its detail; an agent token searches its own memory only."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.web.conftest import HOSTILE, assert_inert, sign_in, tab_to


def _seed(site) -> dict[str, dict]:
    made = {
        "flaky": site.store("alice", "The checkout integration test is flaky when the payment sandbox is slow",
                            type="insight", tags=["tests", "payments"]),
        "retry": site.store("alice", "Retry the payment sandbox call twice before failing the checkout",
                            type="pattern", tags=["payments"]),
        "bob": site.store("bob", "Bob's secret: the payment sandbox admin password rotates monthly"),
    }
    return made


def test_enter_shows_hits_with_their_fields_and_why_they_ranked(page, site) -> None:
    made = _seed(site)
    sign_in(page, site.admin, "/search")
    page.get_by_label("Agent").select_option("alice")
    box = page.get_by_role("searchbox", name="Search")
    box.fill("payment sandbox")
    box.press("Enter")
    hits = page.get_by_role("listitem").filter(has=page.get_by_role("link", name=re.compile("payment sandbox")))
    expect(hits).to_have_count(2)
    first = hits.first
    expect(first).to_contain_text("confidence")
    expect(first.get_by_text("agent", exact=True)).to_be_visible()  # its scope
    first.get_by_role("button", name="Why it ranked").click()
    explain = first.get_by_role("table")
    for part in ("Lexical", "Recency", "Usage", "Confidence"):
        expect(explain.get_by_role("rowheader", name=part)).to_be_visible()
    assert "q=payment+sandbox" in page.url and "agent=alice" in page.url
    page.reload()
    expect(page.get_by_role("link", name=made["retry"]["content"])).to_be_visible()
    expect(page.get_by_text("secret")).to_have_count(0)


def test_filters_narrow_the_hits(page, site) -> None:
    made = _seed(site)
    sign_in(page, site.admin, "/search?agent=alice&q=payment+sandbox")
    expect(page.get_by_role("link", name=made["flaky"]["content"]).first).to_be_visible()
    page.get_by_label("Type").select_option("pattern")
    page.get_by_role("searchbox", name="Search").press("Enter")
    expect(page.get_by_role("link", name=made["flaky"]["content"])).to_have_count(0)
    expect(page.get_by_role("link", name=made["retry"]["content"]).first).to_be_visible()
    page.get_by_label("Type").select_option("")
    page.get_by_label("Tags").fill("tests")
    page.get_by_role("searchbox", name="Search").press("Enter")
    expect(page.get_by_role("link", name=made["retry"]["content"])).to_have_count(0)
    expect(page.get_by_role("link", name=made["flaky"]["content"]).first).to_be_visible()
    page.go_back()
    expect(page.get_by_role("link", name=made["retry"]["content"]).first).to_be_visible()


def test_no_hits_says_so(page, site) -> None:
    sign_in(page, site.admin, "/search?agent=alice&q=zzzyzzy+nothing")
    expect(page.get_by_text("Nothing matches")).to_be_visible()


def test_clicking_a_hit_opens_its_detail(page, site) -> None:
    made = _seed(site)
    sign_in(page, site.admin, "/search?agent=alice&q=retry+sandbox")
    page.get_by_role("link", name=made["retry"]["content"]).first.click()
    expect(page).to_have_url(re.compile(f"/memories/alice/{made['retry']['id']}$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(made["retry"]["id"])


def test_an_agent_token_searches_its_own_memory_without_choosing(page, site) -> None:
    _seed(site)
    sign_in(page, site.tokens["alice"], "/search")
    expect(page.get_by_label("Agent")).to_have_count(0)
    box = page.get_by_role("searchbox", name="Search")
    box.fill("payment sandbox password")
    box.press("Enter")
    expect(page.get_by_role("status").filter(has_text="alice's memory")).to_be_visible()
    expect(page.get_by_text("password rotates")).to_have_count(0)


def test_hostile_text_in_a_hit_is_text(page, site) -> None:
    hostile = HOSTILE.format(" quokka ")
    site.store("alice", hostile)
    sign_in(page, site.admin, "/search?agent=alice&q=quokka")
    expect(page.get_by_role("link", name=hostile)).to_be_visible()
    assert_inert(page)


def test_search_by_keyboard_only(page, site) -> None:
    made = _seed(site)
    sign_in(page, site.tokens["alice"], "/search")
    tab_to(page, page.get_by_role("searchbox", name="Search"))  # from the top of the page
    page.keyboard.type("retry sandbox")
    page.keyboard.press("Enter")
    link = page.get_by_role("link", name=made["retry"]["content"]).first
    expect(link).to_be_visible()
    tab_to(page, link)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(f"/memories/alice/{made['retry']['id']}$"))
