# ---- Final batch: distractors, chains, noise ----
m("codecov1", "06-08", "file_fact", "Codecov comments on PRs but its status check is informational only.")
m("codecov2", "09-03", "decision", "Codecov patch coverage is now a required check: new/changed lines need 80% coverage (codecov.yml target: 80%, threshold 2%).", sup="codecov1")
q("t", "Is Codecov's patch coverage check blocking on PRs?", "codecov2")
m("ci_matrix1", "04-02", "file_fact", "Backend unit tests run on a matrix of Python 3.11 and 3.12 during the upgrade period.")
m("ci_matrix2", "05-01", "file_fact", "The Python matrix was removed; CI tests only 3.12 now that production runs it.", sup="ci_matrix1")
q("t", "Does CI still test several Python versions?", "ci_matrix2")
m("deps_bot1", "01-20", "file_fact", "Dependabot opens weekly PRs for pip and npm ecosystems.")
m("deps_bot2", "03-30", "decision", "Replaced Dependabot with Renovate because Dependabot couldn't group updates or understand the pnpm workspace; .github/dependabot.yml was deleted.", sup="deps_bot1")
q("t", "Which bot opens our dependency update PRs?", "deps_bot2")
m("api_domain_docs1", "02-01", "file_fact", "Public API docs are generated with Redoc and hosted on GitHub Pages at ledgerly-hq.github.io/api-docs.")
m("api_domain_docs2", "09-04", "decision", "Public API docs moved to https://docs.ledgerly.io/api (Mintlify), built from the public OpenAPI spec on every release; the GitHub Pages site redirects there.", sup="api_domain_docs1")
q("t", "Where are the public API docs hosted?", "api_domain_docs2")
m("loadtest1", "07-19", "file_fact", "Load tests use k6 scripts in loadtest/*.js run against staging by hand.")
m("loadtest2", "09-12", "decision", "Switched load testing to locust (loadtest/locustfile.py) so scenarios can reuse our Python API client and factories; k6 scripts were deleted.", sup="loadtest1")
q("t", "What tool do we use for load testing?", "loadtest2")
m("ts_client1", "03-31", "file_fact", "The TS API client is generated with openapi-typescript-codegen.")
m("ts_client2", "08-22", "decision", "Switched API client generation to orval (orval.config.ts), which generates TanStack Query hooks directly; `pnpm gen:api` still the entry point.", sup="ts_client1")
q("t", "Which generator produces the frontend API client?", "ts_client2")

m("tests_unit_count", "06-26", "file_fact", "Test suite size (June): 2,150 backend unit tests (~40s), 780 integration tests (~4 min), 210 Vitest files, 34 Playwright specs.")
m("test_tenants_fixture", "03-19", "file_fact", "The `tenant` pytest fixture creates a fresh tenant with an owner user and sets app.tenant_id; `other_tenant` creates a second one for isolation tests.")
q("k", "Which fixture creates a second tenant for isolation tests?", "test_tenants_fixture")
m("test_api_client", "02-12", "file_fact", "API tests use the `api` fixture (httpx.AsyncClient over ASGITransport) authenticated as the tenant owner; `api_as(role)` gives a client for another role.")
q("p", "in an API test, how do I make the request as an accountant instead of the owner?", "test_api_client")
m("migration_test_data", "06-11", "file_fact", "Migration tests load tests/migrations/sample_data.sql before upgrading; add rows there when your migration transforms data.")
q("k", "Where is the sample data used by migration tests?", "migration_test_data")
m("db_dev_port", "01-07", "file_fact", "The local dev Postgres from compose is on localhost:5432, database ledgerly_dev, user ledgerly / password ledgerly.")
q("k", "What are the local dev database credentials?", "db_dev_port")
m("psql_shortcut", "02-06", "command", "`just psql` opens psql to the local dev database; `just psql test` to the integration test database.")
q("k", "How do I open psql against the integration test database?", "psql_shortcut")
m("redis_cli", "04-12", "command", "Inspect queues locally with `docker compose exec redis redis-cli LLEN emails`; in AWS use the Grafana 'Workers' dashboard instead of connecting to ElastiCache.")
q("p", "how can I see how many email jobs are waiting on my laptop?", "redis_cli")
m("ci_services_health", "01-17", "gotcha", "The postgres service container in CI needs `options: --health-cmd pg_isready`; without it tests start before Postgres accepts connections and fail with 'connection refused' on the first test only.")
q("p", "only the first DB test in the pipeline errors because it can't reach the server; the rest pass", "ci_services_health")
m("ci_docker_build", "03-02", "file_fact", "The docker-build CI job builds the api image on every PR with cache-from the registry but only pushes on tags.")
q("k", "Does CI push the docker image for pull requests?", "ci_docker_build")

for d, t in [
("01-27", "Jun's cat walked over the keyboard during the demo. Meeting recording is a classic now."),
("02-28", "Reminder for myself: the 'accountant' role name was chosen after long debate; don't reopen."),
("03-26", "Article: 'Stop using float for money' shared in #eng for the third time."),
("04-24", "Tried Datadog's log pipelines to parse structlog JSON; it parses automatically."),
("05-16", "ECB publishes rates around 16:00 CET on TARGET working days."),
("06-21", "Summer party at Priya's garden, July 10."),
("07-13", "Reading about PgBouncer 1.21 prepared statement support; we're not using PgBouncer in prod."),
("08-12", "First week on AWS: no rollbacks, two small fixes."),
("09-19", "A tenant asked for the DNS incident report; Marcus sent a summary."),
("10-10", "Thinking about whether to adopt OpenAPI 3.1 examples in docs; low priority."),
("10-25", "Weekly digest: 495 tenants, 61k invoices created this week, p95 latency 270ms."),
("03-14", "Elif's QA environment checklist got merged into the release doc later."),
("05-29", "Team lunch: Vietnamese place near the office is now the default."),
("08-15", "Someone proposed renaming 'tenants' to 'organizations' in the UI. Marcus: later."),
("09-30", "Nadia gave a talk at PyData Leipzig about Decimal pitfalls."),
]:
    n(d, t)

q("m", "Which fixtures do I need to write an isolation test for a new tenant-scoped API endpoint?", ["test_tenants_fixture", "test_api_client"])
q("m", "How do I connect to the various databases with psql, locally and in production?", ["psql_shortcut", "db_dev_port", "bastion"])
q("m", "Which frontend tools generate the API client and how is it invoked after a backend change?", ["ts_client2", "openapi_gen"])
q("m", "What checks on coverage can block my PR?", ["cov85", "codecov2"])
