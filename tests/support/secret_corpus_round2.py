"""Builds tests/data/secrets_corpus_round2.jsonl: issue 24's second corpus — secrets as they occur in
the wild (.env lines, kubeconfigs, cloud JSON credentials, DB URLs, headers, netrc, provider tokens in
prose) and look-alikes that a store of engineering notes is full of (shas, digests, certificates,
public keys, placeholders, code that reads a secret). Random but correctly shaped: none is a real
credential. Regenerate with `python -m tests.support.secret_corpus_round2` (seeded)."""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "secrets_corpus_round2.jsonl"
R = random.Random(20261202)
AN = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UP = string.ascii_uppercase + string.digits


def rnd(alphabet: str, n: int) -> str:
    return "".join(R.choice(alphabet) for _ in range(n))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def pem(kind: str) -> str:
    return f"-----BEGIN {kind}-----\n{rnd(AN + '+/', 64)}\n{rnd(AN + '+/', 64)}\n-----END {kind}-----"


def jwt() -> str:
    enc = lambda o: base64.urlsafe_b64encode(json.dumps(o).encode()).decode().rstrip("=")  # noqa: E731
    return f"{enc({'alg': 'RS256', 'kid': rnd(HEX, 8)})}.{enc({'sub': 'system:serviceaccount:ci:deployer', 'exp': 1893456000})}.{rnd(AN + '-_', 86)}"


def uuid() -> str:
    return f"{rnd(HEX, 8)}-{rnd(HEX, 4)}-4{rnd(HEX, 3)}-a{rnd(HEX, 3)}-{rnd(HEX, 12)}"


