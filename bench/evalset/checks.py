"""The dev set's own rules, checked without kyb: counts, keys, and paraphrases that are fair.

Words are compared as the index sees them (porter stemming, case and diacritic folding), function
words left out; CamelCase alert names are split too, so "CephOSDDown" forbids "ceph", "osd" and
"down". A `paraphrase_en` question shares no content word with its target's title or key, and no
*distinctive* word with its body (one found in at most RARE_DF of the documents): what is left in
common are words that half the set uses ("cluster", "node"), so lexical search cannot find it by
construction. A `reworded_en` question only keeps off the title and key; it may reuse the body's
vocabulary, as people who half-remember a page do. A `tail_en` question is answered by a `passage`
found past TAIL_OFFSET characters of its target — beyond what a model that reads only the first 512
tokens sees — and keeps off the title and key too. An identifier must occur verbatim in its target
and in no other document, so its answer is unambiguous. Used by bench/eval_devset.py (which
refuses to run on a broken set) and tests/test_evalset_wellformed.py.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def docs_path() -> Path:
    """Where the documents are: $KYB_EVALSET_DOCS, else bench/evalset/docs.jsonl (made by
    extract_docs.py from the fetched repositories), else ../shared/evalset/docs.jsonl beside the checkout.

    The documents are public text taken from other repositories, so they are not committed here
    (bench/evalset/README.md, "Where the documents live"); the questions are ours and are."""
    import os

    env = os.environ.get("KYB_EVALSET_DOCS")
    candidates = ([Path(env)] if env else []) + [HERE / "docs.jsonl",
                                                 HERE.parents[1].parent / "shared" / "evalset" / "docs.jsonl"]
    return next((c for c in candidates if c.exists()), candidates[0])


DOCS = docs_path()
QUESTIONS = HERE / "questions.jsonl"
TOKENIZER = "porter unicode61 remove_diacritics 2"  # kyb's own (kyb_cli index schema)

KINDS = ("paraphrase_en", "reworded_en", "tail_en", "cross_language", "identifier", "keyword", "off_topic")
RARE_DF = 0.10  # a word in at most this share of the documents is distinctive
TAIL_OFFSET = 2500  # characters: past the model's 512-token window for English prose
MINIMUM = {"documents": 150, "questions": 150, "languages": 6, "off_topic": 30}

# Function words: sharing these is not sharing meaning.
STOPWORDS = frozenset("""a an and are as at be been but by can could do does for from has have how i if in
into is it its may must my no not of on once one or our should so than that the their them then there
these they this to up us was we what when where which while who whose why will with without you your
all any each every own same such only very just also""".split())


def split_of(question: dict) -> str:
    """"fit" or "check", half each, fixed by the question's id: tune thresholds on one half and
    report on the other (bench/eval_devset.py --split), so a calibration is not scored on its own data."""
    import hashlib

    return "fit" if hashlib.sha256(question["id"].encode()).digest()[0] % 2 == 0 else "check"


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def camel_split(text: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)


class Tokens:
    """Stemmed tokens of a text under the index's tokenizer (an in-memory FTS5 vocabulary)."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")

    def __call__(self, text: str) -> set[str]:
        c = self.conn
        c.execute("DROP TABLE IF EXISTS v")
        c.execute("DROP TABLE IF EXISTS t")
        c.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZER}')")
        c.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
        c.execute("INSERT INTO t VALUES (?)", (text,))
        return {row[0] for row in c.execute("SELECT term FROM v")}


def shared_title_words(question: str, doc: dict, tokens: Tokens | None = None) -> set[str]:
    """Content words (stemmed) of `question` that also occur in the doc's title or key."""
    tokens = tokens or Tokens()
    words = {w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS}
    q = tokens(" ".join(words))
    target = tokens(f"{doc['title']} {camel_split(doc['title'])} {doc['key'].replace('-', ' ')}")
    return q & target


