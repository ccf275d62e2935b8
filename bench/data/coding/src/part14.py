# ---- Long memories batch 4 ----
m("long_meili_ops", "09-18", "command", """Runbook: Meilisearch operations.

Meilisearch runs as the ECS service `meili` (1 task, 2 vCPU / 4 GB) with its data on an EFS volume mounted at /meili_data. It's a single node; if the task dies ECS restarts it and the data survives on EFS.

Index settings are defined in code (ledgerly/search/settings.py): searchable attributes customer_name, number, customer_email, notes; filterable tenant_id, status, currency, due_on; sortable issued_on, total. After changing settings run `just search-apply-settings`, which triggers a re-index inside Meili (can take ~10 minutes for all tenants; search still works during it).

Full rebuild from Postgres: `just search-reindex --all` enqueues one task per tenant on the default queue. Use `--tenant <id>` for one tenant. A full rebuild takes about 25 minutes.

Upgrading Meilisearch versions requires a dump: create a dump via POST /dumps, stop the task, start the new version with --import-dump. Don't just bump the image tag; the database format is not compatible across minor versions.

If search results are missing for a tenant: check the task queue for failed sync_invoice_to_search tasks in Sentry first, then reindex that tenant.""")
q("k", "How do I fully rebuild the Meilisearch index?", "long_meili_ops")
q("p", "to get the newer search engine release, can I simply change the container version?", "long_meili_ops")
q("p", "a tenant can't find a recently created invoice in the search box", ["long_meili_ops", "search3"])

m("long_pm_pdf_mem", "09-07", "gotcha", """Post-mortem: api tasks OOM-killed during month-end (2026-09-01).

On September 1st, many tenants finalized monthly invoices in the morning. Finalize rendered the PDF synchronously in the api process with WeasyPrint so the user could download it immediately. Invoices with many line items and embedded logos used 300-600 MB each during layout. With 2 gunicorn workers per 2 GB task, concurrent renders pushed tasks past the memory limit; ECS killed them (exit 137) and the ALB returned 502s for about 25 minutes in bursts.

Mitigation during the incident: scaled api from 4 to 10 tasks and raised task memory to 4 GB.

Root cause fix: finalize no longer renders synchronously; it enqueues render_invoice_pdf and the UI polls GET /invoices/{id}/pdf which returns 202 until ready. Rendering moved to the Gotenberg sidecar service (memory isolated, 3 tasks). Logos are resized to max 600px on upload.

Lesson: anything with unbounded memory belongs in a worker or separate service, per the Feb architecture decision that we had quietly violated.""")
q("p", "the PDF endpoint returns 202 instead of the file, is it broken?", "long_pm_pdf_mem")
q("k", "What caused the api OOM kills on September 1st?", "long_pm_pdf_mem")
q("m", "Why did we move PDF rendering out of the api and what replaced WeasyPrint?", ["long_pm_pdf_mem", "gotenberg"])

m("long_test_strategy", "03-19", "convention", """Testing strategy (agreed March, Elif and Priya).

Pyramid: unit tests for domain logic (money, tax, state transitions, schedules) — fast, no DB; integration tests for repositories, services, migrations and API routes against real Postgres; a small e2e set for the five critical journeys only.

Critical journeys for e2e: sign up + onboarding; create and finalize an invoice; pay an invoice on the hosted page; connect Stripe (mocked OAuth); export data. Don't add e2e tests for anything else — write an integration test against the API instead.

Rules: no sleeping in tests (use the frozen_clock or polling helpers); no network calls except in stripe_contract; each test creates its own tenant via the tenant fixture, never rely on seed data; tests must pass in random order (we run pytest-randomly in the nightly to detect order dependence).

Coverage: the gate is on backend line coverage; branch coverage is tracked but not enforced. Frontend coverage is not enforced.

Migration tests: every migration is tested with `pytest tests/migrations` which upgrades from the previous head with sample data and then downgrades; downgrade must work for the latest 5 migrations.""")
q("k", "Which five user journeys are covered by e2e tests?", "long_test_strategy")
q("p", "should my VAT configuration screen get its own browser-driven end-to-end check?", "long_test_strategy")
q("p", "will CI block me if my React changes lower the percentage of lines exercised by tests?", "long_test_strategy")
q("m", "What are the rules about time handling in tests and in scheduled code?", ["freezegun", "long_pm_tz", "long_test_strategy"])

