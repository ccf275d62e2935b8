# ---- Long memories batch 1 ----
m("long_celery_pm", "05-18", "gotcha", """Post-mortem: duplicate payment-received emails (2026-05-16).

Summary: about 1,900 customers of 37 tenants received the 'payment received' email two to four times on Saturday morning.

Background: the emails queue is processed by two Celery workers. The task send_payment_received(invoice_id) is triggered by the invoice.paid handler. It renders the template, calls the email provider and then writes a notification_log row.

What happened: a Redis failover at 07:58 UTC (managed Redis maintenance) caused the workers to lose their connection mid-task. With acks_late=True, the unacknowledged messages were redelivered once the broker came back. Because the notification_log row was written AFTER sending the email, the redelivered tasks had no way to know the email had already gone out.

Contributing factor: worker_prefetch_multiplier was 4, so each worker held several unacked messages at the moment of failover, multiplying the duplicates.

Fix: the task now inserts notification_log with a unique constraint on (invoice_id, kind) BEFORE sending, inside its own transaction, and skips the send on IntegrityError. worker_prefetch_multiplier is now 1 for the emails queue. We also pass the notification_log id to Postmark as the Message-ID header so retried sends are recognisable in the provider logs.

Lessons: any task with an external side effect must record intent first and be idempotent; acks_late alone does not give exactly-once.""")
q("k", "What is worker_prefetch_multiplier set to for the emails queue?", "long_celery_pm")
q("p", "why did people get the 'we received your money' mail three times one weekend in spring?", "long_celery_pm")
q("p", "in a background job that mails someone, what order should recording it and actually sending happen in?", "long_celery_pm")

m("long_onboarding", "02-20", "command", """Onboarding checklist for new engineers (maintained by Priya).

Accounts: GitHub org ledgerly-hq (ask Aisha), Linear (team LED), Slack channels #eng, #deploys, #alerts, #billing-alerts, Sentry, Fly.io (read-only unless on-call), 1Password vault ledgerly-eng.

Machine setup:
- Install Docker Desktop or OrbStack (OrbStack recommended on macOS, uses far less memory).
- Install Python via the dependency tool, and Node via fnm or nvm reading .nvmrc.
- Clone, copy .env.example to .env, start the compose stack, run migrations and the seed.
- Open the web app dev server and log in with the demo user.

First week:
- Pair with your onboarding buddy on one bug from the 'good-first-issue' label in Linear.
- Read docs/architecture.md and the billing state machine diagram (docs/billing-states.png).
- Shadow one on-call handover.

Access to production data: nobody gets production database access in their first month. After that, read-only access through the `ledgerly_readonly` role via the bastion, requested in #infra with a Linear ticket; every session is logged. Write access to production data is never granted to individuals; changes go through a reviewed data migration or an admin action.""")
q("k", "Which role is used for read-only production database access?", "long_onboarding")
q("p", "I've been here two weeks, can I get access to the production DB to debug a customer issue?", "long_onboarding")
q("k", "Is OrbStack or Docker Desktop recommended on macOS?", "long_onboarding")

m("long_invoice_states", "02-12", "decision", """Design note: invoice state machine.

States: draft -> open (finalized) -> paid | void | uncollectible. A draft can be edited freely and deleted. Finalizing assigns the invoice number, freezes line items and totals, renders the PDF and (if the tenant has Stripe connected) creates the Stripe invoice. Open invoices can receive partial payments; amount_due decreases but the state stays open until amount_due reaches zero.

Transitions are only allowed through InvoiceService methods (finalize, mark_paid, void, mark_uncollectible). Each method validates the current state and writes an invoice_events row (the audit log). Direct UPDATEs of invoices.status are forbidden; a database trigger (trg_invoice_status_guard) raises if status is changed without the session variable app.via_service = 'on', which the service sets with SET LOCAL.

Voiding: only open invoices with no payments can be voided. If payments exist, issue a credit note instead. Voiding a Stripe-linked invoice also voids it in Stripe, and we wait for the invoice.voided webhook before sending the 'invoice cancelled' email.

Uncollectible: set manually by the tenant, or automatically 90 days after due date if the tenant enabled auto_write_off. Uncollectible invoices still accept payment and move to paid.""")
q("k", "What does the trg_invoice_status_guard trigger do?", "long_invoice_states")
q("p", "I tried to fix an invoice's status with a quick UPDATE in a data migration and the database threw an error", "long_invoice_states")
q("p", "customer already paid half, can the tenant cancel the invoice?", "long_invoice_states")
q("k", "When does an invoice automatically become uncollectible?", "long_invoice_states")

m("long_perf_review", "07-18", "decision", """Notes from the API performance review (July).

We profiled the ten slowest endpoints using the Datadog APM data from the last 30 days. GET /invoices (list) p95 was 1.4s for large tenants. Causes: N+1 loading of customer and line items, and count(*) for the total header on every request.

Changes agreed:
1. List endpoints use selectinload for line items and joinedload for customer; the repository method InvoiceRepo.list_page does this now.
2. We drop the X-Total-Count header for lists; the UI shows 'more' instead of page numbers. Exact counts are available from the /invoices/stats endpoint which is cached in Redis for 60 seconds.
3. The dashboard summary query moves to a materialized view mv_tenant_invoice_summary refreshed every 5 minutes by a Celery beat task (refresh_invoice_summaries) using REFRESH MATERIALIZED VIEW CONCURRENTLY. This requires the unique index uq_mv_tenant_summary on tenant_id, don't drop it.
4. GZip middleware is enabled for responses over 1 KB.

Result after deploy: GET /invoices p95 dropped to 310ms, dashboard p95 to 120ms. Remaining slow endpoint is the CSV export which stays asynchronous.""")
q("k", "How often is mv_tenant_invoice_summary refreshed?", "long_perf_review")
q("p", "the dashboard numbers lag a few minutes behind new invoices, is that expected?", "long_perf_review")
q("p", "why doesn't the invoice list response tell me the total number of invoices anymore?", "long_perf_review")

