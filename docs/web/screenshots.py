"""Regenerate the screenshots of docs/web.md: the demo project (tests/web/demo.py) served by a real `cortex serve`,
each screen shot by headless Chromium (Debian's `chromium`, or $CORTEX_CHROMIUM).

    python docs/web/screenshots.py            # writes docs/web/*.png
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the repository: tests.web.demo

from tests.web.demo import demo_site  # noqa: E402

#: file name -> (path, what to do on the screen before the shot, or None)
SHOTS = ["signin", "agents", "agent", "search", "memory", "sessions", "session", "review", "team", "runs", "admin"]


def main() -> None:
    from playwright.sync_api import expect, sync_playwright

    chromium = os.environ.get("CORTEX_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        raise SystemExit("no Chromium: apt-get install chromium, or set CORTEX_CHROMIUM")
    with tempfile.TemporaryDirectory() as tmp, demo_site(Path(tmp)) as site:
        memory = site.call("GET", "/v1/agents/api-dev/search",
                           params={"query": "alembic migrations", "mode": "bm25"}).json()["hits"][0]["memory"]
        session = site.call("GET", "/v1/agents/api-dev/sessions").json()["items"][0]["session"]
        paths = {"agents": "/agents", "agent": "/agents/api-dev",
                 "search": "/search?agent=api-dev&q=payment+checkout", "memory": f"/memories/api-dev/{memory['id']}",
                 "sessions": "/sessions", "session": f"/sessions/api-dev/{session}", "review": "/review",
                 "team": "/team", "runs": "/runs", "admin": "/admin"}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            page = browser.new_page(base_url=site.url, viewport={"width": 1280, "height": 860})
            page.goto("/")
            expect(page.get_by_label("Token")).to_be_visible()
            page.screenshot(path=str(HERE / "signin.png"))
            page.get_by_label("Token").fill(site.admin)
            page.get_by_role("button", name="Sign in").click()
            expect(page.get_by_role("navigation", name="Main")).to_be_visible()
            for name, path in paths.items():
                page.goto(path)
                expect(page.locator("main h1")).to_have_count(1)
                expect(page.locator("main .loading")).to_have_count(0)
                if name == "search":
                    page.get_by_role("button", name="Why it ranked").first.click()
                page.screenshot(path=str(HERE / f"{name}.png"), full_page=True)
                print(f"docs/web/{name}.png  {path}")
            browser.close()


if __name__ == "__main__":
    main()
