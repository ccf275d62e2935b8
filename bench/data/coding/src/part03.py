# ---- Database ----
m("pg15", "01-06", "file_fact", "Production database is Postgres 15 (Fly Postgres), database name `ledgerly`, app role `ledgerly_app`.")
m("pg16", "08-04", "decision", "Production is on Amazon RDS Postgres 16.4 since the AWS migration; app role is still `ledgerly_app`, database `ledgerly`.", sup="pg15")
q("t", "What Postgres version is production on?", "pg16")
m("alembic_default", "02-11", "gotcha", "Gotcha: alembic autogenerate misses changes to server_default; write those migrations by hand.")
q("k", "Does alembic autogenerate detect server_default changes?", "alembic_default")
q("p", "why did my migration not pick up the default I changed on the column?", "alembic_default")
m("alembic_enum", "03-17", "gotcha", "Adding a value to a Postgres enum (e.g. invoice_status) cannot run inside a transaction on PG<12 style migrations; use `op.execute(\"ALTER TYPE invoice_status ADD VALUE 'voided'\")` inside `with op.get_context().autocommit_block():`.")
q("k", "How do I add a value to the invoice_status enum in a migration?", "alembic_enum")
m("mig_naming1", "01-12", "convention", "Alembic migrations use the default random revision ids; message should be a short imperative, e.g. `alembic revision --autogenerate -m \"add invoice due_date\"`.")
m("mig_naming2", "05-19", "convention", "Migration files are now named `YYYYMMDD_HHMM_<slug>.py` (file_template set in alembic.ini) so they sort chronologically; two heads on main fail the `alembic-heads` CI check.", sup="mig_naming1")
q("t", "How are new migration files named?", "mig_naming2")
q("p", "CI says there are two heads after I rebased, what do I do?", ["mig_naming2", "mig_merge"])
m("mig_merge", "05-20", "command", "If two alembic heads appear after a rebase, don't create a merge revision: edit your migration's `down_revision` to point at the current head and regenerate the filename timestamp.")
m("migrate_cmd", "01-12", "command", "Apply migrations locally with `make migrate` which runs `alembic upgrade head` against DATABASE_URL from .env.")
m("migrate_prod", "08-12", "command", "Production migrations run as a one-off ECS task before the service update (`just migrate-prod` wraps `aws ecs run-task --task-definition ledgerly-migrate`). Never run alembic from a laptop against prod.", sup="migrate_cmd")
q("k", "How do production migrations get run after the AWS move?", "migrate_prod")
m("lock_timeout", "06-09", "convention", "Every migration sets `SET lock_timeout = '5s'` at the top (helper `ledgerly.db.migration_utils.safe_lock_timeout()`); a migration waiting longer fails instead of blocking all invoice writes.")
q("p", "my migration failed in staging saying it could not obtain a lock, is that intended?", "lock_timeout")
m("concurrent_idx", "06-10", "gotcha", "CREATE INDEX CONCURRENTLY can't run inside alembic's transaction; use `op.create_index(..., postgresql_concurrently=True)` inside an autocommit_block, and put it in its own migration file.")
q("k", "How do I create an index concurrently with alembic?", "concurrent_idx")
m("sa14", "01-06", "file_fact", "ORM is SQLAlchemy 1.4 with the legacy Query API; sessions come from ledgerly.db.session.SessionLocal.")
m("sa20", "04-28", "decision", "Migrated to SQLAlchemy 2.0 style (PR #398): use `select()` + `session.execute()`/`scalars()`; `session.query` is banned by a ruff rule. Async session factory is ledgerly.db.session.async_session.", sup="sa14")
q("t", "What SQLAlchemy style should new queries use?", "sa20")
q("p", "ruff yells at me for using session.query, what am I supposed to write instead?", "sa20")
m("pyd1", "01-06", "file_fact", "API schemas use Pydantic v1 (`class Config: orm_mode = True`).")
m("pyd2", "05-06", "decision", "Upgraded to Pydantic v2. `orm_mode` is now `model_config = ConfigDict(from_attributes=True)`, and `.dict()` is `.model_dump()`.", sup="pyd1")
q("t", "Which Pydantic major version do the schemas use?", "pyd2")
m("schema_tenant", "01-10", "decision", "Multi-tenancy: each tenant gets its own Postgres schema (tenant_<id>); search_path is set per request in the tenant middleware.")
m("rls", "07-01", "decision", "We replaced schema-per-tenant with a shared schema and row-level security on tenant_id. The middleware runs `SET app.tenant_id = ...`; RLS policies read current_setting('app.tenant_id').", sup="schema_tenant")
q("t", "How is tenant data isolated in the database?", "rls")
q("p", "I get zero rows back from invoices in a psql session even though the table is full", ["rls", "rls_psql"])
m("rls_psql", "07-03", "command", "To query tenant tables from psql, run `SET app.tenant_id = '<uuid>';` first, or connect as `ledgerly_admin` which has BYPASSRLS. Never give the app role BYPASSRLS.")
m("search1", "02-16", "file_fact", "Invoice search in the UI is a plain ILIKE on customer name and invoice number.")
m("search2", "05-22", "decision", "Invoice search uses pg_trgm GIN indexes (idx_invoices_customer_trgm) with similarity threshold 0.3; ILIKE queries are gone.", sup="search1")
m("search3", "09-15", "decision", "Search moved to Meilisearch (index `invoices`, host MEILI_URL); a Celery task `sync_invoice_to_search` keeps it updated. The trigram indexes will be dropped in a later migration.", sup="search2")
q("t", "What powers invoice search?", "search3")
q("t", "how does the customer search box find invoices nowadays?", "search3")
m("pool", "03-05", "file_fact", "SQLAlchemy pool settings: pool_size=10, max_overflow=5, pool_pre_ping=True (set in ledgerly/db/session.py).")
q("k", "What are the SQLAlchemy pool_size and max_overflow?", "pool")
m("pgbouncer", "08-20", "gotcha", "RDS Proxy in transaction-pinning mode: `SET app.tenant_id` pins the connection for the session, so we use `SET LOCAL` inside each transaction instead; plain SET leaks tenant ids between requests behind the proxy.")
q("p", "customers briefly saw other tenants' invoice counts after the proxy went in — what was the cause?", "pgbouncer")
m("seed", "01-14", "command", "`make seed` (later `just seed`) loads demo data: tenant 'Acme Bakery' with 250 invoices and login demo@ledgerly.test / demo1234.")
q("k", "What's the demo login created by the seed command?", "seed")
q("p", "I need some fake data to click around locally, how?", "seed")
m("money_type", "01-15", "convention", "Money columns are NUMERIC(14,2) plus a currency CHAR(3); never use float anywhere in billing. Python side uses ledgerly.billing.money.Money (Decimal).")
q("k", "What column type do we use for money amounts?", "money_type")
m("utc", "01-15", "convention", "All timestamps are stored as timestamptz in UTC; convert to the tenant's timezone only in the serializer (tenant.settings.timezone).")
q("p", "dates on invoices show up a day off for an Australian customer, where should the conversion happen?", "utc")