def distinctive_shared(question: str, doc: dict, df: dict[str, int], n_docs: int,
                       tokens: Tokens | None = None) -> set[str]:
    """Content words of `question` found in the doc's body that at most RARE_DF of the documents use."""
    tokens = tokens or Tokens()
    words = {w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS}
    shared = tokens(" ".join(words)) & tokens(f"{doc['title']} {camel_split(doc['title'])} {doc['body']}")
    return {t for t in shared if df.get(t, 0) <= RARE_DF * n_docs}


def document_frequency(docs: list[dict], tokens: Tokens | None = None) -> dict[str, int]:
    tokens = tokens or Tokens()
    return Counter(t for d in docs for t in tokens(f"{d['title']} {camel_split(d['title'])} {d['body']}"))


def problems(docs: list[dict] | None = None, questions: list[dict] | None = None) -> list[str]:
    """Every way the set breaks its own rules (empty when well-formed)."""
    docs = load(DOCS) if docs is None else docs
    questions = load(QUESTIONS) if questions is None else questions
    out: list[str] = []
    keys = [d["key"] for d in docs]
    by_key = {d["key"]: d for d in docs}
    if len(set(keys)) != len(keys):
        out.append("duplicate document keys")
    for d in docs:
        for field in ("key", "title", "body", "tags", "source", "licence"):
            if not d.get(field):
                out.append(f"{d.get('key')}: missing {field}")
    ids = [q["id"] for q in questions]
    if len(set(ids)) != len(ids):
        out.append("duplicate question ids")
    if len(docs) < MINIMUM["documents"]:
        out.append(f"{len(docs)} documents < {MINIMUM['documents']}")
    if len(questions) < MINIMUM["questions"]:
        out.append(f"{len(questions)} questions < {MINIMUM['questions']}")
    kinds = Counter(q["kind"] for q in questions)
    if kinds["off_topic"] < MINIMUM["off_topic"]:
        out.append(f"{kinds['off_topic']} off-topic questions < {MINIMUM['off_topic']}")
    langs = {q["lang"] for q in questions}
    if len(langs) < MINIMUM["languages"]:
        out.append(f"{len(langs)} languages < {MINIMUM['languages']}")
    tokens = Tokens()
    df = document_frequency(docs, tokens)
    lowered = {d["key"]: f"{d['title']}\n{d['body']}".lower() for d in docs}
    for q in questions:
        if q["kind"] not in KINDS:
            out.append(f"{q['id']}: unknown kind {q['kind']!r}")
        rel = q["relevant"]
        if q["kind"] == "off_topic":
            if rel:
                out.append(f"{q['id']}: off-topic question lists relevant keys")
            continue
        if not rel:
            out.append(f"{q['id']}: no relevant key")
        for k in rel:
            if k not in by_key:
                out.append(f"{q['id']}: unknown key {k!r}")
        if q["kind"] == "cross_language" and q["lang"] == "en":
            out.append(f"{q['id']}: cross-language question in English")
        if q["kind"] == "tail_en":
            passage = " ".join((q.get("passage") or "\0").split())
            at = [" ".join(by_key[k]["body"].split()).find(passage) for k in rel if k in by_key]
            if not any(a >= TAIL_OFFSET for a in at):
                out.append(f"{q['id']}: passage not found past character {TAIL_OFFSET} of {rel} ({at})")
        if q["kind"] in ("paraphrase_en", "reworded_en", "tail_en"):
            for k in rel:
                if k in by_key and (shared := shared_title_words(q["query"], by_key[k], tokens)):
                    out.append(f"{q['id']}: {q['kind']} shares {sorted(shared)} with the title/key of {k}")
        if q["kind"] == "paraphrase_en":
            for k in rel:
                if k in by_key and (rare := distinctive_shared(q["query"], by_key[k], df, len(docs), tokens)):
                    out.append(f"{q['id']}: paraphrase shares distinctive {sorted(rare)} with the body of {k}")
        if q["kind"] == "identifier":
            needle = q["query"].lower()
            holders = sorted(k for k, text in lowered.items() if needle in text)
            if sorted(rel) != holders:
                out.append(f"{q['id']}: identifier {q['query']!r} occurs in {holders}, relevant {rel}")
    return out


if __name__ == "__main__":
    found = problems()
    print("\n".join(found) or "ok")
    raise SystemExit(1 if found else 0)
