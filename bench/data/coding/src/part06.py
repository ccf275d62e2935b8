# ---- Auth, API ----
m("jwt60", "01-17", "decision", "API auth uses JWT access tokens (RS256) valid for 60 minutes plus refresh tokens valid 30 days, stored in an httpOnly cookie.")
m("jwt15", "06-24", "decision", "Access token lifetime cut to 15 minutes after the security review; refresh tokens now rotate on every use and reuse of an old refresh token revokes the whole family.", sup="jwt60")
q("t", "How long is an access token valid?", "jwt15")
q("p", "users get logged out if someone replays an old refresh token — is that a bug?", "jwt15")
m("jwt_keys", "01-17", "file_fact", "JWT signing keys: private key in JWT_PRIVATE_KEY (PEM), public JWKS served at /.well-known/jwks.json; key id rotates quarterly.")
q("k", "Where is the JWKS served?", "jwt_keys")
m("rate100", "02-27", "file_fact", "Public API rate limit: 100 requests/minute per API key, implemented with a Redis token bucket in ledgerly/api/ratelimit.py.")
m("rate300", "07-24", "decision", "Raised the public API limit to 300 requests/minute per key (burst 50) after integrators complained; Enterprise keys can be set higher in api_keys.rate_limit.", sup="rate100")
q("t", "What's the rate limit on the public API?", "rate300")
q("p", "an integrator keeps hitting 429s syncing invoices, what's the allowance per key?", "rate300")
m("apiv1", "01-24", "file_fact", "Public REST API is served under https://api.ledgerly.io/v1.")
m("apidated", "09-01", "decision", "Public API moved to dated versions: clients send `Ledgerly-Version: 2026-09-01`; requests without the header are pinned to the version of their API key's creation date. /v1 paths still work as an alias.", sup="apiv1")
q("t", "How does API versioning work for integrators?", "apidated")
m("api_errors", "02-08", "convention", "API errors use RFC 7807 problem+json with a `code` field (e.g. invoice_already_finalized); raise ledgerly.api.errors.ApiError subclasses, never HTTPException directly.")
q("k", "What format do API errors use?", "api_errors")
q("p", "in a route handler, how should I return a 409 when someone edits a finalized invoice?", "api_errors")
m("pagination", "02-22", "convention", "List endpoints use cursor pagination (`?cursor=...&limit=50`, max 200); offset pagination is not allowed on new endpoints.")
q("k", "What pagination style do list endpoints use and what's the max limit?", "pagination")
m("api_keys_hash", "03-07", "file_fact", "API keys are shown once (prefix lk_live_ / lk_test_) and stored as SHA-256 hashes in api_keys.key_hash; we can't recover a lost key, only rotate.")
q("p", "a customer lost their API key, can support look it up for them?", "api_keys_hash")
m("sso", "08-25", "decision", "Enterprise SSO via SAML uses python3-saml; configuration per tenant in the sso_connections table. Only Enterprise plan tenants see the SSO settings page.")
q("k", "Which library implements SAML SSO?", "sso")
m("cors", "02-28", "file_fact", "Allowed CORS origins come from CORS_ORIGINS (comma separated); production is https://app.ledgerly.io only.")
m("csrf", "01-18", "gotcha", "Because the refresh token is a cookie, POST /auth/refresh requires the X-CSRF-Token header matching the csrf cookie; forgetting it returns 403 'csrf_mismatch'.")
q("k", "What causes a 403 csrf_mismatch on /auth/refresh?", "csrf")

# ---- Secrets / config ----
m("doppler", "01-10", "decision", "Secrets are managed in Doppler (project ledgerly, configs dev/stg/prd); `doppler run -- make dev` injects them locally.")
m("asm", "08-07", "decision", "Secrets moved from Doppler to AWS Secrets Manager under the prefix ledgerly/prod/ and ledgerly/staging/; ECS task definitions reference them. Local dev uses .env copied from .env.example.", sup="doppler")
q("t", "Where are production secrets stored?", "asm")
q("t", "how do I get secrets for local development?", "asm")
m("settings", "01-11", "file_fact", "All configuration is read in ledgerly/config.py (pydantic-settings `Settings`), env prefix LEDGERLY_ is optional; never read os.environ elsewhere.")
q("k", "Where is configuration read in the backend?", "settings")
m("sentry_dsn1", "01-19", "file_fact", "Sentry DSN is read from SENTRY_DSN.")
m("sentry_dsn2", "08-08", "convention", "Renamed the env var to LEDGERLY_SENTRY_DSN during the Secrets Manager move so it doesn't collide with the frontend's VITE_SENTRY_DSN.", sup="sentry_dsn1")
q("t", "What env var holds the backend Sentry DSN?", "sentry_dsn2")
m("sentry_rate1", "01-19", "file_fact", "Sentry traces_sample_rate is 1.0 in all environments.")
m("sentry_rate2", "05-08", "decision", "Sentry traces_sample_rate lowered to 0.2 in production (1.0 stays in staging) after we blew through the transaction quota.", sup="sentry_rate1")
m("sentry_rate3", "10-12", "decision", "Production tracing now uses a sampler function: 0.05 by default, 1.0 for /webhooks/* and billing tasks. See ledgerly/observability.py traces_sampler.", sup="sentry_rate2")
q("t", "What's the Sentry trace sample rate in production?", "sentry_rate3")
q("p", "why do I see every single stripe webhook trace in sentry but only a few normal requests?", "sentry_rate3")

