"""Write bench/data/redaction.jsonl: the labelled set for secret redaction (bench/capture.py).

Each line: ``{"text": ..., "secrets": [the exact secret substrings], "kind": ...}``. Positives put a secret
of every kind Cortex redacts into the sentences an agent writes (a learning, a tool output, a config line);
negatives are near-misses that must stay: commit hashes, digests, UUIDs, memory ids, identifiers, paths,
URLs without passwords, version strings, placeholders in docs, and the names of secrets without their
values. Keys are random strings in each provider's documented format (seeded: the file is stable), never real.

    python bench/data/make_redaction_set.py
"""

from __future__ import annotations

import json
import random
import string
import uuid
from pathlib import Path

rng = random.Random(20261124)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def keys() -> list[tuple[str, str]]:
    """(kind, secret) pairs in the providers' formats."""
    out = []
    for _ in range(3):
        out += [
            ("aws-access-key", "AKIA" + rand(UPPER_DIGITS, 16)),
            ("aws-secret-key", rand(B64, 40)),
            ("github-token", "ghp_" + rand(ALNUM, 36)),
            ("github-token", "github_pat_" + rand(ALNUM, 22) + "_" + rand(ALNUM, 59)),
            ("gitlab-token", "glpat-" + rand(URLSAFE, 20)),
            ("openai-key", "sk-proj-" + rand(URLSAFE, 48)),
            ("openai-key", "sk-" + rand(ALNUM, 48)),
            ("anthropic-key", "sk-ant-api03-" + rand(URLSAFE, 93) + "AA"),
            ("slack-token", "xoxb-" + rand(string.digits, 12) + "-" + rand(string.digits, 13) + "-" + rand(ALNUM, 24)),
            ("stripe-key", "sk_live_" + rand(ALNUM, 24)),
            ("google-api-key", "AIza" + rand(URLSAFE, 35)),
            ("npm-token", "npm_" + rand(ALNUM, 36)),
            ("sendgrid-key", "SG." + rand(URLSAFE, 22) + "." + rand(URLSAFE, 43)),
            ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + rand(URLSAFE, 40) + "." + rand(URLSAFE, 43)),
            ("generic", rand(ALNUM, 32)),
        ]
    return out


POSITIVE_TEMPLATES = {
    "aws-secret-key": ["aws_secret_access_key = {s}", "export AWS_SECRET_ACCESS_KEY={s}",
                       "LEARNED: the CI user's secret key is {s}, rotate it monthly"],
    "generic": ["The staging API key is {s}", "LEARNED: use X-Api-Key: {s} for the sandbox",
                "api_key: {s}"],
}
DEFAULT_TEMPLATES = [
    "LEARNED: the deploy script reads the token {s} from the vault",
    "export SERVICE_TOKEN={s}",
    "Tool output: config loaded (key={s}, region=eu-west-1)",
    "INSIGHT: requests fail with 401 unless the header carries {s}",
    '{{"credentials": {{"key": "{s}"}}}}',
    "curl -H 'Authorization: Bearer {s}' https://api.example.com/v1/users",
]

CONTEXT_POSITIVES = [
    ("url-password", "DATABASE_URL=postgres://app:{p}@db.internal:5432/app", lambda: rand(ALNUM, 14)),
    ("url-password", "LEARNED: the mirror is at https://deploy:{p}@git.example.com/repo.git", lambda: rand(ALNUM, 12)),
    ("url-password", "redis://default:{p}@cache:6379/0 is the cache", lambda: rand(ALNUM + "!#%", 16)),
    ("assigned-secret", 'password = "{p}"', lambda: "correct horse battery staple"),
    ("assigned-secret", "DB_PASSWORD={p}", lambda: rand(ALNUM, 10) + "!9"),
    ("assigned-secret", "client_secret: {p}", lambda: rand(HEX, 32)),
    ("assigned-secret", "LEARNED: the admin password: {p} (change it after the demo)", lambda: "Tr0ub4dor&3xx"),
    ("assigned-secret", "SMTP_PASS={p}", lambda: rand(ALNUM, 16)),
    ("basic-auth", "Authorization: Basic {p}", lambda: "dXNlcjpzM2NyM3QtcGFzc3dvcmQ="),
    ("bearer-token", "send Authorization: Bearer {p} with every call", lambda: rand(URLSAFE, 40)),
    ("private-key", "key file:\n{p}\nend", lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(
        rand(B64, 64) for _ in range(5)) + "\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "{p}", lambda: "-----BEGIN OPENSSH PRIVATE KEY-----\n" + rand(B64, 70) + "\n" + rand(B64, 70)
     + "\n-----END OPENSSH PRIVATE KEY-----"),
]

