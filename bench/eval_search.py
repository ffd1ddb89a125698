"""Search quality: lexical vs hybrid on a small realistic store written here (40 records).

    KYB_MODEL=../shared/models/multilingual-e5-small python bench/eval_search.py [--verbose]

Cases come in three groups: paraphrases that share no word with the entry, questions in other
languages (ru, de, fr, es, pt, uk, zh), and exact identifiers (ports, service names, hosts, keys).
Prints top-1, top-3 and MRR@10 per group for lexical (--no-semantic), vector alone (the pipeline's
pipeline.VECTORS ordering, for diagnosis) and hybrid. `--words-weight W` tries another weight
of the words in the fusion (search/fusion.py WORDS_WEIGHT) for the hybrid rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RECORDS = [
    ("checkout-write-path", "Checkout write path", "Checkout writes go through svc-checkout on node-3, port 9090."),
    ("orders-db-primary", "Orders database primary", "The orders Postgres primary is pg-orders-1; replicas pg-orders-2 and pg-orders-3 are read-only."),
    ("nats-streams", "Message bus streams", "Events are published on NATS JetStream; the ORDERS stream keeps 7 days of messages."),
    ("redis-session-store", "Session storage", "User sessions live in Redis cluster redis-sess on port 6380, TTL 30 minutes."),
    ("deploy-freeze", "Deploy freeze", "No production deploys on Fridays after 15:00 UTC and during the last week of December."),
    ("billing-invoice-cron", "Invoice generation job", "Invoices are generated nightly at 02:00 UTC by the billing-invoicer cron on worker-7."),
    ("tls-cert-rotation", "Certificate renewal", "TLS certificates are renewed by cert-manager 30 days before expiry; the wildcard cert is *.shop.example."),
    ("payments-gateway-timeout", "Payment provider timeouts", "The payment gateway client times out after 8 seconds and retries twice with backoff."),
    ("search-reindex", "Product catalogue search index", "The Elasticsearch products index is rebuilt every Sunday; the alias products-live switches atomically."),
    ("oncall-escalation", "Who to page", "Page the platform on-call first; escalate to the SRE lead after 20 minutes without acknowledgement."),
    ("backup-policy", "Database backups", "Postgres base backups run daily with WAL archiving to object storage; restores are tested monthly."),
    ("feature-flags", "Feature toggles", "Feature flags are served by Unleash at flags.internal; default is off for new flags."),
    ("k8s-cluster-prod", "Production Kubernetes cluster", "Production runs on the k8s cluster prod-eu-1 with 12 nodes; ingress is nginx."),
    ("rate-limits-api", "Public API throttling", "The public API allows 100 requests per minute per token; bursts up to 200 are tolerated."),
    ("log-retention", "How long logs are kept", "Application logs are kept 14 days in Loki; audit logs 400 days in cold storage."),
    ("image-cdn", "Images and static files", "Product images are served from the CDN bucket static-assets; cache lifetime is one day."),
    ("email-provider", "Transactional email", "Order confirmation emails are sent through Postmark; the sender is orders@shop.example."),
    ("vpn-access", "Remote access to internal network", "Engineers reach internal hosts through WireGuard; keys are issued by the security team."),
    ("ci-pipeline", "Build pipeline", "GitHub Actions builds every pull request; the main branch deploys to staging automatically."),
    ("staging-env", "Staging environment", "Staging mirrors production at smaller scale in cluster stage-eu-1; data is anonymised nightly."),
    ("currency-rates", "Exchange rates", "Currency conversion uses rates fetched hourly from the ECB feed and cached in Redis."),
    ("password-hashing", "Storing user passwords", "Passwords are hashed with argon2id; parameters m=64MB, t=3, p=1."),
    ("gdpr-deletion", "Account erasure requests", "Personal data is erased within 30 days of a request; the erase-user job runs weekly."),
    ("warehouse-sync", "Stock synchronisation with the warehouse", "Inventory levels are pulled from the warehouse ERP every 5 minutes by stock-sync."),
    ("dns-provider", "Domain names", "DNS zones are hosted on Route 53; changes go through Terraform in the infra-dns repo."),
    ("monitoring-stack", "Metrics and dashboards", "Prometheus scrapes every service every 15 s; dashboards are in Grafana."),
    ("incident-process", "Handling outages", "Open an incident channel, name an incident commander, write a postmortem within 5 days."),
    ("mongo-analytics", "Analytics store", "MongoDB runs on host-a and host-b for the analytics team; it is not used by checkout."),
    ("queue-dead-letters", "Failed message handling", "Messages that fail 5 times go to the dead-letter queue orders-dlq for manual review."),
    ("timezone-policy", "Time zones in the database", "All timestamps are stored in UTC; conversion to local time happens only in the UI."),
    ("secrets-vault", "Where secrets are kept", "Credentials live in HashiCorp Vault under kv/prod; never commit them to Git."),
    ("mobile-release", "Mobile app releases", "The iOS and Android apps ship every two weeks after QA sign-off."),
    ("load-balancer", "Traffic distribution", "HAProxy on lb-1 and lb-2 spreads HTTP traffic; health checks hit /healthz every 2 s."),
    ("cache-invalidation", "Clearing cached pages", "Product pages are purged from Varnish by the catalogue service on every price change."),
    ("shipping-labels", "Parcel labels", "Shipping labels are printed through the DHL API; the label service is svc-labels."),
    ("tax-calculation", "VAT computation", "VAT is computed per destination country by the tax module; rates are updated quarterly."),
    ("search-synonyms", "Search vocabulary", "Synonyms for the shop search are maintained in synonyms.txt in the search-config repo."),
    ("code-review", "Pull request reviews", "Every pull request needs one approval; changes to payments need two."),
    ("cost-alerts", "Cloud spending alarms", "Budget alarms fire when monthly cloud cost passes 80% of the plan."),
    ("svc-auth-tokens", "Login tokens", "svc-auth issues JWTs valid for 15 minutes; refresh tokens last 30 days."),
]

# Paraphrases share NO word with the entry's title, key or body under the index's own tokenizer
# (porter stemming, case and diacritic folding, Russian stem prefixes): not even "the" or "how".
# check_cases() refuses to run when one does, so lexical search cannot find them by construction.
PARAPHRASE = [
    ("where do purchase completions get stored", "checkout-write-path"),
    ("which machine accepts writes for customer purchases records", "orders-db-primary"),
    ("when are we not allowed to ship to prod", "deploy-freeze"),
    ("how do we protect login credentials kept at rest", "password-hashing"),
    ("customer asks to forget them", "gdpr-deletion"),
    ("charts showing system health", "monitoring-stack"),
    ("what to do when the site is down", "incident-process"),
    ("splitting requests across servers", "load-balancer"),
    ("how many calls may a client make", "rate-limits-api"),
    ("which third party sends our receipts to buyers", "email-provider"),
    ("how often do we refresh foreign money values", "currency-rates"),
    ("switching unreleased functionality per customer", "feature-flags"),
    ("card processor takes too long to answer", "payments-gateway-timeout"),
    ("working from home, how can staff connect with private machines", "vpn-access"),
    ("which storage delivers photos shown in our shop", "image-cdn"),
]

# Realistic rewordings that share some words with the entry (often only function words):
# hybrid must not lose these either.
REWORDED = [
    ("event streaming broker retention", "nats-streams"),
    ("who do I wake up at night when things break", "oncall-escalation"),
    ("how long do we keep application output", "log-retention"),
    ("how fresh are our product quantities on hand", "warehouse-sync"),
    ("messages that keep failing", "queue-dead-letters"),
    ("spending too much money on infrastructure warning", "cost-alerts"),
]

CROSS_LANGUAGE = [
    ("куда пишет оформление заказа", "checkout-write-path"),          # ru
    ("где живёт монга", "mongo-analytics"),                          # ru
    ("когда нельзя выкатывать в прод", "deploy-freeze"),              # ru
    ("Wie lange werden Logs aufbewahrt?", "log-retention"),          # de
    ("Wo werden Passwörter gespeichert und wie?", "password-hashing"),  # de
    ("Wer wird bei einem Ausfall angerufen?", "oncall-escalation"),  # de
    ("où sont stockés les secrets", "secrets-vault"),                # fr
    ("comment sont renouvelés les certificats", "tls-cert-rotation"),  # fr
    ("¿cada cuánto se generan las facturas?", "billing-invoice-cron"),  # es
    ("límite de peticiones de la API pública", "rate-limits-api"),   # es
    ("com que frequência o estoque é sincronizado", "warehouse-sync"),  # pt
    ("де зберігаються сесії користувачів", "redis-session-store"),  # uk
    ("数据库备份策略", "backup-policy"),                                # zh
    ("如何处理失败的消息", "queue-dead-letters"),                        # zh
]

IDENTIFIERS = [
    ("svc-checkout", "checkout-write-path"),
    ("9090", "checkout-write-path"),
    ("pg-orders-1", "orders-db-primary"),
    ("6380", "redis-session-store"),
    ("worker-7", "billing-invoice-cron"),
    ("products-live", "search-reindex"),
    ("orders-dlq", "queue-dead-letters"),
    ("argon2id", "password-hashing"),
    ("prod-eu-1", "k8s-cluster-prod"),
    ("svc-labels", "shipping-labels"),
    ("lb-2", "load-balancer"),
    ("kv/prod", "secrets-vault"),
]

GROUPS = {"paraphrase": PARAPHRASE, "reworded": REWORDED, "cross-language": CROSS_LANGUAGE,
          "identifier": IDENTIFIERS}


def build_store(path: Path) -> None:
    from kyb_cli.core.kinds.knowledge import add_knowledge  # noqa: F401  (import check)
    from kyb_cli.core.records.model import Record
    from kyb_cli.core.canon.repo import init_store

    store = init_store(path)
    from kyb_cli.core.canon.attribution import detect

    with store.writing(detect("cli")) as tx:
        for key, title, body in RECORDS:
            tx.put(Record(key=key, title=title, body=body))


def shared_words(question: str, key: str, title: str, body: str) -> list[str]:
    """The words of `question` that the lexical side would match in this entry (title, key, body)."""
    import apsw

    from kyb_cli.core.index.schema import TOKENIZER
    from kyb_cli.core.search.syntax import query_plan

    conn = apsw.Connection(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE f USING fts5(t, tokenize='{TOKENIZER}')")
    conn.execute("INSERT INTO f VALUES (?)", (f"{title} {key.replace('-', ' ')} {body}",))
    out = []
    for word in question.split():
        expr = query_plan(word)[1].match
        if expr and list(conn.execute("SELECT 1 FROM f WHERE f MATCH ?", (expr,))):
            out.append(word)
    return out


def check_cases() -> list[str]:
    """Problems with the cases: a paraphrase sharing a word with its entry, or an unknown key."""
    records = {key: (title, body) for key, title, body in RECORDS}
    problems = [f"unknown key {k!r} for {q!r}" for cases in GROUPS.values() for q, k in cases if k not in records]
    for question, key in PARAPHRASE:
        if key in records and (shared := shared_words(question, key, *records[key])):
            problems.append(f"paraphrase {question!r} shares {shared} with {key}")
    return problems


def metrics(ranks: list[int | None]) -> tuple[float, float, float]:
    n = len(ranks)
    top1 = sum(1 for r in ranks if r == 1) / n
    top3 = sum(1 for r in ranks if r is not None and r <= 3) / n
    mrr = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return top1, top3, mrr


MODES = {"lexical": (False, False), "vector": (True, True), "hybrid": (True, False)}


def set_mode(words_weight: float) -> None:
    """The next fused searches weigh the words by `words_weight`."""
    from kyb_cli.core.search import fusion

    fusion.WORDS_WEIGHT = words_weight


def run(verbose: bool, words_weight: float | None = None) -> dict:
    from kyb_cli.core.search import fusion
    from kyb_cli.core.search.pipeline import VECTORS, search

    shipped = fusion.WORDS_WEIGHT

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        build_store(store)
        search(store, "warm up", semantic=True)
        from kyb_cli.core.index.vectors import embed_all

        embed_all(store)
        for group, cases in GROUPS.items():
            for mode, (semantic, vectors_only) in MODES.items():
                set_mode(shipped if words_weight is None else words_weight)
                ranks = []
                for question, expected in cases:
                    r = search(store, question, semantic=semantic, limit=10,
                               ordering=VECTORS if vectors_only else None)
                    got = [h["key"] for h in r["hits"]]
                    rank = got.index(expected) + 1 if expected in got else None
                    ranks.append(rank)
                    if verbose and rank != 1:
                        print(f"  {mode:7} {group}: {question!r} -> {expected} rank {rank}; top {got[:3]}")
                out[(group, mode)] = metrics(ranks)
        set_mode(shipped)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--words-weight", type=float, help="try another words weight (evidence for tuning)")
    args = parser.parse_args()
    problems = check_cases()
    if problems:
        sys.exit("eval cases are unfair:\n  " + "\n  ".join(problems))
    if not os.environ.get("KYB_MODEL"):
        shared = ROOT.parent / "shared" / "models" / "multilingual-e5-small"
        if shared.is_dir():
            os.environ["KYB_MODEL"] = str(shared)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache  # a throwaway vector cache
        os.environ.setdefault("KYB_EMBED_HELPER", "0")
        results = run(args.verbose, args.words_weight)
    print(f"{len(RECORDS)} records; cases: " + ", ".join(f"{g} {len(c)}" for g, c in GROUPS.items()))
    print(f"{'group':16} {'mode':8} {'top-1':>6} {'top-3':>6} {'MRR@10':>7}")
    for (group, mode), (t1, t3, mrr) in results.items():
        print(f"{group:16} {mode:8} {t1:6.2f} {t3:6.2f} {mrr:7.3f}")


if __name__ == "__main__":
    main()
