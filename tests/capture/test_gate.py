"""The capture quality gate (cortex/capture/gate.py, docs/capture.md "Quality gate"): exact and near duplicates
confirm the stored memory, chatter and too little information are refused, near-misses (another number, path,
flag, version, a negation, an opposite) are stored; a batch counts its own stored candidates; the held-out
labelled set's refusal and confirmation precision is guarded here and measured by bench/capture.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from cortex.capture.gate import (
    CHATTER,
    EXACT,
    IN_BATCH,
    LITTLE,
    NEAR,
    Gate,
    Verdict,
    exact_key,
    informative,
    is_chatter,
    stem,
)
from cortex.errors import InvalidInputError
from tests.paths import ROOT

DATA = ROOT / "bench" / "data"


def judge(existing: list[str], candidate: str) -> Verdict:
    return Gate([(f"m{i}", text) for i, text in enumerate(existing)]).judge(candidate)


def test_a_verdict_is_a_frozen_value():
    verdict = Verdict("confirm", EXACT, "m1")
    assert (verdict.action, verdict.reason, verdict.match) == ("confirm", "exact-duplicate", "m1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.action = "store"  # type: ignore[misc]
    assert Gate().judge("Migrations live in db/migrations and run with alembic upgrade head.") == Verdict("store")


# --- exact duplicates -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("candidate", [
    "use --frozen-lockfile in CI", "USE --FROZEN-LOCKFILE IN CI!", "Use  `--frozen-lockfile`  in CI .",
    '"Use --frozen-lockfile in CI."', "**Use --frozen-lockfile in CI**"])
def test_the_same_text_up_to_case_spacing_and_punctuation_confirms_the_memory(candidate):
    gate = Gate([("m0", "Storybook runs on port 6006."), ("m1", "Use --frozen-lockfile in CI.")])
    assert gate.judge(candidate) == Verdict("confirm", EXACT, "m1")


def test_punctuation_inside_a_token_is_kept():
    assert exact_key("The timeout is 3.0s") != exact_key("The timeout is 30s")
    assert exact_key("Use `uv sync`, then run make.") == exact_key("use uv sync then run make")
    assert judge(["The timeout is 3.0s."], "The timeout is 30s.").action == "store"


# --- near duplicates ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stored, candidate", [
    ("Run pytest with -n 0 for the store tests.", "For the store tests, run pytest with -n 0."),
    ("The worker retries failed jobs three times.", "Failed jobs are retried three times by the worker."),
    ("Integration tests need Docker running.", "Always make sure Docker is running for the integration tests."),
    ("Background jobs must be idempotent because they are retried on failure.",
     "Background jobs are retried on failure, so they must be idempotent."),
    ("Deleting a workspace is asynchronous and answers 202.", "Workspace deletion is asynchronous and answers 202."),
    ("JWTs expire after 15 minutes and the gateway refreshes them.", "JWTs expire after 15 minutes."),  # a part
    ("The config loader merges defaults.yaml, the environment file and environment variables, in that order.",
     "The config loader merges defaults.yaml, then the environment file, then environment variables."),
    ("Before pushing, run the tests with `uv run pytest`.", "Run the tests with `uv run pytest` before pushing."),
])
def test_the_same_learning_in_other_words_confirms_the_memory(stored, candidate):
    verdict = judge(["Storybook runs on port 6006.", stored, "Logs go to stderr."], candidate)
    assert verdict == Verdict("confirm", NEAR, "m1")


@pytest.mark.parametrize("stored, candidate", [
    ("Use --frozen-lockfile in CI.", "Never use --frozen-lockfile locally."),
    ("The API client timeout is 30s.", "The API client timeout is 300s."),
    ("Config lives in src/config/settings.py.", "Config lives in src/config/local_settings.py."),
    ("Python 3.11 is the minimum version.", "Python 3.12 is the minimum version."),
    ("Always pass --no-cache to docker build in CI.", "Always pass --pull to docker build in CI."),
    ("Webhooks are retried on 5xx responses.", "Webhooks are not retried on 5xx responses."),
    ("Run the migrations before starting the dev server.", "Run the migrations after starting the dev server."),
    ("Enable strict mode in tsconfig.json.", "Disable strict mode in tsconfig.json."),
    ("The cache TTL is 5 minutes in staging.", "The cache TTL is 5 minutes in production."),
    ("The read replica lags up to a minute.", "The read replica lags up to ten minutes."),
    ("The feature flag new_checkout is on in staging.", "The feature flag new_checkout is off in staging."),
    ("Integration tests for the billing service need the Stripe mock server running on localhost.",
     "Integration tests for the invoicing service need the Stripe mock server running on localhost."),
    ("Run ruff before committing.", "Run ruff format before committing."),
    # a flag with "no" in it negates nothing; what is negated must be the same
    ("Use `--no-verify` when committing generated files.", "Do not use `--no-verify` when committing generated files."),
    ("It is safe in one step because Postgres 11+ does not rewrite the table.",
     "It is not safe in one step because Postgres 11+ does rewrite the table."),
    # two opposites trading places within the same sentence
    ("Integration tests run locally but are skipped in CI.", "Integration tests run in CI but are skipped locally."),
    ("Query logging is enabled in dev and disabled in prod.", "Query logging is enabled in prod and disabled in dev."),
    ("Reads go to the primary database; writes go to the replica.",
     "Reads go to the replica; writes go to the primary database."),
    ("The upload endpoint accepts multipart form data and rejects JSON.",
     "The upload endpoint accepts JSON and rejects multipart form data."),
    ("In the Unity project, physics runs in FixedUpdate and input is read in Update.",
     "In the Unity project, physics runs in Update and input is read in FixedUpdate."),
    ("Cookies use SameSite=Strict on the dashboard and SameSite=Lax on marketing pages.",
     "Cookies use SameSite=Lax on the dashboard and SameSite=Strict on marketing pages."),
    # an order stated by both, reversed
    ("Push the Docker image to the registry, then update the Helm release.",
     "Update the Helm release, then push the Docker image to the registry."),
    ("Import order: third-party packages before local modules.", "Import order: local modules before third-party packages."),
    ("Scale the batch node pool up before the nightly run.", "Scale the batch node pool down before the nightly run."),
])
def test_a_near_miss_is_stored(stored, candidate):
    assert judge([stored], candidate) == Verdict("store")


def test_a_candidate_that_adds_a_specific_detail_is_stored():
    assert judge(["Run the tests with pytest."], "Run the tests with pytest -n 0.").action == "store"
    assert judge(["Upload limit is 100 MB."], "Upload limit is 100 MB for avatars, 10 MB for logos.").action == "store"


def test_the_closest_memory_is_the_one_confirmed():
    existing = ["The orders table is partitioned by month.",
                "The orders table is partitioned by month; queries must filter on created_at.",
                "Note: the invoices table is partitioned by year."]
    assert judge(existing, "Note that the orders table is partitioned by month.") == Verdict("confirm", NEAR, "m0")


# --- too little information -----------------------------------------------------------------------------------


@pytest.mark.parametrize("candidate", ["ok", "see above", "LGTM", "Yes.", "+1", "TODO", "N/A", "Not sure.",
                                       "Check the docs.", "pytest", "Use it.", "", "   ", "...", "Same as before."])
def test_too_little_information_is_refused(candidate):
    assert judge(["Logs go to stderr."], candidate) == Verdict("refuse", LITTLE)


@pytest.mark.parametrize("candidate", ["fixed it", "Fixed.", "Updated."])
def test_a_bare_report_with_nothing_informative_is_too_little_information(candidate):
    assert judge([], candidate) == Verdict("refuse", LITTLE)


@pytest.mark.parametrize("candidate", ["Use uv, not pip.", "Port 5433 for test DB.", "Node 20 only.", "TZ=UTC for tests.",
                                       "pnpm, never npm.", "Squash-merge only.", "Use Decimal for money.",
                                       "Tabs in Makefiles.", "CI needs --frozen-lockfile.", "Use ULIDs for ids."])
def test_a_short_dense_learning_is_stored(candidate):
    assert judge(["Logs go to stderr."], candidate) == Verdict("store")


def test_informative_tokens():
    assert informative("Use uv, not pip.") == 3  # use, uv, pip
    assert informative("Port 5433 for test DB") == 4
    assert informative("ok, see above") == 0
    assert informative("set --workers=4 in ~/.config/app.toml") == 3


# --- session chatter ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("candidate", [
    "I'll now run the tests.", "Let me check the file.", "Done!", "Sure, here is the updated config.",
    "Great, all tests pass now.", "Now I will add the index to the migration.", "Looking at the code...",
    "The build is running.", "Thanks!", "Hello! How can I help you today?", "Thank you for your patience!",
    "I'm going to refactor the handler now.", "I've updated the README.", "Now let's run the migrations.",
    "All 42 tests pass.", "12 passed, 1 skipped in 3.41s", "Let me know if you need anything else!",
    "That should fix the issue.", "Running the test suite again to be sure.", "Excellent! The deployment succeeded.",
    "Let me check the logs. Done!",
])
def test_narration_and_status_of_the_moment_are_refused(candidate):
    assert judge(["Logs go to stderr."], candidate) == Verdict("refuse", CHATTER)


@pytest.mark.parametrize("candidate", [
    "Let's always run migrations in a transaction.",
    "I found that the cache key ignores the locale.",
    "Running tests with -n 0 avoids the xdist deadlock.",
    "Checking for None before calling close() prevents the crash.",
    "Updated pydantic to 2.11 because 2.10 breaks the validators.",
    "Fixed the flaky upload test by mocking the clock.",
    "The tests fail when TZ is not UTC.",
    "I'll remember: the staging DB is read-only.",
    "Let me note that the API returns 404 for soft-deleted users.",
    "Here's the trick: pytest needs -p no:cacheprovider in read-only dirs.",
    "Great catch: the retry loop never resets its counter.",
    "Done: moved the config to pyproject.toml; setup.cfg is gone.",
    "OK so the API returns 404 for soft-deleted users.",
    "Let me check the file. The config lives in config/app.toml, not in .env.",
    "Looking at the code, the retry loop never resets the counter.",
    "We're using Postgres 15 in prod.",
    "Run the linters in CI only, not locally.",
    "Run make itest before pushing.",
])
def test_a_learning_said_in_the_first_person_or_after_chatter_is_stored(candidate):
    assert not is_chatter(candidate)
    assert judge(["Logs go to stderr."], candidate) == Verdict("store")


# --- batches and counts ---------------------------------------------------------------------------------------


def test_a_candidate_stored_earlier_in_a_batch_counts_as_existing():
    gate = Gate([("m0", "Logs go to stderr.")])
    verdicts = gate.judge_all([
        "Redis runs on port 6380 in dev.",
        "redis runs on port 6380 in dev!",  # exact duplicate of the first
        "In dev, Redis runs on port 6380.",  # near duplicate of the first
        "Redis runs on port 6379 in dev.",  # another port: a learning of its own
        "Logs go to stderr",  # the stored memory: confirmed, not a batch duplicate
        "Redis runs on port 6379 in dev.",
    ])
    assert verdicts == [Verdict("store"), Verdict("refuse", IN_BATCH), Verdict("refuse", IN_BATCH), Verdict("store"),
                        Verdict("confirm", EXACT, "m0"), Verdict("refuse", IN_BATCH)]
    # the batch is not remembered: the next call judges against the memories only
    assert gate.judge("Redis runs on port 6380 in dev.") == Verdict("store")
    assert gate.judge_all(["Redis runs on port 6380 in dev."]) == [Verdict("store")]


def test_counts_count_every_verdict_by_reason():
    gate = Gate([("m0", "Use --frozen-lockfile in CI.")])
    gate.judge_all(["use --frozen-lockfile in CI", "ok", "Let me check the file.", "Port 5433 for test DB.",
                    "port 5433 for test db", "Always use --frozen-lockfile in CI."])
    gate.judge("Done!")
    assert gate.counts == {EXACT: 1, LITTLE: 1, CHATTER: 2, "store": 1, IN_BATCH: 1, NEAR: 1}


# --- with vectors ---------------------------------------------------------------------------------------------


def fake_vectors(table: dict[str, list[float]]):
    def vectors(texts: list[str]) -> np.ndarray:
        rows = np.array([table[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return vectors


def test_vectors_confirm_a_paraphrase_the_words_alone_miss():
    stored, candidate = "Our Node services use ESM.", "Our Node services are written as ES modules (ESM)."
    other = "The gateway strips X-Internal-User from requests."
    table = {stored: [1, 0, 0], candidate: [0.97, 0.2, 0], other: [0, 0, 1]}
    existing = [("m0", other), ("m1", stored)]
    assert Gate(existing).judge(candidate) == Verdict("store")
    assert Gate(existing, vectors=fake_vectors(table)).judge(candidate) == Verdict("confirm", NEAR, "m1")
    rows = fake_vectors(table)([other, stored])
    assert Gate(existing, vectors=fake_vectors(table), existing_vectors=rows).judge(candidate).match == "m1"
    assert Gate(existing, vectors=fake_vectors(table), semantic_near=0.999).judge(candidate) == Verdict("store")


def test_vectors_never_merge_a_swap_a_negation_or_a_text_without_shared_words():
    table = {"Tests for the billing service need the Stripe mock.": [1, 0],
             "Tests for the invoicing service need the Stripe mock.": [1, 0.01],
             "Billing tests don't need the Stripe mock.": [1, 0.02],
             "Spin up stripe-mock first.": [1, 0.03]}
    gate = Gate([("m0", "Tests for the billing service need the Stripe mock.")], vectors=fake_vectors(table))
    assert gate.judge_all(list(table)[1:]) == [Verdict("store")] * 3


def test_vectors_find_duplicates_within_a_batch():
    table = {"Our Node services use ESM.": [1, 0], "Our Node services are written as ES modules (ESM).": [0.98, 0.1]}
    gate = Gate(vectors=fake_vectors(table))
    assert gate.judge_all(list(table)) == [Verdict("store"), Verdict("refuse", IN_BATCH)]


def test_bad_settings_are_named():
    with pytest.raises(InvalidInputError, match="near"):
        Gate(near=0)
    with pytest.raises(InvalidInputError, match="semantic_near"):
        Gate(semantic_near=1.5)
    with pytest.raises(InvalidInputError, match="min_informative"):
        Gate(min_informative=-1)
    with pytest.raises(InvalidInputError, match="existing_vectors"):
        Gate([("m0", "Logs go to stderr.")], existing_vectors=np.zeros((2, 3)))
    with pytest.raises(InvalidInputError, match="existing"):
        Gate([("m0", 3)])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError, match="candidate"):
        Gate().judge(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="vectors"):
        Gate([("m0", "Logs go to stderr.")], vectors=lambda texts: np.ones((len(texts), 4)) / 2,
             existing_vectors=np.ones((1, 3))).judge("Logs go to stdout.")


def test_stem():
    assert stem("caching") == stem("caches") == stem("cache")
    assert stem("deletion") == stem("deleted") == stem("deleting")
    assert stem("retried") == stem("retries") == stem("retry")
    assert stem("pass") == "pass" and stem("status") == "status"


# --- the labelled sets ----------------------------------------------------------------------------------------


def measured(path: Path) -> tuple[float, float]:
    """(refuse+confirm precision, accuracy) of the lexical gate on a labelled set."""
    right = said = correct = total = 0
    for line in path.read_text().splitlines():
        item = json.loads(line)
        verdict = Gate([(f"m{i}", t) for i, t in enumerate(item["existing"])]).judge(item["candidate"])
        good = verdict.action == item["expected"] and (
            verdict.action != "confirm" or item["existing"][int(verdict.match[1:])] == item["existing"][item["match"]])
        total += 1
        correct += good
        if verdict.action != "store":
            said += 1
            right += good
    return right / said, correct / total


def test_the_held_out_set_keeps_refusals_and_merges_precise():
    precision, accuracy = measured(DATA / "gate_heldout.jsonl")
    assert precision >= 0.95
    assert accuracy >= 0.9


def test_the_tuned_set_keeps_refusals_and_merges_precise():
    precision, accuracy = measured(DATA / "gate.jsonl")
    assert precision >= 0.98
    assert accuracy >= 0.95