NEGATIVES = [
    "commit {sha} fixed the flaky upload test",
    "LEARNED: revert {sha7} if the migration fails again",
    "the image digest is sha256:{sha256}",
    "run id {uuid} failed at step 3",
    "memory {memid} was superseded by the new convention",
    "CONVENTION: name handlers like handleUserSessionRefreshRequest and keep them small",
    "the module lives in src/services/authentication/TokenRefreshService.ts",
    "see https://docs.example.com/guides/getting-started?tab=python#install for the setup",
    "upgrade to pydantic==2.11.7 and fastapi 0.115.12 together",
    "set password=<your-password> in .env (never commit it)",
    "the token comes from ${{GITHUB_TOKEN}} in the workflow",
    "api_key: YOUR_API_KEY_HERE is what the template says",
    "the token_count: 128000 limit applies to the whole session",
    "PASSWORD_MIN_LENGTH=12 is enforced by the signup form",
    "max_tokens: 4096 keeps the summaries short",
    "secret_name: prod/db/credentials is read by the operator",
    "LEARNED: rotate the AWS keys every 90 days; the policy lives in iam/rotation.tf",
    "INSIGHT: the Authorization header must use the Bearer scheme, not Basic",
    "the checksum is {sha256}",
    "package-lock integrity sha512-{b64ish}",
    "DECISION: use ULIDs like 01ARZ3NDEKTSV4RRFFQ69G5FAV for event ids",
    "the build number is 20261124.4 and the tag v3.14.159",
    "PATTERN: retry with exponential backoff (base 250 ms, cap 30 s)",
    "CSS color #3a7bd5 and #00d2ff for the gradient",
    "the function test_store_rejects_oversized_content_with_a_clear_error covers it",
    "base64 of hello world is aGVsbG8gd29ybGQ=",
    "the Kubernetes secret is mounted at /var/run/secrets/kubernetes.io/serviceaccount/token",
    "git remote add origin https://github.com/example/cortex.git",
    "the session id in the log was {memid}",
    "docker pull ghcr.io/example/cortex:{sha7}",
]


HELD_OUT_TEMPLATES = [
    '{{"level": "debug", "msg": "calling upstream", "headers": {{"x-api-key": "{s}"}}}}',
    "  api_token: {s}\n  region: us-east-1",
    "$ export GH_TOKEN={s} && gh pr list",
    "Traceback: AuthError('invalid credentials for key {s}')",
    "| service | key |\n|---|---|\n| billing | {s} |",
    "INSIGHT: staging still accepts the old key {s}; remove it after the migration",
]

HELD_OUT_NEGATIVES = [
    "docker image id {sha256}",
    "S3 ETag \"{md5}\" matched the upload",
    "pod api-7d9f8b6c5-x2x9q restarted 3 times",
    "reach me at jane.doe+cortex@example.com about {sha7}",
    "the service listens on [2001:db8::ff00:42:8329]:8443",
    "DECISION: pin node to 20.11.1 and npm to 10.2.4",
    "LEARNED: the Postgres role app_readonly has SELECT only",
    "see https://github.com/example/cortex/commit/{sha} for the fix",
    "the hash of the release tarball is {sha256}",
    "feature flag enable_token_refresh_v2 is on in staging",
    "CONVENTION: secrets live in Vault under kv/apps/<service>/<env>",
    "run `cortex token create --agent reviewer` to get a token",
]


def held_out() -> list[dict]:
    """A second set, written after the rules were tuned and never used to change them: other templates,
    other near-misses, another seed (bench/data/redaction_heldout.jsonl)."""
    global rng
    rng = random.Random(424242)
    items = []
    for kind, secret in keys():
        items.append({"text": rng.choice(HELD_OUT_TEMPLATES).format(s=secret), "secrets": [secret], "kind": kind})
    for template in HELD_OUT_NEGATIVES:
        for _ in range(3):
            text = template.format(sha=rand(HEX, 40), sha7=rand(HEX, 7), sha256=rand(HEX, 64), md5=rand(HEX, 32))
            items.append({"text": text, "secrets": [], "kind": "near-miss"})
    rng.shuffle(items)
    return items


def main() -> None:
    heldout = held_out()
    target = Path(__file__).with_name("redaction_heldout.jsonl")
    target.write_text("".join(json.dumps(item) + "\n" for item in heldout))
    print(f"{len(heldout)} held-out items written to {target}")
    global rng
    rng = random.Random(20261124)
    items = []
    for kind, secret in keys():
        templates = POSITIVE_TEMPLATES.get(kind, DEFAULT_TEMPLATES)
        template = rng.choice(templates)
        items.append({"text": template.format(s=secret), "secrets": [secret], "kind": kind})
    for kind, template, make in CONTEXT_POSITIVES:
        for _ in range(2):
            secret = make()
            items.append({"text": template.format(p=secret), "secrets": [secret], "kind": kind})
    for template in NEGATIVES:
        for _ in range(2):
            text = template.format(sha=rand(HEX, 40), sha7=rand(HEX, 7), sha256=rand(HEX, 64), uuid=uuid.UUID(
                int=rng.getrandbits(128)), memid=rand(HEX, 28), b64ish=rand(B64, 86) + "==")
            items.append({"text": text, "secrets": [], "kind": "near-miss"})
    rng.shuffle(items)
    target = Path(__file__).with_name("redaction.jsonl")
    target.write_text("".join(json.dumps(item) + "\n" for item in items))
    print(f"{len(items)} items ({sum(1 for i in items if i['secrets'])} with a secret) written to {target}")


if __name__ == "__main__":
    main()
