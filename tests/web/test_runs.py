"""The Runs screen: consolidation runs with what each merged, a dry run that changes nothing, a run that changes
what it reports, an undo that restores it (and one refused because it would overwrite a later change)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from tests.web.conftest import Site, llm_site, serious_axe_violations, sign_in


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The site, its server with a stand-in language model (contradictions and distillation need one)."""
    with llm_site(tmp_path_factory.mktemp("runs")) as (made, _llm):
        yield made


def _current(site: Site, agent: str, memory_id: str) -> dict:
    answer = site.call("GET", f"/v1/agents/{agent}/memories/{memory_id}")
    assert answer.status_code == 200, answer.text
    return answer.json()


def _runs(site: Site, **params) -> list[dict]:
    return site.call("GET", "/v1/consolidate/runs", params=params).json()


def test_dry_run_changes_nothing_run_merges_and_undo_restores(page, site) -> None:
    first = site.store("carol", "Use pytest with -n auto for the unit tests of the billing service.")
    second = site.store("carol", "use pytest with -n auto for the unit tests of the billing service")
    sign_in(page, site.admin, "/runs")
    expect(page.get_by_role("heading", name="Runs", level=1)).to_be_visible()
    page.get_by_label("Scope").select_option(label="agent carol")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"/runs\?scope=agent%3Acarol$"))
    expect(page.get_by_text("No consolidation run of agent carol yet.")).to_be_visible()

    page.get_by_role("button", name="Dry run").click()
    report = page.get_by_role("region", name=re.compile("^Dry run of agent carol"))
    expect(report).to_contain_text("Dry run: nothing was written.")
    expect(report.get_by_role("heading", name="Merged (1)")).to_be_visible()
    assert _runs(site, agent="carol") == []
    assert _current(site, "carol", first["id"])["superseded_by"] is None
    assert _current(site, "carol", second["id"])["superseded_by"] is None

    page.get_by_role("button", name="Run", exact=True).click()
    report = page.get_by_role("region", name="Run of agent carol", exact=True)
    expect(report).to_contain_text(re.compile(r"Run \d{8}T\d{6}-[0-9a-f]{6} written"))
    [run] = _runs(site, agent="carol")
    assert run["merged"] == 1 and run["merges"][0]["merged"] in ([first["id"]], [second["id"]])
    survivor, merged = run["merges"][0]["survivor"], run["merges"][0]["merged"][0]
    assert _current(site, "carol", merged)["superseded_by"] == survivor
    row = page.get_by_role("row", name=re.compile(run["run"]))
    expect(row).to_contain_text("1 merged")
    expect(row.get_by_role("link", name=survivor)).to_be_visible()  # what it merged, each linked
    expect(row.get_by_role("link", name=merged)).to_be_visible()
    assert serious_axe_violations(page) == []

    row.get_by_role("button", name="Undo").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text(run["run"])
    dialog.get_by_role("button", name="Undo run").click()
    expect(page.get_by_role("region", name=f"Run {run['run']} undone")).to_contain_text("Restored")
    expect(row).to_contain_text("undone")
    expect(row.get_by_role("button", name="Undo")).to_have_count(0)
    assert _current(site, "carol", merged)["superseded_by"] is None
    assert _current(site, "carol", survivor)["superseded_by"] is None
    assert _runs(site, agent="carol")[0]["undone_at"] is not None


