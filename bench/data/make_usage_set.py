"""Write bench/data/usage.jsonl and bench/data/usage_heldout.jsonl: the labelled sets of the "used" signal
(cortex/capture/usage.py, ``drawn_on``; measured by bench/capture.py).

Each line: ``{"memories": [[id, content], ...], "output": ..., "used": [ids], "kind": ..., "session": ...}``.
``memories`` is the ``<agent-memory>`` block the agent was shown at its start (3 to 6 memories of the same
project and topic: a block is ranked for the task, so its memories are neighbours); ``output`` is what a recorded
Claude Code session holds of the agent after that start, as the capture reads it: its text messages and its tool
calls' inputs (JSON), one a line; ``used`` the ids of the memories the output actually drew on. ``kind`` says
what the item tests (the target memory's variant); ``session`` names the scenario.

The kinds: ``applied`` (the output follows the memory: types its command, flag or path, or writes the code it
asks for), ``applied-two`` (two memories of the block followed), ``cited`` (names the memory's id, after a
``search_memories`` call), ``repeated`` (restates the memory), and the near-misses, none of them used: ``topic``
(the same topic and files, the memory not applied), ``generic`` (its generic words, not what it says),
``contrary`` (the memory says X, the agent does not-X), ``cited-dismissed`` (the id named to say it does not
apply). The held-out set adds ``applied-prose`` (followed without typing any of its specific tokens),
``cited-prefix`` (the id cut to its first 8 characters, as agents shorten ids) and ``long-topic`` (a long
session on the memory's topic that does not apply it).

The first set (30 scenarios in six projects: a Python shop backend, a TypeScript front end, deployment, git,
API conventions, databases and debugging) was written with the rules in view. The held-out set (other projects:
a Go service, a mobile app, a data pipeline; other output shapes: the hooks' JSON spacing, paraphrases, ids cut
to a prefix, TodoWrite plans, long sessions) was written afterwards and never used to change the rules.

    python bench/data/make_usage_set.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

#: A step of a session: the agent's text, or a tool call (name, input).
Step = str | tuple[str, dict[str, Any]]


def render(steps: list[Step], *, spacing: tuple[str, str] = (",", ":")) -> str:
    """What a capture reads of the steps: text as written, tool inputs as compact JSON (the transcript reader's
    form; the Stop hooks use ``json.dumps``' default spacing, ``(", ", ": ")``)."""
    out = []
    for step in steps:
        if isinstance(step, str):
            out.append(step)
        else:
            out.append(json.dumps(step[1], ensure_ascii=False, separators=spacing))
    return "\n".join(out)


def bash(command: str, description: str | None = None) -> Step:
    return ("Bash", {"command": command, **({"description": description} if description else {})})


def edit(path: str, old: str, new: str) -> Step:
    return ("Edit", {"file_path": path, "old_string": old, "new_string": new})


def write(path: str, content: str) -> Step:
    return ("Write", {"file_path": path, "content": content})


def read(path: str) -> Step:
    return ("Read", {"file_path": path})


def grep(pattern: str, path: str = ".") -> Step:
    return ("Grep", {"pattern": pattern, "path": path, "output_mode": "content"})


def todo(*items: str) -> Step:
    return ("TodoWrite", {"todos": [{"content": t, "status": "pending", "activeForm": t} for t in items]})


def search(query: str, agent: str = "lead") -> Step:
    return ("mcp__cortex__search_memories", {"agent": agent, "query": query})


# -- the tuned set: six projects, five memories each -------------------------------------------------------------
#
# Each scenario: the memory, then its outputs by kind. Fillers are steps of the same project that apply none of
# its memories (checked by hand: each is what an agent does around the work, reading, searching, planning).

SHOP = "/home/dev/shop"
WEB = "/home/dev/storefront"

PROJECTS: dict[str, dict[str, Any]] = {
    "shop": {
        "fillers": [
            read(f"{SHOP}/shop/orders/service.py"),
            grep("def create_order", f"{SHOP}/shop"),
            "I'll look at the order service first.",
            todo("Reproduce the failure", "Fix it", "Run the affected tests"),
            read(f"{SHOP}/pyproject.toml"),
            "The failure is in the discount calculation, not in the order model.",
            grep("class Order\\b", f"{SHOP}/shop/orders"),
        ],
        "scenarios": {
            "testdb": {
                "memory": "Run the test database on port 5433 with docker compose -f compose.test.yml up -d",
                "applied": [bash("docker compose -f compose.test.yml up -d && pg_isready -h localhost -p 5433",
                                 "Start the test database"),
                            "The test database is up; running the order tests against it.",
                            bash("pytest tests/orders -q")],
                "topic": [bash("docker compose up -d db", "Start the database"),
                          bash("psql -h localhost -p 5432 -U shop -c 'select count(*) from orders'"),
                          "The development database has 1,204 orders; the migration applies cleanly."],
                "generic": ["I'll run the tests against the database once the fixtures are fixed.",
                            bash("pytest tests/orders/test_totals.py -q")],
            },
            "alembic": {
                "memory": "Generate migrations with alembic revision --autogenerate -m '<message>'; never write "
                          "them by hand",
                "applied": [bash("uv run alembic revision --autogenerate -m 'add index on orders.customer_id'"),
                            read(f"{SHOP}/migrations/versions/8c1e2f_add_index_on_orders_customer_id.py"),
                            "The generated migration only adds the index, as expected."],
                "contrary": ["The change is a single index, so I'll write the migration file directly.",
                             write(f"{SHOP}/migrations/versions/8c1e2f_add_orders_customer_index.py",
                                   "\"\"\"add orders.customer_id index\"\"\"\nfrom alembic import op\n\nrevision = "
                                   "'8c1e2f'\ndown_revision = '77ab01'\n\n\ndef upgrade():\n    op.create_index("
                                   "'ix_orders_customer_id', 'orders', ['customer_id'])\n\n\ndef downgrade():\n    "
                                   "op.drop_index('ix_orders_customer_id')\n"),
                             bash("uv run alembic upgrade head")],
                "topic": [bash("uv run alembic upgrade head", "Apply pending migrations"),
                          "Applied the pending migrations; the schema is at head."],
            },
            "uvfrozen": {
                "memory": "Use uv sync --frozen in CI; plain uv sync rewrites uv.lock",
                "applied": [read(f"{SHOP}/.github/workflows/ci.yml"),
                            edit(f"{SHOP}/.github/workflows/ci.yml", "      - run: uv sync",
                                 "      - run: uv sync --frozen"),
                            "CI now installs exactly what uv.lock pins."],
                "topic": [bash("uv add httpx"), bash("uv sync"),
                          "Added httpx; uv.lock is updated and the environment synced."],
                "generic": ["CI failed on the lint step, not on dependencies.",
                            read(f"{SHOP}/.github/workflows/ci.yml"),
                            edit(f"{SHOP}/.github/workflows/ci.yml", "      - run: ruff check",
                                 "      - run: ruff check --output-format=github")],
            },
            "tz": {
                "memory": "The checkout tests depend on the time zone: run them with TZ=UTC pytest "
                          "tests/test_checkout.py",
                "applied": [bash("TZ=UTC pytest tests/test_checkout.py -q", "Run the checkout tests in UTC"),
                            "All 14 checkout tests pass in UTC."],
                "topic": [bash("pytest tests/test_checkout.py -q"),
                          "The checkout tests pass locally; the failure must be elsewhere."],
                "generic": ["The time zone of the order timestamps is stored with each order.",
                            grep("tzinfo", f"{SHOP}/shop/orders")],
            },
            "decimal": {
                "memory": "Money amounts are Decimal in shop/pricing; never use float for prices",
                "applied": [read(f"{SHOP}/shop/pricing/discount.py"),
                            edit(f"{SHOP}/shop/pricing/discount.py", "    return price * 0.9",
                                 "    return (price * Decimal(\"0.9\")).quantize(Decimal(\"0.01\"))"),
                            "The discount stays a Decimal, rounded to cents."],
                "contrary": [edit(f"{SHOP}/shop/pricing/discount.py", "    return price * rate",
                                  "    return round(float(price) * float(rate), 2)"),
                             "Converted to float so the rate from the JSON config multiplies cleanly."],
                "topic": [read(f"{SHOP}/shop/pricing/tax.py"),
                          "The tax rates are looked up per country; the bug is a missing country code.",
                          edit(f"{SHOP}/shop/pricing/tax.py", "RATES = {\"DE\": ", "RATES = {\"AT\": Decimal(\"0.20\"), \"DE\": ")],
            },
        },
    },
    "web": {
        "fillers": [
            read(f"{WEB}/package.json"),
            grep("useCart", f"{WEB}/src"),
            "I'll start with the cart component.",
            todo("Find the regression", "Fix the component", "Check the stories"),
            read(f"{WEB}/src/components/Cart/Cart.tsx"),
            "The total is computed twice: once in the hook and once in the component.",
        ],
        "scenarios": {
            "pnpm": {
                "memory": "Use pnpm install --frozen-lockfile in CI pipelines",
                "applied": [edit(f"{WEB}/.gitlab-ci.yml", "    - pnpm install",
                                 "    - pnpm install --frozen-lockfile"),
                            "The pipeline no longer updates the lockfile."],
                "topic": [bash("pnpm install"), bash("pnpm add -D @testing-library/user-event"),
                          "Installed the new dev dependency; pnpm-lock.yaml changed."],
                "generic": ["The CI pipeline failed in the build step; the install step is fine.",
                            bash("pnpm build")],
            },
            "forks": {
                "memory": "Vitest needs --pool=forks here: the default threads pool crashes on the canvas mock",
                "applied": [bash("pnpm vitest run --pool=forks src/components/Chart"),
                            "Chart tests pass with the forks pool."],
                "topic": [bash("pnpm vitest run src/components/Chart"),
                          "The chart tests crashed with a segmentation fault in the worker; looking at the mock.",
                          read(f"{WEB}/src/test/canvas-mock.ts")],
                "generic": ["The default date format crashes on an empty value here.",
                            edit(f"{WEB}/src/utils/format.ts", "return format(d)", "return d ? format(d) : ''")],
            },
            "icons": {
                "memory": "Icons are imported from src/ui/icons/index.ts, never from lucide-react directly",
                "applied": [edit(f"{WEB}/src/components/Cart/CartButton.tsx",
                                 "import { ShoppingCart } from 'lucide-react'",
                                 "import { ShoppingCart } from '@/ui/icons'"),
                            read(f"{WEB}/src/ui/icons/index.ts"),
                            "ShoppingCart is exported from src/ui/icons/index.ts already."],
                "contrary": [edit(f"{WEB}/src/components/Cart/CartButton.tsx", "import { Button } from '@/ui'",
                                  "import { Button } from '@/ui'\nimport { Trash2 } from 'lucide-react'"),
                             "Added the trash icon to the cart button."],
                "topic": ["The cart button needs a remove icon.", grep("Trash", f"{WEB}/src/components")],
            },
            "storybook": {
                "memory": "Run pnpm storybook:build before merging UI changes; Chromatic reads storybook-static/",
                "applied": [bash("pnpm storybook:build", "Build Storybook for Chromatic"),
                            "storybook-static/ is built; the Cart stories render."],
                "topic": [bash("pnpm storybook", "Start Storybook"),
                          "Checked the Cart stories in the browser; the empty state looks right."],
                "generic": ["The UI changes are ready for review before merging.", bash("git status")],
            },
            "genapi": {
                "memory": "API types are generated: run pnpm gen:api after changing openapi.yaml and never edit "
                          "src/api/types.ts",
                "applied": [edit(f"{WEB}/openapi.yaml", "        total:\n          type: number",
                                 "        total:\n          type: string\n          format: decimal"),
                            bash("pnpm gen:api"), "Regenerated the API types from openapi.yaml."],
                "contrary": [edit(f"{WEB}/src/api/types.ts", "  total: number;", "  total: string;"),
                             "Changed the total to a string in the API types."],
                "topic": [read(f"{WEB}/src/api/types.ts"),
                          "The Order type already has the total as a number; the bug is in the formatter."],
            },
        },
    },
    "deploy": {
        "fillers": [
            read(f"{SHOP}/Makefile"),
            bash("git log --oneline -5"),
            "I'll check what is deployed first.",
            todo("Check the failing deploy", "Fix it", "Verify the rollout"),
            read(f"{SHOP}/deploy/values.yaml"),
            "The deploy failed on the readiness probe, not on the image.",
        ],
        "scenarios": {
            "makedeploy": {
                "memory": "Deploy the api with make deploy-api ENV=staging; production needs ENV=prod and a tag",
                "applied": [bash("make deploy-api ENV=staging", "Deploy the api to staging"),
                            "Deployed to staging; the health check is green."],
                "topic": [bash("make deploy-web ENV=staging"),
                          "Deployed the web front end to staging; the api was not changed."],
                "generic": ["The api needs a new environment variable in staging.",
                            edit(f"{SHOP}/deploy/staging.env", "LOG_LEVEL=info", "LOG_LEVEL=info\nFEATURE_X=1")],
            },
            "context": {
                "memory": "kubectl contexts are shop-staging and shop-prod; always pass --context explicitly",
                "applied": [bash("kubectl --context shop-staging -n shop get pods"),
                            bash("kubectl --context shop-staging -n shop logs deploy/shop-api --tail=50"),
                            "The api pods restart because the readiness probe times out."],
                "contrary": [bash("kubectl config use-context shop-prod"), bash("kubectl -n shop get pods"),
                             "All pods in production are running."],
                "topic": ["The pods are in the shop namespace.", read(f"{SHOP}/deploy/k8s/deployment.yaml")],
            },
            "tfinit": {
                "memory": "Terraform state is in s3://shop-tfstate; run terraform init -backend-config=backend.hcl "
                          "first",
                "applied": [bash("cd infra && terraform init -backend-config=backend.hcl"),
                            bash("cd infra && terraform plan -out plan.tfplan"),
                            "The plan adds one bucket policy."],
                "topic": [bash("cd infra && terraform fmt -recursive"), bash("cd infra && terraform validate"),
                          "The configuration is valid."],
                "generic": ["The state of the deploy is fine; the first run only failed on a timeout."],
            },
            "platform": {
                "memory": "Docker images are built with --platform linux/amd64 because the cluster nodes are x86",
                "applied": [bash("docker build --platform linux/amd64 -t shop-api:1.8.2 ."),
                            "Built the image for the cluster's architecture."],
                "topic": [bash("docker build -t shop-api:dev ."), bash("docker run --rm -p 8000:8000 shop-api:dev"),
                          "The image runs locally."],
                "generic": ["The cluster nodes are busy; the images are built because the cache was cold."],
            },
            "helm": {
                "memory": "Roll back with helm rollback shop-api <revision> -n shop, not kubectl rollout undo",
                "applied": [bash("helm history shop-api -n shop"), bash("helm rollback shop-api 41 -n shop"),
                            "Rolled back to revision 41; the api is healthy again."],
                "contrary": [bash("kubectl -n shop rollout undo deployment/shop-api"),
                             "Undid the last rollout of the api deployment."],
                "topic": [bash("helm list -n shop"),
                          "shop-api is at revision 42, deployed an hour ago."],
            },
        },
    },
    "git": {
        "fillers": [
            bash("git status"),
            bash("git diff --stat"),
            "I'll commit the fix now.",
            bash("git log --oneline -3"),
            "The branch is two commits ahead.",
        ],
        "scenarios": {
            "lease": {
                "memory": "Never push --force to main; use git push --force-with-lease on feature branches",
                "applied": [bash("git rebase -i HEAD~3"), bash("git push --force-with-lease origin fix/cart-total"),
                            "Squashed the fixups and updated the branch."],
                "contrary": [bash("git rebase -i HEAD~3"), bash("git push --force origin fix/cart-total"),
                             "Squashed the commits and pushed the branch."],
                "topic": [bash("git push origin fix/cart-total"), "Pushed the branch."],
            },
            "conventional": {
                "memory": "Commit messages follow Conventional Commits: feat(scope): subject",
                "applied": [bash("git add shop/pricing/discount.py tests/test_discount.py"),
                            bash("git commit -m 'fix(pricing): keep discounts in Decimal'")],
                "contrary": [bash("git commit -am 'Fixed the discount rounding'")],
                "generic": ["The subject of the issue is the discount scope.", read(f"{SHOP}/CHANGELOG.md")],
            },
            "develop": {
                "memory": "Rebase on origin/develop, not main: releases are cut from develop",
                "applied": [bash("git fetch origin"), bash("git rebase origin/develop"),
                            "Rebased; no conflicts."],
                "contrary": [bash("git fetch origin"), bash("git rebase origin/main"),
                             "Rebased onto main; one conflict in the changelog, resolved."],
                "topic": [bash("git fetch origin"), "The branch is up to date with its remote."],
            },
            "precommit": {
                "memory": "Run pre-commit run --all-files before pushing; CI runs the same hooks",
                "applied": [bash("pre-commit run --all-files"), "ruff fixed two imports; all hooks pass.",
                            bash("git push origin fix/cart-total")],
                "topic": [bash("pre-commit install"), "Installed the git hooks."],
                "generic": ["CI runs on every push; the same job failed yesterday on a timeout.",
                            bash("git push origin fix/cart-total")],
            },
            "lfs": {
                "memory": "Large test fixtures go through git lfs track 'tests/fixtures/*.parquet'",
                "applied": [bash("git lfs track 'tests/fixtures/*.parquet'"),
                            bash("git add .gitattributes tests/fixtures/orders_2025.parquet"),
                            "The parquet fixture is stored in LFS."],
                "contrary": [bash("git add tests/fixtures/orders_2025.parquet"),
                             bash("git commit -m 'test: add the orders fixture'"),
                             "Committed the 48 MB fixture."],
                "topic": [read(f"{SHOP}/tests/fixtures/README.md"),
                          "The fixtures are parquet files generated by scripts/make_fixtures.py."],
            },
        },
    },
    "api": {
        "fillers": [
            read(f"{SHOP}/shop/api/routes/orders.py"),
            grep("@router.get", f"{SHOP}/shop/api"),
            "I'll add the endpoint next to the existing order routes.",
            todo("Add the endpoint", "Write the tests", "Update the docs"),
            read(f"{SHOP}/tests/api/test_orders.py"),
        ],
        "scenarios": {
            "apierror": {
                "memory": "Endpoints raise ApiError(code, message) for errors, never HTTPException: clients read "
                          "{\"error\": {\"code\", \"message\"}}",
                "applied": [edit(f"{SHOP}/shop/api/routes/refunds.py",
                                 "        return None",
                                 "        raise ApiError(\"refund_not_found\", f\"no refund {refund_id}\")"),
                            "Unknown refunds now answer with the standard error body."],
                "contrary": [edit(f"{SHOP}/shop/api/routes/refunds.py", "        return None",
                                  "        raise HTTPException(status_code=404, detail=\"Refund not found\")"),
                             "A missing refund is a 404 now."],
                "topic": [read(f"{SHOP}/shop/api/errors.py"),
                          "Errors are logged with the request id; the refund error was never logged."],
            },
            "cursor": {
                "memory": "List endpoints paginate with cursor= and limit= (max 100); no offset pagination",
                "applied": [edit(f"{SHOP}/shop/api/routes/refunds.py", "def list_refunds(db: Db):",
                                 "def list_refunds(db: Db, cursor: str | None = None, limit: int = Query(50, le=100)):"),
                            "The refund list pages with a cursor, at most 100 a page."],
                "contrary": [edit(f"{SHOP}/shop/api/routes/refunds.py", "def list_refunds(db: Db):",
                                  "def list_refunds(db: Db, page: int = 1, per_page: int = 50):"),
                             "Added page and per_page parameters to the refund list."],
                "topic": ["The list endpoint returns all refunds at once; that is the slow request.",
                          read(f"{SHOP}/shop/api/routes/refunds.py")],
            },
            "enqueue": {
                "memory": "Background work goes through shop.tasks.enqueue(), never threading.Thread in request "
                          "handlers",
                "applied": [edit(f"{SHOP}/shop/api/routes/exports.py", "    build_export(export_id)",
                                 "    enqueue(\"build_export\", export_id=export_id)"),
                            edit(f"{SHOP}/shop/api/routes/exports.py", "from shop.exports import build_export",
                                 "from shop.tasks import enqueue"),
                            "The export is built by a worker; the request returns at once."],
                "contrary": [edit(f"{SHOP}/shop/api/routes/exports.py", "    build_export(export_id)",
                                  "    threading.Thread(target=build_export, args=(export_id,), daemon=True).start()"),
                             "The export runs in a thread so the request returns at once."],
                "topic": [read(f"{SHOP}/shop/tasks/__init__.py"),
                          "The export task exists but nothing schedules it yet."],
            },
            "settings": {
                "memory": "Settings come from shop.config.settings (pydantic); don't read os.environ in modules",
                "applied": [edit(f"{SHOP}/shop/payments/client.py",
                                 "API_URL = os.environ[\"PAYMENTS_URL\"]",
                                 "API_URL = settings.payments_url"),
                            edit(f"{SHOP}/shop/config.py", "    redis_url: str",
                                 "    redis_url: str\n    payments_url: str"),
                            "The payments URL is a setting now."],
                "contrary": [edit(f"{SHOP}/shop/payments/client.py", "TIMEOUT = 10",
                                  "TIMEOUT = int(os.environ.get(\"PAYMENTS_TIMEOUT\", \"10\"))"),
                             "The payments timeout can be set from the environment."],
                "topic": [read(f"{SHOP}/shop/config.py"),
                          "The payments client has a hard-coded timeout of 10 seconds."],
            },
            "trustproxy": {
                "memory": "The rate limiter keys on X-Forwarded-For only behind the proxy: set TRUST_PROXY=1 in "
                          "staging",
                "applied": [edit(f"{SHOP}/deploy/staging.env", "RATE_LIMIT=600",
                                 "RATE_LIMIT=600\nTRUST_PROXY=1"),
                            "Staging now limits per client address instead of per proxy."],
                "topic": [read(f"{SHOP}/shop/api/ratelimit.py"),
                          "The limit is 600 requests a minute per key."],
                "generic": ["The rate of errors in staging went up behind the new load balancer only.",
                            bash("curl -s https://staging.shop.example/healthz")],
            },
        },
    },
    "data": {
        "fillers": [
            bash("psql shop -c '\\d orders'"),
            "I'll look at the slow query first.",
            read(f"{SHOP}/shop/orders/queries.py"),
            todo("Find the slow query", "Fix it", "Measure again"),
            "The query plan shows a sequential scan.",
        ],
        "scenarios": {
            "partition": {
                "memory": "The orders table is partitioned by month; queries must filter on created_at to prune "
                          "partitions",
                "applied": [edit(f"{SHOP}/shop/orders/queries.py",
                                 "WHERE customer_id = :customer_id",
                                 "WHERE customer_id = :customer_id AND created_at >= :since"),
                            "The customer's order query now filters on created_at, so it reads only the recent "
                            "partitions."],
                "topic": [bash("psql shop -c 'select count(*) from orders_2026_11'"),
                          "November has 48,000 orders."],
                "generic": ["The orders of the month are exported by the reports job.",
                            read(f"{SHOP}/shop/reports/monthly.py")],
            },
            "concurrently": {
                "memory": "Use CREATE INDEX CONCURRENTLY on orders: a plain CREATE INDEX locks writes for minutes",
                "applied": [write(f"{SHOP}/migrations/versions/91ab_orders_status_index.py",
                                  "def upgrade():\n    with op.get_context().autocommit_block():\n        "
                                  "op.create_index('ix_orders_status', 'orders', ['status'], "
                                  "postgresql_concurrently=True)\n"),
                            "The index is built concurrently, so checkout keeps writing."],
                "contrary": [bash("psql shop -c 'CREATE INDEX ix_orders_status ON orders (status)'"),
                             "Index created."],
                "topic": [bash("psql shop -c 'select indexname from pg_indexes where tablename = '\"'\"'orders'\"'\"''"),
                          "orders has indexes on id and customer_id only."],
            },
            "redisttl": {
                "memory": "Redis cache keys expire after cache.ttl (default 300s); flush with redis-cli -n 2 FLUSHDB "
                          "in dev only",
                "applied": [bash("redis-cli -n 2 FLUSHDB"), "Flushed the dev cache; the new prices show."],
                "topic": [bash("redis-cli -n 2 KEYS 'price:*' | head"),
                          "The prices are cached under price:<sku>."],
                "generic": ["The default of 300 items per page is too many for the export.",
                            edit(f"{SHOP}/shop/exports/config.py", "PAGE = 300", "PAGE = 100")],
            },
            "serial": {
                "memory": "test_sync_inventory is flaky under pytest-xdist; mark it with @pytest.mark.serial",
                "applied": [edit(f"{SHOP}/tests/test_inventory.py", "def test_sync_inventory(db):",
                                 "@pytest.mark.serial\ndef test_sync_inventory(db):"),
                            bash("pytest -n 4 tests/test_inventory.py -q"),
                            "The inventory tests pass in parallel now."],
                "topic": [bash("pytest -n 4 tests/test_inventory.py -q"),
                          "test_sync_inventory failed once in three runs; the others are stable."],
                "generic": ["The inventory sync is marked as done in the admin when the job finishes."],
            },
            "pyspy": {
                "memory": "Profile slow endpoints with py-spy record -o profile.svg --pid <pid>",
                "applied": [bash("py-spy record -o profile.svg --pid 48213 --duration 30"),
                            "The flame graph shows most time in the JSON encoder."],
                "topic": [bash("time curl -s localhost:8000/api/orders?limit=100 > /dev/null"),
                          "The endpoint takes 2.4 s; the query alone takes 40 ms."],
                "generic": ["The slow endpoint is the order list; the profile of its query is fine."],
            },
        },
    },
}

#: Outputs that follow two memories of a project's block at once (both labelled used).
TWO = [
    ("shop", ("testdb", "tz"), [bash("docker compose -f compose.test.yml up -d"),
                                bash("TZ=UTC pytest tests/test_checkout.py -q"),
                                "Checkout tests pass against the test database on 5433."]),
    ("web", ("pnpm", "storybook"), [edit(f"{WEB}/.gitlab-ci.yml", "    - pnpm install\n    - pnpm build",
                                         "    - pnpm install --frozen-lockfile\n    - pnpm build\n    - pnpm "
                                         "storybook:build"), "CI builds Storybook for Chromatic too."]),
    ("deploy", ("platform", "makedeploy"), [bash("docker build --platform linux/amd64 -t shop-api:1.8.3 ."),
                                            bash("make deploy-api ENV=staging"), "1.8.3 is on staging."]),
    ("git", ("develop", "lease"), [bash("git rebase origin/develop"),
                                   bash("git push --force-with-lease origin feat/refunds")]),
    ("api", ("cursor", "apierror"), [edit(f"{SHOP}/shop/api/routes/refunds.py", "def list_refunds(db: Db):",
                                          "def list_refunds(db: Db, cursor: str | None = None, limit: int = "
                                          "Query(50, le=100)):"),
                                     edit(f"{SHOP}/shop/api/routes/refunds.py", "        return []",
                                          "        raise ApiError(\"bad_cursor\", \"the cursor is not valid\")")]),
    ("data", ("concurrently", "partition"), [
        write(f"{SHOP}/migrations/versions/93cd_orders_created_index.py",
              "def upgrade():\n    with op.get_context().autocommit_block():\n        op.create_index("
              "'ix_orders_customer_created', 'orders', ['customer_id', 'created_at'], postgresql_concurrently=True)\n"),
        "Queries by customer filter on created_at now, and the index on (customer_id, created_at) is built "
        "concurrently."]),
]

#: Scenarios whose memory the agent restates (repeated) or names by id after a search (cited).
REPEATED = ["testdb", "uvfrozen", "pnpm", "forks", "makedeploy", "context", "lease", "develop", "apierror",
            "enqueue", "partition", "serial"]
CITED = ["alembic", "tz", "icons", "genapi", "tfinit", "helm", "conventional", "precommit", "cursor", "settings",
         "concurrently", "pyspy"]
#: Of the cited ones, those the agent names only to say the memory does not apply here.
DISMISSED = {"tfinit", "settings"}


def _restated(memory: str, rng: random.Random) -> str:
    lead = rng.choice(["Keeping in mind: ", "Note for this repo: ", "As the project notes say, ",
                       "Reminder to myself: "])
    body = memory[0].lower() + memory[1:] if lead.endswith(", ") else memory
    return lead + body.rstrip(".") + "."


def _ids(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice("0123456789abcdef") for _ in range(28)) for _ in range(n)]


