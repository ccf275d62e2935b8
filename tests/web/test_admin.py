"""The Admin screen: export (a download of the scope's RDF) and import (restore) through the page, the server's
state, and the refusal an agent token sees."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.web.conftest import serious_axe_violations, sign_in


def test_an_agent_token_cannot_open_admin(page, site) -> None:
    sign_in(page, site.tokens["alice"])
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin")).to_be_hidden()
    page.goto("/admin")
    expect(page.get_by_role("heading", name="Admin", level=1)).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("needs an admin token")
    expect(page.get_by_role("button", name="Export")).to_have_count(0)
    expect(page.get_by_label("RDF file")).to_have_count(0)
    token = site.tokens["alice"]
    assert site.call("GET", "/v1/export", token=token, params={"all": "true"}).status_code == 403
    assert site.call("POST", "/v1/import", token=token, params={"format": "trig"}, content=b"").status_code == 403


def test_export_downloads_a_file_that_imports_back(page, site, tmp_path) -> None:
    memory = site.store("carol", "<b>bold</b> The release train leaves on Thursdays at 15:00.", tags=["release"])
    sign_in(page, site.admin, "/admin")
    expect(page.get_by_role("heading", name="Server", level=2)).to_be_visible()
    expect(page.get_by_role("heading", name="Capture queue", level=2)).to_be_visible()
    expect(page.get_by_role("heading", name="Consolidation sweep", level=2)).to_be_visible()
    assert serious_axe_violations(page) == []
    page.get_by_label("Scope").select_option(label="agent carol")
    page.get_by_role("button", name="Export").click()
    link = page.get_by_role("link", name=re.compile(r"^Download cortex-agent-carol-.*\.trig$"))
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert re.fullmatch(r"cortex-agent-carol-[\d-]+\.trig", download.suggested_filename)
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    assert memory["id"] in saved.read_text()
    assert saved.read_bytes() == site.call("GET", "/v1/export", params={"agent": "carol"}).content

    # the memory is lost, then restored from the file through the Import button
    assert site.call("DELETE", f"/v1/agents/carol/memories/{memory['id']}").status_code == 204
    assert site.call("GET", f"/v1/agents/carol/memories/{memory['id']}").status_code == 404
    page.get_by_label("RDF file").set_input_files(saved)
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("status").filter(has_text="Imported")).to_contain_text("agent:carol: ")
    back = site.call("GET", f"/v1/agents/carol/memories/{memory['id']}")
    assert back.status_code == 200
    assert back.json()["content"] == memory["content"] and back.json()["tags"] == ["release"]
    assert page.locator("main b").count() == 0


def test_a_malformed_file_shows_the_error_and_loses_nothing(page, site) -> None:
    kept = site.store("bob", "The on-call rota is in the wiki.")
    before = httpx.get(f"{site.url}/v1/export", params={"all": "true"},
                       headers={"Authorization": f"Bearer {site.admin}"}).content
    sign_in(page, site.admin, "/admin")
    page.get_by_label("RDF file").set_input_files(
        {"name": "broken.trig", "mimeType": "application/trig", "buffer": b"<a> <b> this is not RDF {{ ."})
    page.get_by_role("button", name="Import").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_be_visible()
    expect(page.get_by_text("Nothing was imported: the store is as it was.")).to_be_visible()
    assert site.call("GET", f"/v1/agents/bob/memories/{kept['id']}").status_code == 200
    assert site.call("GET", "/v1/export", params={"all": "true"}).content == before
    assert serious_axe_violations(page) == []
