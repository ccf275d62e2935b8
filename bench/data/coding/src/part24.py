# ---- Extra non-noise memories: long notes + distractors ----
m("long_api_changelog_policy", "09-03", "convention", """API change policy for dated versions (Priya, September, after launching Ledgerly-Version).

Why: before dated versions, we could only add fields, never change or remove them, and a few early design mistakes (amounts as numbers instead of strings in v1, customer.address as a single string) were stuck forever. Dated versions let us fix such things for new integrations while old integrations keep working unchanged.

What counts as breaking and needs a new version: removing or renaming a field, changing a field's type or format, changing the meaning of an enum value, making an optional request parameter required, changing default pagination size, changing error codes. Not breaking: adding a response field, adding an optional parameter, adding an enum value to a response (integrators are told to handle unknown values), adding a new endpoint, adding a new webhook event type.

How to implement: the internal model always follows the newest version. Each version after the first has a module in ledgerly/api/versions/<date>.py with 'version change' classes that transform responses downward (and requests upward) one step at a time, in the style of Stripe's version gates. A request pinned to an old version passes through all the transformers between the newest and its version. Each change class has a description string that feeds the public changelog automatically, and a test in tests/api/versions/ proving the transformation for a sample payload.

Cadence: at most one new version per quarter, named after its release date. Deprecated versions are supported for at least 24 months; we email integrators whose keys still use a version 6 months before its end of life. Webhook payloads are rendered with the endpoint's version, not the request's version.""")
q("k", "Where do the API version change transformers live?", "long_api_changelog_policy")
q("p", "integrators will start seeing a brand-new state string from us — do we need to cut a new API version for that?", "long_api_changelog_policy")
q("k", "How long are deprecated API versions supported?", "long_api_changelog_policy")
q("m", "How do dated API versions work, for clients and for us implementing a breaking change?", ["apidated", "long_api_changelog_policy"])

m("long_pm_search_sync", "10-04", "gotcha", """Post-mortem: search results missing invoices after bulk edits (2026-10-02).

Severity: SEV3. Author: Nadia. Several tenants reported that invoices did not show up in search for up to a day after bulk actions ('mark as paid' on 200 invoices, bulk reassign customer).

Cause: single-invoice changes go through InvoiceService methods which enqueue sync_invoice_to_search after commit. Bulk actions were implemented as a single UPDATE ... WHERE id = ANY(:ids) in InvoiceRepo.bulk_update for performance, which bypassed the service layer and therefore never enqueued search syncs. The nightly consistency job (search_consistency_check, 03:00 UTC) eventually found the differences and reindexed, which is why results reappeared by the next morning.

Fix: bulk_update now returns the affected ids and the bulk service method enqueues sync_invoices_to_search (plural) with batches of 500 ids, which uses Meilisearch's batch document update. The consistency job also runs every 2 hours instead of nightly, only for tenants with changes in that window.

Broader lesson, added to the review guidelines: any write path that bypasses InvoiceService must be treated as suspicious; side effects (search sync, webhooks, audit events, cache busting) hang off the service methods. A grep-able marker comment `# bypasses-service: <reason>` is now required on repository methods that write invoices directly, and there's a test that lists them.""")
q("p", "after a mass status change, the search box can't find those bills until the following morning", "long_pm_search_sync")
q("k", "What marker comment is required on repository methods that write invoices directly?", "long_pm_search_sync")
q("k", "How often does the search consistency check run now?", "long_pm_search_sync")

m("long_onboard_frontend", "10-28", "command", """Frontend onboarding notes for Lucas (written by Jun, useful for any new frontend engineer).

Day 1: clone, `corepack enable`, `pnpm install` in the repo root (it's a pnpm workspace with web/, pay/ and packages/ui), then `pnpm --filter web dev`. The backend is needed for almost everything; the easiest path is `docker compose --profile full up` for the api and worker, or ask someone to pair on the Python setup. Log in with the seeded demo user.

Code tour: web/src/pages (one folder per area), web/src/components (shared UI, shadcn-based in components/ui), web/src/api (generated client and hooks — never edit generated/), web/src/lib (dates, money, notify), web/src/locales (translations), web/src/store.ts (Zustand, UI state only).

Conventions you'll be reviewed on: server data via TanStack Query only; URL state for filters; money never as Number; every string through i18n; icons from lucide; no new dependencies without a short note in the PR on why and the bundle size impact (check with `pnpm --filter web analyze`, which opens the rollup visualizer).

Testing: Vitest + Testing Library for components with MSW for the API; Playwright only for the five critical journeys. Run `pnpm --filter web test` in watch mode while working.

First tasks: two small bugs labelled good-first-issue in the invoice editor v2 project, then pairing with Jun on the editor keyboard shortcuts.

Tip: the React Query devtools are available in dev builds via the floating button bottom-left; the flag overrides panel (Ctrl+Shift+F) lets you toggle Unleash flags locally for your session without touching the server.""")
q("k", "How do I check bundle size impact of a new frontend dependency?", "long_onboard_frontend")
q("p", "I want to try a flagged UI feature locally without changing the flag server, is there a shortcut?", "long_onboard_frontend")

