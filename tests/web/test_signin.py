"""Signing in to the memory browser: the form, the session cookie, the CSRF token, sign-out, the headers."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from cortex.service.web import STATIC, static_files
from tests.paths import ROOT
from tests.web.conftest import sign_in


def test_sign_in_with_a_token_shows_the_navigation_and_survives_a_reload(page, site) -> None:
    sign_in(page, site.admin)
    nav = page.get_by_role("navigation", name="Main")
    for name in ("Agents", "Search", "Sessions", "Review"):
        expect(nav.get_by_role("link", name=name)).to_be_visible()
    assert site.admin not in page.url
    page.reload()
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    expect(page.get_by_role("heading", name="Agents", level=1)).to_be_visible()
    cookie = next(c for c in page.context.cookies() if c["name"] == "cortex_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert site.admin not in cookie["value"]


def test_a_wrong_token_is_refused_by_name(page, site) -> None:
    page.goto("/")
    page.get_by_label("Token").fill("ctx_not-a-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not valid")
    expect(page.get_by_role("navigation", name="Main")).to_be_hidden()


def test_sign_out_ends_the_session(page, site) -> None:
    sign_in(page, site.tokens["alice"])
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Token")).to_be_visible()
    page.reload()
    expect(page.get_by_label("Token")).to_be_visible()


def test_the_cookie_needs_the_sessions_key_on_every_request(site) -> None:
    answer = httpx.post(f"{site.url}/v1/session", json={"token": site.tokens["alice"]})
    assert answer.status_code == 200
    body = answer.json()
    assert body["agent"] == "alice" and not body["admin"] and body["csrf"]
    set_cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    cookies = {"cortex_session": answer.cookies["cortex_session"]}
    url = f"{site.url}/v1/agents/alice/memories"
    key = {"X-CSRF-Token": body["csrf"]}
    # a cookie reaches every port of the host: alone it opens nothing, not even a read or the session's key
    for method, path in (("GET", url), ("GET", f"{site.url}/v1/session"), ("GET", f"{site.url}/v1/events")):
        refused = httpx.request(method, path, cookies=cookies)
        assert refused.status_code == 401 and "X-CSRF-Token".lower() in refused.json()["error"]["message"].lower()
    assert httpx.get(url, cookies=cookies, headers=key).status_code == 200
    refused = httpx.post(url, json={"content": "written by a forged form"}, cookies=cookies,
                         headers={"X-CSRF-Token": "guessed"})
    assert refused.status_code == 401
    made = httpx.post(url, json={"content": "written by the page"}, cookies=cookies,
                      headers={"X-CSRF-Token": body["csrf"]})
    assert made.status_code == 201
    other = httpx.get(f"{site.url}/v1/agents/bob/memories", cookies=cookies, headers=key)
    assert other.status_code == 404  # the session is alice's token: bob is not hers


def test_sign_in_from_another_site_is_refused(site) -> None:
    answer = httpx.post(f"{site.url}/v1/session", json={"token": site.admin},
                        headers={"Origin": "http://evil.example"})
    assert answer.status_code == 401 and "set-cookie" not in answer.headers


def test_a_revoked_token_ends_its_sessions(site) -> None:
    token = site.call("POST", "/v1/tokens", json={"agent": "carol"}).json()
    answer = httpx.post(f"{site.url}/v1/session", json={"token": token["token"]})
    cookies = {"cortex_session": answer.cookies["cortex_session"]}
    key = {"X-CSRF-Token": answer.json()["csrf"]}
    assert httpx.get(f"{site.url}/v1/session", cookies=cookies, headers=key).status_code == 200
    assert site.call("DELETE", f"/v1/tokens/{token['id']}").status_code == 200
    assert httpx.get(f"{site.url}/v1/session", cookies=cookies, headers=key).status_code == 401


def test_the_page_has_a_strict_content_security_policy_and_hardening_headers(site) -> None:
    for path in ("/", "/agents", "/memories/alice/x", "/static/js/app.js"):
        answer = httpx.get(f"{site.url}{path}")
        assert answer.status_code == 200, path
        csp = answer.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
    assert httpx.get(f"{site.url}/nowhere").status_code == 404
    assert httpx.get(f"{site.url}/static/../__init__.py").status_code in (404, 422)
    nul = httpx.get(f"{site.url}/static/js/app.js%00.js")  # a NUL byte: a clear 422, not a crash
    assert nul.status_code == 422 and nul.json()["error"]["field"] == "path"


def test_head_on_the_pages_paths_answers_as_get(site) -> None:
    for path in ("/", "/agents", "/sessions/alice/ci%2Fjob", "/static/js/app.js"):
        head, get = httpx.head(f"{site.url}{path}"), httpx.get(f"{site.url}{path}")
        assert head.status_code == get.status_code == 200, path
        assert head.content == b"" and head.headers["content-length"] == str(len(get.content))
        assert head.headers["content-security-policy"] == get.headers["content-security-policy"]


def test_the_api_documentation_has_a_policy_of_its_own_and_runs_under_it(browser, site) -> None:
    """/docs and /redoc (FastAPI's, offline) are written with inline scripts: a policy that lets exactly theirs
    run (by hash), no framing; both pages work under it. The one thing it stops is ReDoc's logo from its CDN (no
    request leaves for another host)."""
    for path in ("/docs", "/redoc"):
        answer = httpx.get(f"{site.url}{path}")
        assert answer.status_code == 200, path
        csp = answer.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
        assert answer.headers["x-frame-options"] == "DENY" and answer.headers["x-content-type-options"] == "nosniff"
    assert "'sha256-" in httpx.get(f"{site.url}/docs").headers["content-security-policy"]
    context = browser.new_context(base_url=site.url)
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("/docs")
        expect(page.get_by_text("/v1/agents/{agent}/memories").first).to_be_visible(timeout=20_000)
        assert errors == []
        page.goto("/redoc")
        expect(page.get_by_text("/v1/agents/{agent}/memories").first).to_be_attached(timeout=20_000)
        assert all("https://cdn.redoc.ly/" in e and "img-src" in e for e in errors), errors
    finally:
        context.close()


def test_the_served_files_are_the_committed_files_byte_for_byte(site) -> None:
    files = static_files()
    assert "index.html" in files and "js/app.js" in files
    for relative, path in files.items():
        assert path.is_relative_to(ROOT / "cortex" / "service" / "web" / "static")
        assert httpx.get(f"{site.url}/static/{relative}").content == (STATIC / relative).read_bytes(), relative


def test_no_inline_script_or_style_in_the_page() -> None:
    html = (STATIC / "index.html").read_text()
    assert "<script>" not in html and not re.search(r"\son[a-z]+=", html) and "style=" not in html
    for path in STATIC.rglob("*.js"):
        assert not re.search(r"\.(inner|outer)HTML\s*=|insertAdjacentHTML|document\.write|eval\(|new Function",
                             path.read_text()), path


def test_a_new_tab_of_the_same_browser_stays_signed_in(page, site) -> None:
    memory = site.store("alice", "Opened in another tab")
    sign_in(page, site.admin)
    other = page.context.new_page()
    other.goto(f"/memories/alice/{memory['id']}")
    expect(other.get_by_role("heading", level=1)).to_contain_text(memory["id"])
    expect(other.get_by_text("Opened in another tab").first).to_be_visible()


def test_a_malformed_or_unknown_cookie_is_a_clear_401_and_the_page_asks_to_sign_in(page, site) -> None:
    for cookie in ("cortex_session=", "cortex_session=nope", 'cortex_session="\\x00;;', "a" * 5000):
        answer = httpx.get(f"{site.url}/v1/session", headers={"Cookie": cookie, "X-CSRF-Token": "x"})
        assert answer.status_code == 401, cookie
    page.context.add_cookies([{"name": "cortex_session", "value": "forged", "url": site.url}])
    page.goto("/agents")
    expect(page.get_by_label("Token")).to_be_visible()
