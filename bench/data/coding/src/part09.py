# ---- Long memories batch 2 ----
m("long_staging_refresh", "07-30", "command", """Runbook: refreshing staging data from production (anonymised).

Owner: Aisha. Frequency: first Monday of each month, or on request from Elif for a QA cycle.

Steps:
1. Announce in #eng that staging will be unavailable for ~45 minutes.
2. Take a fresh snapshot of the production replica (not the primary) with `just db-snapshot prod-replica`.
3. Restore it into the scratch instance ledgerly-scrub (never directly into staging).
4. Run the anonymiser: `just db-anonymise --target scrub`. It replaces customer names, emails (pattern customer+<id>@example.test), IBANs, addresses and invoice notes, and deletes api_keys, sso_connections and webhook_endpoints rows entirely so staging can never call a tenant's URL.
5. Run `just db-anonymise --verify` which fails if any email not ending in example.test remains.
6. Dump scrub and restore into staging, then run `alembic upgrade head` in case staging is ahead.
7. Reset the staging Stripe connected accounts mapping with `just stripe-staging-relink`, because production acct_ ids don't exist in Stripe test mode.
8. Post in #eng when done.

Gotcha: step 7 is easy to forget; if it's skipped, every finalize on staging fails with 'No such account'.""")
q("p", "QA says staging can't issue any bills since the data was re-copied from live, what step got skipped?", "long_staging_refresh")
q("k", "What does the anonymiser do with webhook_endpoints rows?", "long_staging_refresh")
q("k", "How often is staging refreshed from production data?", "long_staging_refresh")

m("long_recurring", "04-06", "decision", """Design note: recurring invoices v1.

A recurring_schedule row belongs to a customer and holds a template (line items, currency, tax settings), an interval (monthly, quarterly, yearly), anchor_day and next_run_on. A Celery beat task (generate_recurring_invoices) runs hourly and picks schedules with next_run_on <= today in the tenant's timezone. For each it creates a draft invoice and, if auto_finalize is true, finalizes and sends it.

Edge cases:
- anchor_day 29, 30 or 31 in short months: we use the last day of the month and keep the original anchor for the following months (so Jan 31 -> Feb 28 -> Mar 31).
- Paused schedules keep next_run_on; on resume we do NOT create the missed invoices, we move next_run_on to the next future date.
- Price changes apply from the next generated invoice; already generated drafts are not touched.

Concurrency: two beat instances would double-generate. The task takes a Postgres advisory lock (pg_try_advisory_xact_lock(4201)) per run, and each schedule row is selected with FOR UPDATE SKIP LOCKED.""")
q("k", "Which advisory lock id does generate_recurring_invoices take?", "long_recurring")
q("p", "a monthly invoice anchored on the 31st, what date does it get in February and March?", "long_recurring")
q("p", "a tenant paused a subscription for three months; will resuming bill them for the missed months?", "long_recurring")

m("long_dns_incident", "09-19", "gotcha", """Incident: app.ledgerly.io unreachable for some users (2026-09-18, 35 minutes).

Symptoms: a subset of users, mostly in Germany, got NET::ERR_CERT_COMMON_NAME_INVALID. Others were fine.

Cause: while adding the docs.internal subdomain, someone edited the Cloudflare DNS record for app.ledgerly.io and accidentally toggled it from proxied (orange cloud) to DNS-only. DNS-only exposed the ALB directly, whose ACM certificate only covered api.ledgerly.io. Resolvers that had cached the old record kept working, which is why only some users were affected.

Detection: customer support tickets, not monitoring — our synthetic check hit api.ledgerly.io only.

Fix: re-enabled proxying. Follow-ups: (1) the ACM certificate now includes app.ledgerly.io and *.ledgerly.io as a SAN so DNS-only mode would still work; (2) Cloudflare DNS is managed in Terraform (infra/cloudflare/) and manual edits in the dashboard are disallowed — dashboard access was reduced to Aisha and Priya; (3) a Checkly synthetic check for https://app.ledgerly.io/login was added.""")
q("p", "I need a new hostname under our domain, may I click it together in the CDN provider's web UI?", "long_dns_incident")
q("k", "What caused the ERR_CERT_COMMON_NAME_INVALID incident in September?", "long_dns_incident")

m("long_terraform", "07-14", "convention", """Terraform conventions (infra/).

Layout: infra/modules/ for reusable modules (ecs-service, rds, redis, alb), infra/envs/staging and infra/envs/prod for root modules. State is in S3 bucket ledgerly-tfstate with DynamoDB lock table ledgerly-tflock, one state per env.

Workflow: open a PR; the terraform workflow runs `terraform plan` for each affected env and posts the plan as a PR comment. Apply happens only from CI after merge, for staging automatically and for prod via a manual approval in the GitHub environment 'production' (approvers: Aisha, Priya). Nobody runs apply from a laptop; local plan is fine with read-only credentials (`aws sso login --profile ledgerly-readonly`).

Versions: Terraform 1.8 pinned in .terraform-version (use tfenv), AWS provider ~> 5.50.

Naming: resources are prefixed ledgerly-<env>-, tags Environment, Service, Owner are required (checked by tflint rule).

Import existing resources with import blocks in code, not `terraform import` on the CLI, so the import is reviewed.""")
q("k", "Where is the Terraform state stored?", "long_terraform")
q("p", "my terraform change is merged, how does it get applied to prod?", "long_terraform")
q("k", "Which Terraform version is pinned?", "long_terraform")