m("long_pm_rounding_jpy", "03-04", "gotcha", """Incident note: Yen invoices 100x too large in Stripe (2026-03-03).

Severity: SEV2 (money wrong). Author: Tomás. Two tenants invoicing in JPY had hosted-page payments requested at 100 times the invoice amount: an invoice of 12,000 JPY asked the customer for 1,200,000 JPY. One customer noticed and contacted the tenant before paying; no incorrect payment completed.

Cause: our Stripe adapter converted Money to Stripe's integer 'amount' by multiplying by 100, assuming two decimal places. Stripe's zero-decimal currencies (JPY, KRW and others) expect the amount in the main unit. Our own Money class already knew JPY has exponent 0, but the Stripe adapter didn't use it.

Fix: ledgerly/billing/stripe_amounts.py has to_stripe_amount(money) and from_stripe_amount(amount, currency) that use the currency exponent table, and all Stripe calls go through them; a ruff banned-API-style check isn't possible for '* 100', so a unit test scans the billing package source for the pattern '* 100' near 'amount' and fails.

Also: added hypothesis tests round-tripping every supported currency through the adapter. Currency list at the time: EUR, USD, GBP, CHF, SEK, JPY.""")
q("k", "Which helper converts Money to a Stripe amount?", "long_pm_rounding_jpy")
q("p", "a client in Tokyo was asked for way more than the bill said, like two zeros too many", "long_pm_rounding_jpy")
q("m", "What do I need to know about zero-decimal currencies in our code and with Stripe?", ["currency", "long_pm_rounding_jpy"])

m("long_dev_env_troubles", "05-24", "gotcha", """Troubleshooting local setup: the most common problems new people hit (collected from #eng questions, January to May).

1. 'role "ledgerly" does not exist' — a host Postgres is occupying the port; stop it.
2. The web app shows a blank page and the console says 'Failed to fetch dynamically imported module' — you have an old Vite dev server running from another checkout on the same port; kill it and restart.
3. `uv sync` fails building psycopg — you're on a Python version without wheels; use the pinned Python.
4. Alembic says 'Can't locate revision identified by ...' — your local database has a revision from a branch you deleted. Run the database reset recipe; don't try to stamp by hand.
5. Emails not arriving — they're in Mailpit, not your inbox.
6. Celery tasks never run — the worker isn't started, or it's listening to the wrong queues; the worker recipe listens to all of them.
7. Login loop in the web app (redirects back to /login forever) — the refresh cookie is Secure and your browser blocks it on http://127.0.0.1; use http://localhost, which browsers treat as a secure context, rather than the IP.
8. Everything is slow on macOS — Docker Desktop file sharing; switch to OrbStack or VirtioFS.
9. pre-push hook fails on typecheck for files you didn't touch — pull main; someone merged a type fix that your branch lacks.""")
q("p", "I sign in locally and get sent straight back to the sign-in screen forever", "long_dev_env_troubles")
q("p", "I nuked a feature branch and now the migration tool complains it doesn't know the version my local db is at", "long_dev_env_troubles")
q("k", "What does 'Failed to fetch dynamically imported module' mean in local dev?", "long_dev_env_troubles")

m("long_design_review_notes", "04-23", "decision", """Design review: customer portal (decided not to build as a separate app).

Proposal (Jun): a customer portal at portal.ledgerly.io where a tenant's customers log in to see all their invoices, download PDFs and pay.

Concerns raised: a second kind of user account (customers of tenants) with passwords means a second auth system, account recovery support for people who aren't our customers, and GDPR complexity since the customer is the tenant's data subject, not ours.

Decision: no accounts for customers. Instead, the hosted payment page gets an 'all open invoices' view reachable through a signed magic link (valid 7 days) sent in every invoice email and reminder. The link is scoped to one customer of one tenant and only shows open and recently paid invoices (last 90 days). Customers can request a fresh link from the payment page by entering their email, which only sends a link if the email matches the customer record; the response is identical either way to avoid leaking which emails exist.

Implementation notes: the magic link token is a signed itsdangerous token containing tenant_id, customer_id and issued_at, signed with CUSTOMER_LINK_SECRET; rotating that secret invalidates all links, which is acceptable.

Reviewers: Priya, Tomás, Aisha, Marcus. Approved with the condition that the page is noindex and rate limited per IP.""")
q("k", "How long is the customer magic link valid?", "long_design_review_notes")
q("p", "is there a place where a tenant's clients can look at everything they still owe without creating a login?", "long_design_review_notes")
q("k", "Which secret signs the customer magic links?", "long_design_review_notes")