m("long_pm_rls_leak", "08-21", "gotcha", """Post-mortem: cross-tenant data shown in dashboard counters (2026-08-20, SEV1).

For ~18 minutes after the RDS Proxy went in, some users saw dashboard invoice counts and totals belonging to other tenants. No invoice details, customer names or documents were exposed — only the aggregate numbers in the summary cards.

Cause: the tenant middleware set `SET app.tenant_id = ...` (session-level). Behind RDS Proxy, connections are multiplexed between clients at transaction boundaries unless pinned. The summary query ran in a new transaction on a backend connection whose session variable was still set from another client, so RLS filtered by the wrong tenant.

Why only counters: the main invoice queries run inside the same transaction where SET was issued (pinning the connection), but the summary endpoint used a separate read session.

Fix: SET LOCAL inside every transaction (ledgerly.db.session.tenant_transaction()), and RLS policies now also fail closed: if app.tenant_id is empty the policy matches nothing. A regression test opens two sessions through a proxy-like pooler (pgbouncer in transaction mode in CI) and asserts isolation.

Notification: 6 tenants were affected; Marcus informed them within 24h per our DPA.""")
q("p", "in the summer cross-customer leak, what exactly could people see?", "long_pm_rls_leak")
q("k", "What helper sets the tenant id correctly per transaction?", "long_pm_rls_leak")
q("m", "How does tenant isolation work in the database and what's the rule for setting the tenant id?", ["rls", "pgbouncer", "long_pm_rls_leak"])

m("long_ratelimit_design", "02-27", "decision", """Design note: public API rate limiting.

Algorithm: token bucket per API key in Redis, implemented as a Lua script (ledgerly/api/ratelimit.lua) so refill and take are atomic. Bucket capacity equals the per-minute limit; refill is continuous.

Headers: every response carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (IETF draft names, not X-RateLimit-*). A 429 includes Retry-After in seconds.

Exemptions: webhooks we receive (Stripe) are not rate limited; the web app's session-authenticated requests use a separate, higher per-user bucket (600/min) so the UI never competes with a tenant's integration.

Failure mode: if Redis is unreachable, the limiter fails open (allows requests) and logs ratelimit_redis_unavailable at warning level; failing closed would take down the API with Redis.""")
q("k", "What rate-limit headers does the API return?", "long_ratelimit_design")
q("p", "when the cache/queue server died, did integrators get blocked by throttling?", "long_ratelimit_design")
q("m", "What's the current API rate limit and how can an integrator tell how much budget is left?", ["rate300", "long_ratelimit_design"])

m("long_i18n_notes", "04-15", "convention", """Notes on internationalisation of documents (invoices, credit notes, emails).

The language of a document is the customer's language (customers.locale), falling back to the tenant's default. The UI language is the user's preference — these are independent. A German tenant can send English invoices to a UK customer while using the app in German.

Backend translations for documents use gettext catalogs in ledgerly/locale/<lang>/LC_MESSAGES/documents.po; compile with `just i18n-compile` (pybabel compile). The compiled .mo files are NOT committed; the Docker build compiles them. If you see English text on a German PDF in local dev, you probably haven't compiled.

Legal texts differ by country, not language: the reverse charge note, small business exemption (§19 UStG: 'Gemäß § 19 UStG wird keine Umsatzsteuer berechnet'), and Austrian 'Kleinunternehmer' note are chosen by the tenant's country.""")
q("p", "on my laptop the German client's invoice document has English headings", "long_i18n_notes")
q("k", "Which note is printed for German small businesses under §19 UStG?", "long_i18n_notes")
q("k", "How is the language of an invoice PDF chosen?", "long_i18n_notes")

m("long_meeting_sync", "05-21", "noise", """Sync with the Müller & Partner accounting firm (our largest reseller), May 21.

They manage 60 client tenants and want: one login for all clients (multi-tenant switcher — exists but they didn't know), bulk export of all clients' invoices for year-end, DATEV export format, and a way to set default payment terms per client.

We explained the tenant switcher (top-left menu) and promised to look at DATEV in H2. They were happy with pricing. Their main complaint was slow PDF generation for long invoices in April (since fixed with the worker queue split).

Next sync in September.""")
m("long_lib_notes3", "07-05", "noise", """Reading notes: Postgres locking basics (generic reference, not a decision).

ACCESS SHARE (SELECT) conflicts only with ACCESS EXCLUSIVE. ROW EXCLUSIVE (INSERT/UPDATE/DELETE) conflicts with SHARE, SHARE ROW EXCLUSIVE, EXCLUSIVE, ACCESS EXCLUSIVE. Most ALTER TABLE forms take ACCESS EXCLUSIVE. CREATE INDEX takes SHARE (blocks writes); CONCURRENTLY takes SHARE UPDATE EXCLUSIVE. Lock queues are FIFO-ish: a waiting ACCESS EXCLUSIVE request blocks later requests even if they'd be compatible with current holders, which is why a blocked ALTER can stall reads too. pg_locks joined with pg_stat_activity shows waiters; pg_blocking_pids(pid) is the simplest way to find the blocker.""")
m("long_support_digest", "08-24", "noise", """Support digest (August).

Top themes: (1) questions about new webhook source IPs after the AWS move — 9 tickets, answered with the changelog entry; (2) Okta SSO setup help — 4 tickets; (3) invoices showing 'processing' for SEPA — 7 tickets, explained; (4) requests for Italian templates — 3.

CSAT 94%. Median first response 2h 10m. Leonie handled 70% of tickets.

Suggestion from Leonie: an in-app changelog so customers see changes like the IP update. Forwarded to Marcus.""")