def tuned_set(seed: int = 20) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for project, spec in PROJECTS.items():
        scenarios = spec["scenarios"]
        names = list(scenarios)
        ids = dict(zip(names, _ids(rng, len(names))))

        def block(target: str | tuple[str, ...]) -> list[list[str]]:
            targets = (target,) if isinstance(target, str) else target
            others = [n for n in names if n not in targets]
            chosen = list(targets) + rng.sample(others, rng.randint(2, min(4, len(others))))
            rng.shuffle(chosen)
            return [[ids[n], scenarios[n]["memory"]] for n in chosen]

        def session(core: list[Step]) -> str:
            fillers = rng.sample(spec["fillers"], rng.randint(1, min(4, len(spec["fillers"]))))
            cut = rng.randint(0, len(fillers))
            return render(fillers[:cut] + core + fillers[cut:])

        for name, scenario in scenarios.items():
            for kind in ("applied", "topic", "generic", "contrary"):
                if kind in scenario:
                    used = [ids[name]] if kind == "applied" else []
                    items.append({"memories": block(name), "output": session(scenario[kind]), "used": used,
                                  "kind": kind, "session": f"{project}/{name}"})
            if name in REPEATED:
                core = [_restated(scenario["memory"], rng), rng.choice(spec["fillers"])]
                items.append({"memories": block(name), "output": session(core), "used": [ids[name]],
                              "kind": "repeated", "session": f"{project}/{name}"})
            if name in CITED:
                query = " ".join(scenario["memory"].split()[:4])
                if name in DISMISSED:
                    core = [search(query), f"Memory {ids[name]} is about another setup; it does not apply to this "
                                           "change, so I'll leave it out.", rng.choice(spec["fillers"])]
                    used = []
                else:
                    core = [search(query), f"Following memory {ids[name]}.", *scenario["applied"][:1]]
                    used = [ids[name]]
                items.append({"memories": block(name), "output": session(core), "used": used,
                              "kind": "cited" if used else "cited-dismissed", "session": f"{project}/{name}"})
        for two_project, pair, core in TWO:
            if two_project == project:
                items.append({"memories": block(pair), "output": session(core), "used": [ids[n] for n in pair],
                              "kind": "applied-two", "session": f"{project}/{'+'.join(pair)}"})
    return items


