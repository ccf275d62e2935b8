"""The memory detail screen: its URL, History and Provenance, and the actions validate, edit (with the expected
version), supersede and forget, each checked through the HTTP API."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from tests.web.conftest import assert_inert, serious_axe_violations, sign_in


def _path(agent: str, memory_id: str) -> str:
    return f"/memories/{agent}/{memory_id}"


def test_the_detail_opens_by_its_url_after_a_reload_with_history_and_provenance(page, site) -> None:
    memory = site.store("alice", "Deploys go out on Tuesdays after the freeze", tags=["deploy"],
                        metadata={"ticket": "OPS-12"})
    sign_in(page, site.admin, _path("alice", memory["id"]))
    expect(page.get_by_role("heading", level=1)).to_contain_text(memory["id"])
    page.reload()
    expect(page.get_by_text("Deploys go out on Tuesdays after the freeze").first).to_be_visible()
    expect(page.get_by_role("heading", name="History")).to_be_visible()
    expect(page.get_by_role("heading", name="Provenance")).to_be_visible()
    expect(page.get_by_text("OPS-12")).to_be_visible()
    expect(page.get_by_role("img", name="Provenance graph")).to_be_visible()
    assert memory["id"] in page.url


def test_edit_sends_the_expected_version_and_a_stale_one_is_refused_clearly(page, site) -> None:
    memory = site.store("alice", "The cache TTL is five minutes")
    sign_in(page, site.admin, _path("alice", memory["id"]))
    page.get_by_role("button", name="Edit").click()
    # meanwhile someone else changes it
    assert site.call("PATCH", f"/v1/agents/alice/memories/{memory['id']}",
                     json={"content": "The cache TTL is ten minutes"}).status_code == 200
    page.get_by_label("Content").fill("The cache TTL is one minute")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("changed since you opened it")
    page.get_by_role("button", name="Reload the memory").click()
    expect(page.get_by_text("The cache TTL is ten minutes").first).to_be_visible()
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The cache TTL is one minute")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#memory-status").filter(has_text="Saved")).to_be_visible()
    now = site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").json()
    assert now["content"] == "The cache TTL is one minute" and now["version"] == 3
    history = site.call("GET", f"/v1/agents/alice/memories/{memory['id']}/history").json()
    assert [v["version"] for v in history] == [1, 2, 3]
    expect(page.get_by_role("table", name="Every version, oldest first").get_by_role("row")).to_have_count(4)


def test_validate_raises_confidence_and_is_recorded(page, site) -> None:
    memory = site.store("alice", "Lint with ruff before committing", confidence=0.6)
    sign_in(page, site.admin, _path("alice", memory["id"]))
    page.get_by_role("button", name="Validate").click()
    expect(page.locator("#memory-status").filter(has_text="Validated")).to_be_visible()
    assert site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").json()["confidence"] > 0.6
    prov = site.call("GET", f"/v1/agents/alice/memories/{memory['id']}/provenance").json()
    assert [(c["action"], c["surface"]) for c in prov["changes"]] == [("validate", "web")]
    expect(page.get_by_role("table", name="Changes since it was written")).to_contain_text("validate")


def test_supersede_leads_to_the_new_memory_and_the_old_one_names_it(page, site) -> None:
    old = site.store("alice", "We use Python 3.10 in production")
    sign_in(page, site.admin, _path("alice", old["id"]))
    page.get_by_role("button", name="Supersede").click()
    page.get_by_label("New content").fill("We use Python 3.11 in production")
    page.get_by_role("button", name="Supersede with this").click()
    expect(page.get_by_role("blockquote")).to_have_text("We use Python 3.11 in production")
    new_id = re.search(r"/memories/alice/([\w-]+)$", page.url).group(1)
    assert new_id != old["id"]
    assert site.call("GET", f"/v1/agents/alice/memories/{old['id']}").json()["superseded_by"] == new_id
    history = page.locator("section", has=page.get_by_role("heading", name="History", exact=True))
    expect(history.get_by_role("link", name=old["id"]).first).to_be_visible()  # the new one names what it superseded
    page.goto(_path("alice", old["id"]))
    history = page.locator("section", has=page.get_by_role("heading", name="History", exact=True))
    expect(history.get_by_role("link", name=new_id).first).to_be_visible()
    chain = page.get_by_role("list").filter(has_text="This memory")
    expect(chain.get_by_role("listitem")).to_have_count(2)
    expect(chain.get_by_role("listitem").nth(0)).to_contain_text("We use Python 3.10 in production")
    expect(chain.get_by_role("listitem").nth(1)).to_contain_text("We use Python 3.11 in production")
    expect(chain.get_by_role("listitem").nth(1).get_by_role("link", name=new_id)).to_be_visible()


def test_forget_asks_in_a_dialog_and_deletes_only_when_confirmed(page, site) -> None:
    memory = site.store("alice", "A memory to forget")
    sign_in(page, site.admin, _path("alice", memory["id"]))
    page.get_by_role("button", name="Forget").click()
    dialog = page.get_by_role("dialog", name="Forget this memory?")
    expect(dialog).to_be_visible()
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").status_code == 200
    page.get_by_role("button", name="Forget").click()
    page.get_by_role("dialog").get_by_role("button", name="Forget").click()
    expect(page.get_by_role("heading", name="Memory forgotten")).to_be_visible()
    assert site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").status_code == 404


def test_an_agent_token_cannot_open_another_agents_private_memory_by_its_url(page, site) -> None:
    secret = site.store("bob", "Bob's private note about the auth bypass")
    sign_in(page, site.tokens["alice"], _path("bob", secret["id"]))
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.get_by_text("auth bypass")).to_have_count(0)
    page.goto(_path("alice", secret["id"]))  # the id under her own agent: still not hers
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.get_by_text("auth bypass")).to_have_count(0)


def test_hostile_content_shows_as_text(page, site) -> None:
    hostile = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
    memory = site.store("alice", hostile)
    sign_in(page, site.admin, _path("alice", memory["id"]))
    expect(page.get_by_role("blockquote")).to_have_text(hostile)
    assert_inert(page)


def test_the_actions_work_from_the_keyboard(page, site) -> None:
    memory = site.store("alice", "Keyboard users validate too", confidence=0.5)
    sign_in(page, site.admin, _path("alice", memory["id"]))
    page.get_by_role("button", name="Validate").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#memory-status").filter(has_text="Validated")).to_be_visible()
    page.get_by_role("button", name="Forget").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_be_hidden()
    assert site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").status_code == 200


def test_provenance_names_the_session_hook_and_writer_with_a_graph(page, site) -> None:
    answer = httpx.post(f"{site.url}/v1/agents/alice/memories", timeout=60, json={"content": "Captured at the end"},
                        headers={"Authorization": f"Bearer {site.admin}", "Cortex-Surface": "hook",
                                 "Cortex-Event": "agent_end", "Cortex-Session": "sess-4f2a9c", "Cortex-File": "t.jsonl"})
    assert answer.status_code == 201, answer.text
    memory = answer.json()
    prov = site.call("GET", f"/v1/agents/alice/memories/{memory['id']}/provenance").json()
    assert prov["generated_by"]["session"] == "sess-4f2a9c"
    sign_in(page, site.admin, _path("alice", memory["id"]))
    section = page.locator("section", has=page.get_by_role("heading", name="Provenance"))
    expect(section.get_by_role("link", name="sess-4f2a9c")).to_have_attribute("href", "/sessions/alice/sess-4f2a9c")
    expect(section).to_contain_text("agent_end")
    expect(section).to_contain_text("t.jsonl")
    graph = section.get_by_role("img", name="Provenance graph")
    expect(graph).to_be_visible()
    desc = graph.locator("desc")
    expect(desc).to_contain_text("wasGeneratedBy")
    expect(desc).to_contain_text("wasAssociatedWith agent alice")
    expect(desc).to_contain_text("wasAttributedTo agent alice")


def test_a_member_is_told_the_api_refuses_it_a_team_memory_a_lead_may_change(page, site) -> None:
    shared = site.store("alice", "The backend team deploys with blue-green", scope="team:backend")
    path = f"/v1/agents/alice/memories/{shared['id']}"
    sign_in(page, site.tokens["bob"], _path("bob", shared["id"]))
    expect(page.get_by_role("blockquote")).to_have_text("The backend team deploys with blue-green")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The backend team deploys on Fridays")
    page.get_by_role("button", name="Save").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Not allowed:")
    expect(alert).to_contain_text("only its author ('alice') or a lead of team:backend may update")
    page.get_by_role("button", name="Forget").click()
    page.get_by_role("dialog").get_by_role("button", name="Forget").click()
    expect(page.get_by_role("alert")).to_contain_text("may forget")
    now = site.call("GET", path).json()
    assert (now["content"], now["version"]) == ("The backend team deploys with blue-green", 1)
    # the lead of the team may
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, site.tokens["lead"], _path("lead", shared["id"]))
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("The backend team deploys blue-green, canary first")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#memory-status").filter(has_text="Saved")).to_be_visible()
    now = site.call("GET", path).json()
    assert (now["content"], now["version"]) == ("The backend team deploys blue-green, canary first", 2)
    changes = site.call("GET", f"{path}/provenance").json()["changes"]
    assert [(c["action"], c["associated_with"], c["surface"]) for c in changes] == [("update", "lead", "web")]


def test_edit_works_from_the_keyboard(page, site) -> None:
    memory = site.store("alice", "Typed without a mouse", tags=["a"])
    sign_in(page, site.admin, _path("alice", memory["id"]))
    page.get_by_role("button", name="Edit").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_label("Content")).to_be_focused()
    page.keyboard.press("Control+A")
    page.keyboard.type("Typed from the keyboard")
    for _ in range(4):  # Type, Confidence, Tags, Save
        page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Save")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#memory-status").filter(has_text="Saved")).to_be_visible()
    now = site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").json()
    assert (now["content"], now["version"], now["tags"]) == ("Typed from the keyboard", 2, ["a"])


def test_no_serious_accessibility_violation(page, site) -> None:
    old = site.store("alice", "Accessible memory, first take", tags=["a11y"], metadata={"nested": {"k": [1, 2]}})
    new = site.call("POST", f"/v1/agents/alice/memories/{old['id']}/supersede",
                    json={"content": "Accessible memory, second take", "reason": "clearer"}).json()
    site.call("POST", f"/v1/agents/alice/memories/{new['id']}/validate")
    sign_in(page, site.admin, _path("alice", old["id"]))
    expect(page.get_by_role("heading", name="Provenance")).to_be_visible()
    expect(page.get_by_text('{"k":[1,2]}')).to_be_visible()  # nested metadata as JSON text
    assert serious_axe_violations(page) == []
    page.goto(_path("alice", new["id"]))
    expect(page.get_by_role("table", name="Changes since it was written")).to_be_visible()
    page.get_by_role("button", name="Edit").click()
    expect(page.get_by_label("Content")).to_be_visible()
    assert serious_axe_violations(page) == []
    page.get_by_role("button", name="Forget").click()
    expect(page.get_by_role("dialog")).to_be_visible()
    assert serious_axe_violations(page) == []


def test_an_actions_message_stays_after_its_own_live_update(page, site) -> None:
    """Validate and Save re-render the memory; their own event re-renders it again a moment later (the shared
    mechanism of app.js): the message stays."""
    memory = site.store("alice", "Deploy with the blue pipeline", confidence=0.5)
    sign_in(page, site.admin, _path("alice", memory["id"]))
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    page.evaluate("""() => {
        window.renders = 0;
        document.addEventListener("cortex:shown", () => { window.renders += 1; });
    }""")
    page.get_by_role("button", name="Validate").click()
    expect(page.locator("#memory-status").filter(has_text="Validated")).to_be_visible()
    page.wait_for_function("() => window.renders >= 2")  # the action's own render, then its live update
    expect(page.locator("#memory-status").filter(has_text="Validated")).to_be_visible()
    assert site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").json()["confidence"] > 0.5

    page.evaluate("() => { window.renders = 0; }")
    page.get_by_role("button", name="Edit").click()
    page.get_by_label("Content").fill("Deploy with the green pipeline")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#memory-status").filter(has_text="Saved")).to_be_visible()
    page.wait_for_function("() => window.renders >= 2")
    expect(page.locator("#memory-status").filter(has_text="Saved")).to_be_visible()
    expect(page.get_by_role("blockquote").filter(has_text="green pipeline")).to_be_visible()
    assert site.call("GET", f"/v1/agents/alice/memories/{memory['id']}").json()["content"] == \
        "Deploy with the green pipeline"