# short distractors
m("ci_cache_pnpm", "02-27", "file_fact", "The frontend CI job caches the pnpm store via actions/setup-node `cache: pnpm`, keyed on pnpm-lock.yaml.")
m("ci_cache_uv", "05-14", "file_fact", "Backend CI caches uv's download cache with astral-sh/setup-uv `enable-cache: true`, keyed on uv.lock; the venv itself is not cached anymore.")
q("k", "What does backend CI cache since the uv move?", "ci_cache_uv")
m("ci_env", "01-16", "file_fact", "CI sets LEDGERLY_ENV=test and TZ=UTC globally in ci.yml env; tests depending on local time must set the frozen clock explicitly.")
q("p", "a date test passes on my machine in Berlin but fails in CI", "ci_env")
m("make_help", "01-07", "command", "`make help` lists Makefile targets with descriptions parsed from ## comments.")
m("pg_extensions", "01-12", "file_fact", "Postgres extensions used: pgcrypto, citext, pg_trgm (added May), btree_gin; they are created in the first migration so the test template has them.")
q("k", "Which Postgres extensions do we use?", "pg_extensions")
m("db_statement_timeout", "06-10", "file_fact", "The app role has statement_timeout = 30s in production; reports on the replica use ledgerly_reports with 5 minutes.")
q("p", "my heavy query in the api got cancelled after exactly 30 seconds", "db_statement_timeout")
m("idle_tx_timeout", "06-10", "file_fact", "idle_in_transaction_session_timeout is 60s for ledgerly_app, so a request that holds a transaction open while calling an external API can get its connection killed.")
q("p", "calling Stripe inside a DB transaction sometimes ends with 'terminating connection due to idle-in-transaction timeout'", "idle_tx_timeout")
m("sqlalchemy_echo", "02-05", "command", "Set SQL_ECHO=1 to log all SQL statements from SQLAlchemy locally; never enable it in staging or prod (logs PII).")
q("k", "How do I log all SQL statements locally?", "sqlalchemy_echo")
m("openapi_snapshot", "04-02", "convention", "tests/api/test_openapi.py snapshots the public OpenAPI spec; an unintended diff there means you changed the public API contract.")
q("p", "a test about the openapi schema failed though I only refactored a pydantic model", "openapi_snapshot")
m("celery_serializer", "04-13", "gotcha", "Celery uses the JSON serializer; pass ids, not ORM objects or Decimals, to tasks (Decimal arrives as a float string).")
q("p", "I passed an invoice object into a task and it blew up with a serialization error", "celery_serializer")
m("task_naming", "04-13", "convention", "Celery task names are explicit (name='billing.finalize_invoice') so renaming the Python function doesn't orphan queued messages.")
q("k", "Why do Celery tasks have explicit names?", "task_naming")
m("stripe_connect_onboarding", "02-03", "gotcha", "Stripe Connect OAuth redirect URL must be registered per environment in the Stripe platform settings; staging uses https://api.staging.ledgerly.io/stripe/connect/callback.")
q("p", "connecting Stripe from staging ends in an 'invalid redirect_uri' error", "stripe_connect_onboarding")
m("web_build_env", "03-12", "file_fact", "The web build requires VITE_API_URL, VITE_SENTRY_DSN and VITE_POSTHOG_KEY; missing ones fail the build via the check-env Vite plugin.")
q("k", "Which VITE_ variables does the web build require?", "web_build_env")
m("storybook_deploy", "05-21", "file_fact", "Storybook is published to Chromatic on main; link pinned in #frontend.")
m("pay_app_tests", "04-05", "file_fact", "The pay/ app has its own Vitest suite and one Playwright journey (pay an invoice), run in the same CI frontend job.")
m("rate_limit_login_ip", "06-27", "file_fact", "Login throttle keys are sha256(ip + lower(email)) in Redis db 0 with 15-minute TTL; `just unlock-login <email>` clears them.")
q("k", "How do I clear a user's login lockout?", "rate_limit_login_ip")
m("api_timeouts_client", "07-25", "convention", "Integrator docs recommend a 30s client timeout and retrying 5xx/429 with exponential backoff plus the Idempotency-Key header on POSTs.")
q("p", "what should I tell an integrator about how their client should retry?", "api_timeouts_client")
m("sentry_pii", "03-20", "convention", "Sentry send_default_pii is False; request bodies are not attached. Use Sentry tags for tenant_id, never the customer email.")
m("grafana_dash_release", "07-08", "file_fact", "The Grafana 'Release' dashboard shows error rate, latency and task health split by task definition revision, so old and new versions can be compared during a deploy.")
q("m", "What database timeouts can kill my query or connection in production?", ["db_statement_timeout", "idle_tx_timeout"])
q("m", "What should I avoid when writing a Celery task's signature and name?", ["celery_serializer", "task_naming"])
q("m", "What do integrators need to know to call our API robustly?", ["api_timeouts_client", "idempotency_api", "rate300"])