m("long_db_incident", "06-02", "gotcha", """Post-mortem: invoice writes blocked for 19 minutes (2026-06-01).

Timeline: at 10:42 CET a deploy ran migration 20260601_0930_add_invoice_reminder_at. The migration added a nullable column and then, in the same transaction, a foreign key to reminders.id. Adding the foreign key takes a SHARE ROW EXCLUSIVE lock on invoices and validates all 2.3M rows. Meanwhile the nightly aging report (a long read on invoices started at 10:30 by a tenant export) held an ACCESS SHARE lock, so the migration queued behind it, and every INSERT/UPDATE on invoices queued behind the migration. The api thread pool filled up, /readyz began failing and Fly restarted instances, which made it worse.

What went well: alerting fired within 3 minutes; Tomás identified the blocking pid with pg_stat_activity quickly.

What went badly: we had no lock_timeout, and the export was running on the primary instead of the replica.

Resolution: we cancelled the export backend with pg_cancel_backend, the migration finished in 40 seconds, traffic recovered.

Action items:
1. All migrations set lock_timeout = '5s' (done, see migration_utils).
2. Foreign keys on big tables are added as NOT VALID and validated in a separate migration with VALIDATE CONSTRAINT, which only takes a SHARE UPDATE EXCLUSIVE lock.
3. Tenant exports read from the replica via READ_DATABASE_URL.
4. The deploy workflow posts the migration list to #deploys before running.""")
q("k", "How should a foreign key be added to a big table like invoices after the June lock incident?", "long_db_incident")
q("p", "which database should the heavy tenant export job read from so it doesn't block writes?", "long_db_incident")
q("m", "What rules do I need to follow when writing a migration that touches the invoices table?", ["lock_timeout", "long_db_incident", "concurrent_idx"])

n("01-16", "Noticed pgAdmin 8 renders NUMERIC(14,2) with trailing zeros stripped; purely cosmetic.")
n("02-12", "Read a Crunchy Data blog post about partitioning; invoices are nowhere near big enough yet.")
n("03-06", "TODO: ask Fly support whether Postgres point-in-time recovery is available on our plan.")
n("05-23", "pg_trgm similarity for 'bakery' vs 'bakry' is 0.5, nice.")
n("06-03", "Tomás is going to write an internal wiki page on reading pg_locks. Not done yet.")
n("07-02", "RLS rollout took three evenings; schema-per-tenant migrations had become unmanageable at 400 tenants.")
n("09-16", "Meilisearch cloud pricing was too high; we self-host it on a small ECS service instead.")
n("03-18", "Postgres enum vs lookup table debate: kept enums for invoice_status, not revisiting.")