# -- the held-out set: other projects, other output shapes ----------------------------------------------------
#
# Written after the rules were measured on the tuned set; never used to change them.

API = "/srv/ledger"
APP = "/Users/kim/src/fieldapp"
PIPE = "/opt/pipelines"

HELD_OUT: list[dict[str, Any]] = [
    # a Go service
    {"project": "ledger", "memories": {
        "race": "Run the Go tests with go test -race ./... before pushing; the ledger has data races that only "
                "-race finds",
        "sqlc": "Queries live in db/queries/*.sql and the Go code is generated with sqlc generate",
        "cgo": "Build the release binary with CGO_ENABLED=0 go build -trimpath -o bin/ledger ./cmd/ledger",
        "ctx": "Every repository method takes a context.Context first and passes it to pgx",
        "golden": "Golden files in testdata/ are updated with go test ./internal/report -update",
    }, "items": [
        ("applied", ["race"], [("Bash", {"command": "go test -race ./...", "description": "Run all tests with the race detector"}),
                               "All packages pass with the race detector."]),
        ("topic", [], [("Bash", {"command": "go test ./internal/ledger/..."}),
                       "The ledger package tests pass; the failure was a stale build cache."]),
        ("applied", ["sqlc"], [("Edit", {"file_path": f"{API}/db/queries/accounts.sql", "old_string": "-- name: GetAccount :one",
                                         "new_string": "-- name: ListAccountsByOwner :many\nSELECT * FROM accounts WHERE owner_id = $1 ORDER BY id;\n\n-- name: GetAccount :one"}),
                               ("Bash", {"command": "sqlc generate"}),
                               "ListAccountsByOwner is generated in db/accounts.sql.go."]),
        ("contrary", [], [("Edit", {"file_path": f"{API}/db/accounts.sql.go", "old_string": "func (q *Queries) GetAccount(",
                                    "new_string": "func (q *Queries) ListAccountsByOwner(ctx context.Context, ownerID int64) ([]Account, error) {\n\trows, err := q.db.Query(ctx, `SELECT * FROM accounts WHERE owner_id = $1`, ownerID)\n\t// ...\n}\n\nfunc (q *Queries) GetAccount("}),
                          "Added the query method next to GetAccount."]),
        ("applied-prose", ["ctx"], [("Edit", {"file_path": f"{API}/internal/ledger/repo.go",
                                              "old_string": "func (r *Repo) Balance(accountID int64) (Money, error) {\n\trow := r.pool.QueryRow(context.Background(),",
                                              "new_string": "func (r *Repo) Balance(ctx context.Context, accountID int64) (Money, error) {\n\trow := r.pool.QueryRow(ctx,"}),
                                    "Balance now takes the caller's context like the other repository methods."]),
        ("generic", [], ["The first method of the repository reads the balance; the context of the bug is the "
                         "currency conversion.", ("Read", {"file_path": f"{API}/internal/ledger/convert.go"})]),
        ("applied", ["cgo"], [("Bash", {"command": "CGO_ENABLED=0 go build -trimpath -o bin/ledger ./cmd/ledger"}),
                              ("Bash", {"command": "ls -la bin/ledger"})]),
        ("topic", [], [("Bash", {"command": "go build ./..."}), "Everything compiles."]),
        ("repeated", ["golden"], ["Golden files in testdata/ are updated with go test ./internal/report -update, "
                                  "so I'll regenerate them after the format change.",
                                  ("Bash", {"command": "go test ./internal/report -update"})]),
        ("cited-prefix", ["race"], [("mcp__cortex__search_memories", {"agent": "backend", "query": "go test race"}),
                                    "Per memory {id:race:8}, the race detector is required here.",
                                    ("Bash", {"command": "go test ./... -count=1"})]),
    ]},
    # a mobile app
    {"project": "fieldapp", "memories": {
        "pods": "After changing native dependencies run cd ios && pod install --repo-update",
        "hermes": "Hermes is off for the Android release build because of the PDF renderer; keep hermesEnabled=false "
                  "in android/gradle.properties",
        "detox": "E2E tests run with detox test -c ios.sim.release; the debug configuration is flaky",
        "strings": "User-facing strings go through t('key') from src/i18n; no literal strings in components",
        "otasafe": "Over-the-air updates must not change native code: check with npx expo-updates fingerprint",
    }, "items": [
        ("applied", ["pods"], [("Bash", {"command": "yarn add react-native-maps"}),
                               ("Bash", {"command": "cd ios && pod install --repo-update"}),
                               "Maps is linked on iOS."]),
        ("topic", [], [("Bash", {"command": "yarn add date-fns"}), "date-fns is JavaScript only; nothing native changed."]),
        ("contrary", [], [("Edit", {"file_path": f"{APP}/android/gradle.properties", "old_string": "hermesEnabled=false",
                                    "new_string": "hermesEnabled=true"}),
                          "Turned Hermes on for faster start-up."]),
        ("applied", ["detox"], [("Bash", {"command": "detox build -c ios.sim.release && detox test -c ios.sim.release"}),
                                "The login flow passes on the release simulator build."]),
        ("topic", [], [("Bash", {"command": "detox test -c ios.sim.debug e2e/login.test.ts"}),
                       "The login test timed out waiting for the keyboard."]),
        ("applied-prose", ["strings"], [("Edit", {"file_path": f"{APP}/src/screens/Visit.tsx",
                                                  "old_string": "<Text>Start visit</Text>",
                                                  "new_string": "<Text>{t('visit.start')}</Text>"}),
                                        ("Edit", {"file_path": f"{APP}/src/i18n/en.json", "old_string": "\"visit\": {",
                                                  "new_string": "\"visit\": {\n    \"start\": \"Start visit\","}),
                                        "The new button label is translatable."]),
        ("contrary", [], [("Edit", {"file_path": f"{APP}/src/screens/Visit.tsx", "old_string": "</View>",
                                    "new_string": "  <Text>No visits planned today</Text>\n</View>"}),
                          "Added an empty state to the visit screen."]),
        ("generic", [], ["The user can't go through the visit screen without a key; the components look fine.",
                         ("Read", {"file_path": f"{APP}/src/screens/Visit.tsx"})]),
        ("applied", ["otasafe"], [("Bash", {"command": "npx expo-updates fingerprint:generate --platform ios > /tmp/after.json"}),
                                  "The fingerprint is unchanged, so this can ship over the air."]),
        ("cited-dismissed", [], [("mcp__cortex__search_memories", {"agent": "mobile", "query": "hermes android"}),
                                 "Memory {id:hermes} is about the Android build; this change is iOS only.",
                                 ("Bash", {"command": "cd ios && xcodebuild -scheme FieldApp -configuration Release"})]),
    ]},
    # a data pipeline
    {"project": "pipelines", "memories": {
        "dbtsel": "Build only the changed models with dbt build --select state:modified+ --state prod-manifest/",
        "backfill": "Backfills run with airflow dags backfill -s <start> -e <end> --reset-dagruns, one month at a time",
        "utc": "Partition dates in the warehouse are UTC days; convert with CONVERT_TIMEZONE before grouping",
        "ge": "New sources need a Great Expectations suite in great_expectations/expectations/ before they go to prod",
        "pool": "Heavy tasks use pool='warehouse' so at most 4 run at once",
    }, "items": [
        ("applied", ["dbtsel"], [("Bash", {"command": "dbt build --select state:modified+ --state prod-manifest/"}),
                                 "3 models and their 7 tests pass."]),
        ("topic", [], [("Bash", {"command": "dbt run --select orders_daily"}), "orders_daily rebuilt in 41 s."]),
        ("applied", ["backfill"], [("Bash", {"command": "airflow dags backfill -s 2026-09-01 -e 2026-09-30 --reset-dagruns orders_daily"}),
                                   "September is backfilled; starting October next."]),
        ("contrary", [], [("Bash", {"command": "airflow dags backfill -s 2026-01-01 -e 2026-10-31 orders_daily"}),
                          "Backfilling the whole year in one go."]),
        ("applied-prose", ["utc"], [("Edit", {"file_path": f"{PIPE}/models/marts/orders_daily.sql",
                                              "old_string": "date_trunc('day', o.created_at)",
                                              "new_string": "date_trunc('day', convert_timezone('UTC', o.created_at))"}),
                                    "Daily totals are grouped by the UTC day now."]),
        ("generic", [], ["The warehouse partitions are fine; the dates in the report are what the user expected.",
                         ("Bash", {"command": "dbt test --select orders_daily"})]),
        ("applied", ["pool"], [("Edit", {"file_path": f"{PIPE}/dags/orders_daily.py",
                                         "old_string": "    task_id=\"load_orders\",",
                                         "new_string": "    task_id=\"load_orders\",\n    pool=\"warehouse\","}),
                               "load_orders now waits for a warehouse slot."]),
        ("topic", [], [("Read", {"file_path": f"{PIPE}/dags/orders_daily.py"}),
                       "load_orders is the heaviest task: 25 minutes on a full day."]),
        ("applied-two", ["ge", "dbtsel"], [("Write", {"file_path": f"{PIPE}/great_expectations/expectations/payments_raw.json",
                                                      "content": "{\n  \"expectation_suite_name\": \"payments_raw\",\n  \"expectations\": []\n}"}),
                                           ("Bash", {"command": "dbt build --select state:modified+ --state prod-manifest/"}),
                                           "The payments source has its suite; the changed models build."]),
        ("long-topic", [], [("TodoWrite", {"todos": [{"content": "Look at the failing DAG", "status": "in_progress", "activeForm": "Looking at the failing DAG"},
                                                     {"content": "Fix the task", "status": "pending", "activeForm": "Fixing the task"}]}),
                            ("Bash", {"command": "airflow tasks logs orders_daily load_orders 2026-11-02"}),
                            "The task failed with a warehouse timeout after 30 minutes.",
                            ("Read", {"file_path": f"{PIPE}/dags/orders_daily.py"}),
                            ("Bash", {"command": "airflow tasks clear orders_daily -t load_orders -s 2026-11-02 -e 2026-11-02 -y"}),
                            "Cleared the task; it reran and finished in 24 minutes. The models and their tests in "
                            "the warehouse pass; dates and partitions look right for the month.",
                            ("Bash", {"command": "dbt test --select orders_daily+"})]),
        ("repeated", ["backfill"], ["Backfills run one month at a time here.",
                                    ("Bash", {"command": "airflow dags backfill -s 2026-08-01 -e 2026-08-31 orders_daily"})]),
    ]},
]


