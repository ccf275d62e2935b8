# ---- Long memories batch 3 ----
m("long_oncall_runbook", "10-01", "command", """On-call runbook: first 10 minutes of any page.

1. Acknowledge in Grafana OnCall within 5 minutes; if you can't, escalate to secondary yourself.
2. Open the 'API overview' dashboard. Check: request rate, 5xx rate, p95 latency, ECS task count, RDS CPU and connections, Redis memory, Celery queue depth per queue.
3. If 5xx is high and tasks are restarting: look at the ECS service events (`aws ecs describe-services --cluster ledgerly-prod --services api`). Out-of-memory kills show as exit code 137; the usual cause is a PDF render or export in the api process instead of the worker.
4. If RDS connections are near max (400): something leaks sessions. Restarting tasks buys time; `SELECT usename, state, count(*) FROM pg_stat_activity GROUP BY 1,2` shows whether it's idle in transaction. idle in transaction over 60s is killed by idle_in_transaction_session_timeout, so sustained counts mean a hot loop.
5. If the emails queue is deep: check Postmark status first; we pause sending with the flag notify-pause-outbound rather than stopping workers, so nothing is lost.
6. Communicate: post in #incidents using the /incident Slack command, which creates a channel and a status page draft.
7. After: every SEV1/SEV2 gets a post-mortem in docs/postmortems within 5 business days.""")
q("k", "What exit code shows an out-of-memory kill of an ECS task?", "long_oncall_runbook")
q("p", "Postmark is having an outage and emails are piling up, should I stop the workers?", "long_oncall_runbook")
q("k", "How do I open an incident channel?", "long_oncall_runbook")

m("long_sso_design", "08-18", "decision", """Design note: SAML SSO for Enterprise tenants.

Flow: SP-initiated. The login page asks for the email first; if the email domain matches a verified domain of a tenant with SSO enabled, we redirect to the IdP. The ACS endpoint is /auth/saml/<connection_id>/acs and the SP metadata is at /auth/saml/<connection_id>/metadata.

Domain verification: the tenant adds a TXT record ledgerly-verification=<token> on the domain; a Celery task checks every 10 minutes for 72 hours.

Just-in-time provisioning: new users from the IdP are created with the role configured on the connection (default member). Roles are NOT synced from the IdP in v1; groups mapping is a v2 feature.

Enforcement: once 'require SSO' is on, password logins for that domain are refused with error sso_required, except for the tenant owner who keeps a break-glass password login (must have TOTP enabled).

Certificates: IdP signing certificates are stored per connection; we warn the tenant admins by email 30 days before the IdP cert expires. We sign AuthnRequests with our SP key from SAML_SP_PRIVATE_KEY.

Tested IdPs: Okta, Azure AD (Entra ID), Google Workspace. JumpCloud reported working by a customer.""")
q("k", "How does a tenant verify their domain for SSO?", "long_sso_design")
q("p", "SSO is enforced for a company but their owner can still log in with a password, is that a hole?", "long_sso_design")
q("p", "if an enterprise admin promotes someone in their identity provider, does that person's permission level change in our app?", "long_sso_design")

m("long_webhook_design", "02-16", "decision", """Design note: outgoing webhooks to tenants.

Tenants register endpoints (URL + selected event types) in Settings > Developers. Events: invoice.created, invoice.finalized, invoice.paid, invoice.voided, customer.created, customer.updated, payment.failed.

Payload: {id: evt_..., type, created, data: {object: ...}, api_version}. The object is serialized with the public API schema of the endpoint's API version so that changing internal models doesn't break receivers.

Delivery: a webhook_deliveries row per (event, endpoint), sent by the Celery task deliver_webhook on the webhooks queue. Timeout 10 seconds. Any 2xx is success; 410 Gone disables the endpoint immediately; everything else is retried.

Ordering: no ordering guarantees; receivers should use the created timestamp and fetch the object from the API if they need the latest state.

SSRF protection: URLs must be https, and the resolved IP must not be private, loopback or link-local; checked at send time (not only at registration) to defeat DNS rebinding. Blocked deliveries fail with reason 'blocked_destination'.

Testing: tenants can send a test event from the UI; internally use `just webhook-send-test <endpoint_id>`.""")
q("k", "What happens when a tenant's webhook endpoint returns 410 Gone?", "long_webhook_design")
q("p", "a tenant says their webhook deliveries fail with blocked_destination, they point at a 10.x address", "long_webhook_design")
q("k", "What is the timeout for a webhook delivery request?", "long_webhook_design")

m("long_pm_queue", "03-25", "gotcha", """Post-mortem: emails delayed up to 3 hours (2026-03-24).

A reseller tenant imported 40,000 invoices via the API and auto-finalized them. Each finalize enqueued a PDF render and an 'invoice sent' email on the single default RQ queue. The two workers processed renders at ~4/second, so other tenants' password reset emails waited behind 40k jobs.

Detection: queue depth alert at 03:00 (woke Tomás), then support tickets about password reset emails.

Immediate fix: spun up 6 extra workers on Fly temporarily.

Follow-ups:
- Separate queues: emails and exports got their own queues with dedicated workers; password reset and auth emails go to a 'critical' queue that is always consumed first.
- API finalize for bulk imports accepts send_email=false so resellers can import history without mailing customers.
- Per-tenant fairness: the bulk import endpoint enqueues in batches of 500 with a delay.
- The queue depth alert threshold stays at 1000 but goes to the business-hours channel at night unless the critical queue is affected.""")
q("k", "Which queue do password reset emails go to?", "long_pm_queue")
q("p", "a partner wants to load years of historic bills via the API, but their clients must not be notified", "long_pm_queue")

