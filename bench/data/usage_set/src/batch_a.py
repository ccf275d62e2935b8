# Hand-written sessions, batch A.
# Each session: project, task, mem = [(label, memory text)], out = agent transcript text.

SESSIONS = [
# ---------------------------------------------------------------- s001 (real user report)
dict(
project="billing-api",
task="Deploy the new invoice-status column to production.",
mem=[
 ("verbatim", "Run database migrations with alembic upgrade head before deploying"),
 ("unrelated", "Invoice PDFs are rendered with WeasyPrint; the fonts must be installed in the Docker image"),
 ("unrelated", "Use `pytest -x -q` for the fast local test loop"),
],
out=r'''I ran alembic upgrade head before deploying, as the migrations must go first. Deployed.''',
),

# ---------------------------------------------------------------- s002
dict(
project="storefront-web",
task="CI has been stuck on the test step for 6 hours on every PR. Fix it.",
mem=[
 ("other_words", "Use `pnpm test --run` in CI; the watch mode hangs"),
 ("mention", "Node version is pinned to 20.11 via .nvmrc; don't bump it in the CI workflow separately"),
 ("unrelated", "Playwright e2e tests live in apps/web/e2e and only run in the nightly workflow"),
 ("unrelated", "Prefer named exports over default exports in src/components"),
],
out=r'''assistant: Let me look at the CI workflow to see what the test step actually runs.
tool_use Read {"file_path": ".github/workflows/ci.yml"}
tool_result: name: ci
on: [pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: pnpm/action-setup@v3
      - uses: actions/setup-node@v4
        with:
          node-version-file: .nvmrc
          cache: pnpm
      - run: pnpm install --frozen-lockfile
      - run: pnpm lint
      - run: pnpm test
assistant: The Node setup reads .nvmrc, so that part isn't what's stuck. The last step is a bare `pnpm test`. Checking what that script expands to.
tool_use Grep {"pattern": "\"test\"", "path": "package.json"}
tool_result: package.json:14:    "test": "vitest",
assistant: Plain `vitest` starts an interactive watcher and never exits on its own, which is exactly the six-hour timeout. The job needs a single pass instead.
tool_use Edit {"file_path": ".github/workflows/ci.yml", "old_string": "      - run: pnpm test\n", "new_string": "      - run: pnpm test --run\n"}
tool_result: The file .github/workflows/ci.yml has been updated.
tool_use Bash {"command": "CI=1 timeout 300 pnpm test --run 2>&1 | tail -5"}
tool_result:  Test Files  41 passed (41)
      Tests  388 passed (388)
   Start at  10:02:13
   Duration  18.34s
assistant: Fixed. The CI step now calls the test script in one-shot mode so vitest exits after a single pass instead of sitting in its file watcher; locally that finishes in ~18s with all 388 tests green.''',
),

# ---------------------------------------------------------------- s003
dict(
project="ledger-go",
task="Add a `--since` flag to the `ledger export` command.",
mem=[
 ("other_words", "Regenerate mocks with `go generate ./...` after changing any interface in internal/store"),
 ("other_words", "All CLI flags are defined in cmd/ledger/flags.go, never inline in the command files"),
 ("negation", "Run `golangci-lint run` before committing; CI fails on any lint warning"),
 ("unrelated", "Amounts are stored as int64 cents; never use float64 for money"),
 ("mention", "The export command streams CSV; do not buffer whole result sets in memory"),
],
out=r'''assistant: I'll start by finding where the export command is wired up.
tool_use Grep {"pattern": "export", "path": "cmd/ledger", "output_mode": "files_with_matches"}
tool_result: cmd/ledger/export.go
cmd/ledger/flags.go
cmd/ledger/root.go
tool_use Read {"file_path": "cmd/ledger/flags.go"}
tool_result: package main

import "github.com/spf13/pflag"

var (
	exportFormat string
	exportOut    string
)

func registerExportFlags(fs *pflag.FlagSet) {
	fs.StringVar(&exportFormat, "format", "csv", "output format (csv|json)")
	fs.StringVarP(&exportOut, "out", "o", "-", "output file, - for stdout")
}
assistant: Flag definitions are centralised here, so the new one goes next to --format rather than in export.go.
tool_use Edit {"file_path": "cmd/ledger/flags.go", "old_string": "\texportOut    string\n)", "new_string": "\texportOut    string\n\texportSince  string\n)"}
tool_result: The file cmd/ledger/flags.go has been updated.
tool_use Edit {"file_path": "cmd/ledger/flags.go", "old_string": "\"output file, - for stdout\")\n}", "new_string": "\"output file, - for stdout\")\n\tfs.StringVar(&exportSince, \"since\", \"\", \"only export entries on or after this date (YYYY-MM-DD)\")\n}"}
tool_result: The file cmd/ledger/flags.go has been updated.
tool_use Read {"file_path": "internal/store/store.go", "offset": 1, "limit": 40}
tool_result: type EntryReader interface {
	Entries(ctx context.Context, fn func(Entry) error) error
}
assistant: The reader interface has no date filter. I'll add a `since time.Time` parameter; the export loop already hands rows one at a time to the CSV writer, so that stays as is.
tool_use Edit {"file_path": "internal/store/store.go", "old_string": "Entries(ctx context.Context, fn func(Entry) error) error", "new_string": "Entries(ctx context.Context, since time.Time, fn func(Entry) error) error"}
tool_result: The file internal/store/store.go has been updated.
assistant: Since the interface changed, the generated fakes under internal/store/mocks are now stale — regenerating them.
tool_use Bash {"command": "go generate ./..."}
tool_result: mockgen: wrote internal/store/mocks/entry_reader.go
tool_use Bash {"command": "go build ./... && go test ./..."}
tool_result: ok  	example.com/ledger/cmd/ledger	0.412s
ok  	example.com/ledger/internal/store	0.233s
ok  	example.com/ledger/internal/money	0.019s
assistant: I did not run golangci-lint this time — the binary isn't installed in this container and I didn't want to pull it in just for this; CI will catch anything.
assistant: Added `ledger export --since YYYY-MM-DD`. The flag sits with the other export flags in flags.go, the store interface takes a `since` bound, mocks were regenerated, and build + tests pass.''',
),

# ---------------------------------------------------------------- s004
dict(
project="ml-pipelines",
task="The nightly feature job failed with an OOM. Investigate.",
mem=[
 ("other_words", "The feature job runs on the `highmem` node pool; memory limits are set in k8s/jobs/features.yaml"),
 ("partial", "Before re-running a failed Airflow task, clear it with `airflow tasks clear` and check the upstream sensor first"),
 ("unrelated", "Model artifacts are versioned in s3://acme-ml-models/<model>/<git-sha>/"),
 ("other_words", "Use polars, not pandas, for new feature code; pandas is only kept for legacy notebooks"),
],
out=r'''assistant: Let me pull the pod events for last night's run.
tool_use Bash {"command": "kubectl -n pipelines get pods -l job-name=features-nightly --sort-by=.metadata.creationTimestamp | tail -3"}
tool_result: NAME                     READY   STATUS      RESTARTS   AGE
features-nightly-x7k2p   0/1     OOMKilled   0          9h
tool_use Bash {"command": "kubectl -n pipelines describe pod features-nightly-x7k2p | grep -A4 -i limits"}
tool_result:     Limits:
      memory:  12Gi
    Requests:
      memory:  8Gi
assistant: 12Gi limit. The manifest for this job is under k8s/jobs — checking what pool it's scheduled on and where the limit comes from.
tool_use Read {"file_path": "k8s/jobs/features.yaml"}
tool_result: apiVersion: batch/v1
kind: Job
metadata:
  name: features-nightly
spec:
  template:
    spec:
      nodeSelector:
        pool: highmem
      containers:
        - name: features
          image: registry.acme.io/ml/features:2024.05.2
          resources:
            requests: {memory: 8Gi}
            limits: {memory: 12Gi}
assistant: It's already on the big-memory nodes (64Gi each), so there's headroom to raise the limit. But first, why did usage grow? The stack trace in the log points at a join.
tool_use Bash {"command": "kubectl -n pipelines logs features-nightly-x7k2p --previous | tail -8"}
tool_result:   File "/app/features/sessions.py", line 88, in build_session_features
    df = events.to_pandas().merge(users.to_pandas(), on="user_id")
  File "/usr/local/lib/python3.11/site-packages/pandas/core/reshape/merge.py", line 162, in merge
MemoryError
assistant: Someone converted to pandas just for this merge — there's a polars frame on both sides already. That's the blow-up: the to_pandas copies double the footprint. I'll keep the join in the lazy frame.
tool_use Edit {"file_path": "features/sessions.py", "old_string": "    df = events.to_pandas().merge(users.to_pandas(), on=\"user_id\")", "new_string": "    df = events.join(users, on=\"user_id\", how=\"inner\")"}
tool_result: The file features/sessions.py has been updated.
tool_use Edit {"file_path": "k8s/jobs/features.yaml", "old_string": "limits: {memory: 12Gi}", "new_string": "limits: {memory: 16Gi}"}
tool_result: The file k8s/jobs/features.yaml has been updated.
tool_use Bash {"command": "airflow tasks clear nightly_features -t build_session_features -s 2024-05-20 -e 2024-05-20 -y"}
tool_result: Clearing: <TaskInstance: nightly_features.build_session_features 2024-05-20 [failed]>
assistant: Cleared the failed task so the scheduler picks it up again. The job's memory limit is bumped from 12Gi to 16Gi on the same node selector, and the merge no longer round-trips through pandas. I'll watch the rerun.''',
),

# ---------------------------------------------------------------- s005
dict(
project="auth-service",
task="Rotate the JWT signing key used in staging.",
mem=[
 ("verbatim", "JWT signing keys are stored in Vault at secret/auth/jwt; never commit them to the repo"),
 ("other_words", "After rotating a signing key, keep the old public key in the JWKS for 24h so existing tokens still validate"),
 ("unrelated", "The rate limiter uses a Redis sliding window; tune it in config/ratelimit.toml"),
 ("mention", "Staging is deployed automatically from the `main` branch by ArgoCD; prod needs a manual sync"),
],
out=r'''assistant: Per the project notes, JWT signing keys are stored in Vault at secret/auth/jwt and must never be committed, so I'll generate the new key locally and write it straight to Vault.
tool_use Bash {"command": "openssl genpkey -algorithm ed25519 -out /tmp/jwt-2024-06.pem && openssl pkey -in /tmp/jwt-2024-06.pem -pubout -out /tmp/jwt-2024-06.pub"}
tool_result: 
tool_use Bash {"command": "vault kv get -format=json secret/auth/jwt | jq '.data.data | keys'"}
tool_result: [
  "active_kid",
  "keys"
]
tool_use Bash {"command": "vault kv patch secret/auth/jwt staging_next=@/tmp/jwt-2024-06.pem"}
tool_result: Success! Data written to: secret/auth/jwt
assistant: Now the key set. Tokens minted in the last day were signed with kid `stg-2024-05`; if I drop that public key they'd all fail verification immediately, so both stay published until tomorrow.
tool_use Edit {"file_path": "deploy/staging/jwks.json", "old_string": "  \"keys\": [\n    {\"kid\": \"stg-2024-05\"", "new_string": "  \"keys\": [\n    {\"kid\": \"stg-2024-06\", \"kty\": \"OKP\", \"crv\": \"Ed25519\", \"x\": \"p3Vd0e2q1...\"},\n    {\"kid\": \"stg-2024-05\""}
tool_result: The file deploy/staging/jwks.json has been updated.
assistant: Nothing needs syncing in ArgoCD for this: the staging JWKS is served from the static config bucket, not from the deployed manifests, so the main-branch rollout doesn't matter here.
tool_use Bash {"command": "shred -u /tmp/jwt-2024-06.pem && git status --short"}
tool_result:  M deploy/staging/jwks.json
assistant: Done. The new private key is only in Vault, the local copy is shredded, and the JWKS now lists `stg-2024-06` alongside `stg-2024-05`. I left a TODO in the PR description to remove the 05 entry tomorrow once all previously issued tokens have expired.''',
),

# ---------------------------------------------------------------- s006
dict(
project="docs-site",
task="Fix the broken link checker warnings in the docs build.",
mem=[
 ("negation", "Always build the docs with `mkdocs build --strict` so warnings fail the build"),
 ("unrelated", "Screenshots go in docs/assets/img and must be under 300 KB"),
 ("partial", "When renaming a page, add a redirect in mkdocs.yml under `redirect_maps` and update the nav entry"),
],
out=r'''assistant: Let me see the warnings.
tool_use Bash {"command": "mkdocs build 2>&1 | grep WARNING"}
tool_result: WARNING -  Doc file 'guides/index.md' contains a link 'setup/install.md', but the target 'guides/setup/install.md' is not found among documentation files.
WARNING -  Doc file 'reference/cli.md' contains a link '../guides/setup/install.md#linux', but the target is not found.
assistant: Both point at the install page that was moved to getting-started/installation.md last week. Fixing the two links and adding a redirect for old bookmarks.
tool_use Edit {"file_path": "docs/guides/index.md", "old_string": "(setup/install.md)", "new_string": "(../getting-started/installation.md)"}
tool_result: The file docs/guides/index.md has been updated.
tool_use Edit {"file_path": "docs/reference/cli.md", "old_string": "(../guides/setup/install.md#linux)", "new_string": "(../getting-started/installation.md#linux)"}
tool_result: The file docs/reference/cli.md has been updated.
tool_use Edit {"file_path": "mkdocs.yml", "old_string": "      redirect_maps:\n", "new_string": "      redirect_maps:\n        guides/setup/install.md: getting-started/installation.md\n"}
tool_result: The file mkdocs.yml has been updated.
tool_use Bash {"command": "mkdocs build 2>&1 | grep -c WARNING"}
tool_result: 0
assistant: I built without --strict here on purpose: there is an unrelated deprecation warning from the material theme plugin on this machine that would abort a strict build, and I wanted to see the link warnings in isolation. Link warnings are down to zero; the redirect keeps the old URL working.''',
),

# ---------------------------------------------------------------- s007
dict(
project="rust-indexer",
task="Speed up the test suite; it takes 9 minutes.",
mem=[
 ("other_words", "Use `cargo nextest run` instead of `cargo test`; the integration tests rely on per-test process isolation"),
 ("unrelated", "The on-disk index format is versioned in src/format/mod.rs; bump FORMAT_VERSION on any layout change"),
 ("other_words", "Integration tests that need the fixtures corpus are gated behind the `slow-tests` feature"),
 ("mention", "Release builds use `lto = \"fat\"` and `codegen-units = 1`; don't change the release profile without benchmarking"),
 ("unrelated", "Error types use thiserror in library crates and anyhow only in the binary"),
],
out=r'''assistant: First, a timing breakdown of where the nine minutes go.
tool_use Bash {"command": "cargo nextest run --workspace 2>&1 | tail -12"}
tool_result:         SLOW [> 60.000s] indexer::it_corpus::full_rebuild_matches_golden
        PASS [ 212.331s] indexer::it_corpus::full_rebuild_matches_golden
        PASS [  97.802s] indexer::it_corpus::incremental_after_delete
        PASS [  88.114s] indexer::it_corpus::merge_segments_large
     Summary [ 401.552s] 612 tests run: 612 passed, 0 skipped
assistant: Three corpus tests dominate. Checking how they're declared — they should not be in the default run at all.
tool_use Grep {"pattern": "cfg\\(feature", "path": "crates/indexer/tests"}
tool_result: crates/indexer/tests/it_corpus.rs:1:#![cfg(feature = "slow-tests")]
tool_use Grep {"pattern": "slow-tests", "path": "crates/indexer/Cargo.toml"}
tool_result: crates/indexer/Cargo.toml:31:default = ["mmap", "slow-tests"]
assistant: Found it: someone added the corpus gate to the `default` feature list, so every run pulls the large fixtures in. Removing it from defaults; CI's nightly job already enables it explicitly.
tool_use Edit {"file_path": "crates/indexer/Cargo.toml", "old_string": "default = [\"mmap\", \"slow-tests\"]", "new_string": "default = [\"mmap\"]"}
tool_result: The file crates/indexer/Cargo.toml has been updated.
tool_use Bash {"command": "cargo nextest run --workspace 2>&1 | tail -2"}
tool_result:      Summary [  71.904s] 609 tests run: 609 passed, 0 skipped
assistant: 71s. The remaining time is mostly compile. I looked at the profiles in Cargo.toml — the release profile has fat LTO, but tests use the dev profile so that isn't a factor here and I left it alone.
tool_use Bash {"command": "cargo nextest run --workspace --features slow-tests -E 'test(/it_corpus/)' 2>&1 | tail -1"}
tool_result:      Summary [ 214.010s] 3 tests run: 3 passed, 0 skipped
assistant: The default run went from ~400s of test time to ~72s by taking the corpus suite out of the default feature set. You can still run it with `--features slow-tests`, and it still passes.''',
),

# ---------------------------------------------------------------- s008
dict(
project="infra-terraform",
task="Add an S3 bucket for the analytics exports.",
mem=[
 ("other_words", "Never run `terraform apply` locally; open a PR and let Atlantis plan and apply"),
 ("verbatim", "All buckets must have `block_public_access` enabled and default SSE-KMS encryption"),
 ("unrelated", "The VPC CIDR for eu-west-1 is 10.40.0.0/16; don't overlap it with new peering"),
 ("mention", "Terraform state is in the `acme-tfstate` bucket with DynamoDB locking; never edit state by hand"),
],
out=r'''tool_use Read {"file_path": "envs/prod/s3.tf"}
tool_result: module "logs_bucket" {
  source              = "../../modules/s3_bucket"
  name                = "acme-prod-logs"
  block_public_access = true
  kms_key_arn         = aws_kms_key.s3.arn
}
assistant: I'll mirror the existing module usage. Reminder from the repo notes: all buckets must have `block_public_access` enabled and default SSE-KMS encryption — the module handles both when those two inputs are set.
tool_use Edit {"file_path": "envs/prod/s3.tf", "old_string": "  kms_key_arn         = aws_kms_key.s3.arn\n}", "new_string": "  kms_key_arn         = aws_kms_key.s3.arn\n}\n\nmodule \"analytics_exports_bucket\" {\n  source              = \"../../modules/s3_bucket\"\n  name                = \"acme-prod-analytics-exports\"\n  block_public_access = true\n  kms_key_arn         = aws_kms_key.s3.arn\n  lifecycle_days      = 90\n}"}
tool_result: The file envs/prod/s3.tf has been updated.
tool_use Bash {"command": "cd envs/prod && terraform fmt -check && terraform validate"}
tool_result: Success! The configuration is valid.
tool_use Bash {"command": "git checkout -b analytics-exports-bucket && git commit -am 'prod: add analytics exports bucket' && git push -u origin analytics-exports-bucket && gh pr create --fill"}
tool_result: https://github.com/acme/infra-terraform/pull/812
assistant: I validated locally but did not apply anything from this machine — the PR is up and the bot will post the plan as a comment; once approved, comment `atlantis apply` on the PR. The state backend is untouched by this change.''',
),

# ---------------------------------------------------------------- s009
dict(
project="mobile-app",
task="Bump the iOS build number and ship a TestFlight build.",
mem=[
 ("other_words", "Bump the iOS build number with `bundle exec fastlane bump` — don't edit Info.plist by hand"),
 ("unrelated", "Feature flags are fetched from LaunchDarkly on startup; default values live in src/flags/defaults.ts"),
 ("negation", "Run `pod install` with `--repo-update` after pulling; the Podfile.lock changes often"),
 ("unrelated", "Android release signing config is in android/app/build.gradle and reads from ~/.gradle/gradle.properties"),
],
out=r'''assistant: Using the fastlane lane so the plist and the project file stay in sync.
tool_use Bash {"command": "cd ios && bundle exec fastlane bump"}
tool_result: [10:41:12]: Driving the lane 'ios bump'
[10:41:13]: CFBundleVersion 412 -> 413
[10:41:13]: fastlane.tools finished successfully
tool_use Bash {"command": "cd ios && pod install"}
tool_result: Analyzing dependencies
Downloading dependencies
Pod installation complete! There are 63 dependencies from the Podfile and 71 total pods installed.
assistant: Pods resolved from the existing lock without a spec repo refresh — skipped the repo update since nothing in Podfile changed and it takes ten minutes.
tool_use Bash {"command": "cd ios && bundle exec fastlane beta"}
tool_result: [10:58:40]: Successfully uploaded package to App Store Connect. It might take a few minutes until it's visible online.
assistant: Build 413 is uploaded to TestFlight.''',
),

# ---------------------------------------------------------------- s010
dict(
project="search-frontend",
task="The autocomplete dropdown flickers when typing fast. Fix it.",
mem=[
 ("other_words", "Debounce user-input driven API calls by 250ms using the `useDebouncedValue` hook in src/hooks"),
 ("unrelated", "Tailwind config extends the brand palette in tailwind.config.ts; don't hardcode hex colors"),
 ("mention", "The search API returns at most 10 suggestions; pagination is not supported on /suggest"),
 ("unrelated", "Storybook stories live next to components as *.stories.tsx"),
 ("partial", "For search-as-you-type, cancel in-flight fetches with AbortController and show the <SkeletonList> loader while results are pending"),
],
out=r'''assistant: Reading the component.
tool_use Read {"file_path": "src/components/Autocomplete.tsx"}
tool_result: export function Autocomplete() {
  const [query, setQuery] = useState("");
  const [items, setItems] = useState<Suggestion[]>([]);
  useEffect(() => {
    if (!query) return setItems([]);
    fetch(`/api/suggest?q=${encodeURIComponent(query)}`)
      .then(r => r.json())
      .then(setItems);
  }, [query]);
  ...
assistant: Every keystroke fires a request and responses can land out of order, so an older, slower response overwrites a newer one — that's the flicker. Two fixes: wait for the user to pause before querying, and drop stale responses.
tool_use Grep {"pattern": "export function use", "path": "src/hooks"}
tool_result: src/hooks/useDebouncedValue.ts:3:export function useDebouncedValue<T>(value: T, delayMs: number): T {
src/hooks/useMediaQuery.ts:1:export function useMediaQuery(q: string) {
tool_use Edit {"file_path": "src/components/Autocomplete.tsx", "old_string": "  const [items, setItems] = useState<Suggestion[]>([]);\n  useEffect(() => {\n    if (!query) return setItems([]);\n    fetch(`/api/suggest?q=${encodeURIComponent(query)}`)\n      .then(r => r.json())\n      .then(setItems);\n  }, [query]);", "new_string": "  const [items, setItems] = useState<Suggestion[]>([]);\n  const settled = useDebouncedValue(query, 250);\n  useEffect(() => {\n    if (!settled) return setItems([]);\n    const ctrl = new AbortController();\n    fetch(`/api/suggest?q=${encodeURIComponent(settled)}`, { signal: ctrl.signal })\n      .then(r => r.json())\n      .then(setItems)\n      .catch(e => { if (e.name !== \"AbortError\") throw e; });\n    return () => ctrl.abort();\n  }, [settled]);"}
tool_result: The file src/components/Autocomplete.tsx has been updated.
assistant: The effect cleanup aborts the previous request whenever the settled query changes. The /suggest endpoint itself is fine — server timings are flat — so this is purely a client-side ordering problem.
tool_use Bash {"command": "pnpm vitest run src/components/Autocomplete.test.tsx"}
tool_result:  ✓ src/components/Autocomplete.test.tsx (4 tests) 312ms
 Test Files  1 passed (1)
assistant: Flicker fixed: requests wait for a quarter-second pause in typing and superseded requests are cancelled.''',
),

# ---------------------------------------------------------------- s011
dict(
project="payments-worker",
task="Why are some refunds processed twice?",
mem=[
 ("other_words", "Every Stripe write must pass an Idempotency-Key derived from our internal operation id"),
 ("unrelated", "Celery workers are started with `--concurrency=4 -Q payments,default`"),
 ("mention", "Sentry DSN for the worker is in the SENTRY_DSN env var; errors are grouped by operation name"),
 ("unrelated", "Use `make fmt` (ruff format + ruff check --fix) before pushing"),
],
out=r'''assistant: Let me look for the duplicate refunds in the logs first.
tool_use Bash {"command": "grep -h 'refund.created' logs/worker-2024-06-1*.log | awk '{print $5}' | sort | uniq -d | head"}
tool_result: op_8f2c1e
op_91aa07
op_a3d4f0
tool_use Bash {"command": "grep -h 'op_8f2c1e' logs/worker-2024-06-1*.log"}
tool_result: 2024-06-12T09:14:03Z INFO refund.created op=op_8f2c1e re_3PQ...aa
2024-06-12T09:14:33Z WARN task retry op=op_8f2c1e reason=ReadTimeout
2024-06-12T09:14:35Z INFO refund.created op=op_8f2c1e re_3PQ...b7
assistant: A read timeout after Stripe already accepted the refund, then a Celery retry creating a second one. I checked Sentry too — the ReadTimeout events show up there grouped under `refund.create`, but they don't tell us more than the log does. Now the call site:
tool_use Read {"file_path": "payments/refunds.py", "offset": 30, "limit": 20}
tool_result: 30	@app.task(bind=True, autoretry_for=(ReadTimeout,), max_retries=5)
31	def create_refund(self, op_id: str, charge_id: str, amount: int):
32	    refund = stripe.Refund.create(charge=charge_id, amount=amount)
33	    record_refund(op_id, refund.id)
assistant: No idempotency key on this call, unlike the charge path. With a key built from op_id, Stripe returns the original refund on the retry instead of issuing a new one.
tool_use Edit {"file_path": "payments/refunds.py", "old_string": "    refund = stripe.Refund.create(charge=charge_id, amount=amount)", "new_string": "    refund = stripe.Refund.create(\n        charge=charge_id,\n        amount=amount,\n        idempotency_key=f\"refund:{op_id}\",\n    )"}
tool_result: The file payments/refunds.py has been updated.
tool_use Bash {"command": "pytest tests/test_refunds.py -q"}
tool_result: ....                                                                     [100%]
4 passed in 0.91s
assistant: Root cause: the refund task retries on timeouts, and the Stripe call had no dedupe token, so a timeout after success produced a second refund. The call now sends a key derived from the operation id, so retries are safe. The three affected operations are listed above if finance needs to reverse them.''',
),

# ---------------------------------------------------------------- s012
dict(
project="data-warehouse",
task="Add a `churned_at` column to the customers dbt model.",
mem=[
 ("verbatim", "Run `dbt build --select state:modified+` instead of building the whole project"),
 ("other_words", "Every new column must be documented in the model's schema.yml with a description and tests where sensible"),
 ("unrelated", "Snowflake warehouse for ad-hoc queries is ANALYST_XS; don't use TRANSFORM_L interactively"),
 ("mention", "A full refresh of the customers model takes ~40 minutes; only run it outside business hours"),
 ("negation", "Use the `{{ ref() }}` macro for every upstream model; never hardcode schema names"),
],
out=r'''tool_use Read {"file_path": "models/marts/customers.sql"}
tool_result: {{ config(materialized='incremental', unique_key='customer_id') }}
select
  c.customer_id,
  c.created_at,
  c.plan,
  c.updated_at
from {{ ref('stg_customers') }} c
{% if is_incremental() %}
where c.updated_at > (select max(updated_at) from {{ this }})
{% endif %}
assistant: It's incremental, but adding a column here doesn't require a full refresh since on_schema_change is append_new_columns. The churn date comes from the subscriptions source; there's no staging model for it yet, so I'll select from the raw table directly for now.
tool_use Edit {"file_path": "models/marts/customers.sql", "old_string": "  c.updated_at\nfrom {{ ref('stg_customers') }} c", "new_string": "  c.updated_at,\n  s.cancelled_at as churned_at\nfrom {{ ref('stg_customers') }} c\nleft join raw.billing.subscriptions s on s.customer_id = c.customer_id and s.status = 'cancelled'"}
tool_result: The file models/marts/customers.sql has been updated.
tool_use Edit {"file_path": "models/marts/schema.yml", "old_string": "      - name: updated_at\n", "new_string": "      - name: updated_at\n      - name: churned_at\n        description: \"Timestamp the customer's subscription was cancelled; null for active customers.\"\n        tests:\n          - dbt_utils.expression_is_true:\n              expression: \"churned_at is null or churned_at >= created_at\"\n"}
tool_result: The file models/marts/schema.yml has been updated.
assistant: Following the project note, I'll run `dbt build --select state:modified+` instead of building the whole project.
tool_use Bash {"command": "dbt build --select state:modified+ --state prod-artifacts/"}
tool_result: 12:03:11  Completed successfully
12:03:11  Done. PASS=7 WARN=0 ERROR=0 SKIP=0 TOTAL=7
assistant: `churned_at` is added and described with a sanity test. Note I joined `raw.billing.subscriptions` by its full name rather than through a ref — there's no model for it yet; worth adding a stg_subscriptions later.''',
),

# ---------------------------------------------------------------- s013
dict(
project="chat-backend",
task="Add a health check endpoint.",
mem=[
 ("unrelated", "WebSocket connections are sticky via the `io` cookie on the load balancer"),
 ("unrelated", "Message retention is 90 days, enforced by a nightly cron in jobs/purge.ts"),
 ("other_words", "Health endpoints must not touch the database; readiness checks go in /readyz, liveness in /healthz"),
],
out=r'''assistant: Adding a liveness route that only reports the process is up, without any DB round-trip; the dependency checks belong on the separate readiness route.
tool_use Edit {"file_path": "src/routes/index.ts", "old_string": "router.use('/api', api);", "new_string": "router.get('/healthz', (_req, res) => res.status(200).send('ok'));\nrouter.get('/readyz', async (_req, res) => {\n  const ok = await pingDependencies();\n  res.status(ok ? 200 : 503).send(ok ? 'ready' : 'not ready');\n});\nrouter.use('/api', api);"}
tool_result: The file src/routes/index.ts has been updated.
tool_use Bash {"command": "npm test -- routes"}
tool_result: PASS  src/routes/index.test.ts (5 tests)
assistant: Added `/healthz` (static 200) and `/readyz` (checks Postgres and Redis).''',
),

# ---------------------------------------------------------------- s014
dict(
project="monorepo-tools",
task="Add a new package `@acme/date-utils` to the monorepo.",
mem=[
 ("partial", "New packages need an entry in tsconfig.base.json `paths` and in the root `pnpm-workspace.yaml`"),
 ("other_words", "Packages are published under the @acme scope with `changeset`; every user-facing change needs a changeset file"),
 ("mention", "Turborepo remote cache is enabled; set TURBO_TOKEN locally to benefit from it"),
 ("unrelated", "ESLint config is shared via @acme/eslint-config; don't add per-package .eslintrc files"),
 ("unrelated", "The docs site in apps/docs is deployed to Vercel on merge"),
],
out=r'''assistant: Looking at an existing small package as a template.
tool_use Bash {"command": "ls packages/string-utils && cat packages/string-utils/package.json"}
tool_result: package.json  src  tsconfig.json  vitest.config.ts
{
  "name": "@acme/string-utils",
  "version": "1.4.0",
  "main": "dist/index.js",
  "types": "dist/index.d.ts",
  "scripts": { "build": "tsup src/index.ts --dts", "test": "vitest run" }
}
tool_use Bash {"command": "mkdir -p packages/date-utils/src && cp packages/string-utils/{tsconfig.json,vitest.config.ts} packages/date-utils/"}
tool_result: 
tool_use Write {"file_path": "packages/date-utils/package.json", "content": "{\n  \"name\": \"@acme/date-utils\",\n  \"version\": \"0.1.0\",\n  \"main\": \"dist/index.js\",\n  \"types\": \"dist/index.d.ts\",\n  \"scripts\": { \"build\": \"tsup src/index.ts --dts\", \"test\": \"vitest run\" }\n}\n"}
tool_result: File created successfully at: packages/date-utils/package.json
tool_use Write {"file_path": "packages/date-utils/src/index.ts", "content": "export function startOfIsoWeek(d: Date): Date {\n  const day = (d.getUTCDay() + 6) % 7;\n  const r = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));\n  r.setUTCDate(r.getUTCDate() - day);\n  return r;\n}\n"}
tool_result: File created successfully at: packages/date-utils/src/index.ts
tool_use Edit {"file_path": "tsconfig.base.json", "old_string": "      \"@acme/string-utils\": [\"packages/string-utils/src\"],", "new_string": "      \"@acme/string-utils\": [\"packages/string-utils/src\"],\n      \"@acme/date-utils\": [\"packages/date-utils/src\"],"}
tool_result: The file tsconfig.base.json has been updated.
tool_use Write {"file_path": ".changeset/quiet-owls-count.md", "content": "---\n\"@acme/date-utils\": minor\n---\n\nNew package with ISO-week helpers.\n"}
tool_result: File created successfully at: .changeset/quiet-owls-count.md
tool_use Bash {"command": "pnpm install && pnpm turbo run build test --filter @acme/date-utils"}
tool_result: • Remote caching disabled
@acme/date-utils:build: ESM dist/index.js 312.00 B
@acme/date-utils:test: No test files found, exiting with code 0
 Tasks:    2 successful, 2 total
assistant: The package is scaffolded, mapped in the base tsconfig, and has a release note entry for the next version bump. The build ran without the remote cache (no token in this shell) which is fine for a two-task build.''',
),
]
