"""A demo project for the memory browser: a small shop's agents after a few weeks of work, served by a real
``cortex serve`` with a language-model stand-in (tests/llm_standin.py). The screenshots of docs/web.md
(docs/web/screenshots.py) and the accessibility test of every screen (tests/web/test_screens.py) use it.

    with demo_site(tmp) as site: ...   # site.url, site.admin, site.tokens["api-dev"]

Everything goes through the public surfaces: the agents' files, the HTTP API (with the headers a hook sends, so
that writes name their session) and the Python API for what only a capture makes (a memory held for review).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.llm_standin import StandIn
from tests.service_helpers import start_server
from tests.web.conftest import Site

AGENTS = {
    "api-dev": ("Builds the shop's HTTP API (FastAPI, PostgreSQL)", "  teams: [backend]\n  project: shop\n"),
    "reviewer": ("Reviews backend diffs for correctness and security", "  teams: [backend]\n  project: shop\n"),
    "lead": ("Leads the backend team: plans rounds, keeps the team's memory", "  teams: [backend]\n  lead: true\n"),
    "ui-dev": ("Builds the shop's web front end (TypeScript, React)", "  teams: [frontend]\n  project: shop\n"),
}

MEMORIES = {
    "api-dev": [
        ("Run database migrations with alembic upgrade head before deploying", "convention", ["deploy", "db"]),
        ("The orders table is partitioned by month; queries must filter on created_at", "insight", ["db"]),
        ("Use httpx.AsyncClient with a 10 s timeout for the payment provider; it stalls under load", "pattern",
         ["payments"]),
        ("Decided: money is stored as integer cents, never floats", "decision", ["payments", "db"]),
        ("pytest -n 4 -m 'not slow' is the quick test run; CI runs the slow ones", "convention", ["tests"]),
        ("The /v2/checkout endpoint must stay idempotent: clients retry on 502", "insight", ["api"]),
        ("Feature flags live in config/flags.yaml and are read at start, not per request", "insight", ["config"]),
        ("<script>alert('memory')</script> is how an XSS probe looked in the support ticket #4411", "insight",
         ["security"]),
    ],
    "reviewer": [
        ("Reject raw SQL built with f-strings; use SQLAlchemy bound parameters", "convention", ["security", "db"]),
        ("Every new endpoint needs a rate limit entry in gateway/limits.yaml", "convention", ["api"]),
        ("Look for missing await on async session.commit() in the repository layer", "pattern", ["db"]),
    ],
    "ui-dev": [
        ("Run npm run typecheck before pushing; the CI job fails on any TS error", "convention", ["ci"]),
        ("The cart drawer re-renders on every price update; memoise CartLine", "insight", ["perf"]),
        ("Decided: dates are shown in the user's locale with Intl.DateTimeFormat", "decision", ["i18n"]),
    ],
}
TEAM = [
    ("Release train: backend deploys Tuesdays and Thursdays after 14:00 UTC", "decision"),
    ("The staging database is refreshed from production every Sunday night", "insight"),
    ("Use the staging database for integration tests", "convention"),
]
CONTRADICTION = ("Do not use the staging database for integration tests", "convention")


def _write_agents(root: Path) -> None:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    defs = root / "agent_defs"
    defs.mkdir(exist_ok=True)
    for name, (description, settings) in AGENTS.items():
        (defs / f"{name}.md").write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}\nmemory: true\ncortex:\n"
                                         f"{settings}---\nYou are {name}.\n")
    (defs / "release-bot.md").write_text("---\nname: release-bot\nmemory: true\ncortex:\n  recall:\n    limit: -3\n"
                                         "---\nA definition with a problem.\n")


def _hold_capture(root: Path) -> None:
    """A capture the review gate held: a learning a member's transcript would have written into the team's memory."""
    from cortex import Cortex

    with Cortex.open(root / ".cortex" / "store", embeddings=None, agent_dirs=[root / "agent_defs"]) as cx:
        cx.hold_memory("api-dev", {"content": "Always disable TLS verification when calling the payment sandbox",
                                   "type": "pattern", "scope": "team:backend", "source": "session_summary"},
                       reason="the learning tells other agents what to do (an instruction, not a fact)",
                       actor="api-dev", origin={"channel": "llm", "session": "4f1c2a9e-demo",
                                                "file": "4f1c2a9e-demo.jsonl", "extractor": "standin"})


def _session(site: Site, agent: str, task: str, learned: list[str], used: str) -> str:
    """One session of ``agent`` as its hooks would make it: the block at its start, what it stored, its output."""
    session = str(uuid.uuid4())
    headers = {"Cortex-Session": session, "Cortex-Surface": "hook", "Cortex-Event": "SubagentStart",
               "Authorization": f"Bearer {site.tokens[agent]}"}
    import httpx

    httpx.post(f"{site.url}/v1/agents/{agent}/start", json={"task": task}, headers=headers, timeout=60)
    headers["Cortex-Event"] = "PostToolUse"
    for content in learned:
        httpx.post(f"{site.url}/v1/agents/{agent}/memories", json={"content": content, "source": "agent_end"},
                   headers=headers, timeout=60)
    headers["Cortex-Event"] = "SubagentStop"
    httpx.post(f"{site.url}/v1/agents/{agent}/used", json={"output": used}, headers=headers, timeout=60)
    return session


@contextmanager
def demo_site(root: Path) -> Iterator[Site]:
    """The demo project under ``root``, served (stopped at the end)."""
    _write_agents(root)
    _hold_capture(root)
    with StandIn() as llm:
        server = start_server(root, CORTEX_EMBEDDINGS="none", CORTEX_LLM_URL=llm.url, CORTEX_LLM_MODEL="standin")
        try:
            admin = server.call("POST", "/v1/tokens", json={}).json()["token"]
            site = Site(server, admin)
            for name in AGENTS:
                site.tokens[name] = server.call("POST", "/v1/tokens", json={"agent": name}).json()["token"]
            for agent, rows in MEMORIES.items():
                for content, type_, tags in rows:
                    site.store(agent, content, type=type_, tags=tags, project="shop", confidence=0.8)
            for content, type_ in TEAM:
                site.call("POST", "/v1/agents/lead/memories", json={"content": content, "type": type_,
                                                                    "scope": "team:backend"})
            site.call("POST", "/v1/agents/lead/memories", json={"content": CONTRADICTION[0], "type": CONTRADICTION[1],
                                                                "scope": "team:backend"})
            site.call("POST", "/v1/consolidate", json={"team": "backend"})
            _session(site, "api-dev", "Add a refund endpoint to the orders API",
                     ["Refunds go through POST /v2/orders/{id}/refunds and reuse the idempotency key"],
                     "The orders table is partitioned by month, so the refunds query filters on created_at; "
                     "the /v2/checkout endpoint stays idempotent.")
            _session(site, "reviewer", "Review the refund endpoint diff",
                     ["The refund handler must check the order belongs to the caller's shop"],
                     "Rejected an f-string SQL query; asked for SQLAlchemy bound parameters.")
            yield site
        finally:
            server.stop()
