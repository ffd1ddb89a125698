"""Secret detection for every stored field: kyb's own rules, provider formats plus context rules.

Why this shape (docs/guide/design.md "What kyb promises" → Secrets; tests/test_secrets_matrix.py publishes the numbers):
- Provider formats: a token type that announces itself with a prefix (`ghp_`, `glpat-`, `sk_live_`,
  `AKIA`, `xoxb-`, `AIza`, `-----BEGIN … PRIVATE KEY-----`, JWTs …) is described once in FORMATS
  below — prefixes, body alphabet, body length, an entropy floor — from the providers' documented
  token shapes, and the regexes are built from that table. Only formats with a prefix that words do
  not have are listed, so ordinary prose never matches.
- Context rules: `NAME_API_KEY=…`/`AWS_SECRET_ACCESS_KEY=…` assignments, `password: …` (also
  `пароль`), and credentials inside URLs (`postgres://user:pass@host`).
- Evaluated and not taken as a dependency: detect-secrets (70 ms to import: requests, pyyaml, on a
  path where a write may spend a few ms; its entropy plugins flag every git sha and slug; it flags
  the documented AWS example key). gitleaks' rule set (a Go tool) was read to see which token types
  the field treats as secrets; none of its rules or text is copied here.
- What passes on purpose: documented example values (anything with EXAMPLE, DO-NOT-USE, placeholder
  words), redacted values (`********`, `<redacted>`, `${VAR}`, `{{ var }}`, `xxxx`), values made of
  words only (`sk-learn-preprocessing-pipeline-notes`: a slug, not a key), and values below the
  format's entropy floor (`ghp_aaaaaaaa…`).

A finding names the rule and where it starts; it never carries the matched text, so no message built
from it can echo any part of a secret into a terminal, a log or CI output.

Speed: a rule runs only when one of its keywords occurs in the lowercased text (and, in scan_fields,
when the text has a run of non-space characters as long as its matches need), patterns compile on
first use and start with their literal prefix (re's fast literal scan; the word boundary before a
match is checked in code), and the context rules run on the lowercased text. A typical record costs
about 0.1 ms; a 1 MiB body full of key-like words a few tens of ms.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right

from kyb_cli.core.plain import plain

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a `kyb query` that logs a miss
if TYPE_CHECKING:      # scans its text (issue 40), so this module is kept off dataclasses and typing
    from typing import Iterable, Iterator

@plain(frozen=True)
class Rule:
    id: str
    pattern: str
    keywords: tuple[str, ...]  # lowercase; the rule runs only when one occurs in the lowercased text
    entropy: float = 0.0  # Shannon floor (bits per char) of the secret group
    group: int = 1  # the regex group that is the secret (0: the whole match)
    wordy_ok: bool = True  # a value made of words only is not a key (False: passwords may be words)
    alpha_min: int = 0  # a letters-only value shorter than this is prose ("password: rotated"), not one
    # The match may not follow a letter or digit (a leading `\b`, checked here: a pattern that
    # starts with its literal prefix is searched by re's fast literal scan, `\b` would disable it).
    boundary: bool = True
    nocase: bool = False  # the pattern is lowercase and runs on the lowercased text
    # The fewest non-space characters in a row that every match holds (a lower bound): a text whose
    # longest run of them is shorter cannot match, and scan_fields does not look for its keywords.
    run: int = 0
    marks: str = ""  # one of these characters is in every match ("": none named); without one, it cannot match


@plain(frozen=True)
class Finding:
    """A secret-looking value: which rule, in which field, where it starts. Never the text itself."""

    rule: str
    field: str
    start: int  # offset of the secret in the scanned text (for line numbers in `kyb check`)

    def message(self, advice: str = "store secrets as pointers in refs") -> str:
        return f"{self.field} looks like a secret (rule {self.rule}) — {advice}"


def _r(id: str, pattern: str, keywords: Iterable[str], entropy: float = 0.0, group: int = 1,
       wordy_ok: bool = True, alpha_min: int = 0, boundary: bool = True, nocase: bool = False,
       run: int = 0, marks: str = "") -> Rule:
    return Rule(id, pattern, tuple(keywords), entropy, group, wordy_ok, alpha_min, boundary, nocase, run,
                marks)


# Provider formats: (rule, prefixes, body alphabet, shortest body, longest body, entropy floor).
# The body follows the prefix directly; its entropy (bits per character) must reach the floor.
_B62 = "A-Za-z0-9"
FORMATS: tuple[tuple[str, tuple[str, ...], str, int, int, float], ...] = (
    ("aws-access-key-id", ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA"), "A-Z0-9", 16, 16, 3.0),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _B62, 20, 255, 3.0),
    ("github-fine-grained-token", ("github_pat_",), _B62 + "_", 20, 255, 3.0),
    ("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glimt-", "glsoat-", "GR1348941"),
     _B62 + "_.-", 20, 300, 3.0),
    ("slack-token", ("xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xapp-"), _B62 + "-", 10, 250, 2.5),
    ("slack-webhook", ("hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/"),
     _B62 + "/+", 30, 120, 3.0),
    ("stripe-key", ("whsec_", "sk_live_", "rk_live_", "sk_test_", "rk_test_", "sk_prod_", "rk_prod_"), _B62, 10, 250, 2.0),
    ("openai-style-key", ("sk-proj-", "sk-svcacct-", "sk-admin-", "sk-ant-", "sk-"), _B62 + "_-", 24, 300, 3.0),
    ("google-api-key", ("AIza",), _B62 + "_-", 35, 35, 3.5),
    ("sendgrid-key", ("SG.",), _B62 + "_.-", 60, 80, 3.0),
    ("npm-token", ("npm_",), _B62, 36, 36, 3.0),
    ("pypi-token", ("pypi-AgE",), _B62 + "_-", 60, 1000, 3.0),
    ("huggingface-token", ("hf_",), "A-Za-z", 30, 40, 3.0),
    ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), "a-f0-9", 64, 64, 3.0),
    ("twilio-key", ("SK",), "a-fA-F0-9", 32, 32, 3.0),
    ("shopify-token", ("shpat_", "shpca_", "shppa_", "shpss_"), "a-fA-F0-9", 32, 32, 3.0),
    ("vault-token", ("hvs.", "hvb."), _B62 + "_-", 90, 400, 3.5),
    ("age-secret-key", ("AGE-SECRET-KEY-1",), "0-9A-Z", 58, 58, 3.0),
    ("databricks-token", ("dapi",), "a-f0-9", 32, 32, 3.0),
    ("linear-key", ("lin_api_",), _B62, 40, 40, 3.0),
    ("postman-key", ("PMAK-",), "a-f0-9-", 59, 59, 3.0),
    ("doppler-token", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct."), _B62, 40, 48, 3.0),
    ("grafana-token", ("glsa_", "glc_"), _B62 + "_+/=", 32, 400, 3.0),
    ("sentry-token", ("sntryu_", "sntrys_"), _B62 + "_+/=", 60, 400, 3.0),
    ("pulumi-token", ("pul-",), "a-f0-9", 40, 40, 2.5),
    ("rubygems-key", ("rubygems_",), "a-f0-9", 48, 48, 2.5),
    ("planetscale-token", ("pscale_tkn_", "pscale_oauth_", "pscale_pw_"), _B62 + "_.=-", 32, 64, 3.0),
    ("square-token", ("sq0atp-", "sq0csp-", "EAAA"), _B62 + "_-", 22, 80, 3.0),
    ("perplexity-key", ("pplx-",), _B62, 48, 48, 3.5),
    ("heroku-key", ("HRKU-",), _B62 + "_-", 36, 80, 3.0),
    ("discord-webhook", ("discord.com/api/webhooks/", "discordapp.com/api/webhooks/"), _B62 + "/_-", 60, 120, 3.0),
    ("braintree-token", ("access_token$production$", "access_token$sandbox$"), "a-z0-9$", 40, 60, 3.0),
    # Round three (issue 37 item 6): tests/test_secrets_round_three.py holds one of each and look-alikes.
    ("notion-token", ("ntn_",), _B62, 40, 50, 3.0),
    ("newrelic-key", ("NRAK-", "NRAA-", "NRII-", "NRRA-", "NRSP-"), "A-Z0-9", 27, 32, 3.0),
    ("newrelic-browser-key", ("NRJS-",), "a-f0-9", 19, 19, 2.5),
    ("supabase-key", ("sbp_",), "a-f0-9", 40, 40, 3.0),
    ("supabase-secret-key", ("sb_secret_",), _B62 + "_-", 30, 64, 3.0),
    ("contentful-token", ("CFPAT-", "CFDAT-"), _B62 + "_-", 43, 43, 3.0),
    ("bitbucket-app-password", ("ATBB",), _B62, 28, 40, 3.0),
    ("atlassian-api-token", ("ATATT3", "ATCTT3"), _B62 + "_=-", 150, 250, 3.5),
    ("alibaba-access-key-id", ("LTAI",), _B62, 12, 24, 3.0),
    ("tencent-secret-id", ("AKID",), _B62, 32, 32, 3.0),
    ("facebook-access-token", ("EAAB", "EAAC", "EAAD", "EAAE", "EAAG", "EAAI", "EAAJ", "EAAM", "EAAU"),
     _B62, 60, 400, 3.5),
    ("groq-key", ("gsk_",), _B62, 52, 52, 3.0),
    ("xai-key", ("xai-",), _B62, 80, 80, 3.0),
    ("replicate-token", ("r8_",), _B62, 37, 37, 3.0),
    ("buildkite-token", ("bkua_",), "a-f0-9", 40, 40, 3.0),
    ("netlify-token", ("nfp_",), _B62, 36, 40, 3.0),
    ("render-key", ("rnd_",), _B62, 32, 32, 3.0),
    ("prefect-key", ("pnu_",), _B62, 36, 36, 3.0),
    ("figma-token", ("figd_",), _B62 + "_-", 40, 45, 3.0),
    ("flyio-token", ("fo1_",), _B62 + "_-", 43, 43, 3.0),
    ("onepassword-service-token", ("ops_eyJ",), _B62 + "+/=_-", 100, 1500, 3.5),
    ("shippo-token", ("shippo_live_", "shippo_test_"), "a-f0-9", 40, 40, 3.0),
    ("flutterwave-key", ("FLWSECK-", "FLWSECK_TEST-"), "a-f0-9", 32, 32, 3.0),
    ("typeform-token", ("tfp_",), _B62 + "_.-", 56, 64, 3.0),
    ("sourcegraph-token", ("sgp_",), "a-fA-F0-9_", 40, 60, 3.0),
    ("clojars-token", ("CLOJARS_",), "a-z0-9", 60, 60, 3.0),
    ("duffel-token", ("duffel_live_", "duffel_test_"), _B62 + "_=-", 43, 43, 3.0),
    ("easypost-key", ("EZAK", "EZTK"), _B62, 54, 54, 3.0),
    ("nuget-key", ("oy2",), "a-z0-9", 43, 43, 3.0),
    ("readme-key", ("rdme_",), "a-z0-9", 70, 70, 3.0),
    ("artifactory-key", ("AKCp",), _B62, 69, 69, 3.0),
    ("plaid-token", ("access-production-", "access-development-", "access-sandbox-"), "a-f0-9-", 36, 36, 3.0),
)


def _format_rule(rule: str, prefixes: tuple[str, ...], body: str, low: int, high: int, entropy: float) -> Rule:
    head = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    assert not any(ch.isspace() for p in prefixes for ch in p + body)  # prefix and body: one run
    return _r(rule, f"(?:{head})([{body}]{{{low},{high}}})(?![{body}])", tuple(p.lower() for p in prefixes),
              entropy, run=min(map(len, prefixes)) + low)


RULES: tuple[Rule, ...] = (
    *(_format_rule(*f) for f in FORMATS),
    # Structured secrets: JSON Web Tokens (header.payload.signature, base64url, header and payload
    # start with `ey`, the encoding of `{"`) and private-key headers (a header alone is a leak).
    _r("jwt", r"(ey[A-Za-z0-9_-]{15,}\.ey[A-Za-z0-9_-]{15,}\.[A-Za-z0-9_-]{0,600})", ("ey",), 3.0, run=36),
    _r("private-key", r"(-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)", ("-----begin",), run=10),
    _r("putty-private-key", r"(PuTTY-User-Key-File-[0-9])", ("putty-user-key-file",), run=21),
    # A PEM block base64-encoded again (kubeconfig `client-key-data`): a private key once decoded.
    _r("base64-private-key", r"(LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2})", ("ls0tls1crudjti",), run=34),
    # Doppler tokens with their config's name (`dp.st.prd.…`), Okta's `SSWS` header, Mailchimp's
    # datacenter suffix, Airtable, Azure AD client secrets (`Q~`), Tailscale, Dynatrace, Terraform
    # Cloud and Mapbox secret tokens: shapes with a structure the prefix table cannot say.
    _r("doppler-config-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[a-z0-9_-]{1,40}\.([A-Za-z0-9]{40,48})(?![A-Za-z0-9])",
       ("dp.",), 3.0, run=40),
    _r("okta-token", r"SSWS[ \t]+(00[A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])", ("ssws",), 3.5, run=42),
    _r("mailchimp-key", r"([0-9a-f]{32}-us[0-9]{1,2})(?![0-9a-z])", ("-us",), 3.0, run=36),
    _r("airtable-token", r"(pat[A-Za-z0-9]{14}\.[a-f0-9]{64})(?![A-Za-z0-9])", ("pat",), 3.0, run=64),
    _r("azure-ad-client-secret", r"([A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])",
       ("q~",), 3.5, run=37),
    _r("tailscale-key", r"tskey-(?:api|auth|client|scim|webhook)-([A-Za-z0-9]{6,}-[A-Za-z0-9]{20,})", ("tskey-",), 3.0, run=27),
    _r("dynatrace-token", r"dt0c01\.([A-Z0-9]{24}\.[A-Z0-9]{64})(?![A-Z0-9])", ("dt0c01.",), 3.0, run=64),
    _r("terraform-cloud-token", r"[A-Za-z0-9]{14}\.atlasv1\.([A-Za-z0-9_=-]{60,70})", (".atlasv1.",), 3.0,
       boundary=False, run=60),
    _r("mapbox-secret-token", r"sk\.(eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,})", ("sk.eyj",), 3.0, run=50),
    _r("telegram-bot-token", r"[0-9]{8,10}:(AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])", (":aa",), 3.0, run=44),
    # Context rules, written in lowercase: they run on the lowercased text (5x faster than (?i)).
    _r("aws-secret-access-key",
       r"aws_?secret(?:_?access)?_?key\s*[\"']?\s*[:=]\s*[\"']?([a-z0-9/+=]{40})(?![a-z0-9/+=])",
       ("secret",), 3.5, nocase=True, run=40, marks=":="),
    _r("secret-assignment",
       r"(?:api[_.-]?key|secret(?:[_.-]?key)?|token|access[_.-]?key|auth[_.-]?key|private[_.-]?key)\s*[\"']?\s*(?::=|=|:)\s*[\"']?([^\s\"'`;,]{12,200})",
       ("key", "secret", "token"), 3.0, boundary=False, nocase=True, run=12, marks=":="),
    _r("password-assignment",
       r"(?:password|passwd|pwd|[_-]pass|пароль)\s*[\"']?\s*[:=]\s*[\"']?([^\s\"'`]{6,200})",
       ("pass", "pwd", "пароль"), 0, wordy_ok=False, alpha_min=12, boundary=False, nocase=True, run=6, marks=":="),
    _r("netrc-password", r"machine\s+\S+\s+login\s+\S+\s+password\s+(\S{6,200})", ("machine",), 0,
       wordy_ok=False, nocase=True, run=6),
    _r("bearer-token", r"bearer\s+([a-z0-9._~+/-]{20,}=*)", ("bearer",), 3.0, nocase=True, run=20),
    _r("basic-auth", r"authorization:\s*basic\s+([a-z0-9+/]{8,}={0,2})", ("basic",), 2.5, boundary=False, nocase=True, run=8, marks=":"),
    _r("docker-auth", r"\"auth\"\s*:\s*\"([a-z0-9+/]{12,}={0,2})\"", ('"auth"',), 3.0, boundary=False, nocase=True, run=12, marks=":"),
    _r("azure-account-key", r"accountkey=([a-z0-9+/]{40,}={0,2})", ("accountkey",), 3.5, boundary=False, nocase=True, run=40, marks="="),
    _r("url-credentials", r"://[^\s:/@?#\[\]]{0,100}:([^\s/@?#]{3,200})@[^\s/@]{2,}",
       ("://",), 0, wordy_ok=False, boundary=False, run=10, marks="@"),
)

# Documented example values and placeholders: a secret containing one of these is not one.
_PLACEHOLDER = re.compile(
    r"(?i)example|do[-_]?not[-_]?use|placeholder|redacted|changeme|change[-_]me|dummy|sample|"
    r"your[-_]?(?:api[-_]?)?(?:key|token|secret|password|pass)|insert[-_]|replace[-_]?me|"
    r"xxxx|\*{3,}|•{3,}|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|^\$[A-Za-z_][A-Za-z0-9_]*$|^%[A-Za-z_]+%$|"
    r"^(.)\1+$"
)
# A value made only of words joined by - _ . (no digits): a slug or a name, not random key material.
_WORDY = re.compile(r"[A-Za-z]{2,}(?:[-_.][A-Za-z]{2,})*")
# A value that names itself (`secret-password`, `wrong-password`: documentation's stand-ins) and
# a value that is code (`bcrypt.hashpw(password.encode(`: a call, as in `hashed = hashpw(password…`).
_SELF_NAMED = re.compile(r"(?i)(?:^|[-_.])(?:password|passwd|secret|pwd)(?:[-_.]|$)")
_CODE_CALL = re.compile(r"^[A-Za-z_][\w.]*[(\[]")
_TAIL = re.compile(r"^(?:sk|rk|pk)[-_](?:(?:proj|live|test|prod|ant)[-_])?|^[a-z]{2,6}[-_]")

_compiled: dict[tuple[str, bool], re.Pattern[str]] = {}


def _pattern(rule: Rule, ignorecase: bool = False) -> re.Pattern[str]:
    compiled = _compiled.get((rule.id, ignorecase))
    if compiled is None:
        flags = re.IGNORECASE if ignorecase else 0
        compiled = _compiled[(rule.id, ignorecase)] = re.compile(rule.pattern, flags)
    return compiled


def shannon_entropy(text: str) -> float:
    """Shannon entropy of `text` in bits per character: random key material is high, words are low."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _is_word(piece: str) -> bool:
    """Letters in one case (or Title case) and word-sized: `learn`, `EXAMPLE`, `Pipeline`."""
    return len(piece) <= 20 and (piece.islower() or piece.isupper() or piece.istitle())