# ---- Observability ----
m("logs1", "01-21", "file_fact", "Logs are JSON via structlog and shipped to Papertrail.")
m("logs2", "04-24", "decision", "Log shipping moved from Papertrail to Datadog (service:ledgerly-api); use the `trace_id` field to jump from a log line to its APM trace.", sup="logs1")
m("logs3", "08-21", "decision", "We dropped Datadog; logs go from ECS via FireLens to Grafana Loki (Grafana at https://grafana.internal.ledgerly.io). Query with `{service=\"api\"} | json | tenant_id=\"...\"`.", sup="logs2")
q("t", "Where do I look at production logs?", "logs3")
q("t", "how do I filter the api logs for one tenant?", "logs3")
m("log_fields", "01-22", "convention", "Every log line must carry request_id and tenant_id; use `log = structlog.get_logger()` and bind context in middleware, don't pass them manually.")
q("k", "Which fields must every log line carry?", "log_fields")
m("pii_logs", "03-20", "convention", "Never log customer emails, IBANs or full names; the structlog processor `redact_pii` masks known keys but free-text messages are not scanned.")
q("p", "is it ok to put the customer's email in a log message while debugging?", "pii_logs")
m("metrics1", "02-13", "file_fact", "Metrics are emitted with statsd (prefix ledgerly.) to a Prometheus statsd_exporter.")
m("metrics2", "09-10", "decision", "Metrics now go through OpenTelemetry (OTLP to the collector at OTEL_EXPORTER_OTLP_ENDPOINT); statsd calls were replaced by ledgerly.observability.meter.", sup="metrics1")
q("t", "How are application metrics emitted?", "metrics2")
m("alerts", "03-23", "file_fact", "Alerts: p95 latency > 800ms for 10m, 5xx rate > 2% for 5m, Celery queue depth > 1000. All go to #alerts and page the on-call via PagerDuty.")
q("k", "What p95 latency threshold triggers an alert?", "alerts")
m("oncall1", "02-02", "convention", "On-call rotation is weekly, Monday 10:00 handover, managed in PagerDuty schedule 'ledgerly-primary'.")
m("oncall2", "09-28", "decision", "On-call moved from PagerDuty to Grafana OnCall; rotation still weekly but handover is Wednesday 10:00 so it doesn't coincide with Monday planning.", sup="oncall1")
q("t", "When is the on-call handover?", "oncall2")

m("long_aws_migration", "08-03", "decision", """Design note: Fly.io to AWS migration (cutover planned 2026-08-09).

Why: two enterprise prospects require SOC 2 evidence on infrastructure we control, and Fly Postgres lacked point-in-time recovery on our plan. Cost goes up roughly 40% which Marcus signed off on.

Target: ECS Fargate in eu-west-1, two AZs. Services: api (4 tasks, 1 vCPU/2GB), worker (2 tasks), beat (1 task, must never be scaled above 1 or schedules fire twice), gotenberg later. RDS Postgres 16 Multi-AZ db.m6g.large with a read replica for exports. ElastiCache Redis 7.1 with TLS. ALB in front of api with target group health check on /readyz.

Networking: everything in private subnets, NAT gateway per AZ. Outbound to Stripe and Postmark via NAT, so the tenant-facing allowlist IPs changed: the two NAT elastic IPs are 52.212.14.87 and 34.250.91.3, which must be communicated to tenants who allowlist our webhook sender.

Data move: logical replication from Fly Postgres to RDS set up a week before; on cutover we stop writes (maintenance page), wait for lag 0, bump sequences with `just db-fix-sequences` (logical replication does not copy sequence values!), switch DNS in Cloudflare (TTL lowered to 60 the day before), and start the ECS services.

Rollback: keep Fly apps scaled to 0 but deployable for 2 weeks; reverse replication is not set up, so rollback after writes resume means data loss — decision point is 30 minutes after cutover.""")
q("k", "Which IP addresses do our outgoing webhooks come from after the AWS move?", "long_aws_migration")
q("p", "for high availability, may I run the scheduler service with more than one copy?", "long_aws_migration")
q("p", "after copying the database with logical replication, new inserts failed with duplicate key errors — what step was missed?", "long_aws_migration")

n("01-25", "Reminder: 1Password vault 'ledgerly-eng' holds break-glass credentials; ask Aisha for access.")
n("02-09", "Evaluated Auth0; too expensive per MAU for our pricing.")
n("03-24", "PagerDuty woke Tomás at 3am for a queue depth alert caused by a tenant importing 40k invoices. Threshold discussion pending.")
n("04-25", "Datadog trial: nice APM but pricey.")
n("05-09", "Sentry quota reset on the 9th each month.")
n("06-25", "Security review by an external firm (Radically Open Security) done; report in Drive.")
n("08-09", "Cutover happened at 06:00 CET, 42 minutes of maintenance page. No rollback needed.")
n("08-22", "Grafana dashboards ported from Datadog by Aisha, 14 dashboards total.")
n("09-29", "Grafana OnCall mobile app works fine; PagerDuty contract ends October.")
n("07-25", "One integrator (Bookwise) made 2M calls in a day during their backfill.")
