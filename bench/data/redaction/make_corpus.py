"""Writes the redaction corpus: secrets.jsonl and lookalikes.jsonl next to this file (seeded: the same files on
every run).

    python bench/data/redaction/make_corpus.py

Each line is one case: ``{"id", "text", "spans": [[start, end], ...], "kind", "context"}``. In secrets.jsonl the
spans are the secret(s) that must not survive (at least one); in lookalikes.jsonl there are none and nothing in
the text may be redacted. Every secret is fake but format-valid (the provider's prefix, alphabet and length, as
the providers document them and gitleaks' rules list them), written into several kinds of context: prose,
logs, .env, YAML, JSON, URLs, connection strings, PEM, CLI lines, numbered steps and error messages, with
earlier ``:`` and ``=`` on the line.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).parent
SEED = 29
rng = random.Random(SEED)

LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def r(alphabet: str, n: int) -> str:
    """``n`` random characters of ``alphabet``, with at least one digit and one letter when both are in it (a
    real key of this length has them)."""
    while True:
        s = "".join(rng.choice(alphabet) for _ in range(n))
        if n < 8 or not (set(alphabet) & set(DIGITS)) or not (set(alphabet) & set(LOWER + UPPER)):
            return s
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def b64bytes(n: int, urlsafe: bool = False) -> str:
    raw = bytes(rng.getrandbits(8) for _ in range(n))
    return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode()


def jwt() -> str:
    header = base64.urlsafe_b64encode(json.dumps({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    payload = {"sub": str(rng.randint(10**5, 10**9)), "iat": rng.randint(1.6e9, 1.8e9), "role": rng.choice(
        ["admin", "service", "reader"]), "iss": rng.choice(["auth.acme.io", "https://login.example.org"])}
    body = base64.urlsafe_b64encode(json.dumps(payload).encode())
    return f"{header.decode().rstrip('=')}.{body.decode().rstrip('=')}.{b64bytes(32, True).rstrip('=')}"


def pem(kind: str) -> str:
    body = b64bytes(rng.choice([600, 900, 1190]))
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{lines}\n-----END {kind}PRIVATE KEY-----"


# --- the secrets: kind -> (value generator, names it is given in configuration) ---------------------------------

KINDS: dict[str, tuple[Callable[[], str], list[str]]] = {
    "aws-access-key": (lambda: rng.choice(["AKIA", "ASIA"]) + r(UPPER + DIGITS, 16),
                       ["AWS_ACCESS_KEY_ID", "aws_access_key_id", "accessKeyId"]),
    "aws-secret-key": (lambda: r(ALNUM + "+/", 40), ["AWS_SECRET_ACCESS_KEY", "aws_secret_access_key",
                                                     "secretAccessKey"]),
    "github-pat": (lambda: rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + r(ALNUM, 36),
                   ["GITHUB_TOKEN", "GH_TOKEN", "github_token"]),
    "github-fine-grained": (lambda: "github_pat_" + r(ALNUM, 22) + "_" + r(ALNUM, 59), ["GITHUB_PAT", "gh_pat"]),
    "gitlab-token": (lambda: rng.choice(["glpat-", "glrt-", "gldt-"]) + r(URLSAFE, 20),
                     ["GITLAB_TOKEN", "CI_JOB_TOKEN_OVERRIDE", "gitlab_token"]),
    "openai-key": (lambda: rng.choice(["sk-proj-", "sk-svcacct-", "sk-"]) + r(URLSAFE, rng.choice([48, 64, 120])),
                   ["OPENAI_API_KEY", "openai_api_key", "openai.api_key"]),
    "anthropic-key": (lambda: "sk-ant-api03-" + r(URLSAFE, 93) + "AA", ["ANTHROPIC_API_KEY", "anthropic_key"]),
    "slack-token": (lambda: rng.choice(["xoxb-", "xoxp-", "xoxa-"]) + f"{rng.randint(10**10, 10**12)}-"
                    f"{rng.randint(10**10, 10**12)}-" + r(ALNUM, 24), ["SLACK_BOT_TOKEN", "slack_token"]),
    "slack-webhook": (lambda: f"https://hooks.slack.com/services/T{r(UPPER + DIGITS, 8)}/B{r(UPPER + DIGITS, 10)}/"
                      + r(ALNUM, 24), ["SLACK_WEBHOOK_URL", "slack_webhook"]),
    "stripe-secret-key": (lambda: rng.choice(["sk_live_", "sk_test_"]) + r(ALNUM, rng.choice([24, 99])),
                          ["STRIPE_SECRET_KEY", "stripe_secret", "stripe.api_key"]),
    "stripe-restricted-key": (lambda: "rk_live_" + r(ALNUM, 99), ["STRIPE_RESTRICTED_KEY"]),
    "stripe-webhook-secret": (lambda: "whsec_" + r(ALNUM, 32), ["STRIPE_WEBHOOK_SECRET", "webhook_secret",
                                                                "endpointSecret"]),
    "google-api-key": (lambda: "AIza" + r(URLSAFE, 35), ["GOOGLE_API_KEY", "MAPS_KEY", "firebaseApiKey"]),
    "npm-token": (lambda: "npm_" + r(ALNUM, 36), ["NPM_TOKEN", "//registry.npmjs.org/:_authToken"]),
    "pypi-token": (lambda: "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 70), ["PYPI_TOKEN", "TWINE_PASSWORD"]),
    "sendgrid-key": (lambda: "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43), ["SENDGRID_API_KEY", "sendgrid_key"]),
    "twilio-key": (lambda: "SK" + r(HEX, 32), ["TWILIO_API_KEY", "twilio_key_sid"]),
    "jwt": (jwt, ["ACCESS_TOKEN", "id_token", "jwt"]),
    "private-key": (lambda: pem(rng.choice(["RSA ", "EC ", "OPENSSH ", ""])), ["PRIVATE_KEY", "private_key"]),
    "telegram-bot-token": (lambda: f"{rng.randint(10**8, 10**10 - 1)}:AA" + r(URLSAFE, 33),
                           ["TELEGRAM_BOT_TOKEN", "TG_TOKEN", "bot_token"]),
    "discord-bot-token": (lambda: rng.choice("MN") + r(ALNUM, 25) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 38),
                          ["DISCORD_TOKEN", "DISCORD_BOT_TOKEN"]),
    "discord-webhook": (lambda: f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/"
                        + r(URLSAFE, 68), ["DISCORD_WEBHOOK_URL", "discord_webhook"]),
    "shopify-token": (lambda: rng.choice(["shpat_", "shpss_", "shpca_", "shppa_"]) + r(HEX, 32),
                      ["SHOPIFY_ACCESS_TOKEN", "SHOPIFY_API_SECRET", "shopify_token"]),
    "databricks-token": (lambda: "dapi" + r(HEX, 32) + rng.choice(["", "-2", "-3"]),
                         ["DATABRICKS_TOKEN", "databricks_token"]),
    "mailgun-key": (lambda: "key-" + r(HEX, 32), ["MAILGUN_API_KEY", "mailgun_key"]),
    "digitalocean-token": (lambda: rng.choice(["dop_v1_", "doo_v1_", "dor_v1_"]) + r(HEX, 64),
                           ["DIGITALOCEAN_TOKEN", "DO_TOKEN"]),
    "newrelic-key": (lambda: rng.choice(["NRAK-", "NRII-", "NRJS-"]) + r(UPPER + DIGITS, 27),
                     ["NEW_RELIC_API_KEY", "NEW_RELIC_LICENSE_KEY"]),
    "vault-token": (lambda: rng.choice(["hvs.", "hvb."]) + r(URLSAFE, rng.choice([24, 90])), ["VAULT_TOKEN"]),
    "age-secret-key": (lambda: "AGE-SECRET-KEY-1" + r(BECH32, 58), ["SOPS_AGE_KEY", "age_key"]),
    "azure-storage-key": (lambda: b64bytes(64), ["AZURE_STORAGE_KEY", "AccountKey"]),
    "azure-client-secret": (lambda: r(ALNUM, 3) + str(rng.randint(0, 9)) + "Q~" + r(ALNUM + "_~.-", 34),
                            ["AZURE_CLIENT_SECRET", "client_secret"]),
    "gcp-service-account": (lambda: pem(""), ["private_key"]),
    "heroku-key": (lambda: "HRKU-AA" + r(URLSAFE, 58), ["HEROKU_API_KEY"]),
    "huggingface-token": (lambda: "hf_" + r(LOWER + UPPER, 34), ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"]),
    "linear-key": (lambda: "lin_api_" + r(ALNUM, 40), ["LINEAR_API_KEY"]),
    "notion-token": (lambda: rng.choice(["secret_" + r(ALNUM, 43), "ntn_" + r(DIGITS, 11) + r(ALNUM, 35)]),
                     ["NOTION_TOKEN", "NOTION_API_KEY"]),
    "postman-key": (lambda: "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34), ["POSTMAN_API_KEY"]),
    "grafana-token": (lambda: rng.choice(["glsa_" + r(ALNUM, 32) + "_" + r(HEX, 8),
                                          "glc_" + r(ALNUM + "+/", 60) + "=="]), ["GRAFANA_TOKEN", "GF_API_KEY"]),
    "doppler-token": (lambda: rng.choice(["dp.pt.", "dp.st.prd.", "dp.ct."]) + r(ALNUM, 43), ["DOPPLER_TOKEN"]),
    "pulumi-token": (lambda: "pul-" + r(HEX, 40), ["PULUMI_ACCESS_TOKEN"]),
    "atlassian-token": (lambda: "ATATT3xFfGF0" + r(URLSAFE, 170) + "=" + r(HEX.upper(), 8),
                        ["JIRA_API_TOKEN", "ATLASSIAN_TOKEN", "CONFLUENCE_TOKEN"]),
    "sentry-token": (lambda: "sntrys_eyJ" + r(ALNUM, 120) + "_" + r(ALNUM, 43), ["SENTRY_AUTH_TOKEN"]),
    "supabase-token": (lambda: "sbp_" + r(HEX, 40), ["SUPABASE_ACCESS_TOKEN"]),
    "planetscale-password": (lambda: "pscale_pw_" + r(URLSAFE, 43), ["PLANETSCALE_PASSWORD"]),
    "flyio-token": (lambda: "fo1_" + r(URLSAFE, 43), ["FLY_API_TOKEN"]),
    "dynatrace-token": (lambda: "dt0c01." + r(UPPER + DIGITS, 24) + "." + r(UPPER + DIGITS, 64),
                        ["DT_API_TOKEN"]),
    "square-token": (lambda: rng.choice(["EAAA", "sq0atp-", "sq0csp-"]) + r(URLSAFE, 60), ["SQUARE_ACCESS_TOKEN"]),
    "mailchimp-key": (lambda: r(HEX, 32) + f"-us{rng.randint(1, 21)}", ["MAILCHIMP_API_KEY"]),
    "alibaba-key": (lambda: "LTAI" + r(ALNUM, 20), ["ALIBABA_CLOUD_ACCESS_KEY_ID"]),
    "password": (lambda: rng.choice(["hunter2-Sup3rS3cret!", "Tr0ub4dor&3", "correct-Horse-7-battery", "P@ssw0rd2024",
                                     "s3cr3t_" + r(ALNUM, 6), r(ALNUM + "!#%*", rng.randint(10, 18)),
                                     "Winter2025!" + r(DIGITS, 2), "mango" + r(DIGITS, 4) + "Tango"]),
                 ["DB_PASSWORD", "password", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "smtp_pass", "REDIS_PASSWORD"]),
    "generic-secret": (lambda: rng.choice([r(ALNUM, 50), r(HEX, 64), b64bytes(32), "django-insecure-" + r(
        LOWER + DIGITS + "!@#%^&*(-_=+)", 50)]), ["SECRET_KEY", "JWT_SECRET", "SESSION_SECRET", "APP_SECRET",
                                                    "signing_secret", "client_secret", "ENCRYPTION_KEY"]),
    "hex-token": (lambda: r(HEX, rng.choice([32, 40, 64])), ["API_TOKEN", "api_key", "CLOUDFLARE_API_TOKEN"]),
}

# --- contexts: (context name, writer(name, value) -> text with the value in it) -----------------------------------

SERVICES = ["staging", "prod", "billing", "CI runner", "eu-west cluster", "payments", "search"]
HOSTS = ["db.internal", "10.0.3.17", "pg-prod.acme.io", "mysql.staging.svc", "localhost"]


def _svc() -> str:
    return rng.choice(SERVICES)


CONTEXTS: list[tuple[str, Callable[[str, str], str]]] = [
    ("env", lambda n, v: f"{n.upper().replace('.', '_')}={v}"),
    ("env-export", lambda n, v: f"export {n.upper().replace('.', '_')}=\"{v}\""),
    ("yaml", lambda n, v: f"env:\n  - name: SERVICE\n    value: {_svc()}\n  {n.lower()}: {v}\n  region: eu-west-1"),
    ("yaml-nested", lambda n, v: f"config: {n.lower()}: '{v}'"),
    ("json", lambda n, v: json.dumps({"service": _svc(), n: v, "timeout": 30})),
    ("json-log", lambda n, v: json.dumps({"level": "debug", "ts": "2026-11-02T10:14:03Z", "msg": "loaded config",
                                          "config": {n: v}})),
    ("step", lambda n, v: f"Step {rng.randint(1, 9)}: {n.upper()}={v} then restart the worker"),
    ("error", lambda n, v: f"Error: {rng.choice(['auth failed', 'invalid credentials', 'request rejected'])}: "
                           f"{n.lower()}={v} (status=401)"),
    ("log", lambda n, v: f"2026-11-03 08:12:44,551 INFO [worker-3] key=value mode=sync {n}={v} retries=3"),
    ("sentence", lambda n, v: rng.choice([(f"The {_svc()} {n.lower().replace('_', ' ')} is {v}, rotate it "
                                           "after the demo."), f"I set {n} to {v} for {_svc()} and the deploy passed.",
                                          f"Use {v} as the {n.lower().replace('_', ' ')} when the CLI asks."])),
    ("python", lambda n, v: f"client = Client(url='https://api.acme.io', {n.lower().replace('.', '_')}=\"{v}\")"),
    ("toml", lambda n, v: f"[tool.deploy]\ntarget = \"{_svc()}\"\n{n.lower().replace('.', '_')} = \"{v}\""),
    ("docker", lambda n, v: f"docker run -e MODE=prod -e {n.upper().replace('.', '_')}={v} acme/api:1.4.2"),
    ("markdown", lambda n, v: f"- LEARNED: the {_svc()} key is `{v}` (ask ops before rotating)"),
    ("header", lambda n, v: f"curl -H 'Content-Type: application/json' -H 'X-Api-Key: {v}' https://api.acme.io"),
    ("traceback", lambda n, v: f"Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\n"
                               f"    connect(timeout=5, {n.lower().replace('.', '_')}='{v}')\nValueError: bad key"),
]

# kinds whose value is recognisable alone get every context; the rest only where a name says what it is
NAMED_ONLY = {"aws-secret-key", "azure-storage-key", "generic-secret", "hex-token", "password", "mailchimp-key",
              "twilio-key", "alibaba-key", "azure-client-secret"}


def cases_of(kind: str, count: int) -> list[dict]:
    make, names = KINDS[kind]
    out = []
    contexts = list(CONTEXTS)
    rng.shuffle(contexts)
    for i in range(count):
        ctx, write = contexts[i % len(contexts)]
        if kind in NAMED_ONLY and ctx in ("header", "markdown"):
            ctx, write = CONTEXTS[i % 10]
        value = make()
        if kind in ("private-key", "gcp-service-account") or "\n" in value:
            out.append(pem_case(kind, value, i))
            continue
        text = write(rng.choice(names), value)
        if ctx.startswith("json"):  # json.dumps escapes nothing in these alphabets but '/': find the value as written
            value = json.dumps(value)[1:-1]
        start = text.index(value)
        out.append({"text": text, "spans": [[start, start + len(value)]], "kind": kind, "context": ctx})
    return out


def pem_case(kind: str, key: str, i: int) -> dict:
    if kind == "gcp-service-account":
        doc = {"type": "service_account", "project_id": "acme-prod-" + r(DIGITS, 6),
               "private_key_id": r(HEX, 40), "private_key": key + "\n",
               "client_email": "deployer@acme-prod.iam.gserviceaccount.com", "client_id": r(DIGITS, 21)}
        text = json.dumps(doc, indent=2 if i % 2 else None)
        value = json.dumps(key)[1:-1]
        start = text.index(value)
        return {"text": text, "spans": [[start, start + len(value)]], "kind": kind, "context": "json"}
    lead = rng.choice(["Here is the deploy key I used:\n", "$ cat ~/.ssh/id_deploy\n", "key.pem:\n```\n",
                       "tls:\n  key: |\n"])
    body = key if not lead.startswith("tls") else "\n".join("    " + line for line in key.splitlines())
    text = lead + body + ("\n```" if "```" in lead else "") + "\nthen chmod 600 it."
    start = text.index(body)
    return {"text": text, "spans": [[start, start + len(body)]], "kind": kind, "context": "pem"}


def special_cases() -> list[dict]:
    """Secrets known by how they are written, not their format: prose and CLI passwords, passwords in URLs and
    connection strings, tokens in headers, hex tokens named in prose, several on one line."""
    out: list[dict] = []

    def add(text: str, secrets: list[str], kind: str, context: str) -> None:
        spans = []
        for s in secrets:
            start = text.index(s)
            spans.append([start, start + len(s)])
        out.append({"text": text, "spans": spans, "kind": kind, "context": context})

    pw = KINDS["password"][0]
    for _ in range(6):
        p = pw()
        add(rng.choice([f"the db password is {p}", f"FYI the {_svc()} admin password is {p} until Friday.",
                        f"Password for the {_svc()} VPN is now {p}.", f"root password was changed to {p} yesterday",
                        f"the wifi passphrase is {p}", f"her password: {p}"]), [p], "password-prose", "sentence")
    for _ in range(2):
        p = pw()
        add(f"$ mysql -h {rng.choice(HOSTS)} -u root -p{p} app_db", [p], "password-cli", "cli")
        p = pw()
        add(f"sshpass -p '{p}' ssh deploy@{rng.choice(HOSTS)} 'systemctl restart api'", [p], "password-cli", "cli")
        p = pw()
        add(f"curl -u admin:{p} https://jenkins.acme.io/api/json", [p], "password-cli", "cli")
        p = pw()
        add(f"psql --host {rng.choice(HOSTS)} --username app --password {p} -c 'select 1'", [p], "password-cli",
            "cli")
        p = pw()
        add(f"docker login registry.acme.io -u ci -p {p}", [p], "password-cli", "cli")
        p = pw()
        add(f"redis-cli -h {rng.choice(HOSTS)} -a {p} ping", [p], "password-cli", "cli")
        p = pw()
        add(f"Step 3: run `mysqldump -uroot -p'{p}' shop > dump.sql`", [p], "password-cli", "step")
    for _ in range(3):
        p = r(ALNUM, rng.randint(10, 20))
        h = rng.choice(HOSTS)
        add(rng.choice([f"DATABASE_URL=postgres://app:{p}@{h}:5432/app", f"redis://:{p}@{h}:6379/0",
                        f"mongodb+srv://admin:{p}@cluster0.abcde.mongodb.net/test?retryWrites=true",
                        f"amqp://guest:{p}@{h}:5672/", (f"Error: could not connect to mysql://root:{p}@{h}/shop: "
                                                          "timeout")]), [p], "url-password", "url")
        p = r(ALNUM, 14)
        add(rng.choice([f"jdbc:mysql://{h}:3306/shop?user=app&password={p}&useSSL=true",
                        f"jdbc:sqlserver://{h}:1433;databaseName=shop;user=sa;password={p};encrypt=true",
                        f"Server={h};Database=shop;User Id=sa;Password={p};TrustServerCertificate=True",
                        f"host={h} port=5432 dbname=app user=app password={p} sslmode=require"]),
            [p], "connection-string", "connection-string")
        k = b64bytes(64)
        add(f"DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={k};EndpointSuffix=core.windows.net",
            [k], "azure-storage-key", "connection-string")
    for _ in range(4):
        t = rng.choice([r(ALNUM + "._-", 40), jwt()])
        add(rng.choice([f"Authorization: Bearer {t}", f"curl -H \"Authorization: Bearer {t}\" https://api.acme.io/v1",
                        f"request headers: {{'authorization': 'Bearer {t}'}}"]), [t], "bearer-token", "header")
    for _ in range(2):
        t = base64.b64encode(f"admin:{pw()}".encode()).decode()
        add(f"Authorization: Basic {t}", [t], "basic-auth", "header")
    for _ in range(6):
        h = r(HEX, rng.choice([32, 40, 64]))
        add(rng.choice([f"the API token is {h}", f"Our Cloudflare token: {h} (scoped to DNS edit)",
                        f"use the access token {h} for the staging API",
                        f"New secret key is {h}; the old one is revoked.",
                        f"Step 4: paste the token {h} into Settings > Integrations"]), [h], "hex-token-prose",
            "sentence")
    for _ in range(3):  # several secrets on one line
        a, b = "AKIA" + r(UPPER + DIGITS, 16), r(ALNUM + "+/", 40)
        add(f"aws configure set aws_access_key_id {a} && aws configure set aws_secret_access_key {b}", [a, b],
            "aws-pair", "cli")
    return out


# --- look-alikes: must stay as they are ------------------------------------------------------------------------

def uuid() -> str:
    h = r(HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def lookalikes() -> list[dict]:
    out: list[dict] = []

    def add(kind: str, context: str, *texts: str) -> None:
        for text in texts:
            out.append({"text": text, "spans": [], "kind": kind, "context": context})

    for _ in range(6):
        sha = r(HEX, 40)
        add("git-sha", "log", f"commit {sha}\nAuthor: Dev <dev@acme.io>", f"Reverted in {sha[:7]}, see {sha}.",
            f"https://github.com/acme/api/commit/{sha}")
    for _ in range(5):
        add("uuid", "log", f"request_id={uuid()} status=200", f"memory {uuid()} superseded by {uuid()}",
            f'{{"id": "{uuid()}", "session_id": "{uuid()}"}}')
    for _ in range(5):
        add("sha256-digest", "log", f"image: acme/api@sha256:{r(HEX, 64)}", f"sha256sum: {r(HEX, 64)}  dist.tar.gz",
            f"--hash=sha256:{r(HEX, 64)}")
    for _ in range(5):
        add("lockfile-integrity", "json", f'"integrity": "sha512-{b64bytes(64)}"',
            f'<script src="/app.js" integrity="sha384-{b64bytes(48)}" crossorigin="anonymous"></script>',
            f"github.com/pkg/errors v0.9.1 h1:{b64bytes(32)}")
    for _ in range(4):
        add("etag", "header", f'ETag: "{r(HEX, 32)}"', f'ETag: W/"{r(HEX, 8)}-{r(HEX, 27)}"',
            f"x-amz-request-id: {r(UPPER + DIGITS, 16)}")
    placeholders = ["<token>", "${GITHUB_TOKEN}", "$API_KEY", "xxxxxxxxxxxxxxxx", "changeme", "YOUR_API_KEY_HERE",
                    "<your-password>", "{{ secrets.NPM_TOKEN }}", "********", "REDACTED", "sk_live_...", "ghp_xxx",
                    "%(password)s", "os.environ['SECRET_KEY']", "process.env.STRIPE_SECRET_KEY", "None",
                    "[REDACTED:openai-key]", "<redacted>", "example", "...", "env(DB_PASSWORD)"]
    for p in placeholders:
        add("placeholder", "env", f"API_KEY={p}", f"password: {p}", f'"client_secret": "{p}"')
    env_names = ["LD_LIBRARY_PATH=/usr/lib:/usr/local/lib", "PATH=/usr/local/bin:/usr/bin", "NODE_ENV=production",
                 "PASSWORD_MIN_LENGTH=12", "token_count: 128000", "TOKEN_TTL=3600", "secret_name: prod/db/credentials",
                 "max_tokens=4096", "AWS_REGION=eu-west-1", "SECRET_KEY_FILE=/run/secrets/django_key",
                 "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/sa.json", "api_key_header: X-Api-Key", "KEY_ID=primary",
                 "password_policy: strong", "PYTHONPATH=/work/app/src", "token_type: bearer",
                 "VAULT_ADDR=https://vault.acme.io:8200", "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1234",
                 "auth_method=oidc", "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64", "session_timeout=1800",
                 "KUBECONFIG=~/.kube/config", "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2']",
                 "secretRef: {name: db-creds, key: password}", "api_key_env: OPENAI_API_KEY",
                 "DATABASE_URL=postgres://app@db.internal:5432/app", "credentials: include",
                 "token_endpoint: https://oauth2.googleapis.com/token", "private_key_path = keys/deploy.pem",
                 "DJANGO_SETTINGS_MODULE=acme.settings.prod"]
    for e in env_names:
        add("env-name", "env", e, f"Step 2: {e}")
    for _ in range(5):
        add("ssh-public-key", "config", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{b64bytes(32)[:43]} dev@laptop",
            f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ{b64bytes(250)} ci@runner")
    for _ in range(3):
        body = b64bytes(600)
        block = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
        add("public-key-block", "pem", f"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n{block}\n-----END PGP PUBLIC KEY "
            "BLOCK-----", f"-----BEGIN PUBLIC KEY-----\n{block}\n-----END PUBLIC KEY-----",
            f"-----BEGIN CERTIFICATE-----\n{block}\n-----END CERTIFICATE-----")
    for _ in range(5):
        add("stripe-publishable-key", "env", f"STRIPE_PUBLISHABLE_KEY=pk_live_{r(ALNUM, 99)}",
            f"const stripe = Stripe('pk_test_{r(ALNUM, 24)}');")
    for _ in range(5):
        add("stripe-object-id", "log", f"charge ch_{r(ALNUM, 24)} for customer cus_{r(ALNUM, 14)} succeeded",
            f"payment_intent=pi_{r(ALNUM, 24)} status=succeeded")
    for _ in range(5):
        add("google-oauth-client-id", "json",
            f'"client_id": "{r(DIGITS, 12)}-{r(LOWER + DIGITS, 32)}.apps.googleusercontent.com"')
    for _ in range(4):
        add("base64-image", "html", f'<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{b64bytes(150)}">',
            f"background: url(data:image/gif;base64,R0lGODlhAQABAIAAAP{b64bytes(40)});")
    for _ in range(4):
        add("memory-id", "log", f"stored urn:cortex:memory:{uuid()} in scope team",
            f"superseded mem-{r(HEX, 16)} with mem-{r(HEX, 16)}")
    add("version", "log", "Python 3.12.4 (main, Jun  6 2024, 18:26:44) [GCC 12.2.0]", "version: 1.19.5",
        "pyoxigraph==0.4.9", "node v20.11.1, npm 10.2.4", "Successfully installed httpx-0.27.2 anyio-4.6.2.post1",
        "image: postgres:16.4-alpine3.20", "build 2026.11.03+rc.2-gabc1234")
    for _ in range(3):
        add("jwt-header", "log", "header: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            "the token starts with eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9 as every JWT does",
            "kid header eyJhbGciOiJFUzI1NiIsImtpZCI6InByaW1hcnkifQ")
    for phrase in ["Hello, world! This is", "config loaded from disk", "user=alice role=admin", "retry after 30 s.",
                   "the quick brown fox jumps", "{\"ok\": true, \"n\": 12}", "cortex memory service v2"]:
        add("short-base64", "log", f"payload={base64.b64encode(phrase.encode()).decode()}",
            f"decoded from {base64.b64encode(phrase.encode()).decode()}")
    for ident in ["getUserByEmailAddress2", "AbstractSingletonProxyFactoryBean", "test_redacts_openai_key_in_json",
                  "HttpClientConnectionManager4", "useMemoryStoreWithRedactionOn", "KafkaConsumerGroupRebalance7"]:
        add("identifier", "code", f"call {ident}() after init", f"see {ident} in src/")
    prose = ["Reset your password in Settings > Security.", "The password is required for the admin role.",
             "Password is too short (minimum 12 characters).", "the password is stored in 1Password under 'db'.",
             "the token is expired, run `gh auth login` again.", "The API key is read from the environment.",
             "The secret key is rotated every 90 days by Vault.", "token is valid for 3600 seconds",
             "Use a personal access token with repo scope.", "the password was wrong three times, account locked",
             "set the password to something long and random", "the secret is mounted at /var/run/secrets/app",
             "passwords are hashed with argon2id (m=65536, t=3, p=4)", "my password manager is Bitwarden",
             "the token is in the CI secrets as NPM_TOKEN", "the access key is the one ending in 7Q (rotate it)",
             "API key is missing: set OPENAI_API_KEY", "Password: (hidden)", "Token: <none>",
             "the password is the same as staging", "password is incorrect", "Their secret is consistency."]
    for p in prose:
        add("secret-prose", "sentence", p)
    cli = ["mysql -h db.internal -u root -p shop", "ssh -p 2222 deploy@10.0.3.17", "docker login --password-stdin",
           "sshpass -f ~/.pw ssh deploy@host", "curl -u admin https://jenkins.acme.io/api/json",
           "psql --password --host db.internal", "pg_dump -p 5432 -U app app > app.sql", "grep -p pattern file",
           "redis-cli -a $REDIS_PASSWORD ping", "mysql -uroot -p\"$MYSQL_ROOT_PASSWORD\"",
           "docker login -u ci -p \"$CI_REGISTRY_PASSWORD\" $CI_REGISTRY", ("kubectl create secret generic db-creds "
            "--from-literal=password=$DB_PASSWORD"), "git clone git@github.com:acme/api.git",
           "scp -P 2200 file deploy@host:/tmp", "openssl rand -hex 32 > secret.key", "gh auth login --with-token < t"]
    for c in cli:
        add("cli", "cli", c)
    urls = ["https://app.acme.io/login?next=/dashboard", "postgres://app@db.internal:5432/app",
            "https://user@example.com/repo.git", "redis://localhost:6379/0", "mongodb://db1:27017,db2:27017/?replicaSet=rs0",
            "https://api.acme.io/v1/users?page=2&per_page=50", "http://[2001:db8::1]:8080/health",
            "ftp://anonymous@ftp.acme.io/pub", "postgres://app:${DB_PASSWORD}@db:5432/app",
            "https://console.cloud.google.com/apis/credentials?project=acme-prod"]
    for u in urls:
        add("url", "url", u, f"Error: GET {u} failed: 503")
    for _ in range(4):
        add("discord-snowflake", "log", f"channel_id={r(DIGITS, 18)} guild_id={r(DIGITS, 18)}",
            f"telegram chat_id: -100{r(DIGITS, 10)}")
    for _ in range(3):
        add("aws-arn", "log", f"arn:aws:iam::{r(DIGITS, 12)}:role/deploy-{r(LOWER, 6)}",
            f"s3://acme-artifacts-{r(DIGITS, 12)}/builds/{r(HEX, 12)}.tar.gz")
    for _ in range(3):
        add("k8s-name", "log", f"pod/api-{r(LOWER + DIGITS, 10)}-{r(LOWER + DIGITS, 5)} Running",
            f"container id {r(HEX, 64)}")
    add("email", "log", "contact security@acme.io or dev.ops+alerts@acme-payments.co.uk")
    add("md5", "log", f"md5: {r(HEX, 32)}", f"checksum={r(HEX, 32)}", f"cache_key={r(HEX, 40)}")
    return out


def main() -> None:
    secrets: list[dict] = []
    for kind in KINDS:
        secrets += cases_of(kind, 3 if kind == "private-key" else 6)
    secrets += special_cases()
    looks = lookalikes()
    for prefix, cases in (("s", secrets), ("l", looks)):
        for i, case in enumerate(cases):
            case["id"] = f"{prefix}{i:04d}"
            for start, end in case["spans"]:
                assert end > start and case["text"][start:end], case
    for name, cases in (("secrets.jsonl", secrets), ("lookalikes.jsonl", looks)):
        with (HERE / name).open("w", encoding="utf-8") as fh:
            for case in cases:
                fh.write(json.dumps({k: case[k] for k in ("id", "text", "spans", "kind", "context")}) + "\n")
    kinds = {c["kind"] for c in secrets}
    print(f"{len(secrets)} secrets of {len(kinds)} kinds, {len(looks)} look-alikes "
          f"of {len({c['kind'] for c in looks})} kinds")


if __name__ == "__main__":
    main()
