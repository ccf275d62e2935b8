# ---- Billing / Stripe / invoices ----
m("stripe_mock", "02-03", "command", "Before running the billing tests locally, start stripe-mock: `docker run -d -p 12111:12111 stripe/stripe-mock:latest`. The tests point the Stripe client at http://localhost:12111.")
m("stripe_env", "02-03", "convention", "Billing tests need STRIPE_API_KEY=sk_test_123 and STRIPE_API_BASE=http://localhost:12111 in .env.test; the real test-mode key is only used by the contract tests in CI.")
q("m", "What do I need to do before running the billing tests locally?", ["stripe_mock", "stripe_env"])
q("k", "Which port does stripe-mock listen on?", "stripe_mock")
m("stripe_ver1", "01-22", "file_fact", "Stripe API version is pinned to 2023-10-16 in ledgerly/billing/stripe_client.py (stripe.api_version).")
m("stripe_ver2", "05-26", "decision", "Bumped the pinned Stripe API version to 2024-06-20; the webhook endpoint in the Stripe dashboard was updated to the same version.", sup="stripe_ver1")
m("stripe_ver3", "10-01", "decision", "Stripe API version is now 2025-03-31.basil. Breaking change for us: invoice.paid payloads no longer include `charge`, we read `payments` instead.", sup="stripe_ver2")
q("t", "Which Stripe API version are we pinned to?", "stripe_ver3")
q("t", "what stripe api version should I set on a new webhook endpoint?", "stripe_ver3")
m("stripe_webhook_cli", "02-04", "command", "To receive Stripe webhooks locally: `stripe listen --forward-to localhost:8000/webhooks/stripe` and copy the printed whsec_ into STRIPE_WEBHOOK_SECRET.")
q("k", "How do I forward Stripe webhooks to my local api?", "stripe_webhook_cli")
q("p", "webhook signature verification fails on my machine every time, where do I get the right secret?", "stripe_webhook_cli")
m("stripe_idem", "03-14", "convention", "Every Stripe write call passes an idempotency_key derived from our own object id and action, e.g. f\"inv-{invoice.id}-finalize\"; retries from Celery would otherwise create duplicate charges.")
q("p", "a customer got charged twice after a worker retried, what should have prevented it?", "stripe_idem")
m("webhook_dedupe", "03-15", "gotcha", "Stripe delivers webhooks at-least-once and out of order. We store event ids in stripe_events (unique) and ignore duplicates; never assume invoice.paid arrives after invoice.finalized.")
q("k", "How do we deduplicate Stripe webhook events?", "webhook_dedupe")
m("rounding1", "02-09", "decision", "Line-item tax is rounded with Python's default Decimal rounding (ROUND_HALF_EVEN, banker's rounding).")
m("rounding2", "04-20", "decision", "Per our accountant's request, invoice tax is now rounded ROUND_HALF_UP per line item (Money.round_tax); banker's rounding caused 1-cent mismatches with customers' spreadsheets.", sup="rounding1")
q("t", "How is tax rounded on invoice lines?", "rounding2")
q("p", "a customer says our invoice total is one cent off from their Excel sheet", "rounding2")
m("invnum1", "01-25", "file_fact", "Invoice numbers are global sequential: INV-0001, INV-0002, ... from the Postgres sequence invoice_number_seq.")
m("invnum2", "07-02", "decision", "Invoice numbers are per tenant and per year now, format INV-2026-000123, generated from the tenant_counters table with SELECT ... FOR UPDATE. The global sequence is unused.", sup="invnum1")
q("t", "What format do invoice numbers have?", "invnum2")
q("p", "tenants complained they could see gaps and guess how many invoices others make; how do we number them now?", "invnum2")
m("whretry1", "02-17", "file_fact", "Outgoing customer webhooks (our own, to tenants' URLs) are retried 3 times, 1 minute apart.")
m("whretry2", "06-16", "decision", "Outgoing tenant webhooks now retry with exponential backoff: 8 attempts over ~24h (1m, 5m, 15m, 1h, 3h, 6h, 12h, 24h), then the endpoint is disabled and the tenant admin is emailed.", sup="whretry1")
q("t", "How many times do we retry a failed outgoing webhook?", "whretry2")
q("p", "a tenant's webhook endpoint was down all night; will they still get the events?", "whretry2")
m("webhook_sig", "02-18", "file_fact", "Our outgoing webhooks are signed with HMAC-SHA256 in the header `Ledgerly-Signature: t=<ts>,v1=<hex>`; the secret is per endpoint (webhook_endpoints.secret).")
q("k", "What header carries the signature on our outgoing webhooks?", "webhook_sig")
m("sendgrid", "01-18", "file_fact", "Transactional email (invoice sent, payment received) goes through SendGrid; templates are in the SendGrid UI, ids in ledgerly/notify/templates.py.")
m("postmark", "06-22", "decision", "Switched transactional email to Postmark for better deliverability; templates now live in the repo under templates/email/*.mjml and are pushed with `just email-templates-push`.", sup="sendgrid")
q("t", "Which email provider sends invoice emails?", "postmark")
q("t", "where do I edit the payment-received email template?", "postmark")
m("email_local", "01-19", "command", "Locally, emails go to Mailpit at http://localhost:8025 (SMTP on 1025) when EMAIL_BACKEND=smtp; nothing is sent externally.")
q("k", "Where can I see emails sent in local development?", "email_local")
q("p", "I triggered an invoice email locally but nothing arrived in my inbox, where did it go?", "email_local")
m("weasy", "01-26", "file_fact", "Invoice PDFs are rendered with WeasyPrint from Jinja templates in templates/pdf/invoice.html.")
m("gotenberg", "09-08", "decision", "PDF rendering moved to a Gotenberg sidecar (Chromium) at GOTENBERG_URL; WeasyPrint was removed because of CSS grid support and memory spikes. Templates stay in templates/pdf/.", sup="weasy")
q("t", "What renders invoice PDFs?", "gotenberg")
m("pdf_fonts", "03-27", "gotcha", "Invoice PDFs with Japanese or Chinese customer names rendered as boxes until we bundled Noto Sans CJK in docker/fonts/; the font must be referenced in invoice.html @font-face.")
q("p", "a Tokyo customer's name shows up as little squares on the PDF", "pdf_fonts")
m("dunning", "04-30", "decision", "Dunning schedule: reminders 3 days before due, on due date, and 7 and 14 days after; configurable per tenant in tenant.settings.reminders. Implemented in ledgerly/billing/dunning.py.")
q("k", "What is the default dunning reminder schedule?", "dunning")
m("currency", "03-01", "convention", "Currencies supported: EUR, USD, GBP, CHF, SEK, JPY. JPY has zero decimals; Money handles exponent via ledgerly.billing.currencies.EXPONENT, don't hardcode 2.")
q("p", "Yen invoices show .00 amounts and Stripe rejects them", "currency")
m("plan_limits", "05-02", "file_fact", "Paid plan limits (invoices per month: Starter 500, Pro unlimited; the Free plan limit is tracked separately) are defined in ledgerly/billing/plans.py and enforced in InvoiceService.create.")
q("k", "How many invoices per month does the Starter plan allow?", "plan_limits")
m("sub_trial", "05-03", "decision", "New signups get a 14-day Pro trial with no card; trial end is handled by the `customer.subscription.trial_will_end` webhook which triggers the reminder email 3 days before.")
q("k", "How long is the free trial for new signups?", "sub_trial")

