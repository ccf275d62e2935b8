# ---- New long memories batch 5 ----
m("slo1", "02-20", "decision", "Availability target for the api is 99.5% monthly, measured on /readyz from the Fly health checks.")
m("slo2", "08-27", "decision", """SLOs after the Nordlicht contract (replaces the old single availability number).

Why change: the enterprise contract promises 99.9% monthly availability with service credits, and a health-check based number said nothing about whether users could actually create invoices. Priya and Aisha rewrote the targets using request-based SLIs from the ALB and application metrics, and agreed them with Marcus since they have commercial consequences.

Definitions. Availability SLI: the proportion of non-4xx API requests that complete without a 5xx, measured at the ALB, excluding /healthz and /readyz. Latency SLI: proportion of GET requests to list and detail endpoints served in under 500ms. Webhook SLI: proportion of outgoing webhook first attempts made within 60 seconds of the event.

Targets: availability 99.9% per calendar month (about 43 minutes of error budget), latency 99% under 500ms, webhook first-attempt 99%.

Error budget policy: if more than 50% of the monthly availability budget is spent, non-urgent deploys pause until the end of the month except fixes, and the next planning includes reliability work. If the budget is exhausted, Priya can freeze feature releases.

Measurement: Grafana dashboard 'SLOs' with multi-window burn-rate alerts (1h and 6h windows, burn rate 14.4 and 6) routed to the on-call. Maintenance windows announced at least 7 days ahead are excluded, which is what the contract allows.

Reporting: a monthly SLO report goes to the enterprise customers' contacts on the 3rd business day.""", sup="slo1")
q("t", "What's our availability target for the API?", "slo2")
q("p", "we've had a lot of downtime this month — am I still allowed to release non-urgent work?", "slo2")
q("k", "Which burn-rate windows do the SLO alerts use?", "slo2")

m("result_backend1", "04-10", "file_fact", "Celery result backend is Redis db 2 (CELERY_RESULT_BACKEND); results expire after 1 day.")
m("result_backend2", "06-11", "decision", """Decision: disable the Celery result backend.

We looked at who actually reads task results: nobody, except two places. The export page polled AsyncResult(task_id).state to show progress, and one test helper waited on .get(). Meanwhile the result keys were 30% of Redis memory because every email and webhook task stored a result for a day, and the failover in May showed that having results and broker in the same Redis makes a bad day worse.

New approach: task_ignore_result=True globally and no result backend configured. Long-running jobs that need visible progress (exports, backfills, reindexing) write their state to Postgres in the jobs table (status, progress_pct, error, finished_at), which the UI polls through GET /jobs/{id}. Tests use the eager fixture and assert on side effects, not on results.

If you really need a result, don't re-enable the backend; persist what you need explicitly.

Cleanup: Redis db 2 was flushed on 2026-06-12 and the CELERY_RESULT_BACKEND variable removed from all environments. Flower still works for live inspection of workers but shows no results history.""", sup="result_backend1")
q("t", "Where does Celery store task results?", "result_backend2")
q("p", "I want a progress bar in the UI for a long background job — where do I read its status from?", "result_backend2")

m("long_localdev_https", "05-22", "command", """How-to: testing things that need HTTPS or a public URL locally.

Most development works on plain http://localhost. Three things don't: Stripe Checkout redirects and Connect OAuth (Stripe requires https for redirect URLs in live mode but accepts http://localhost in test mode, so usually fine), SSO with real IdPs (Okta refuses http ACS URLs), and tenants' webhook receivers that we want to try against a real phone or another machine.

Options, in order of preference:
1. Stripe: use the Stripe CLI (`stripe listen`) for webhooks; for redirects, localhost works in test mode. Nothing else needed.
2. SSO and anything that must be reachable from outside: use the shared Cloudflare Tunnel. Run `just tunnel`, which starts cloudflared with the token in .env (CLOUDFLARE_TUNNEL_TOKEN, ask Aisha) and maps https://<your-github-handle>.dev.ledgerly.io to localhost:8000. Your subdomain is stable, so you can register it once in the Okta developer tenant.
3. Local TLS only (e.g. testing secure cookies or HSTS): `just dev-tls` runs Caddy in front of the api with its internal CA on https://localhost:8443. Run `caddy trust` once to install the CA.

Don't use ngrok: random URLs meant people kept registering new ones in the shared Okta and Stripe test accounts and those accounts filled up with dead endpoints. The tunnel subdomains are cleaned up when someone leaves.""")
q("k", "Which command gives me a public HTTPS URL to my local api?", "long_localdev_https")
q("p", "the identity provider refuses my laptop's plain-http callback while building single sign-on; what's the usual workaround?", "long_localdev_https")
q("p", "is it fine to use one of those random-URL tunnelling tools to expose my laptop?", "long_localdev_https")

