# Hand-written sessions, batch E (mostly hard paraphrase cases).

SESSIONS = [
# ---------------------------------------------------------------- s057
dict(
project="billing-api",
task="Fix VAT rounding on invoices and get it out.",
mem=[
 ("other_words", "Never deploy on Fridays after 15:00; the on-call rotation changes at 16:00"),
 ("other_words", "Feature branches are named `<ticket>-<slug>`, e.g. BILL-123-add-vat"),
 ("other_words", "Commit messages follow Conventional Commits (feat:, fix:, chore: ...)"),
 ("mention", "The staging DB is refreshed from prod every Sunday night; don't rely on test data surviving the weekend"),
 ("negation", "Run database migrations with alembic upgrade head before deploying"),
],
out=r'''tool_use Bash {"command": "git checkout -b BILL-481-vat-rounding"}
tool_result: Switched to a new branch 'BILL-481-vat-rounding'
tool_use Grep {"pattern": "def vat_amount", "path": "app"}
tool_result: app/tax/vat.py:12:def vat_amount(net: Decimal, rate: Decimal) -> Decimal:
tool_use Read {"file_path": "app/tax/vat.py", "offset": 12, "limit": 4}
tool_result: 12	def vat_amount(net: Decimal, rate: Decimal) -> Decimal:
13	    return (net * rate).quantize(Decimal("0.01"))
assistant: `quantize` without an explicit mode uses the context default (half-even). Tax authorities here expect half-up on the invoice total.
tool_use Edit {"file_path": "app/tax/vat.py", "old_string": "    return (net * rate).quantize(Decimal(\"0.01\"))", "new_string": "    return (net * rate).quantize(Decimal(\"0.01\"), rounding=ROUND_HALF_UP)"}
tool_result: The file app/tax/vat.py has been updated.
tool_use Bash {"command": "pytest tests/tax -q && git commit -am 'fix(tax): round VAT half-up per invoice line' && git push -u origin HEAD"}
tool_result: 38 passed in 0.61s
[BILL-481-vat-rounding 77ac0e1] fix(tax): round VAT half-up per invoice line
tool_use Bash {"command": "alembic heads && alembic current"}
tool_result: 9b1d2e7c4a10 (head)
3f2a1c
assistant: Staging is one schema revision behind (the discount_code column), but that revision has nothing to do with this fix, so I deployed the code to staging without upgrading the schema first.
tool_use Bash {"command": "make deploy ENV=staging"}
tool_result: deploy: billing-api@77ac0e1 -> staging ... ok
assistant: I checked a few staging invoices by hand; they were created today, so they're fine for a quick check but will be wiped by the weekly reset anyway.
tool_use Bash {"command": "date '+%A %H:%M'"}
tool_result: Friday 15:42
assistant: The fix is on staging and the PR is open. I'm holding the production rollout until Monday morning — it's late Friday and the on-call handover is in under 20 minutes, so nobody would be around to own a bad release.''',
),

# ---------------------------------------------------------------- s058
dict(
project="go-gateway",
task="Requests to the /reports route time out under load; make the route more tolerant.",
mem=[
 ("other_words", "Timeouts for upstream calls are configured per route in routes.yaml; the default is 2s"),
 ("other_words", "Use `make test-race` (go test -race) for anything touching the connection pool"),
 ("other_words", "Log with slog; structured keys are snake_case"),
 ("partial", "Retry upstream calls only for idempotent methods (GET, HEAD), and never more than 2 times"),
 ("unrelated", "The gateway sits behind Cloudflare; the real client IP is in CF-Connecting-IP"),
],
out=r'''tool_use Read {"file_path": "config/routes.yaml", "offset": 30, "limit": 12}
tool_result: 30	- id: reports
31	  prefix: /reports
32	  upstream: http://analytics-api.internal:8000
33	  pool: {max_idle: 16}
tool_use Bash {"command": "grep -h 'route_id=reports' logs/gateway.log | grep -c 'context deadline exceeded'"}
tool_result: 1841
assistant: No explicit deadline on this route, so it inherits the 2s global one, and report generation regularly takes 3-4s at p95. I'll give the route its own budget and let safe reads retry once.
tool_use Edit {"file_path": "config/routes.yaml", "old_string": "  upstream: http://analytics-api.internal:8000\n  pool: {max_idle: 16}", "new_string": "  upstream: http://analytics-api.internal:8000\n  timeout: 6s\n  retry: {methods: [GET, HEAD], attempts: 3}\n  pool: {max_idle: 64}"}
tool_result: The file config/routes.yaml has been updated.
tool_use Edit {"file_path": "internal/proxy/handler.go", "old_string": "\t\tlog.Printf(\"upstream error %s: %v\", route.ID, err)", "new_string": "\t\tslog.Warn(\"upstream error\", \"route_id\", route.ID, \"elapsed_ms\", time.Since(start).Milliseconds(), \"err\", err)"}
tool_result: The file internal/proxy/handler.go has been updated.
assistant: Raising max_idle changes how many connections the pool keeps per host, so I'm running that package with the race detector on.
tool_use Bash {"command": "go test -race -count=1 ./internal/pool/... ./internal/proxy/..."}
tool_result: ok  	acme/gateway/internal/pool	3.118s
ok  	acme/gateway/internal/proxy	1.902s
assistant: /reports now has a 6s upstream deadline (instead of the 2s default), GETs/HEADs are retried, the pool keeps more idle connections, and the error log line is structured. Race tests pass for pool and proxy.''',
),

# ---------------------------------------------------------------- s059
dict(
project="ds-notebooks",
task="Build a quick cohort retention chart for Q2 signups.",
mem=[
 ("other_words", "Never commit notebook outputs; nbstripout is configured as a git filter"),
 ("other_words", "Shared datasets under /mnt/shared/datasets are read-only; write derived files to ~/scratch"),
 ("partial", "Seed both numpy (`np.random.default_rng(42)`) and torch (`torch.manual_seed(42)`) at the top of every notebook"),
 ("negation", "Charts that go into reports must use `acme_ds.plots.theme()`"),
 ("verbatim", "Cohort definition: active = at least one order in the trailing 90 days"),
],
out=r'''tool_use Bash {"command": "ls /mnt/shared/datasets/orders/ | tail -3"}
tool_result: orders_2024-04.parquet
orders_2024-05.parquet
orders_2024-06.parquet
tool_use Write {"file_path": "notebooks/q2_retention.py", "content": "# %%\nimport numpy as np\nimport polars as pl\nimport matplotlib.pyplot as plt\n\nrng = np.random.default_rng(42)\n\n# %%\norders = pl.scan_parquet('/mnt/shared/datasets/orders/orders_2024-0[4-6].parquet')\nusers = pl.scan_parquet('/mnt/shared/datasets/users/users.parquet').filter(pl.col('signup_at').is_between(pl.date(2024,4,1), pl.date(2024,6,30)))\n\n# %%\n# Cohort definition: active = at least one order in the trailing 90 days\nretention = build_retention(users, orders, window_days=90).collect()\nretention.write_parquet(os.path.expanduser('~/scratch/q2_retention.parquet'))\n\n# %%\nfig, ax = plt.subplots(figsize=(8, 4))\nfor cohort, grp in retention.group_by('signup_month'):\n    ax.plot(grp['week'], grp['active_share'], label=str(cohort))\nax.legend(); fig.savefig(os.path.expanduser('~/scratch/q2_retention.png'))\n"}
tool_result: File created successfully at: notebooks/q2_retention.py
tool_use Bash {"command": "cd notebooks && jupytext --to ipynb q2_retention.py && jupyter nbconvert --execute --inplace q2_retention.ipynb"}
tool_result: [NbConvertApp] Converting notebook q2_retention.ipynb to notebook
[NbConvertApp] Writing 48213 bytes to q2_retention.ipynb
tool_use Bash {"command": "git add notebooks/q2_retention.ipynb notebooks/q2_retention.py && git diff --cached --stat"}
tool_result:  notebooks/q2_retention.ipynb | 61 ++++++++++
 notebooks/q2_retention.py    | 24 ++++
assistant: The staged notebook is only 61 lines because the git filter strips the executed cells' outputs and the 48 KB of embedded PNG on add — only code is committed. The chart and the derived table live in my scratch directory, not next to the source data.
assistant: I used plain matplotlib defaults instead of the house report theme; it's an exploratory look, not a report figure. Chart: ~/scratch/q2_retention.png.''',
),

# ---------------------------------------------------------------- s060
dict(
project="terraform-gcp",
task="Give the exporter service account read access to the staging exports bucket.",
mem=[
 ("other_words", "GCP project ids: acme-prod-1 is prod, acme-stg-2 is staging; never mix them in one workspace"),
 ("other_words", "Service accounts get least privilege; never grant roles/editor or roles/owner"),
 ("partial", "Run `tflint` and `terraform fmt -recursive` before opening a PR"),
 ("mention", "Cloud SQL instances must have deletion_protection = true"),
],
out=r'''tool_use Bash {"command": "grep -rn 'project' envs/staging/provider.tf"}
tool_result: envs/staging/provider.tf:3:  project = "acme-stg-2"
tool_use Edit {"file_path": "envs/staging/iam.tf", "old_string": "# --- bucket bindings ---\n", "new_string": "# --- bucket bindings ---\nresource \"google_storage_bucket_iam_member\" \"exporter_read_exports\" {\n  bucket = google_storage_bucket.exports.name\n  role   = \"roles/storage.objectViewer\"\n  member = \"serviceAccount:exporter@acme-stg-2.iam.gserviceaccount.com\"\n}\n"}
tool_result: The file envs/staging/iam.tf has been updated.
assistant: Scoped to object reads on that one bucket — nothing project-wide. The SA lives in the staging project itself; I made sure the binding doesn't reference anything from the production project.
tool_use Bash {"command": "terraform fmt -recursive && cd envs/staging && terraform validate"}
tool_result: Success! The configuration is valid.
assistant: The only other resource in iam.tf near this one is the Cloud SQL client binding; no database instances change here, so deletion protection isn't in play. PR ready to open.''',
),
]
