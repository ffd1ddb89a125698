"""Issue 37, item 6: 21 of 76 secret formats in the round-three corpus were missed (`ntn_` Notion,
`NRAK-` New Relic, `dp.st.` Doppler, `sbp_` Supabase, `HRKU-` Heroku, `SSWS` Okta, `CFPAT-`
Contentful, `ATBB` Bitbucket, `LTAI` Alibaba, `AKID` Tencent, `EAAB` Facebook …). Each documented
shape (prefix + length + alphabet) is now caught, in every field a write scans, while look-alikes —
the prefix in prose, a too-short value, ordinary words — still pass. Every value here is synthetic
(a seeded generator), none is a real credential."""

from __future__ import annotations

import random
import string

import pytest

from kyb_cli.core.errors import Rejected
from kyb_cli.core.records import secrets
from kyb_cli.core.records.model import Record
from kyb_cli.core.records.validate import validate

_R = random.Random(37)
B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UP = string.ascii_uppercase + string.digits
LOW = string.ascii_lowercase + string.digits


def rnd(alphabet: str, n: int) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


def uuid() -> str:
    return "-".join(rnd(HEX, n) for n in (8, 4, 4, 4, 12))


CAUGHT = {
    "notion": "ntn_" + rnd("0123456789", 11) + rnd(B62, 35),
    "newrelic-user-key": "NRAK-" + rnd(UP, 27),
    "newrelic-insert-key": "NRII-" + rnd(UP, 32),
    "newrelic-browser": "NRJS-" + rnd(HEX, 19),
    "doppler-service": "dp.st.prd." + rnd(B62, 43),
    "doppler-personal": "dp.pt." + rnd(B62, 43),
    "supabase": "sbp_" + rnd(HEX, 40),
    "supabase-secret": "sb_secret_" + rnd(B62, 31),
    "heroku-uuid": "HRKU-" + uuid(),
    "heroku-aa": "HRKU-AA" + rnd(B62 + "_-", 58),
    "okta": "Authorization: SSWS 00" + rnd(B62 + "_-", 40),
    "contentful": "CFPAT-" + rnd(B62 + "_-", 43),
    "bitbucket": "ATBB" + rnd(B62, 32),
    "atlassian": "ATATT3xFfGF0" + rnd(B62 + "_-", 180),
    "alibaba": "LTAI" + rnd(B62, 20),
    "tencent": "AKID" + rnd(B62, 32),
    "facebook": "EAAB" + rnd(B62, 160),
    "facebook-page": "EAAG" + rnd(B62, 120),
    "groq": "gsk_" + rnd(B62, 52),
    "xai": "xai-" + rnd(B62, 80),
    "replicate": "r8_" + rnd(B62, 37),
    "buildkite": "bkua_" + rnd(HEX, 40),
    "netlify": "nfp_" + rnd(B62, 36),
    "render": "rnd_" + rnd(B62, 32),
    "prefect": "pnu_" + rnd(B62, 36),
    "figma": "figd_" + rnd(B62 + "_-", 40),
    "flyio": "fo1_" + rnd(B62 + "_-", 43),
    "onepassword": "ops_eyJ" + rnd(B62, 300),
    "shippo": "shippo_live_" + rnd(HEX, 40),
    "flutterwave": "FLWSECK-" + rnd(HEX, 32) + "-X",
    "typeform": "tfp_" + rnd(B62, 59),
    "sourcegraph": "sgp_" + rnd(HEX, 40),
    "clojars": "CLOJARS_" + rnd(LOW, 60),
    "duffel": "duffel_live_" + rnd(B62, 43),
    "easypost": "EZAK" + rnd(B62, 54),
    "nuget": "oy2" + rnd(LOW, 43),
    "readme": "rdme_" + rnd(LOW, 70),
    "artifactory": "AKCp" + rnd(B62, 69),
    "plaid": "access-production-" + uuid(),
    "mailchimp": rnd(HEX, 32) + "-us14",
    "airtable": "pat" + rnd(B62, 14) + "." + rnd(HEX, 64),
    "azure-ad": rnd(B62, 3) + "8Q~" + rnd(B62 + "_~.-", 34),
    "tailscale": "tskey-auth-" + rnd(B62, 12) + "-" + rnd(B62, 30),
    "dynatrace": "dt0c01." + rnd(UP, 24) + "." + rnd(UP, 64),
    "terraform-cloud": rnd(LOW, 14) + ".atlasv1." + rnd(B62 + "_-", 67),
    "mapbox": "sk.eyJ1Ijoi" + rnd(B62, 60) + "." + rnd(B62, 22),
}

