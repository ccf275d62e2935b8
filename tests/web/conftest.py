"""The memory browser's tests: a real ``cortex serve`` over loopback, driven by headless Chromium (Debian's
``chromium``, through Playwright) by accessible names, the way a person or a screen reader finds things.

Chromium is found at ``$CORTEX_CHROMIUM``, else ``chromium`` on PATH; without it the tests skip, unless
``CORTEX_REQUIRE_BROWSER`` is set (CI sets it: there they must run).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.service_helpers import Server, start_server

#: Agents of the site: alice and bob in team backend led by lead; carol alone.
AGENTS = {
    "alice": "cortex:\n  teams: [backend]\n",
    "bob": "cortex:\n  teams: [backend]\n",
    "lead": "cortex:\n  teams: [backend]\n  lead: true\n",
    "carol": "",
}
BROKEN = "---\nname: broken\nmemory: true\ncortex:\n  recall:\n    limit: -3\n---\nA broken definition.\n"


def chromium_path() -> str | None:
    """Where Chromium is (``$CORTEX_CHROMIUM``, else ``chromium`` on PATH), or None."""
    return os.environ.get("CORTEX_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # one worker runs every browser test: Chromium and a server started once per module, not per worker
    for item in items:
        if "tests/web/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium (one per test module: Playwright's sync API keeps an event loop running in the thread,
    which must be gone before a test of another module calls asyncio.run in the same worker)."""
    path = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        path = None
    if path is None:
        if os.environ.get("CORTEX_REQUIRE_BROWSER"):
            pytest.fail("CORTEX_REQUIRE_BROWSER is set but Chromium or Playwright is missing "
                        "(apt-get install chromium; pip install -e '.[dev,browser-tests]')")
        pytest.skip("no Chromium or no Playwright (set CORTEX_CHROMIUM or install Debian's chromium; "
                    "pip install -e '.[dev,browser-tests]')")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox"])
        yield launched
        launched.close()


@dataclass
class Site:
    """A served project: its server, an admin token and one token per agent."""

    server: Server
    admin: str
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.url

    def call(self, method: str, path: str, token: str | None = None, **kwargs):
        """A request to the API (default: with the admin token)."""
        return self.server.call(method, path, token or self.admin, **kwargs)

    def store(self, agent: str, content: str, **fields) -> dict:
        answer = self.call("POST", f"/v1/agents/{agent}/memories", json={"content": content, **fields})
        assert answer.status_code == 201, answer.text
        return answer.json()


def make_site(root: Path) -> Site:
    """A project with the site's agents (and one broken file), served; tokens for an admin and each agent."""
    (root / ".git").mkdir(parents=True)
    defs = root / "agent_defs"
    defs.mkdir()
    for name, extra in AGENTS.items():
        (defs / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {name} of the test site\nmemory: true\n{extra}---\nYou are {name}.\n")
    (defs / "broken.md").write_text(BROKEN)
    server = start_server(root, CORTEX_EMBEDDINGS="none")
    admin = server.call("POST", "/v1/tokens", json={}).json()["token"]
    site = Site(server, admin)
    for name in AGENTS:
        site.tokens[name] = server.call("POST", "/v1/tokens", json={"agent": name}).json()["token"]
    return site


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A served project for the tests of one module (they may add to it; each test uses its own memories)."""
    made = make_site(tmp_path_factory.mktemp("site"))
    try:
        yield made
    finally:
        made.server.stop()


@pytest.fixture
def page(browser, site: Site) -> Iterator[object]:
    """A fresh browser context's page that may reach only the site's host (the page must work offline), and
    fails the test on any console error or uncaught exception (a CSP violation is one)."""
    context = browser.new_context(base_url=site.url)
    errors: list[str] = []
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(site.url)
                  else route.abort())
    page = context.new_page()
    page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.set_default_timeout(10_000)
    yield page
    context.close()
    # the browser logs every refused request (401, 403, 404, 409, 422): the page shows them; anything else fails
    expected = [e for e in errors if not any(code in e for code in ("401", "403", "404", "409", "422"))]
    assert not expected, expected


def sign_in(page, token: str, path: str = "/") -> None:
    """Open ``path`` and sign in with ``token`` through the form, by its label and button."""
    from playwright.sync_api import expect

    page.goto(path)
    page.get_by_label("Token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()


# -- team, runs, admin (web-team) ----------------------------------------------------------------------------

from contextlib import contextmanager  # this section's own import, kept with it


@contextmanager
def llm_site(root: Path) -> Iterator[tuple[Site, object]]:
    """A site whose server has a language model: tests/llm_standin.py (``CORTEX_LLM_URL``), answering by default
    (a team round end: an entry per member line holding ``LESSON:``, ``DECISION:``...). Yields (site, stand-in)."""
    from tests.llm_standin import StandIn

    with StandIn() as llm:
        patch = pytest.MonkeyPatch()
        patch.setenv("CORTEX_LLM_URL", llm.url)
        patch.setenv("CORTEX_LLM_MODEL", "standin")
        try:
            made = make_site(root)
        finally:
            patch.undo()
        try:
            yield made, llm
        finally:
            made.server.stop()


def serious_axe_violations(page) -> list[dict]:
    """The critical and serious violations axe-core finds on the page as it is now."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [{"id": v["id"], "nodes": [n["target"] for n in v["nodes"]]} for v in found
            if v["impact"] in ("critical", "serious")]


#: A memory text that would run script or add an element if the page ever parsed it as HTML.
HOSTILE = '<img src=x onerror="window.pwned=1">{}<script>window.pwned=2</script>'


def assert_inert(page) -> None:
    """Nothing a hostile text carried ran or was added to the screen."""
    assert page.evaluate("window.pwned") is None
    assert page.locator("main img").count() == 0


def tab_to(page, locator, presses: int = 40) -> None:
    """Press Tab from where the focus is until ``locator`` has it (AssertionError when it never does)."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if locator.evaluate("el => el === document.activeElement"):
            return
    raise AssertionError(f"{locator} cannot be reached with Tab")