m("long_pm_stripe_ver", "10-09", "gotcha", """Post-mortem: payments not marked as paid after the Stripe API upgrade (2026-10-06).

Severity: SEV2. Author: Nadia. Duration: about 6 hours until fully reconciled.

On October 1 we upgraded our pinned Stripe API version. Elif's regression plan covered webhook parsing of invoice.paid, and the handler was updated to read the new payments list instead of the charge field. What we missed: webhook endpoint versions in Stripe are per endpoint, and the Connect webhook endpoint (events from tenants' connected accounts) is a separate endpoint from the platform endpoint. Only the platform endpoint had been switched to the new version in the dashboard. Connect events kept arriving with the old payload shape, which the new handler rejected with a validation error. Stripe retried, we rejected again, and about 1,100 invoices across 140 tenants stayed open although paid.

Detection: the daily reconciliation alert on October 6 at 07:00, five days later, because the handler errors were grouped under an existing Sentry issue that was muted.

Fix: the handler now accepts both shapes during upgrades, and the webhook endpoint versions are managed in Terraform via the Stripe provider so both endpoints change in the same PR. We replayed the failed events with the replay command after the fix. Muted Sentry issues now expire after 14 days.

Lesson: when upgrading the Stripe API version, check BOTH webhook endpoints (platform and Connect) and keep the handler tolerant of the previous version for at least one week.""")
q("p", "we bumped the Stripe version and paid invoices from connected accounts stopped updating — what did we forget?", "long_pm_stripe_ver")
q("k", "How long should the webhook handler tolerate the previous Stripe payload version after an upgrade?", "long_pm_stripe_ver")
q("m", "What must I check when changing the pinned Stripe API version?", ["stripe_ver3", "long_pm_stripe_ver"])

m("long_backfill_guide", "06-14", "convention", """Guide: writing a backfill.

A backfill is any change to existing rows that isn't a schema change: populating a new column, fixing bad data after a bug, re-rendering something. Schema changes stay in alembic; backfills never do, because an alembic migration that updates two million rows holds locks for minutes and blocks the deploy pipeline.

Structure: create ledgerly/backfills/<yyyymmdd>_<slug>.py with a class inheriting BaseBackfill. Implement select_batch(after_id, limit) returning ids in UUID order and process(ids) doing the update for one batch inside its own transaction. The framework handles batching, progress reporting in the jobs table, pausing, and resuming from the last processed id after a worker restart.

Running: `just backfill <slug> --dry-run` first; it runs select_batch and process with a rolled-back transaction for the first 3 batches and prints what would change. Then `just backfill <slug>` in staging, then in production (the recipe dispatches to the ECS one-off task). Default batch size is 1000 with a 200ms pause between batches; increase the pause if replica lag alerts fire.

Rules: backfills must be idempotent (running twice is harmless), must set app.via_service if they change invoice status (better: call the service), and must be deleted from the codebase one release after they ran in production — the history is in git. Announce big ones (more than 1M rows) in #deploys.""")
q("k", "How do I dry-run a backfill?", "long_backfill_guide")
q("p", "my backfill is making the replica fall behind, what should I tweak?", "long_backfill_guide")
q("p", "the backfill finished in prod last week, should the file stay in the repo?", "long_backfill_guide")

m("long_web_state", "03-08", "convention", """Frontend state management guidelines (Jun).

There are four kinds of state in the web app and each has one home.

Server state — anything that comes from the api — lives in TanStack Query. Components call the generated hooks wrapped in web/src/api/hooks/*.ts. Mutations invalidate by query key prefix, e.g. after finalizing an invoice we invalidate ['invoices'] and ['dashboard']. Staleness: default staleTime is 30 seconds; the dashboard uses 60 seconds because it's backed by a materialized view anyway.

URL state — filters, sorting, pagination cursors, selected tab — lives in the URL search params via the useSearchState hook so links are shareable and back/forward works. Do not mirror URL state into useState.

Form state lives in react-hook-form with zod schemas in web/src/schemas/. The zod schemas are hand-written, not generated, because the API schema is looser than the UI validation.

Client-only app state (sidebar collapsed, theme, the currently selected tenant) lives in a small Zustand store in web/src/store.ts and is persisted to localStorage under the key ledgerly:ui. The selected tenant is NOT persisted across logins; it resets to the user's default tenant, which avoids showing data of a tenant the user was removed from.

Anti-patterns we've removed: useEffect fetching, Context for server data, and global Redux. If you think you need a fifth kind of state, talk to Jun first.""")
q("k", "What's the default TanStack Query staleTime in the web app?", "long_web_state")
q("p", "where should I keep the selected filters of the invoice list so people can share the link?", "long_web_state")
q("p", "I want the app to remember which company the user was looking at after they log in again", "long_web_state")