m("long_editor_v2", "10-16", "decision", """Design note: invoice editor v2 (web).

Problems with v1: the editor re-rendered the whole form on every keystroke (react-hook-form with watch() at the root), drag and drop of line items was impossible, and totals were computed in the browser with floats, which occasionally disagreed with the server by a cent.

v2: line items are a TanStack Table with dnd-kit for reordering; each row is its own form context. Totals are NOT computed client-side anymore: the editor calls POST /invoices/preview-totals (debounced 300ms) which runs the same Money code as finalize, so the displayed totals always match the PDF. Optimistic updates are used for field edits only.

Autosave: drafts autosave every 5 seconds of inactivity via PATCH with an If-Match ETag; a 412 means someone else edited, and we show a merge dialog.

Keyboard: Enter adds a line, Cmd+Backspace removes it.

Rollout behind web-invoice-editor-v2 to internal tenants first, then 10%, 50%, 100% over November.""")
q("k", "Which endpoint computes totals for the invoice editor v2?", "long_editor_v2")
q("p", "two people edited the same draft and one got a 412, what's the intended behaviour?", "long_editor_v2")
q("p", "why does the editor ask the server for the sums instead of adding them up client-side?", "long_editor_v2")

m("long_cost_review", "10-21", "noise", """AWS cost review (October).

Monthly total: 6,840 USD. Breakdown: RDS 2,310 (Multi-AZ m6g.large + replica), ECS Fargate 1,520, NAT gateways 610 (surprisingly high, mostly Stripe/Postmark traffic and ECR pulls), ElastiCache 420, CloudWatch 380, S3+CloudFront 290, Meilisearch ECS 180, other 1,130 (Secrets Manager, KMS, Route53-free since Cloudflare, data transfer).

Actions considered: VPC endpoints for ECR and S3 to cut NAT costs (likely saves ~300/month), RDS reserved instances (approved), Fargate Spot for workers (maybe, since tasks are idempotent), CloudWatch log retention down to 14 days since logs are in Loki.

No decisions yet other than reserved instances.""")

m("long_pm_tz", "03-31", "gotcha", """Post-mortem: reminders sent on the wrong day after DST change (2026-03-29).

On Sunday March 29 Europe switched to summer time. The reminder job ran at 00:30 UTC and computed 'today' with date.today() on the server (UTC), then compared to due dates stored as dates in the tenant's timezone. For tenants in UTC+2 after the switch, 00:30 UTC is 02:30 local, fine — but for tenants in the Americas (UTC-4/-5), 00:30 UTC is still the previous local day, so they got 'due today' reminders a day early. This bug existed since January; DST only made more people notice.

Fix: all date logic for tenant-facing schedules uses ledgerly.core.clock.today_in(tz) with the tenant timezone. date.today() and datetime.now() without tz are banned by ruff rule DTZ (flake8-datetimez), enabled in the ruff config.

Also: the job now runs hourly and selects tenants whose local time is between 07:00 and 08:00, so everyone gets reminders in their morning.""")
q("k", "Which ruff rule bans naive datetime.now() and date.today()?", "long_pm_tz")
q("p", "clients in the US got their payment-due nudges one day too soon; what changed in the code to stop that?", "long_pm_tz")

m("long_api_keys_design", "03-06", "decision", """Design note: public API keys.

Keys look like lk_live_<24 random base62> or lk_test_<...>. Test keys operate on a tenant's test mode data (separate rows with livemode=false) and use Stripe test mode. We store only SHA-256(key) plus the last 4 characters for display.

Scopes: read_only, invoices:write, customers:write, webhooks:manage. Default for new keys is read_only. Keys can be restricted to IP ranges (CIDR list).

Authentication: Authorization: Bearer <key>. The middleware looks up key_hash, sets the tenant and livemode, and updates last_used_at at most once per minute (to avoid write amplification we batch this through Redis).

Rotation: creating a new key and revoking the old one; 'roll key' creates a new key and keeps the old one valid for 24 hours.

Limits: 25 keys per tenant.""")
q("k", "How many API keys can a tenant have?", "long_api_keys_design")
q("p", "the 'last seen' time for an integration token lags behind real usage, why?", "long_api_keys_design")
q("p", "when an integrator rolls their key, how long does the old one keep working?", "long_api_keys_design")

m("long_meeting_arch", "02-26", "decision", """Architecture discussion notes (Feb 26): monolith vs services.

Priya argued for keeping a modular monolith: one FastAPI app with domain packages (billing, customers, notify, tax, auth) and strict import rules; Tomás worried about the PDF renderer's memory usage affecting the api. Agreement: stay monolith, but heavy work (PDF, exports, emails) always runs in workers. We may split out the renderer later if memory becomes an issue (it did, in September, when we moved to Gotenberg).

Import rules: enforced with import-linter contracts in .importlinter; e.g. billing may import customers, but customers must not import billing.

Other topics: event bus (no), GraphQL (no), gRPC between services (no services, so no).""")
q("k", "How are import rules between backend domain packages enforced?", "long_meeting_arch")
q("p", "CI complains that my change in the customers package imports something from billing", "long_meeting_arch")