def _is_wordy(value: str) -> bool:
    """`sk-learn-preprocessing-pipeline-notes` is words with dashes: the part after a known prefix
    has no digit and every piece is a word (random letters mix cases and run long)."""
    tail = _TAIL.sub("", value, count=1)
    if _WORDY.fullmatch(tail) is None:
        return False
    return all(_is_word(p) for p in re.split(r"[-_.]", tail))


def _plausible(rule: Rule, value: str) -> bool:
    """The context rules: a match is a secret unless it is an example, a placeholder or redaction,
    a run of words, or below the rule's entropy floor."""
    if _PLACEHOLDER.search(value) or _CODE_CALL.match(value):
        return False
    if _SELF_NAMED.search(value) and _WORDY.fullmatch(value):
        return False
    if rule.wordy_ok and _is_wordy(value):
        return False
    if len(value) < rule.alpha_min and value.isalpha() and _is_word(value):
        return False
    if rule.entropy and shannon_entropy(value) < rule.entropy:
        return False
    if rule.id == "base64-private-key":
        return _decodes_to_private_key(value)
    return True


def _decodes_to_private_key(value: str) -> bool:
    """`LS0tLS1CRUdJTi…` is `-----BEGIN…` in base64: a secret when it is a private key, not a certificate."""
    import base64
    import binascii

    head = value[:120]
    try:
        text = base64.b64decode(head[: len(head) // 4 * 4])
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in text


def scan(text: str, field: str = "text", *, anywhere: bool = False,
         rules: Iterable[Rule] | None = None) -> Iterator[Finding]:
    """Every secret-looking value in `text`, in rule order (a rule reports its first plausible hit).
    `anywhere`: also a match glued to a preceding letter or digit (for what an error may quote).
    `rules`: only these (in RULES order; scan_fields passes the ones whose keywords occur at all)."""
    if not text:
        return
    lowered = text.lower()
    same_offsets = len(lowered) == len(text)  # a few characters lowercase to two (İ); then use re.I
    for rule in RULES if rules is None else rules:
        if not any(k in lowered for k in rule.keywords):
            continue
        if rule.nocase:
            matches = _pattern(rule).finditer(lowered) if same_offsets else _pattern(rule, True).finditer(text)
        else:
            matches = _pattern(rule).finditer(text)
        for m in matches:
            start = m.start()
            if rule.boundary and not anywhere and start > 0 and text[start - 1].isalnum():
                continue
            value = text[m.start(rule.group):m.end(rule.group)]
            if value and _plausible(rule, value):
                yield Finding(rule.id, field, m.start(rule.group))
                break


def first_secret(text: str, field: str = "text") -> Finding | None:
    """The first finding in `text`, or None."""
    return next(scan(text, field), None)


def scan_fields(fields: Iterable[tuple[str, str]]) -> Finding | None:
    """The first finding over (field name, text) pairs, or None.

    The keywords are looked for once in all the fields together, and each field is scanned only by
    the rules whose keywords occur somewhere (the same findings, in the same order: a rule still runs
    on a field only when its keyword is in that field). Indexing a store scans every version, and
    asking 46 rules about each of a record's ~5 fields cost ~0.4 ms a record (issue 27). Nor does a
    rule run whose matches need a longer run of non-space characters than any field has (Rule.run):
    prose of short words skips the ~150 token prefixes and looks for ~10 context keywords (issue 39);
    the choice is rules_in's (a few passes in C over the bytes). The (field, text) pairs to scan are
    listed only when a rule is chosen: for most records none is."""
    fields = fields if isinstance(fields, (list, tuple)) else list(fields)  # walked twice
    joined = "\n".join([text for _name, text in fields if text])
    if not joined:
        return None
    rules = rules_in(joined)
    if not rules:
        return None
    for name, text in fields:
        if not text:
            continue
        found = next(scan(text, name, rules=rules), None)
        if found is not None:
            return found
    return None


# The one choice of rules before a scan (scan_fields, receipts.scrubbed): a few passes in C over the
# text's UTF-8 bytes (issue 39: the split and keyword loop it replaced were half the served checks
# of a snapshot's record). It may keep a rule that cannot match (scan still asks a rule's keyword of
# each field), never one that can, with or without scan's `anywhere` (no rule's gate below reads
# the character before a match):
# - the rules in _ASCII_RUN: every match is printable ASCII without a space (`!`-`~`), taken from
#   the text as it is (case-sensitive), at least Rule.run long, and holds one of the rule's keywords
#   in some case (tests/test_secret_gate.py proves it of each pattern). So one can match only inside
#   a run of such characters that long whose lowercase holds a keyword: found with bytes.translate
#   and one search for Rule.run letters, and most prose has no such run;
# - the others (context rules, and `-----BEGIN … PRIVATE KEY-----`, `SSWS <token>` with their spaces):
#   a mark they need (Rule.marks) and a keyword in the lowercased text (a rule kept is only
#   asked again). An ASCII keyword is in `text.lower()` exactly when it
#   is in the UTF-8 bytes' ASCII lowercase, unless the text holds U+0130 or U+212A, the two
#   characters whose lowercase holds ASCII letters (`İ` -> `i̇`, the Kelvin sign -> `k`; the test
#   checks Python's Unicode tables): then, and for `пароль`, str.lower is asked.
_ASCII_RUN = frozenset(f[0] for f in FORMATS) | {
    "jwt", "putty-private-key", "base64-private-key", "doppler-config-token", "mailchimp-key",
    "airtable-token", "azure-ad-client-secret", "tailscale-key", "dynatrace-token",
    "terraform-cloud-token", "mapbox-secret-token", "telegram-bot-token"}
_BY_RUN = sorted((rule.run, k.encode(), n)
                 for n, rule in enumerate(RULES) if rule.id in _ASCII_RUN for k in rule.keywords)
_RUN_MIN = _BY_RUN[0][0]
_GRAPHIC = bytes(0x61 if 0x21 <= b <= 0x7E else 0x20 for b in range(256))  # printable ASCII -> a, else space
_MARKS = (":", "=", "@")
assert all(set(rule.marks) <= set(_MARKS) for rule in RULES)


# Two of the other rules hold a run of printable ASCII this long in every match, its characters
# consecutive (tests/test_secret_gate.py reads it off the patterns): Okta's token in the text as it
# is; a bearer token in the lowercased text, so in the text itself only when it holds neither U+0130
# nor U+212A (U+0130 is also the one character whose lowercase is longer: then scan uses re.I).
_ASCII_NEED = {"okta-token": (42, True), "bearer-token": (20, False)}  # rule: (run, whatever the text)


def _context_words(present: tuple[str, ...]) -> tuple[tuple[str, bytes | None, tuple[int, ...], int, bool], ...]:
    """Each keyword of the other rules whose marks `present` allows: (keyword, its UTF-8 bytes when
    ASCII, its rules, the printable-ASCII run they all need (0: none), needed whatever the text)."""
    words: dict[str, list[int]] = {}
    for n, rule in enumerate(RULES):
        if rule.id not in _ASCII_RUN and (not rule.marks or any(m in present for m in rule.marks)):
            for k in rule.keywords:
                words.setdefault(k, []).append(n)
    out = []
    for k, ns in words.items():
        needs = [_ASCII_NEED.get(RULES[n].id, (0, True)) for n in ns]
        out.append((k, k.encode() if k.isascii() else None, tuple(ns), min(need for need, _always in needs),
                    all(always for _need, always in needs)))
    return tuple(out)


# by which of `:`, `=`, `@` the text holds (bit 1, 2, 4)
_CONTEXT = tuple(_context_words(tuple(m for i, m in enumerate(_MARKS) if bits >> i & 1)) for bits in range(8))

_RUN_NEEDS = [need for need, _word, _n in _BY_RUN]
_run_patterns: dict[int, re.Pattern[bytes]] = {}


def _run_words(length: int) -> re.Pattern[bytes]:
    """One pattern for the keywords of the _ASCII_RUN rules a run of `length` allows (made on first use)."""
    count = bisect_right(_RUN_NEEDS, length)
    compiled = _run_patterns.get(count)
    if compiled is None:
        words = sorted({word for _need, word, _n in _BY_RUN[:count]}, key=len, reverse=True)
        compiled = _run_patterns[count] = re.compile(b"|".join(map(re.escape, words)))
    return compiled


def rules_in(joined: str) -> list[Rule]:
    """The rules (in RULES order) that may match in `joined` (see above): `scan(text, rules=rules_in(text))`
    finds what `scan(text)` finds, anywhere or not, in a fraction of the time for prose."""
    raw = joined.encode("utf-8", "surrogatepass")
    low = raw.lower()
    picked: list[int] = []
    runs = raw.translate(_GRAPHIC)
    longest = 0  # the longest run of printable ASCII when one is _RUN_MIN long, else 0
    start = runs.find(b"a" * _RUN_MIN)
    while start >= 0:
        end = runs.find(b" ", start)
        end = len(runs) if end < 0 else end
        longest = max(longest, end - start)
        run = low[start:end]
        if _run_words(end - start).search(run) is not None:  # one of the keywords the run allows
            for need, word, n in _BY_RUN:
                if need > end - start:
                    break
                if word in run:
                    picked.append(n)
        start = runs.find(b"a" * _RUN_MIN, end)
    ascii = joined.isascii()  # then its lowercase holds no keyword but an ASCII one
    odd = not ascii and ("\u0130" in joined or "\u212a" in joined)
    lowered = joined.lower() if odd else None
    for word, data, rules, need, always in _CONTEXT[(":" in joined) + ("=" in joined) * 2 + ("@" in joined) * 4]:
        if need > longest and (always or not odd):  # need >= _RUN_MIN: longest 0 is short enough
            continue
        if lowered is not None:
            found = word in lowered
        elif data is not None:
            found = data in low
        elif ascii:
            continue
        else:
            lowered = joined.lower()
            found = word in lowered
        if found:
            picked.extend(rules)
    return [RULES[n] for n in sorted(set(picked))]


SHOWN_MAX = 60  # an error quotes at most this many characters of a value it refused


def shown(value: object) -> str:
    """`value` as an error may quote it: never when it looks like a secret (or is long enough to hide
    one), never with control characters. Errors for `due`, `at`, `as_of` … go through here so that no
    refusal echoes a secret it refused (issue 24, failure 2)."""
    text = str(value)
    glued = next(scan(text, anywhere=True), None)  # `2026-13-45ghp_…`: a token glued on counts here
    if len(text) > SHOWN_MAX or glued is not None:
        return "<value not shown: it is long or looks like a secret>"
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
                   for ch in text)