m("long_pm_migration_heads", "05-19", "gotcha", """Incident write-up: deploy blocked by multiple alembic heads (2026-05-18).

Not customer-facing, but it blocked releases for half a day, so it gets a write-up. Two PRs merged within an hour of each other each added a migration whose down_revision was the same head. Both PRs were green individually, because CI ran against their own branch, not against the merge result. On main, `alembic upgrade head` failed with 'Multiple head revisions are present for given argument 'head''. The release workflow failed in the migrate step, which fortunately runs before the service update, so production stayed on the old version.

The quick fix was a merge revision, which we then decided we didn't want in the history because merge revisions make downgrades confusing.

Changes: (1) the alembic-heads check in CI runs on the merge commit (pull_request events use the merge ref already, but we also enabled 'Require branches to be up to date before merging' on main), (2) migration filenames are date-prefixed so conflicts are visible in the file list, (3) the convention is to rebase and re-point down_revision instead of adding a merge revision.

Reminder for reviewers: if a PR adds a migration, check that its down_revision is the current head on main at merge time.""")
q("k", "What error does alembic print when there are two heads?", "long_pm_migration_heads")
q("p", "two of us merged schema changes the same morning and now production deploys are stuck, why?", "long_pm_migration_heads")

m("long_cache_design", "07-22", "decision", """Design note: application caching.

We cache in Redis (CACHE_URL, separate logical database from the queue locally; a separate ElastiCache cluster in AWS from August) through ledgerly.cache, a thin wrapper around redis-py with JSON serialization and key namespacing: ledgerly:<env>:<tenant_id>:<name>:<version>.

What we cache: tenant settings (5 minutes), plan limits per tenant (5 minutes), the /invoices/stats response (60 seconds), exchange rates from the ECB (24 hours, refreshed by a beat task at 16:30 CET after publication), and Unleash flag state (handled by the SDK itself, not our cache).

What we never cache: invoice documents or totals, permissions checks, anything in the payment flow. Stale data there is either a correctness or a security bug.

Invalidation: writes go through the service layer which calls cache.bust(tenant_id, name) after commit (using SQLAlchemy's after_commit session event, so a rolled back transaction doesn't bust). Every cached shape has a version number in its key; when you change the shape, bump the version in the CACHE_VERSIONS dict rather than trying to flush keys in production.

Local development: set CACHE_DISABLED=1 to bypass the cache entirely when debugging stale-data issues.""")
q("k", "When are ECB exchange rates refreshed?", "long_cache_design")
q("p", "I changed the structure of a cached object, do I need to flush Redis in prod?", "long_cache_design")
q("p", "I'm chasing a stale-data bug locally and suspect the cache, can I turn it off?", "long_cache_design")

m("long_pm_signup_spam", "06-18", "gotcha", """Incident: signup spam and email reputation (2026-06-10 to 06-17).

Over a week, about 4,000 fake tenants signed up through scripts, each creating one invoice to an arbitrary email address with a phishing link in the invoice notes, then using 'send invoice' to deliver it from our domain. Our email provider's bounce and complaint rates spiked and SendGrid throttled our account on June 16, which delayed legitimate invoice emails for several hours.

Response: disabled sending for tenants younger than 24 hours with a feature flag, deleted the spam tenants with a backfill, and contacted the provider to lift the throttle.

Long-term changes: (1) signup now requires Cloudflare Turnstile, (2) new Free-plan tenants can only send invoices to at most 10 distinct recipient addresses in their first 7 days, (3) links in invoice notes are no longer rendered as clickable in emails for Free tenants, (4) a daily job flags tenants whose emails get more than 5% bounces and pauses their sending pending review by support.

This incident is also the main reason we are moving transactional email to Postmark with separate message streams for tenant-triggered and system emails, so one can't ruin the reputation of the other.""")
q("p", "a just-registered no-cost workspace hit a cap on how many people it can mail invoices to, why?", "long_pm_signup_spam")
q("k", "What bounce rate pauses a tenant's sending?", "long_pm_signup_spam")
q("m", "Why did we switch email providers and how is abuse of invoice sending limited?", ["postmark", "long_pm_signup_spam"])

m("long_db_conventions", "01-18", "convention", """Database conventions (agreed at project start, still valid).

Naming: tables are plural snake_case (invoices, line_items, tax_rates). Foreign keys are <singular>_id. Indexes are named ix_<table>_<columns>, unique constraints uq_<table>_<columns>, check constraints ck_<table>_<name>; the SQLAlchemy MetaData naming_convention in ledgerly/db/base.py generates these, so don't pass explicit names unless you need a special index.

Every table has id (UUID primary key), created_at and updated_at (timestamptz, default now(), updated by trigger set_updated_at). Tenant-owned tables have tenant_id NOT NULL as the first column of every index, because nearly every query filters by tenant.

Nullable vs default: prefer NOT NULL with a default over nullable; NULL means 'unknown', not 'empty'. Booleans are always NOT NULL.

Text: use text, not varchar(n), with a CHECK constraint if a length limit matters. Emails are citext.

JSONB only for truly schemaless data (tenant settings, webhook payload snapshots); anything we query by goes in real columns.

Deletion: ON DELETE CASCADE only from a tenant to its data (tenant deletion) and from invoices to line_items; everything else is RESTRICT.""")
q("k", "What's the naming convention for unique constraints?", "long_db_conventions")
q("p", "for a new string column, should I give it a max length like 255?", "long_db_conventions")
q("k", "Which column type do we use for email addresses?", "long_db_conventions")
q("m", "What conventions should a new tenant-owned table follow?", ["long_db_conventions", "uuid", "rls"])