LOOKALIKES = {
    "notion-prefix-in-prose": "Notion integration tokens start with ntn_ and are 50 characters long.",
    "notion-short": "ntn_1234567890abc",
    "newrelic-prose": "A New Relic user key looks like NRAK-<27 characters>; ours is in the vault.",
    "newrelic-short": "NRAK-ABC123",
    "doppler-prose": "Doppler service tokens (dp.st.<config>.<token>) are read from the environment.",
    "supabase-prose": "Supabase personal tokens begin with sbp_ followed by hex.",
    "heroku-prose": "Heroku keys now start with HRKU- (see the changelog).",
    "okta-prose": "Okta wants the header `Authorization: SSWS <token>`; SSWS stands for the scheme.",
    "okta-words": "SSWS tokens rotate every thirty days in our setup",
    "contentful-short": "CFPAT-abc",
    "bitbucket-word": "ATBB is Bitbucket's app password prefix",
    "alibaba-word": "LTAI prefixes an Alibaba access key id",
    "alibaba-short": "LTAI5t",
    "tencent-word": "AKID is the start of a Tencent SecretId; AKIDNEY is not",
    "facebook-short": "EAAB token expired",
    "facebook-word": "EAABOUT the Graph API",
    "groq-prose": "gsk_ keys go in GROQ_KEY_FILE",
    "render-word": "rnd_seed and rnd_state are numpy names",
    "figma-prose": "figd_ tokens are personal access tokens",
    "mailchimp-like": "deploy to region us-east-1 and us14",
    "tailscale-prose": "tskey-auth- keys are one-off auth keys",
    "hex-sha": "commit 3f9c2a7b1e8d4c6f0a5b9e2d7c1f8a4b6e3d0c9f reverted the change",
    "uuid": "request id 0f8fad5b-d9cb-469f-a165-70867728950e",
    "plaid-prose": "Plaid access tokens look like access-sandbox-<uuid>",
}


@pytest.mark.parametrize("name", sorted(CAUGHT))
def test_each_round_three_secret_format_is_caught(name):
    text = f"the credential is {CAUGHT[name]} for now"
    assert secrets.first_secret(text, "body") is not None, name


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
def test_round_three_lookalikes_are_not_refused(name):
    assert secrets.first_secret(LOOKALIKES[name], "body") is None, name


@pytest.mark.parametrize("name", ["notion", "newrelic-user-key", "doppler-service", "supabase", "heroku-uuid",
                                  "okta", "contentful", "bitbucket", "alibaba", "tencent", "facebook"])
@pytest.mark.parametrize("field", ["body", "title", "tags", "refs"])
def test_a_write_holding_a_round_three_secret_is_refused_in_every_field(name, field):
    value = CAUGHT[name]
    record = (Record(key="k", title="t", body=value) if field == "body" else
              Record(key="k", title=value) if field == "title" else
              Record(key="k", title="t", **{field: [value]}))
    with pytest.raises(Rejected) as exc:
        validate(record)
    assert value not in exc.value.message


def test_every_secret_rule_has_its_own_id():
    ids = [rule.id for rule in secrets.RULES]  # compiled patterns are cached by id
    assert len(ids) == len(set(ids))