def test_an_undo_that_would_overwrite_a_later_change_shows_the_apis_refusal(page, site) -> None:
    site.store("alice", "The staging database is rebuilt every night at 02:00 UTC.")
    site.store("alice", "the staging database is rebuilt every night at 02:00 UTC")
    report = site.call("POST", "/v1/consolidate", json={"agent": "alice"}).json()
    survivor = report["merges"][0]["survivor"]
    version = _current(site, "alice", survivor)["version"]
    changed = site.call("PATCH", f"/v1/agents/alice/memories/{survivor}",
                        json={"content": "The staging database is rebuilt every night at 03:00 UTC.",
                              "expected_version": version})
    assert changed.status_code == 200, changed.text
    sign_in(page, site.tokens["alice"], "/runs")
    # an agent token's choice is its own memory, and the page uses the keyboard throughout
    expect(page.get_by_label("Scope").locator("option")).to_have_count(1)
    row = page.get_by_role("row", name=re.compile(report["run"]))
    row.get_by_role("button", name="Undo").focus()
    page.keyboard.press("Enter")
    page.get_by_role("dialog").get_by_role("button", name="Undo run").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("would overwrite what happened since")
    assert _runs(site, agent="alice")[0]["undone_at"] is None
    assert "03:00" in _current(site, "alice", survivor)["content"]
    assert serious_axe_violations(page) == []


def test_an_agent_sees_only_its_own_runs_and_flagged_texts_show_as_text(page, site) -> None:
    hostile = "<script>alert(1)</script> the cache is enabled in production"
    site.store("bob", hostile)
    site.store("bob", "<script>alert(1)</script> the cache is not enabled in production")
    report = site.call("POST", "/v1/consolidate", json={"agent": "bob"}).json()
    assert report["review"], report  # the stand-in's contradiction, listed for review
    carol_runs = _runs(site, agent="carol")
    sign_in(page, site.tokens["bob"], "/runs?scope=agent:carol")  # not his: his own is shown instead
    expect(page.get_by_label("Scope")).to_have_value("agent:bob")
    row = page.get_by_role("row", name=re.compile(report["run"]))
    expect(row.get_by_role("heading", name="Flagged for review (1)")).to_be_visible()
    expect(row).to_contain_text("<script>alert(1)</script> the cache is")
    assert page.locator("main script").count() == 0
    for run in carol_runs:
        expect(page.get_by_text(run["run"])).to_have_count(0)
    assert site.call("GET", "/v1/consolidate/runs", token=site.tokens["bob"],
                     params={"agent": "carol"}).status_code == 403


def _count_renders(page) -> None:
    page.evaluate("""() => {
        window.renders = 0;
        document.addEventListener("cortex:shown", () => { window.renders += 1; });
    }""")


def test_the_report_of_a_run_and_of_its_undo_stays_after_their_live_update(page, site) -> None:
    """The run's own event re-renders the screen a moment later: its report stays (it was wiped to a line)."""
    site.store("lead", "The release train leaves every second Tuesday.")
    site.store("lead", "the release train leaves every second tuesday")
    sign_in(page, site.admin, "/runs?scope=agent:lead")
    expect(page.get_by_label("Scope")).to_have_value("agent:lead")
    expect(page.get_by_role("banner").get_by_text("Live", exact=True)).to_be_visible()
    _count_renders(page)
    page.get_by_role("button", name="Run", exact=True).click()
    report = page.get_by_role("region", name="Run of agent lead", exact=True)
    expect(report).to_contain_text(re.compile(r"Run \d{8}T\d{6}-[0-9a-f]{6} written"))
    page.wait_for_function("() => window.renders >= 1")  # the live update of the run re-rendered the screen
    [run] = _runs(site, agent="lead")
    row = page.get_by_role("row", name=re.compile(run["run"]))
    expect(row).to_contain_text("1 merged")
    expect(report).to_contain_text(f"Run {run['run']} written.")
    expect(report.get_by_role("heading", name="Merged (1)")).to_be_visible()

    _count_renders(page)
    row.get_by_role("button", name="Undo").click()
    page.get_by_role("dialog").get_by_role("button", name="Undo run").click()
    undone = page.get_by_role("region", name=f"Run {run['run']} undone")
    expect(undone).to_contain_text("Restored")
    page.wait_for_function("() => window.renders >= 1")
    expect(row).to_contain_text("undone")
    expect(undone).to_contain_text("Restored")
    expect(page.get_by_role("status").filter(has=undone)).to_have_count(1)
    assert _runs(site, agent="lead")[0]["undone_at"] is not None
