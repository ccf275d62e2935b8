"""Write bench/data/gate.jsonl and bench/data/gate_heldout.jsonl: the labelled sets of the capture quality gate
(cortex/capture/gate.py, measured by bench/capture.py).

Each line: ``{"existing": [texts already stored], "candidate": ..., "expected": "store"|"confirm"|"refuse",
"reason": the expected reason or null, "match": the index in ``existing`` of the memory to confirm or null,
"kind": the group the item belongs to}``. Candidates are what a coding agent's marker lines or a transcript
extractor propose: genuine learnings (store), short dense ones (store), the same learning again verbatim up to
case, spacing and punctuation (confirm, exact) or in other words (confirm, near), near-misses that look like a
stored memory but say something else: another number, version, path, flag, tool, environment, a negation
(store), narration and status of the moment (refuse, chatter), and too little information (refuse).
``existing`` always holds a few unrelated memories drawn from a pool (seeded: the files are stable).

The first set was written alongside the rules and tuned on; the held-out set (other wording: third-person
extractor sentences, longer multi-clause learnings, other chatter) was written after the rules were tuned and
never used to change them.

    python bench/data/make_gate_set.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

#: Memories already stored that have nothing to do with the candidates (each item gets a few).
POOL = [
    "The search endpoint paginates with an opaque cursor, not page numbers.",
    "Feature flags are read from config/flags.yaml at startup; changing them needs a restart.",
    "The frontend uses React Query; never call fetch directly from components.",
    "Celery workers must be restarted after changing tasks.py.",
    "Log lines are JSON; use jq to read them locally.",
    "The billing service owns the invoices table; other services read it through the API.",
    "Commit messages follow Conventional Commits (feat:, fix:, chore:).",
    "GraphQL resolvers live in api/graphql/resolvers, one file per type.",
    "The nightly job rebuilds the search index at 02:00 UTC.",
    "Use structlog, not the standard logging module, in new code.",
    "Snapshots in tests/__snapshots__ are updated with pytest --snapshot-update.",
    "The mobile app talks to /api/v2 only.",
    "Secrets are injected by Vault Agent into /vault/secrets at pod start.",
    "The design system components are in packages/ui and published as @acme/ui.",
    "Database connections go through PgBouncer in transaction mode: no session-level prepared statements.",
    "The E2E suite uses Playwright with the chromium project only.",
    "S3 uploads larger than 100 MB must use multipart upload.",
    "Rate limiting is per API key, 600 requests per minute.",
    "The team prefers small PRs under 400 changed lines.",
    "Kafka topics are created by Terraform in infra/kafka, never by the services.",
    "Translations are in locales/*.json and extracted with npm run i18n:extract.",
    "The admin panel is Django admin mounted at /internal/admin.",
    "Feature branches are deleted after merge by a GitHub setting.",
    "Dates are stored as UTC timestamps and converted in the client.",
    "The Go services are built with CGO_ENABLED=0 for the distroless images.",
    "Sentry is only enabled when SENTRY_DSN is set.",
    "Storybook runs on port 6006.",
    "The monorepo uses Turborepo; run turbo run build from the root.",
    "Emails are sent through the notifications service, never directly via SMTP.",
    "Protobuf files live in proto/ and are compiled with buf generate.",
    "The legacy PHP app is frozen: only security fixes.",
    "Redis is used for sessions and the rate limiter, not as a primary store.",
    "Pre-commit hooks run ruff, mypy and prettier.",
    "API errors use RFC 7807 problem+json bodies.",
    "The data team's dbt models live in analytics/models.",
    "Images are resized by the imgproxy sidecar, not in the app.",
    "Background jobs must be idempotent: they are retried on failure.",
    "Use the factories in tests/factories.py instead of creating models by hand.",
    "Staging is reset from a production snapshot every Monday.",
    "The Rust crate uses tokio with the multi-threaded runtime.",
    "Helm charts are in deploy/charts; values per environment in deploy/values.",
    "The CLI is built with Typer and exposed as the acme command.",
    "Webhook signatures are HMAC-SHA256 over the raw body.",
    "Only the platform team can change the CI runners.",
    "The public docs are built with MkDocs Material from docs/.",
    "Feature work targets the develop branch; main is release-only.",
    "The search cluster runs OpenSearch 2.11.",
    "Avoid ORM lazy loading in list endpoints: use select_related.",
    "Time zones in the scheduler are always Europe/Berlin.",
    "The payments SDK is pinned because 5.x changed the webhook format.",
]

# --- the tuned set ------------------------------------------------------------------------------------------

LEARNINGS = [
    "The integration tests need Docker running: they start Postgres with testcontainers.",
    "pytest-xdist breaks the SQLite fixtures, so run tests/store/test_store.py with -n 0.",
    "Migrations live in db/migrations and are applied with alembic upgrade head.",
    "The API container reads its settings from environment variables prefixed with APP_.",
    "mypy runs in strict mode; new modules need full type annotations.",
    "The frontend dev server proxies /api to localhost:8000 through vite.config.ts.",
    "Import sorting is done by ruff's isort rules, not by isort itself.",
    "The orders table is partitioned by month; queries must filter on created_at to hit one partition.",
    "Flaky upload tests were caused by the shared tmp dir; each test now gets tmp_path.",
    "The CI cache key includes the hash of uv.lock, so changing dependencies invalidates it.",
    "Windows paths break the file watcher; the project only supports macOS and Linux for development.",
    "The GraphQL schema is generated from the Python types; do not edit schema.graphql by hand.",
    "Long-running requests are cut at 60 seconds by the load balancer.",
    "The ingest worker batches writes in groups of 500 rows to keep transactions short.",
    "JWTs from the auth service expire after 15 minutes and are refreshed by the gateway.",
    "The monorepo's TypeScript packages must be built in dependency order; turbo handles it.",
    "Dockerfiles use multi-stage builds; the final image is based on python:3.12-slim.",
    "The search ranking weights title matches three times more than body matches.",
    "Unit tests must not hit the network; the conftest blocks sockets with pytest-socket.",
    "The payments webhook handler must return 200 within 5 seconds or Stripe retries.",
    "Elasticsearch mappings are versioned; a mapping change needs a reindex into a new index.",
    "The config loader merges defaults.yaml, then the environment file, then environment variables.",
    "Soft-deleted users keep their rows with deleted_at set; queries go through the active() manager.",
    "The React app uses Zustand for client state and React Query for server state.",
    "Background exports write to S3 and send the user a presigned link valid for 24 hours.",
    "The Go linter config is .golangci.yml; errcheck and govet are mandatory.",
    "Feature flags default to off in tests unless a test enables them with the flag fixture.",
    "Our Postgres version is 15; generated columns and MERGE are available.",
    "Tenant isolation is enforced by row-level security policies, not by application filters alone.",
    "The Makefile's test target runs unit tests only; integration tests are make itest.",
    "The notification service de-duplicates messages by idempotency key for 24 hours.",
    "Static assets are served from the CDN; the app only serves index.html.",
    "The staging environment shares the Redis instance with QA, so key prefixes must include the env.",
    "gRPC deadlines propagate from the gateway; a handler should check ctx.Done() in long loops.",
    "The PDF renderer needs the fonts in assets/fonts installed in the container.",
    "Cron schedules in the scheduler use UTC even though the UI shows local time.",
    "The repository uses git LFS for files under assets/models.",
    "A new API endpoint needs an OpenAPI entry in openapi.yaml and a contract test.",
    "The legacy importer expects CSV files encoded in Windows-1252.",
    "Rust builds are slow in CI unless sccache is configured with the S3 bucket.",
    "Accessibility checks run with axe in the Playwright tests; violations fail the build.",
    "The analytics events schema is validated against JSON Schema files in schemas/events.",
    "Kubernetes readiness probes hit /healthz/ready, liveness probes /healthz/live.",
    "Database fixtures are loaded once per session and each test runs in a rolled-back transaction.",
    "The mobile team ships on Thursdays; API changes must stay backward compatible for two releases.",
    "The search service caches query embeddings in Redis for one hour.",
    "Integration tests against the sandbox bank API are skipped unless BANK_SANDBOX=1.",
    "The release script tags the commit and the CI builds the images from the tag.",
    "User uploads are scanned by ClamAV before they are made public.",
    "Our Node services use ESM; require() is not available in new files.",
    "The ORM's bulk_create skips save() signals, so audit entries must be written separately.",
    "The cost report reads from the read replica, which can lag up to a minute.",
    "The docs site is deployed by Netlify from the docs/ folder on every push to main.",
    "Large JSON responses are streamed with orjson; the default encoder is too slow for exports.",
    "Alembic autogenerate misses server defaults; check them by hand in every migration.",
    "The Python services pin their dependencies with uv lock and install them with uv sync.",
    "Playwright traces are uploaded as CI artifacts only when a test fails.",
    "The websocket gateway drops idle connections after 90 seconds without a ping.",
    "Terraform state is in the S3 backend with a DynamoDB lock table.",
    "Prices are stored in cents as integers; never use floats for money.",
    "The i18n keys are namespaced by page, e.g. checkout.summary.title.",
    "The shared ESLint config is in packages/eslint-config and extends next/core-web-vitals.",
    "Test data for the importer lives in tests/data/import and is generated by scripts/make_import_data.py.",
    "The gateway strips the X-Internal-User header from external requests.",
    "Background tasks run in a separate process pool so that CPU-heavy work does not block the event loop.",
    "Deleting a workspace is asynchronous: the API answers 202 and a job removes the data.",
    "Code owners for the billing module are in .github/CODEOWNERS and must approve changes there.",
    "The typing stubs for the internal SDK are generated by stubgen into typings/.",
    "Local HTTPS uses mkcert certificates stored in .certs/.",
    "The event bus delivers at least once, so consumers must handle duplicates.",
]

DENSE = [
    "Use uv, not pip.",
    "Port 5433 for test DB.",
    "Node 20 only.",
    "Tabs in Makefiles.",
    "pnpm, never npm.",
    "Run mypy --strict before pushing.",
    "TZ=UTC for tests.",
    "ruff format, not black.",
    "Python 3.12 required.",
    "Max PR size: 400 lines.",
    "API base path: /api/v2.",
    "Use httpx, not requests.",
    "Redis on 6380 locally.",
    "Squash-merge only.",
    "No ORM in the hot path.",
    "CI needs --frozen-lockfile.",
    "Go 1.22 for the agent.",
    "Use zod for validation.",
    "Timeouts in ms, not s.",
    "Dates: ISO 8601, UTC.",
    "pytest -n 0 for store tests.",
    "Prefer dataclasses over dicts.",
    "Logs go to stderr.",
    "Env file: .env.local.",
    "Use Decimal for money.",
]

EXACT = [  # (stored, candidate): the same text up to case, spacing and punctuation
    ("Use --frozen-lockfile in CI.", "use --frozen-lockfile in CI"),
    ("The API client timeout is 30s.", "The API client timeout is 30s"),
    ("Run the migrations before starting the dev server.", "run the migrations before starting the dev server."),
    ("Integration tests need the Docker daemon running.", "Integration tests need the Docker daemon running!"),
    ("Use `uv sync` to install dependencies.", "Use uv sync to install dependencies."),
    ("Config lives in src/config/settings.py.", "Config lives in src/config/settings.py"),
    ("Never commit .env files.", "NEVER commit .env files."),
    ("The staging database is reset every Monday.", "The staging  database is reset every Monday."),
    ("Prices are stored in cents.", "\"Prices are stored in cents.\""),
    ("Use pnpm, not npm, in the frontend.", "Use pnpm not npm in the frontend"),
    ("The worker retries failed jobs three times.", "the worker retries failed jobs three times"),
    ("Storybook runs on port 6006.", "Storybook runs on port 6006"),
    ("Tests must run with TZ=UTC.", "Tests must run with TZ=UTC"),
    ("Redis keys must include the environment prefix.", "Redis keys must include the environment prefix"),
    ("Never use floats for money.", "never use floats for money!"),
    ("The load balancer cuts requests at 60 seconds.", "The load balancer cuts requests at 60 seconds."),
    ("Alembic autogenerate misses server defaults.", "*Alembic autogenerate misses server defaults.*"),
    ("Webhooks must answer within 5 seconds.", "Webhooks must answer within 5 seconds ."),
    ("Use select_related in list endpoints.", "Use `select_related` in list endpoints"),
    ("Protobufs are compiled with buf generate.", "protobufs are compiled with buf generate"),
    ("The docs are built with MkDocs.", "The docs are built with MkDocs"),
    ("Go binaries are built with CGO_ENABLED=0.", "Go binaries are built with CGO_ENABLED=0"),
    ("Feature flags default to off in tests.", "Feature flags default to off in tests"),
    ("The event bus delivers at least once.", "The event bus delivers at least once!"),
    ("Playwright runs the chromium project only.", "Playwright runs the chromium project only"),
]

PARAPHRASES = [  # (stored, candidate): the same learning in other words
    ("Run pytest with -n 0 for the store tests.", "For the store tests, run pytest with -n 0."),
    ("The worker retries failed jobs three times.", "Failed jobs are retried three times by the worker."),
    ("Integration tests need Docker running.", "Always make sure Docker is running for the integration tests."),
    ("Migrations are applied with alembic upgrade head.", "Apply migrations with alembic upgrade head."),
    ("The frontend dev server proxies /api to localhost:8000.",
     "The dev server of the frontend proxies /api to localhost:8000."),
    ("Use pnpm, not npm, in the frontend.", "In the frontend, use pnpm and not npm."),
    ("Unit tests must not hit the network.", "Remember: unit tests should never hit the network."),
    ("Prices are stored in cents as integers.", "Prices are stored as integers, in cents."),
    ("The orders table is partitioned by month.", "Note that the orders table is partitioned by month."),
    ("JWTs expire after 15 minutes and the gateway refreshes them.",
     "The gateway refreshes JWTs, which expire after 15 minutes."),
    ("The gateway refreshes JWTs, which expire after 15 minutes.", "JWTs expire after 15 minutes."),
    ("Celery workers must be restarted after changing tasks.py.",
     "After changing tasks.py, the Celery workers must be restarted."),
    ("mypy runs in strict mode in this repo.", "mypy runs in strict mode."),
    ("The search index is rebuilt nightly at 02:00 UTC.", "Nightly at 02:00 UTC the search index is rebuilt."),
    ("Use the factories in tests/factories.py to create models in tests.",
     "In tests, create models with the factories in tests/factories.py."),
    ("Snapshots are updated with pytest --snapshot-update.",
     "Update the snapshots with pytest --snapshot-update."),
    ("The PDF renderer needs the fonts from assets/fonts installed.",
     "Install the fonts from assets/fonts: the PDF renderer needs them."),
    ("Cron schedules use UTC.", "Cron schedules always use UTC."),
    ("Background jobs must be idempotent because they are retried on failure.",
     "Background jobs are retried on failure, so they must be idempotent."),
    ("Storybook runs on port 6006.", "Storybook is running on port 6006."),
    ("The E2E suite uses Playwright.", "The E2E suite uses Playwright with chromium."),
    ("Helm charts are in deploy/charts.", "The Helm charts live in deploy/charts."),
    ("The CLI is built with Typer.", "The CLI is built using Typer."),
    ("Terraform state is stored in the S3 backend with a DynamoDB lock table.",
     "Terraform keeps its state in the S3 backend, locked with a DynamoDB table."),
    ("Kafka topics are created by Terraform in infra/kafka.",
     "Kafka topics get created by Terraform, in infra/kafka."),
    ("Sentry is enabled only when SENTRY_DSN is set.", "Sentry is only enabled if SENTRY_DSN is set."),
    ("Static assets are served from the CDN.", "Static assets get served from the CDN."),
    ("The read replica can lag up to a minute.", "The read replica can lag by up to a minute."),
    ("Playwright traces are uploaded as CI artifacts when a test fails.",
     "When a test fails, Playwright traces are uploaded as CI artifacts."),
    ("Accessibility violations found by axe fail the build.",
     "Accessibility violations fail the build (found by axe)."),
    ("The event bus delivers messages at least once.", "The event bus delivers each message at least once."),
    ("Deleting a workspace is asynchronous and answers 202.",
     "Workspace deletion is asynchronous and answers 202."),
    ("Use orjson to stream large JSON responses.", "Stream large JSON responses with orjson."),
    ("The release script tags the commit and CI builds images from the tag.",
     "CI builds the images from the tag that the release script puts on the commit."),
    ("Code owners for billing must approve changes in the billing module.",
     "Changes in the billing module must be approved by the billing code owners."),
    ("Local HTTPS uses mkcert certificates in .certs/.", "Local HTTPS uses the mkcert certificates in .certs/."),
    ("The websocket gateway drops idle connections after 90 seconds.",
     "Idle connections are dropped by the websocket gateway after 90 seconds."),
    ("Tenant isolation is enforced by row-level security policies.",
     "Row-level security policies enforce tenant isolation."),
    ("The config loader merges defaults.yaml, the environment file and environment variables, in that order.",
     "The config loader merges defaults.yaml, then the environment file, then environment variables."),
    ("Soft-deleted users have deleted_at set.", "Users that are soft-deleted have deleted_at set."),
    ("The notification service de-duplicates messages by idempotency key.",
     "Messages are de-duplicated by idempotency key in the notification service."),
    ("Uploads are scanned by ClamAV before they become public.",
     "Uploads are scanned by ClamAV before they are made public."),
    ("Our Node services use ESM.", "Our Node services use ESM modules."),
    ("The typing stubs for the internal SDK are generated by stubgen into typings/.",
     "Typing stubs for the internal SDK are generated into typings/ by stubgen."),
    ("The import sorting is done by ruff.", "Import sorting is done by ruff."),
    ("Feature branches are deleted after the merge.", "Feature branches get deleted after merge."),
    ("The admin panel is mounted at /internal/admin.", "The admin panel is at /internal/admin."),
    ("The legacy importer expects CSV in Windows-1252.",
     "The legacy importer expects CSV files in Windows-1252 encoding."),
    ("Images are resized by the imgproxy sidecar.", "The imgproxy sidecar resizes images."),
    ("Rust builds in CI need sccache configured with the S3 bucket.",
     "In CI, Rust builds need sccache configured with the S3 bucket."),
]

NEAR_MISSES = [  # (stored, candidate): alike in words, different in what they say
    ("Use --frozen-lockfile in CI.", "Never use --frozen-lockfile locally."),
    ("The API client timeout is 30s.", "The API client timeout is 300s."),
    ("Run the migrations before starting the dev server.", "Run the migrations after starting the dev server."),
    ("Config lives in src/config/settings.py.", "Config lives in src/config/local_settings.py."),
    ("Node 18 is required for the frontend build.", "Node 20 is required for the frontend build."),
    ("Enable strict mode in tsconfig.json.", "Disable strict mode in tsconfig.json."),
    ("The cache TTL is 5 minutes in staging.", "The cache TTL is 5 minutes in production."),
    ("Retries use exponential backoff with a 250 ms base.", "Retries use exponential backoff with a 500 ms base."),
    ("Run ruff before committing.", "Run ruff format before committing."),
    ("The staging database is read-only for agents.", "The production database is read-only for agents."),
    ("Use the v2 API for search.", "Use the v3 API for search."),
    ("Always pass --no-cache to docker build in CI.", "Always pass --pull to docker build in CI."),
    ("Webhooks are retried on 5xx responses.", "Webhooks are not retried on 4xx responses."),
    ("The worker processes jobs from the default queue.", "The worker processes jobs from the priority queue."),
    ("Integration tests for the billing service need the Stripe mock server running on localhost.",
     "Integration tests for the invoicing service need the Stripe mock server running on localhost."),
    ("Python 3.11 is the minimum version.", "Python 3.12 is the minimum version."),
    ("Use pnpm for the frontend.", "Use npm for the docs site."),
    ("The test database listens on port 5433.", "The dev database listens on port 5432."),
    ("Set max_connections to 100 on the primary.", "Set max_connections to 200 on the replica."),
    ("Logs are kept for 30 days.", "Logs are kept for 90 days."),
    ("The feature flag new_checkout is on in staging.", "The feature flag new_checkout is off in staging."),
    ("The importer reads UTF-8 CSV files.", "The importer does not read UTF-8 CSV files with a BOM."),
    ("Run make test before pushing.", "Run make itest before pushing."),
    ("Use select_related for foreign keys.", "Use prefetch_related for many-to-many relations."),
    ("Sessions are stored in Redis.", "Sessions are not stored in Redis anymore; they are JWTs."),
    ("The mobile app talks to /api/v2.", "The mobile app talks to /api/v3 since release 4.0."),
    ("Upload limit is 100 MB.", "Upload limit is 10 MB for avatars."),
    ("Batch writes in groups of 500 rows.", "Batch writes in groups of 5000 rows for the archive table."),
    ("The scheduler uses Europe/Berlin time.", "The scheduler uses UTC time."),
    ("Use ruff check --fix for lint errors.", "Use ruff check --unsafe-fixes only with review."),
    ("Images are built with docker buildx.", "Images are built with kaniko in CI."),
    ("The gateway adds X-Request-Id to requests.", "The gateway strips X-Internal-User from requests."),
    ("Feature work targets the develop branch.", "Hotfixes target the main branch."),
    ("Add an index on orders.customer_id.", "Remove the index on orders.created_at."),
    ("Tests run in parallel with -n 4.", "Tests run sequentially with -n 0 in CI."),
    ("The read replica lags up to a minute.", "The read replica lags up to ten minutes at night."),
    ("Secrets are mounted at /vault/secrets.", "Secrets are mounted at /run/secrets in Docker Compose."),
    ("Enable the query cache in production.", "Enable the query cache in development only."),
    ("Use the async client in request handlers.", "Use the sync client in management commands."),
    ("The build uses Go 1.21.", "The build uses Go 1.22."),
    ("Errors are reported to Sentry.", "Errors are not reported to Sentry from the CLI."),
    ("Keep PRs under 400 changed lines.", "Keep PRs under 200 changed lines for the payments module."),
    ("Run the E2E suite with the chromium project.", "Run the E2E suite with the webkit project before releases."),
    ("The cron job runs at 02:00 UTC.", "The cron job runs at 03:00 UTC."),
    ("JWTs expire after 15 minutes.", "Refresh tokens expire after 30 days."),
    ("Use HTTP/2 for internal gRPC calls.", "Use HTTP/1.1 for the legacy SOAP endpoint."),
    ("The frontend uses React 18.", "The frontend uses React 19 since the upgrade."),
    ("Store uploads in the eu-west-1 bucket.", "Store backups in the eu-central-1 bucket."),
    ("Rate limit is 600 requests per minute per API key.", "Rate limit is 60 requests per minute per IP."),
    ("Format Python with ruff format.", "Format SQL with sqlfluff fix."),
    ("The docs are deployed from main.", "The docs are deployed from the release branch."),
    ("Run the linters locally before pushing.", "Run the linters in CI only, not locally."),
    ("Integration tests need Docker.", "Unit tests don't need Docker."),
    ("The importer accepts files up to 50 MB.", "The importer rejects files over 50 MB with a 413."),
    ("Use the read replica for reports.", "Never use the read replica for writes."),
]

CHATTER = [
    "I'll now run the tests.",
    "Let me check the file.",
    "Done!",
    "Sure, here is the updated config.",
    "Great, all tests pass now.",
    "Now I will add the index to the migration.",
    "Looking at the code...",
    "The build is running.",
    "Thanks!",
    "Hello! How can I help you today?",
    "Let me look at the failing test first.",
    "I'm going to refactor the handler now.",
    "Perfect, that worked.",
    "OK, running the linter again.",
    "Checking the logs now.",
    "I've updated the README.",
    "Now let's run the migrations.",
    "All 42 tests pass.",
    "Here's the summary of the changes I made.",
    "Let me know if you need anything else!",
    "I will open a PR with these changes.",
    "The tests are passing now.",
    "Alright, moving on to the next file.",
    "Let me search the codebase for the function.",
    "I'm now investigating why the build fails.",
    "Next, I'll update the tests.",
    "Fixed the typo in the docstring.",
    "I have made the requested changes.",
    "Thank you for your patience!",
    "Reading the config file to understand the setup.",
    "That should fix the issue.",
    "Let's see what the error message says.",
    "Working on the migration now.",
    "Great question! Let me explain.",
    "Everything is green now.",
    "Hopefully this resolves the problem.",
    "I'm checking whether the endpoint exists.",
    "Running the test suite again to be sure.",
    "The PR is ready for review.",
    "Good morning! Let's get started.",
    "Let me first read the existing implementation.",
    "I just ran the formatter on all files.",
    "Okay, I see the problem now.",
    "Updated the lockfile.",
    "Now the tests pass.",
    "12 passed, 1 skipped in 3.41s",
    "I'll start by exploring the repository structure.",
    "As requested, I renamed the variable.",
    "Let me try a different approach.",
    "Excellent! The deployment succeeded.",
]

LOW_INFO = [
    "ok",
    "fixed it",
    "see above",
    "LGTM",
    "Yes.",
    "Same as before.",
    "done, works",
    "+1",
    "TODO",
    "It works.",
    "Fixed.",
    "Noted.",
    "Will do.",
    "That's it.",
    "No changes needed.",
    "N/A",
    "ok, fixed",
    "Not sure.",
    "see the file",
    "this one",
    "Updated.",
    "Use it.",
    "pytest",
    "Check the docs.",
    "As above.",
]


# --- the held-out set: written after the rules were tuned, never used to change them -----------------------

#: Third-person extractor sentences, longer learnings with a reason, a user's preferences.
HELD_OUT_LEARNINGS = [
    "The user prefers small commits with one logical change each, and rebases before merging.",
    "The project uses a src/ layout, so the package must be installed in editable mode for tests to import it.",
    "In this codebase, HTTP handlers never talk to the database directly; they call a service object.",
    "The user wants error messages to name the field that failed validation.",
    "Requests to the geocoding API are cached for a week because the provider bills per call.",
    "When the queue backs up, the autoscaler adds workers only after five minutes of sustained lag.",
    "The agent learned that the staging Kafka cluster requires SASL/SCRAM while local Kafka runs without auth.",
    "Snapshot tests are brittle here: the team prefers explicit assertions on the fields that matter.",
    "The invoice PDF template is Jinja2 in templates/invoice.html, rendered by WeasyPrint.",
    "Search results are re-ranked by a cross-encoder only for the first 50 hits to keep latency under 200 ms.",
    "The user reviews every migration by hand, so migrations should be small and reversible.",
    "Deploys to production are frozen on Fridays after 14:00 CET.",
    "The OAuth callback URL must be registered per environment in the identity provider's console.",
    "The Android build needs JDK 17; JDK 21 fails in the Gradle plugin.",
    "Because the ORM caches prepared statements, schema changes need the app servers restarted.",
    "The user likes type hints on public functions but does not want them on test helpers.",
    "Any change to the public API needs a changelog entry under Unreleased in CHANGELOG.md.",
    "The analytics warehouse is Snowflake; raw events land there through Fivetran every hour.",
    "Customer-facing emails are written in MJML and compiled to HTML at build time.",
    "The load tests in perf/ use k6 and must not run against production.",
    "Password reset tokens are single-use and expire after one hour.",
    "The team uses trunk-based development with feature flags instead of long-lived branches.",
    "The iOS app's API client is generated from openapi.yaml with openapi-generator.",
    "Memory spikes in the exporter come from loading whole tables; it streams rows with server-side cursors now.",
    "The CSV export escapes leading = + - @ characters to prevent formula injection in spreadsheets.",
]

HELD_OUT_DENSE = [
    "Yarn 1, not Berry.",
    "Never force-push main.",
    "Black line length: 100.",
    "M1: docker --platform linux/amd64.",
    "Postgres 16 everywhere.",
    "No default exports in TS.",
    "Java 17 for Android.",
    "Use ULIDs for ids.",
    "gofmt on save.",
    "Tests: pytest -x -q.",
]

HELD_OUT_EXACT = [
    ("The user prefers tabs over spaces in Go files.", "the user prefers tabs over spaces in Go files"),
    ("Deploys are frozen on Fridays.", "Deploys are frozen on Fridays!!"),
    ("Use `make bootstrap` on a fresh clone.", "Use make bootstrap on a fresh clone"),
    ("Webhook secrets rotate every 90 days.", "**Webhook secrets rotate every 90 days.**"),
    ("The admin API is only reachable over the VPN.", "The admin API is only reachable over the VPN .  "),
    ("Keep Terraform modules under infra/modules.", "KEEP TERRAFORM MODULES UNDER infra/modules."),
    ("k6 load tests must not target production.", "'k6 load tests must not target production.'"),
    ("The CSV export escapes formula characters.", "The CSV export escapes formula characters"),
]

HELD_OUT_PARAPHRASES = [
    ("The user prefers small commits with one logical change each.",
     "User prefers small commits, each with one logical change."),
    ("The project uses a src/ layout.", "This project uses the src/ layout."),
    ("Geocoding API responses are cached for a week.", "Responses from the geocoding API are cached for a week."),
    ("The Android build needs JDK 17.", "JDK 17 is needed for the Android build."),
    ("Password reset tokens expire after one hour.", "Password reset tokens expire after one hour and are single-use."),
    ("Any public API change needs a changelog entry.", "Every public API change needs an entry in the changelog."),
    ("The load tests use k6.", "The load tests are written with k6."),
    ("HTTP handlers call a service object instead of the database.",
     "Instead of the database, HTTP handlers call a service object."),
    ("The team uses trunk-based development with feature flags.",
     "Trunk-based development with feature flags is what the team uses."),
    ("Raw events land in Snowflake through Fivetran every hour.",
     "Every hour, raw events land in Snowflake via Fivetran."),
    ("Emails are written in MJML and compiled to HTML at build time.",
     "At build time, the MJML emails are compiled to HTML."),
    ("The iOS API client is generated from openapi.yaml.",
     "The API client of the iOS app is generated from openapi.yaml."),
    ("Schema changes need the app servers restarted because the ORM caches prepared statements.",
     "The ORM caches prepared statements, so schema changes need the app servers restarted."),
    ("The user wants error messages to name the failing field.",
     "Error messages should name the failing field, the user wants that."),
    ("Deploys to production are frozen on Fridays after 14:00 CET.",
     "Production deploys are frozen after 14:00 CET on Fridays."),
    ("The OAuth callback URL must be registered per environment.",
     "The OAuth callback URL needs to be registered for each environment."),
    ("Migrations should be small and reversible.", "Keep migrations small and reversible."),
]

HELD_OUT_NEAR_MISSES = [
    ("Start the app with --workers 4 in production.", "Start the app with --workers 8 in production."),
    ("The endpoint returns 404 for deleted users.", "The endpoint returns 410 for deleted users."),
    ("Deploys are frozen on Fridays after 14:00 CET.", "Deploys are frozen on Fridays after 16:00 CET."),
    ("The user prefers tabs in Go files.", "The user prefers spaces in YAML files."),
    ("Use the async Redis client in the API.", "Use the sync Redis client in the worker."),
    ("Password reset tokens expire after one hour.", "Email verification tokens expire after one day."),
    ("The Android build needs JDK 17.", "The Android build no longer needs JDK 11."),
    ("Cache geocoding responses for a week.", "Cache geocoding responses for a day."),
    ("The export streams rows with server-side cursors.", "The import does not stream rows with server-side cursors."),
    ("Run the load tests against staging.", "Never run the load tests against production."),
    ("Keep .env.example in the repository.", "Keep .env.local out of the repository."),
    ("The OAuth callback URL is /auth/callback.", "The OAuth logout URL is /auth/logout."),
    ("Feature flags are evaluated on the server.", "Feature flags are evaluated on the client for the mobile app."),
    ("Compress responses larger than 1 KB.", "Compress responses larger than 1 MB."),
    ("The user wants commits signed with GPG.", "The user wants tags signed with SSH keys."),
    ("Upload thumbnails to the public bucket.", "Upload originals to the private bucket."),
    ("The nightly backup runs at 01:00 and keeps 7 copies.",
     "The nightly backup runs at 01:00 and keeps 30 copies."),
    ("Unit tests run on every push to a feature branch.", "End-to-end tests run on every push to the main branch."),
]

HELD_OUT_CHATTER = [
    "Alright, let me dig into this.",
    "I'm going to take a look at the test failures.",
    "Perfect! Now let's move on to the API layer.",
    "You're absolutely right, my apologies.",
    "Let me fix that for you.",
    "The changes have been applied.",
    "I have successfully completed the task.",
    "Here are the results:",
    "Waiting for CI to finish.",
    "Compiling...",
    "Build succeeded in 42s.",
    "Good catch, thanks!",
    "Now I'm going to update the documentation to reflect these changes.",
    "I'll go ahead and commit this.",
]

HELD_OUT_LOW_INFO = [
    "k",
    "nvm",
    "same",
    "as discussed",
    "see PR",
    "misc fixes",
    "...",
    "whatever works",
]


def _context(rng: random.Random, target: str | None, size: int) -> tuple[list[str], int | None]:
    """``size`` pool memories, with ``target`` among them at a random place (its index), if given."""
    existing = rng.sample([text for text in POOL if text != target], size)
    if target is None:
        return existing, None
    at = rng.randrange(size + 1)
    existing.insert(at, target)
    return existing, at


def _item(rng: random.Random, candidate: str, expected: str, reason: str | None, kind: str,
          target: str | None = None, match: bool = False) -> dict:
    """One labelled line: ``candidate`` against 3-6 pool memories and ``target`` (the memory it duplicates or
    nearly misses), whose index is ``match`` when the candidate should confirm it."""
    existing, at = _context(rng, target, rng.randint(3, 6))
    return {"existing": existing, "candidate": candidate, "expected": expected, "reason": reason,
            "match": at if match else None, "kind": kind}


def _labelled(seed: int, learnings: list, dense: list, exact: list, paraphrases: list, near_misses: list,
              chatter: list, low_info: list) -> list[dict]:
    """Every kind of item, labelled, shuffled by ``seed``."""
    rng = random.Random(seed)
    items = [_item(rng, text, "store", None, "learning") for text in learnings]
    items += [_item(rng, text, "store", None, "dense") for text in dense]
    items += [_item(rng, c, "confirm", "exact-duplicate", "exact", s, match=True) for s, c in exact]
    items += [_item(rng, c, "confirm", "near-duplicate", "paraphrase", s, match=True) for s, c in paraphrases]
    items += [_item(rng, c, "store", None, "near-miss", s) for s, c in near_misses]
    items += [_item(rng, text, "refuse", "session-chatter", "chatter") for text in chatter]
    items += [_item(rng, text, "refuse", "too-little-information", "low-info") for text in low_info]
    rng.shuffle(items)
    return items


def tuned() -> list[dict]:
    """The set the rules were tuned on (bench/data/gate.jsonl)."""
    return _labelled(20261125, LEARNINGS, DENSE, EXACT, PARAPHRASES, NEAR_MISSES, CHATTER, LOW_INFO)


def held_out() -> list[dict]:
    """The set written after the rules were tuned (bench/data/gate_heldout.jsonl): other wording, another seed."""
    return _labelled(424243, HELD_OUT_LEARNINGS, HELD_OUT_DENSE, HELD_OUT_EXACT, HELD_OUT_PARAPHRASES,
                     HELD_OUT_NEAR_MISSES, HELD_OUT_CHATTER, HELD_OUT_LOW_INFO)



def main() -> None:
    here = Path(__file__).parent
    for name, items in (("gate.jsonl", tuned()), ("gate_heldout.jsonl", held_out())):
        target = here / name
        target.write_text("".join(json.dumps(item) + "\n" for item in items))
        counts: dict[str, int] = {}
        for item in items:
            counts[item["expected"]] = counts.get(item["expected"], 0) + 1
        print(f"{len(items)} items ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}) written to {target}")


if __name__ == "__main__":
    main()
