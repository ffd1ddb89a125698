"""Builds tests/data/secrets_corpus.jsonl: synthetic secrets and look-alikes for the secrets matrix.

Every secret here is random but correctly shaped (right prefix, alphabet, length, checksum-free):
none is, or was, a real credential. Regenerate with `python -m tests.support.secret_corpus` (seeded,
so the file only changes when this list does). Each line: {"expect", "field", "what", "text"} where
expect is "secret" (a write must be refused) or "clean" (a write must pass).
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "secrets_corpus.jsonl"
R = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def rnd(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def jwt() -> str:
    head = b64url({"alg": "HS256", "typ": "JWT"})
    body = b64url({"sub": rnd(string.digits, 10), "name": rnd(string.ascii_letters, 8), "iat": 1764547200})
    return f"{head}.{body}.{rnd(ALNUM + '-_', 43)}"


def secrets() -> list[tuple[str, str, str]]:
    """(field, what, text)."""
    return [
        ("body", "GitHub classic PAT", f"CI uses ghp_{rnd(ALNUM, 36)} for the mirror"),
        ("refs", "GitHub OAuth token", f"gho_{rnd(ALNUM, 36)}"),
        ("body", "GitHub app token", f"GH_TOKEN=ghs_{rnd(ALNUM, 36)}"),
        ("title", "GitHub fine-grained PAT", f"rotate github_pat_11{rnd(ALNUM, 20)}_{rnd(ALNUM, 59)}"),
        ("body", "GitLab PAT", f"export GITLAB_TOKEN=glpat-{rnd(ALNUM + '_-', 20)}"),
        ("tags", "GitLab PAT as a tag", f"glpat-{rnd(ALNUM, 20)}"),
        ("body", "GitLab runner token", f"runner registered with glrt-{rnd(ALNUM, 20)}"),
        ("body", "GitLab pipeline trigger", f"trigger: glptt-{rnd(HEX, 40)}"),
        ("body", "Stripe live key", f"stripe key sk_live_{rnd(ALNUM, 24)}"),
        ("reason", "Stripe restricted key in a retraction reason", f"wrong key, the right one is rk_live_{rnd(ALNUM, 24)}"),
        ("body", "Stripe test key", f"STRIPE_SECRET=sk_test_{rnd(ALNUM, 24)}"),
        ("body", "JWT", f"Authorization: Bearer {jwt()}"),
        ("resolution", "JWT in a resolution", f"replayed the session with {jwt()} to confirm"),
        ("body", "postgres URL with password", f"postgres://app:{rnd(ALNUM, 14)}@db-3.internal:5432/orders"),
        ("refs", "mysql URL with password", f"mysql://root:{rnd(ALNUM, 10)}@10.0.3.7/shop"),
        ("body", "redis URL with password", f"REDIS_URL=redis://default:{rnd(ALNUM, 20)}@cache:6379/0"),
        ("body", "postgres URL with a short password", "postgres://user:pass@host/db"),
        ("body", "bare AWS secret access key", f"AWS_SECRET_ACCESS_KEY={rnd(B64, 40)}"),
        ("body", "AWS secret in YAML", f"aws_secret_access_key: \"{rnd(B64, 40)}\""),
        ("body", "AWS access key id", f"AKIA{rnd('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}"),
        ("detection", "AWS STS key id", f"aws sts get-caller-identity with ASIA{rnd('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}"),
        ("body", "*_API_KEY=<hex>", f"SENDGRID_API_KEY={rnd(HEX, 32)}"),
        ("body", "DATADOG_API_KEY=<hex>", f"DATADOG_API_KEY={rnd(HEX, 32)}"),
        ("body", "client secret in env", f"OAUTH_CLIENT_SECRET={rnd(ALNUM, 32)}"),
        ("body", "api_key in JSON", f"{{\"api_key\": \"{rnd(ALNUM, 32)}\"}}"),
        ("body", "Slack bot token", f"xoxb-{rnd(string.digits, 12)}-{rnd(string.digits, 13)}-{rnd(ALNUM, 24)}"),
        ("assignee", "Slack user token as assignee", f"xoxp-{rnd(string.digits, 12)}-{rnd(string.digits, 12)}-{rnd(string.digits, 13)}-{rnd(HEX, 32)}"),
        ("body", "Slack webhook", f"https://hooks.slack.com/services/T{rnd(ALNUM, 8)}/B{rnd(ALNUM, 10)}/{rnd(ALNUM, 24)}"),
        ("body", "OpenAI project key", f"OPENAI_API_KEY=sk-proj-{rnd(ALNUM, 58)}T3BlbkFJ{rnd(ALNUM, 58)}"),
        ("body", "OpenAI-style key (older kyb rule)", f"key sk-{rnd(ALNUM, 48)}"),
        ("body", "Anthropic key", f"sk-ant-api03-{rnd(ALNUM + '_-', 93)}AA"),
        ("body", "private key block", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + rnd(B64, 70) + "\n-----END OPENSSH PRIVATE KEY-----"),
        ("body", "RSA private key header", "-----BEGIN RSA PRIVATE KEY-----"),
        ("body", "EC private key header", "-----BEGIN EC PRIVATE KEY-----"),
        ("body", "password: in a note", f"password: {rnd(ALNUM, 6)}{rnd(string.digits, 3)}"),
        ("blocked_reason", "password= in a blocked reason", f"waiting: password={rnd(ALNUM, 10)}!"),
        ("body", "passwd = ...", f"passwd = {rnd(LOWNUM, 12)}"),
        ("body", "Пароль:", f"Пароль: {rnd(ALNUM, 10)}"),
        ("waits_on", "DB_PASSWORD in waits_on", f"DB_PASSWORD={rnd(ALNUM, 16)}"),
        ("service", "password in a service field", f"orders password: {rnd(ALNUM, 9)}7"),
        ("body", "a stand-in-looking password with digits is still one", f"password: secret-password-{rnd(LOWNUM, 6)}9"),
        ("hosts", "URL with credentials in hosts", f"https://deploy:{rnd(ALNUM, 16)}@ci.internal"),
        ("body", "GCP API key", f"AIza{rnd(ALNUM + '-_', 35)}"),
        ("body", "npm token", f"//registry.npmjs.org/:_authToken=npm_{rnd(ALNUM, 36)}"),
        ("body", "PyPI token", f"pypi-AgEIcHlwaS5vcmc{rnd(ALNUM + '-_', 60)}"),
        ("body", "Hugging Face token", f"HF_TOKEN=hf_{rnd(string.ascii_letters, 34)}"),
        ("body", "DigitalOcean PAT", f"dop_v1_{rnd(HEX, 64)}"),
        ("body", "SendGrid key", f"SG.{rnd(ALNUM, 22)}.{rnd(ALNUM + '-_', 43)}"),
        ("body", "Vault token", f"VAULT_TOKEN=hvs.{rnd(ALNUM + '_-', 95)}"),
        ("title", "Shopify token in a title", f"shop token shpat_{rnd(HEX, 32)}"),
        ("body", "age secret key", "AGE-SECRET-KEY-1" + rnd("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
        # known misses: no prefix and no context a rule could use (published as missed)
        ("body", "MISSED: password in prose, no separator", f"the admin password is {rnd(ALNUM, 10)}9 until Friday"),
        ("body", "MISSED: bare 40-char AWS secret with no name", f"{rnd(B64, 40)}"),
        ("body", "MISSED: bare Datadog key with no name", f"dd key {rnd(HEX, 32)}"),
    ]


def lookalikes() -> list[tuple[str, str, str]]:
    sha = rnd(HEX, 40)
    return [
        ("body", "AWS documented example key id", "AKIAIOSFODNN7EXAMPLE"),
        ("body", "AWS documented example secret", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("body", "Slack documented placeholder", "xoxb-EXAMPLE-TOKEN-DO-NOT-USE"),
        ("body", "redacted password", "password: ******** (redacted)"),
        ("body", "scikit-learn slug", "sk-learn-preprocessing-pipeline-notes"),
        ("tags", "scikit-learn tag", "sk-learn"),
        ("body", "git sha", f"fixed in {sha}"),
        ("refs", "commit URL", f"https://github.com/acme/orders/commit/{sha}"),
        ("body", "ghp_ prefix mentioned", "mentions the ghp_ prefix, no token"),
        ("body", "short sk-", "sk-short"),
        ("body", "AKIA alone", "AKIA alone is not a key"),
        ("body", "certificate header", "-----BEGIN CERTIFICATE-----"),
        ("body", "public key header", "-----BEGIN PUBLIC KEY-----"),
        ("body", "ssh public key", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC user@host is a public key"),
        ("body", "pointer to 1Password", "пароль лежит в 1Password"),
        ("body", "password policy", "password policy: minimum 12 chars"),
        ("body", "password rotated", "password: rotated monthly by the vault job"),
        ("body", "password from env", "password: $DB_PASSWORD"),
        ("body", "password template", "password: {{ vault_db_password }}"),
        ("body", "password placeholder", "password: <your-password>"),
        # documentation's stand-ins and code (found in public runbooks of the dev set)
        ("body", "stand-in value in a runbook's YAML", "basic_auth:\n  username: user\n  password: wrong-password"),
        ("body", "stand-in value of a config key", "webhook.azuredevops.password: secret-password"),
        ("body", "code that hashes a password", 'hashed_password = bcrypt.hashpw(password.encode("utf-8"), bcrypt.gensalt())'),
        ("body", "URL with env password", "postgres://orders:${ORDERS_DB_PASSWORD}@db-3:5432/orders"),
        ("body", "URL with masked password", "redis://default:****@cache:6379/0"),
        ("refs", "URL without credentials", "https://grafana.internal:3000/d/abc123/orders"),
        ("body", "ssh remote", "git@github.com:acme/orders.git"),
        ("body", "slack truncated", "xoxb- truncated is harmless"),
        ("body", "wiki link", "[[task-web-app-symbol-references-coordinate-base]]"),
        ("body", "API key name only", "rotate SENDGRID_API_KEY every 90 days"),
        ("body", "API key from env lookup", "api_key = os.environ[\"API_KEY\"]"),
        ("body", "token file path", "TOKEN_FILE=/run/secrets/token"),
        ("body", "key id (not secret)", "the signing key id is orders-signing-key-2026"),
        ("body", "uuid", "request id 550e8400-e29b-41d4-a716-446655440000 failed"),
        ("body", "base64 image prefix", "data:image/png;base64,iVBORw0KGgo= (truncated)"),
        ("body", "docker digest", f"image sha256:{rnd(HEX, 64)}"),
        ("body", "JWT header only", "a JWT starts with eyJhbGciOi and has three parts"),
        ("title", "title about passwords", "Password rotation for the orders database"),
        ("tags", "tag secrets", "secrets"),
        ("body", "Stripe publishable key doc", "pk_test_ keys are publishable; sk_live_ keys are secret"),
        ("body", "secret name in k8s", "secretKeyRef: name: orders-db key: password"),
        ("body", "token count", "the prompt used 1234 tokens: fine"),
        ("body", "api version", "api_version: 2026-10-01"),
        ("body", "gitlab pat doc", "GitLab tokens start with glpat- followed by 20 characters"),
        ("body", "placeholder key in docs", "OPENAI_API_KEY=your-api-key-here"),
        ("body", "xxxx masked key", "AWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("body", "hex checksum line", f"md5 {rnd(HEX, 32)}  orders.tar.gz"),
        ("body", "ticket URL", "https://jira.internal/browse/OPS-1234?focusedCommentId=99"),
    ]


def rows() -> list[dict[str, str]]:
    out = [{"expect": "secret", "field": f, "what": w, "text": t} for f, w, t in secrets()]
    out += [{"expect": "clean", "field": f, "what": w, "text": t} for f, w, t in lookalikes()]
    return out


def every_rule_on_every_field(fields):
    """The oracle of `secrets.scan_fields`: the first finding of every rule run on every non-empty
    field, in order (no gate, no rule picked first)."""
    from kyb_cli.core.records import secrets as scanner

    for name, text in fields:
        if text:
            found = next(scanner.scan(text, name), None)
            if found is not None:
                return found
    return None


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows()), encoding="utf-8")
    print(f"{OUT}: {sum(r['expect'] == 'secret' for r in rows())} secrets, "
          f"{sum(r['expect'] == 'clean' for r in rows())} look-alikes")
