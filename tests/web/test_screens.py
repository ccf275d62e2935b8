"""Every screen of the memory browser on a realistic project (tests/web/demo.py): it loads offline (the page
fixture refuses any other host) with no console error, has one h1, axe-core finds no critical or serious
violation, and the main navigation works from the keyboard."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.web.conftest import Site, serious_axe_violations, sign_in
from tests.web.demo import demo_site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with demo_site(tmp_path_factory.mktemp("demo")) as made:
        yield made


def screens(site: Site) -> dict[str, str]:
    """Each screen's path, with the demo's own agent, memory and session."""
    memory = site.call("GET", "/v1/agents/api-dev/list", params={"limit": 1}).json()["items"][0]
    session = site.call("GET", "/v1/agents/api-dev/sessions").json()["items"][0]["session"]
    return {
        "Agents": "/agents", "Agent": "/agents/api-dev", "Search": "/search?agent=api-dev&q=migrations",
        "Memory": f"/memories/api-dev/{memory['id']}", "Sessions": "/sessions",
        "Session": f"/sessions/api-dev/{session}", "Review": "/review", "Team": "/team", "Runs": "/runs",
        "Admin": "/admin",
    }


def test_the_sign_in_screen_is_accessible(page, site) -> None:
    page.goto("/")
    expect(page.get_by_label("Token")).to_be_visible()
    assert serious_axe_violations(page) == []


def test_every_screen_loads_offline_with_one_h1_and_no_serious_accessibility_violation(page, site) -> None:
    sign_in(page, site.admin)
    found = {}
    for name, path in screens(site).items():
        page.goto(path)
        expect(page.locator("main h1")).to_have_count(1)
        expect(page.locator("main .loading")).to_have_count(0)
        found[name] = serious_axe_violations(page)
    assert found == {name: [] for name in found}


def test_an_agent_tokens_screens_are_accessible_too(page, site) -> None:
    sign_in(page, site.tokens["lead"])
    found = {}
    for name in ("Agents", "Sessions", "Review", "Team", "Runs", "Admin"):
        page.goto(screens(site)[name])
        expect(page.locator("main h1")).to_have_count(1)
        expect(page.locator("main .loading")).to_have_count(0)
        found[name] = serious_axe_violations(page)
    assert found == {name: [] for name in found}


def test_the_navigation_works_from_the_keyboard(page, site) -> None:
    sign_in(page, site.admin)
    nav = page.get_by_role("navigation", name="Main")
    for name in ("Search", "Sessions", "Review", "Team", "Runs", "Agents"):
        link = nav.get_by_role("link", name=name)
        link.focus()
        page.keyboard.press("Enter")
        expect(page.locator("main h1")).to_be_focused()
        expect(link).to_have_attribute("aria-current", "page")