def held_out_set(seed: int = 21) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for spec in HELD_OUT:
        names = list(spec["memories"])
        ids = dict(zip(names, _ids(rng, len(names))))

        def fill(text: str) -> str:
            # "{id:name}" is the memory's id, "{id:name:8}" its first 8 characters (as an agent shortens it)
            for name, memory_id in ids.items():
                text = text.replace(f"{{id:{name}:8}}", memory_id[:8]).replace(f"{{id:{name}}}", memory_id)
            return text

        for kind, used, raw in spec["items"]:
            steps = [fill(s) if isinstance(s, str) else s for s in raw]
            named = [n for n in names if any(f"{{id:{n}" in s for s in raw if isinstance(s, str))]
            shown = rng.sample(names, rng.randint(3, len(names)))
            shown += [n for n in (*used, *named) if n not in shown]  # what it used or names is in its block
            rng.shuffle(shown)
            # the hooks' spacing for half of the items (what a Stop hook sends), the reader's for the rest
            spacing = (", ", ": ") if rng.random() < 0.5 else (",", ":")
            items.append({"memories": [[ids[n], spec["memories"][n]] for n in shown],
                          "output": render(steps, spacing=spacing), "used": [ids[n] for n in used], "kind": kind,
                          "session": spec["project"]})
    return items


def main() -> None:
    for name, items in (("usage.jsonl", tuned_set()), ("usage_heldout.jsonl", held_out_set())):
        with open(HERE / name, "w", encoding="utf-8") as fh:
            for item in items:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
        kinds: dict[str, int] = {}
        for item in items:
            kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
        print(f"{name}: {len(items)} items, {sum(len(i['memories']) for i in items)} memories shown, "
              f"{sum(len(i['used']) for i in items)} used; {kinds}")


if __name__ == "__main__":
    main()