def secrets() -> list[tuple[str, str, str]]:
    pw = lambda: rnd(AN, 6) + R.choice("!#%&*") + rnd(AN, 5)  # noqa: E731
    return [
        ("body", "OpenAI project key in .env", f"OPENAI_API_KEY=sk-proj-{rnd(AN + '_-', 48)}T3BlbkFJ{rnd(AN + '_-', 48)}"),
        ("body", "Anthropic key in prose", f"use sk-ant-api03-{rnd(AN + '_-', 93)}AA for the eval runner"),
        ("key", "OpenAI key as a record key", f"sk-proj-{rnd(string.ascii_lowercase + string.digits, 40)}"),
        ("key", "GitLab PAT as a record key", f"glpat-{rnd(string.ascii_lowercase + string.digits, 20)}"),
        ("tags", "GitLab PAT in tags", f"glpat-{rnd(AN + '_-', 20)}"),
        ("body", "GitHub PAT exported", f"export GITHUB_TOKEN=ghp_{rnd(AN, 36)}"),
        ("body", "GitHub fine-grained PAT", f"token github_pat_11{rnd(UP, 20)}_{rnd(AN, 59)}"),
        ("body", "GitHub token in clone URL", f"git clone https://x-access-token:ghs_{rnd(AN, 36)}@github.com/acme/infra.git"),
        ("body", "GitLab token in clone URL", f"https://oauth2:glpat-{rnd(AN, 20)}@gitlab.acme.io/team/repo.git"),
        ("body", "AWS key pair in credentials file",
         f"[default]\naws_access_key_id = AKIA{rnd(UP, 16)}\naws_secret_access_key = {rnd(AN + '/+', 40)}"),
        ("service", "AWS access key id in service", f"AKIA{rnd(UP, 16)}"),
        ("body", "AWS session token", f"aws_session_token = FwoGZXIvYXdzE{rnd(AN + '/+', 120)}"),
        ("body", "Slack bot token", f"SLACK_BOT_TOKEN=xoxb-{rnd(string.digits, 12)}-{rnd(string.digits, 13)}-{rnd(AN, 24)}"),
        ("hosts", "Slack user token in hosts", f"xoxp-{rnd(string.digits, 12)}-{rnd(string.digits, 12)}-{rnd(string.digits, 13)}-{rnd(HEX, 32)}"),
        ("body", "Slack webhook", f"alerts go to https://hooks.slack.com/services/T{rnd(UP, 8)}/B{rnd(UP, 10)}/{rnd(AN, 24)}"),
        ("body", "Stripe live secret key", f"STRIPE_SECRET_KEY=sk_live_51{rnd(AN, 96)}"),
        ("body", "Stripe restricted key", f"rk_live_51{rnd(AN, 96)}"),
        ("body", "Stripe webhook secret", f"STRIPE_WEBHOOK=whsec_{rnd(AN, 32)}"),
        ("knowledge", "Google API key in knowledge", f"AIza{rnd(AN + '_-', 35)}"),
        ("body", "Google OAuth client secret", f'"client_secret": "GOCSPX-{rnd(AN + "_-", 28)}"'),
        ("body", "GCP service account JSON",
         json.dumps({"type": "service_account", "project_id": "acme-prod", "private_key_id": rnd(HEX, 40),
                     "private_key": "-----BEGIN PRIVATE KEY-----\n" + rnd(AN + "+/", 64) + "\n-----END PRIVATE KEY-----\n",
                     "client_email": "deployer@acme-prod.iam.gserviceaccount.com"})),
        ("body", "RSA private key", pem("RSA PRIVATE KEY")),
        ("body", "EC private key", pem("EC PRIVATE KEY")),
        ("body", "OpenSSH private key", pem("OPENSSH PRIVATE KEY")),
        ("body", "encrypted PKCS8 key", pem("ENCRYPTED PRIVATE KEY")),
        ("body", "PGP private key block", pem("PGP PRIVATE KEY BLOCK")),
        ("body", "PuTTY private key", f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n{rnd(AN + '+/', 44)}"),
        ("body", "JWT bearer header", f"curl -H 'Authorization: Bearer {jwt()}' https://api.acme.io"),
        ("body", "opaque bearer token", f"Authorization: Bearer {rnd(AN, 40)}"),
        ("body", "basic auth header", f"Authorization: Basic {b64(('deploy:' + pw()).encode())}"),
        ("body", "kubeconfig token", f"users:\n- name: ci\n  user:\n    token: {jwt()}"),
        ("body", "kubeconfig client key data",
         f"    client-key-data: {b64(b'-----BEGIN RSA PRIVATE KEY-----' + bytes(R.randrange(256) for _ in range(60)))}"),
        ("body", "kubeconfig opaque token", f"    token: {rnd(string.ascii_lowercase + string.digits, 6)}.{rnd(string.ascii_lowercase + string.digits, 16)}"),
        ("body", "postgres URL with password", f"DATABASE_URL=postgres://app:{pw()}@db.internal:5432/app"),
        ("body", "mysql URL with password", f"mysql://root:{pw()}@10.0.3.7:3306/orders"),
        ("body", "mongodb+srv URL", f"mongodb+srv://admin:{pw()}@cluster0.x1y2z.mongodb.net/prod"),
        ("body", "redis URL with empty user", f"REDIS_URL=redis://:{pw()}@cache:6379/0"),
        ("body", "amqp URL", f"amqp://orders:{pw()}@rabbit.internal:5672/"),
        ("body", "Azure storage connection string",
         f"DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={rnd(AN + '+/', 86)}==;EndpointSuffix=core.windows.net"),
        ("body", "Django SECRET_KEY", f"SECRET_KEY = 'django-insecure-{rnd(string.ascii_lowercase + string.digits + '!@#$%^&*(-_=+)', 50)}'"),
        ("body", "NextAuth secret", f"NEXTAUTH_SECRET={rnd(AN + '+/', 43)}="),
        ("body", "JWT signing secret", f"JWT_SECRET: {rnd(AN, 32)}"),
        ("body", "DB_PASS env line", f"DB_PASS={pw()}"),
        ("body", "PGPASSWORD env", f"PGPASSWORD={pw()} psql -h db -U app"),
        ("body", "MYSQL_PWD env", f"MYSQL_PWD={pw()}"),
        ("body", "YAML password", f"database:\n  user: app\n  password: {pw()}"),
        ("body", "quoted JSON password", f'{{"username": "svc", "password": "{pw()}"}}'),
        ("body", "netrc line", f"machine api.heroku.com login ops@acme.io password {uuid()}"),
        ("body", "Heroku API key", f"HEROKU_API_KEY={uuid()}"),
        ("body", "npmrc auth token", f"//registry.npmjs.org/:_authToken=npm_{rnd(AN, 36)}"),
        ("body", "npmrc uuid auth token", f"//npm.acme.io/:_authToken={uuid()}"),
        ("body", "PyPI token", f"password = pypi-AgEIcHlwaS5vcmc{rnd(AN + '_-', 70)}"),
        ("body", "Hugging Face token", f"HF_TOKEN=hf_{rnd(string.ascii_letters, 34)}"),
        ("body", "Vault token", f"VAULT_TOKEN=hvs.{rnd(AN + '_-', 92)}"),
        ("body", "DigitalOcean token", f"dop_v1_{rnd(HEX, 64)}"),
        ("body", "SendGrid key", f"SG.{rnd(AN + '_-', 22)}.{rnd(AN + '_-', 43)}"),
        ("body", "Shopify token", f"shpat_{rnd(HEX, 32)}"),
        ("body", "Databricks token", f"DATABRICKS_TOKEN=dapi{rnd(HEX, 32)}"),
        ("body", "Telegram bot token", f"bot {rnd(string.digits, 10)}:AA{rnd(AN + '_-', 33)} posts deploys"),
        ("body", "Discord webhook", f"https://discord.com/api/webhooks/{rnd(string.digits, 18)}/{rnd(AN + '_-', 68)}"),
        ("body", "Azure OpenAI api-key header", f"api-key: {rnd(HEX, 32)}"),
        ("body", "X-API-Key header", f"X-API-Key: {rnd(AN, 40)}"),
        ("body", "Cloudflare API token", f"CLOUDFLARE_API_TOKEN={rnd(AN + '_-', 40)}"),
        ("body", "Datadog API key", f"DD_API_KEY={rnd(HEX, 32)}"),
        ("body", "Twilio auth token", f"TWILIO_AUTH_TOKEN={rnd(HEX, 32)}"),
        ("body", "Docker config auth", f'{{"auths": {{"ghcr.io": {{"auth": "{b64(("ci:" + pw()).encode())}"}}}}}}'),
        ("body", "PayPal Braintree token", f"access_token$production${rnd(string.ascii_lowercase + string.digits, 16)}${rnd(HEX, 32)}"),
        ("body", "Age secret key", f"AGE-SECRET-KEY-1{rnd(UP, 58)}"),
        ("body", "Linear key", f"lin_api_{rnd(AN, 40)}"),
        ("body", "Grafana service token", f"glsa_{rnd(AN, 32)}_{rnd(HEX, 8)}"),
        ("affected", "token in affected scope", f"sk-proj-{rnd(AN + '_-', 48)}"),
        ("blocked_by", "token in blocked_by", f"task-ghp_{rnd(AN, 36)}"),
        ("parent_task", "token in parent_task", f"task-glpat-{rnd(AN, 20)}"),
        ("verified source", "token in verified source", f"https://ci:glpat-{rnd(AN, 20)}@gitlab.acme.io/x"),
        ("runbook", "hand-added front-matter key", f"xoxb-{rnd(string.digits, 12)}-{rnd(string.digits, 13)}-{rnd(AN, 24)}"),
        ("agent", "attribution label", f"ci-bot ghp_{rnd(AN, 36)}"),
    ]


def lookalikes() -> list[tuple[str, str, str]]:
    return [
        ("body", "git sha", f"fixed in {rnd(HEX, 40)} (revert of {rnd(HEX, 12)})"),
        ("body", "image digest", f"image: ghcr.io/acme/api@sha256:{rnd(HEX, 64)}"),
        ("body", "request id uuid", f"request_id={uuid()} failed with 502"),
        ("body", "trace id", f"trace_id: {rnd(HEX, 32)}"),
        ("body", "AWS documented example key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),
        ("body", "AWS documented example secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("body", "certificate PEM", pem("CERTIFICATE")),
        ("body", "public key PEM", pem("PUBLIC KEY")),
        ("body", "ssh public key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rnd(AN + '+/', 43)} ops@bastion"),
        ("body", "kubeconfig CA data", f"    certificate-authority-data: {b64(b'-----BEGIN CERTIFICATE-----' + bytes(range(40)))}"),
        ("body", "postgres URL without password", "DATABASE_URL=postgres://app@db.internal:5432/app"),
        ("body", "postgres URL with placeholder", "postgres://app:${PGPASSWORD}@db.internal:5432/app"),
        ("body", "URL with port", "https://grafana.internal:3000/d/abc?orgId=1"),
        ("body", "password from env", "password = os.environ['DB_PASSWORD']"),
        ("body", "password from getpass", "password = getpass.getpass()"),
        ("body", "api key from getenv", 'api_key = os.getenv("OPENAI_API_KEY")'),
        ("body", "redacted password", "password: ********"),
        ("body", "templated token", "token: {{ .Values.ci.token }}"),
        ("body", "secretKeyRef", "valueFrom:\n  secretKeyRef:\n    name: db-credentials\n    key: password"),
        ("body", "secret name", "secret_name: prod-db-credentials"),
        ("body", "password policy", "password_min_length: 12\npassword policy: rotate every 90 days"),
        ("body", "token ttl", "TOKEN_TTL=3600\nmax_tokens: 4096"),
        ("body", "prefix alone in prose", "rotate the ghp_ and glpat- tokens monthly; xoxb- tokens live in vault"),
        ("body", "sklearn slug", "see sk-learn-preprocessing-pipeline-notes"),
        ("key", "slug key with sk- prefix", "sk-proj-cleanup-plan"),
        ("key", "plain key", "orders-api-oom-runbook"),
        ("tags", "tag", "postgres"),
        ("body", "ARN", "arn:aws:iam::123456789012:role/deploy-ci"),
        ("body", "bearer placeholder", "Authorization: Bearer $TOKEN"),
        ("body", "bearer angle placeholder", "Authorization: Bearer <token>"),
        ("body", "basic auth word", "Authorization: Basic realm=\"intranet\""),
        ("body", "vault path", "the password lives at vault kv/prod/orders/db"),
        ("body", "JWT mention", "the token starts with eyJ, that is base64 of {\""),
        ("body", "semver and ports", "upgraded to 2.14.3, listens on 0.0.0.0:8443"),
        ("body", "docker auth placeholder", '{"auths": {"ghcr.io": {"auth": "<base64 of user:token>"}}}'),
        ("body", "hex color and IPs", "color #1f2937, hosts 10.0.3.7 and 10.0.3.8"),
        ("body", "dapi word", "dapi is the Databricks prefix; never paste one"),
        ("body", "stripe test mode mention", "use sk_test_ keys from the dashboard in staging"),
        ("body", "netrc without password", "machine github.com login ops"),
        ("body", "password prose", "Password reset requirements: twelve characters"),
        ("body", "api key header name", "send the X-API-Key header; api_key_header = X-API-Key"),
        ("body", "checksum line", f"sha512sum: {rnd(HEX, 128)}"),
        ("body", "commit range", f"{rnd(HEX, 7)}..{rnd(HEX, 7)}"),
        ("body", "base64 png thumbnail", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
        ("body", "telegram word", "bot 12345 posts deploys"),
        ("body", "account key placeholder", "AccountName=acmeprod;AccountKey=<from key vault>"),
        ("agent", "attribution label", "claude-code ci session 2026-12-02"),
        ("body", "session id", f"KYB_SESSION=run-{rnd(string.digits, 6)}"),
        ("body", "secret word assignment", "secret: see the vault, path kv/prod/orders"),
        ("body", "django settings module", "DJANGO_SETTINGS_MODULE=orders.settings.production"),
    ]


def rows() -> list[dict[str, str]]:
    out = [{"expect": "secret", "field": f, "what": w, "text": t} for f, w, t in secrets()]
    out += [{"expect": "clean", "field": f, "what": w, "text": t} for f, w, t in lookalikes()]
    return out


if __name__ == "__main__":
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows()), encoding="utf-8")