m("long_audit_log", "10-14", "decision", """Design note: audit log export (Q4).

Requirement from enterprise tenants: export every security-relevant action (logins, role changes, API key creation, invoice voids, exports, impersonation) as JSON lines, retained 1 year, deliverable to their S3 bucket or SIEM.

Storage: audit_events table, partitioned monthly by created_at with pg_partman; partitions older than 13 months are detached and archived to S3 Glacier by a monthly task. We chose partitioning over a separate store because queries are always time-bounded per tenant.

Write path: ledgerly.audit.record(event, actor, target, metadata) is called by services, never by routes. It writes in the same transaction as the action so a rolled-back action leaves no audit event.

Export: tenants configure a destination (S3 with an IAM role they create, trusting our account 481516234200 and requiring the external id shown in the UI) or an HTTPS endpoint. Export runs every 15 minutes and ships new events since the last cursor; the cursor is stored in audit_export_cursors.

Not in scope: tamper-evident hashing (maybe 2027).""")
q("k", "How is the audit_events table partitioned?", "long_audit_log")
q("p", "a tenant wants audit events in their own S3 bucket, what do they need to set up on their side?", "long_audit_log")
q("p", "how quickly do audit events show up in the customer's SIEM?", "long_audit_log")

m("long_release_proc", "07-08", "command", """Release process after moving away from the weekly train.

1. release-please keeps an open PR 'chore(main): release x.y.z' that collects Conventional Commit messages into CHANGELOG.md and bumps the version in pyproject.toml and web/package.json.
2. When you want to release, check staging (it already has main) and ask Elif for a quick smoke of the critical flows: sign up, create+finalize invoice, pay via Stripe test card 4242 4242 4242 4242, export.
3. Merge the release PR. This creates a git tag vX.Y.Z and a GitHub release; the deploy-production workflow triggers on the tag, waits for approval in the 'production' environment, runs migrations as a one-off task, then updates the service.
4. Watch #deploys and the Grafana 'Release' dashboard for 15 minutes.

Rollback: redeploy the previous tag via `gh workflow run deploy-production.yml -f tag=vX.Y.(Z-1)`. Migrations are NOT rolled back automatically; our migrations must be backward compatible with the previous release (expand/contract), which is why column drops happen one release after code stops using the column.""")
q("k", "How do I roll back a production release?", "long_release_proc")
q("p", "can one pull request both remove the code reading a field and delete that field from the table?", "long_release_proc")
q("m", "What happens between merging a release PR and the new version serving traffic?", ["long_release_proc", "migrate_prod"])

m("long_dunning_v2", "10-20", "decision", """Design note: dunning v2.

Problems with v1: fixed schedule per tenant, emails only, no escalation, reminders sent even when a payment was in flight (SEPA debits take up to 5 business days).

v2 changes: tenants define up to 6 steps, each with delay (days relative to due date), channel (email, or SMS via Twilio for Pro), and template. A step is skipped if the invoice has a pending payment (payments.status = 'processing'), which fixes the SEPA complaints. The final step can optionally mark the invoice uncollectible or hand it to the collection partner (Collectia, via their API; only DE and AT customers).

Storage: dunning_policies and dunning_steps tables; existing tenants are migrated to a policy reproducing their v1 schedule. Behind flag billing-dunning-v2, owned by Nadia.

Sending window: reminders are sent between 09:00 and 17:00 in the customer's timezone (falls back to the tenant timezone), weekdays only.""")
q("k", "Which collection partner does dunning v2 integrate with?", "long_dunning_v2")
q("p", "direct debit clients were nagged to pay while their bank debit was still clearing — did we fix that?", "long_dunning_v2")
q("k", "Which flag gates dunning v2?", "long_dunning_v2")

m("long_lib_notes2", "05-25", "noise", """Notes from reading the FastAPI and Starlette changelogs this quarter (general knowledge, not decisions).

Starlette 0.37 changed how background tasks handle exceptions; FastAPI 0.110 followed. Lifespan events replace on_startup/on_shutdown decorators, which are deprecated. Dependencies with yield now run their exit code after the response is sent, which affects anyone relying on committing a session in the exit block before returning. Pydantic v2 is required since FastAPI 0.100. The `Annotated` style for Depends and Query is preferred in docs. Response model validation still happens on the way out and costs noticeable CPU for big lists; response_model=None with a pre-serialized response avoids it.

HTTPX replaced requests in the TestClient around Starlette 0.21, which is old news.

Nothing here requires action; keep in mind when upgrading.""")
m("long_meeting_retro", "08-15", "noise", """Retro after AWS migration (Aug 14).

Went well: rehearsal of the cutover on staging twice; logical replication was painless; the maintenance page worked.

Went less well: Terraform modules took longer than estimated; we discovered late that the Fly app used an internal DNS name for Gotenberg that didn't exist in AWS; CloudWatch costs surprised us in the first week (debug logging left on).

Ideas: write a 'migration checklist' template; do game days quarterly; consider Graviton for workers.

Kudos: Aisha for the Terraform work, Tomás for the sequence fix script.""")
m("long_standup_digest", "03-27", "noise", """Weekly digest (week 13).

Shipped: pnpm migration finished in all CI jobs; Vitest migration for 80% of tests; CJK fonts in PDFs; deptry in lint.
In progress: SQLAlchemy 2.0 migration (Tomás, about a third done), recurring invoices design (Priya), i18n for French (Elif coordinating).
Blocked: nothing.
Support: 14 tickets, mostly about invoice numbering gaps and PDF layout on long item descriptions.
Metrics: 412 active tenants, 38k invoices created this week, p95 API latency 420ms.""")