m("long_stripe_runbook", "07-15", "command", """Runbook: reconciling Stripe payments with ledgerly invoices.

When to use: a tenant reports an invoice shows 'open' in ledgerly but the customer paid, or the daily reconciliation alert (#billing-alerts, 'stripe_recon_mismatch') fires.

1. Find the invoice: `just shell` then `Invoice.by_number(tenant_id, 'INV-2026-000123')`. Note stripe_invoice_id.
2. In the Stripe dashboard (use the connected account of the tenant, not the platform account!) open the invoice and check its status and the events tab.
3. If Stripe says paid but we never processed invoice.paid: check stripe_events for the event id. If the row is missing, the webhook never arrived; if present with processed_at NULL, the Celery task failed — look in Sentry for `process_stripe_event`.
4. To replay: `just billing-replay-event evt_...` which enqueues the event again. This is safe because handlers are idempotent.
5. If the amounts differ (partial payment or a discount applied in Stripe), do NOT edit the invoice row directly. Create a credit note through the admin (Admin > Invoices > Credit note) so the audit log stays consistent.
6. Run `just billing-recon --tenant <id> --since 2026-07-01` to confirm no other mismatches.
7. Post a short note in #billing-alerts with the invoice number and the cause.

Escalation: if more than 10 invoices for one tenant are affected, page the billing on-call — it's likely the tenant's Stripe Connect account was disconnected, which requires them to re-run onboarding.""")
q("k", "How do I replay a Stripe event that failed to process?", "long_stripe_runbook")
q("p", "the customer paid less than billed and the two systems now disagree — is a quick SQL fix ok?", "long_stripe_runbook")
q("p", "one tenant has dozens of invoices stuck as unpaid even though stripe shows them paid, what's probably going on?", "long_stripe_runbook")

n("01-23", "Stripe Sessions conference talk about Billing v2 looked interesting; nothing actionable.")
n("02-05", "Marcus asked if we can support PayPal. Answer: not this year.")
n("03-28", "Customer feedback: they'd like to attach a logo to invoices. Already on roadmap as LED-233.")
n("04-21", "Accountant meeting: she also asked about VAT OSS reporting; out of scope for Q2.")
n("06-23", "Postmark's activity feed is much nicer than SendGrid's for debugging bounces.")
n("07-16", "Had a long call with a tenant whose Stripe account got restricted for KYC; nothing on our side.")
n("09-09", "Gotenberg container uses ~350MB idle; fine on Fargate 1 vCPU / 2GB.")
n("05-04", "Idea backlog: annual plan discount 2 months free. Marketing decision, not engineering.")
n("10-02", "Stripe changelog is long this release; only the invoice.payments change affected us.")