m("long_security_review", "06-26", "decision", """Summary of findings from the June external security review and what we did.

High: refresh tokens were not rotated, so a stolen cookie was valid for 30 days. Fixed with rotation and family revocation.
High: the PDF renderer could fetch arbitrary URLs from invoice notes (SSRF through <img src>). Fixed: WeasyPrint url_fetcher now only allows our own static host and data: URIs.
Medium: password reset tokens were valid for 24h; now 30 minutes and single-use (password_resets.used_at).
Medium: missing rate limit on /auth/login; now 10 attempts per 15 minutes per IP+email, then a 15 minute lockout, implemented in ledgerly/auth/throttle.py.
Medium: admin impersonation did not show a banner; now the web app shows a red banner and all actions are logged with impersonator_id.
Low: verbose server header; removed.
Low: CSP allowed 'unsafe-inline' for styles; now nonces via the Vite plugin.

Retest is scheduled for December. Anything touching auth, PDF rendering or file upload needs a security-labelled PR and review from Priya until then.""")
q("k", "How long are password reset tokens valid?", "long_security_review")
q("p", "someone locked themselves out after typing the wrong password a bunch of times, how long do they wait?", "long_security_review")
q("p", "who has to review my PR that changes the upload code?", "long_security_review")

m("long_export", "07-11", "command", """Runbook: tenant data export (CSV/ZIP).

Tenants request exports in Settings > Data > Export. This enqueues export_tenant_data on the exports queue. The task streams invoices, customers, payments and attachments metadata into CSV files, zips them, and uploads to s3://ledgerly-exports/<tenant_id>/<export_id>.zip with a 7 day lifecycle rule. The download link in the email is a presigned URL valid for 24 hours; after that the user can generate a new link from the same page as long as the file exists.

If an export is stuck in 'running': check the worker logs for the export_id. Exports larger than ~2M rows hit the time limit. For those, run `just export-tenant <tenant_id> --chunked` from a one-off task, which writes one CSV per year and avoids the time limit.

If a tenant asks for a GDPR export of a single customer, use Admin > Customers > Export personal data instead — it includes email logs and is required to be delivered within 30 days.

Never email the zip as an attachment.""")
q("k", "How long is the export download link valid?", "long_export")
q("p", "a huge tenant's export keeps dying halfway, what's the workaround?", "long_export")
q("m", "Why would a large tenant export fail and what should I run instead?", ["job_timeout2", "long_export"])

m("long_meeting_q3", "06-29", "noise", """Q3 planning meeting notes (Marcus, Priya, Aisha, Jun, Tomás, Elif, Nadia).

Themes: enterprise readiness (SSO, audit log export, AWS), integrator experience (higher rate limits, dated API versions, better webhook docs), and billing quality (dunning v2, credit notes).

Discussion: Marcus wants SSO by end of August for the Nordlicht deal. Aisha estimates the AWS migration at 5 weeks including Terraform. Jun raised that the invoice editor needs a rewrite for line-item drag and drop; agreed for Q4. Elif asked for a staging data refresh process; action on Aisha.

Hiring: one more frontend engineer, posting goes up in July.

Not doing in Q3: mobile app, PayPal, multi-entity accounting.

Next review: end of September.""")
m("long_meeting_q4", "09-30", "noise", """Q4 planning notes.

Recap Q3: AWS migration done (Aug 9), SSO shipped for Nordlicht, dated API versions live, Postmark move done, Meilisearch search shipped late September. Missed: audit log export (moved to Q4), invoice editor rewrite (started).

Q4 goals: invoice editor v2 behind web-invoice-editor-v2, audit log export, recurring invoices v2, cost review of AWS (reserved instances for RDS), SOC 2 Type I evidence collection.

Team: Tomás moved to data team in September; Nadia owns billing. New frontend hire Lucas starts November 3.

Risks: Stripe API upgrade to basil needs a full regression of webhook handling; Elif to lead.""")
m("long_lib_notes", "03-15", "noise", """Reading notes: Python decimal module behaviours worth remembering (general, not ledgerly specific).

Decimal('0.1') + Decimal('0.2') == Decimal('0.3') is True, unlike floats. Decimal(0.1) constructed from a float carries the binary error, so always construct from strings. The context precision (default 28 significant digits) applies to arithmetic results, not to construction. quantize() is what you use to round to a fixed exponent; it raises InvalidOperation if the result would exceed the context precision. localcontext() lets you change rounding temporarily in a with block. Comparisons between Decimal and float are allowed but mixing them in arithmetic raises TypeError. Decimal('NaN') compares unequal to itself. The sign of zero is preserved: Decimal('-0') prints as -0.

These are generic notes from reading the docs on a Sunday; nothing to action.""")

n("07-19", "Perf review follow-up: consider HTTP/2 on the ALB once we're on AWS.")
n("06-30", "Nordlicht GmbH is the Enterprise prospect driving SSO and AWS.")
n("05-19", "Redis maintenance windows for the managed provider are Saturdays 07:00-09:00 UTC.")
