"""Which vector sides a question goes to, and how their scores become one meaning score.

Routing: a question is English when it is written in ASCII and holds none of the function words of
the other Latin-script languages the dev set covers (German, French, Spanish, Portuguese). On the
dev set's 484 questions this router says "English" for 403 of 403 English questions and for none
of the 81 others, the 10 ASCII ones included (`Wie starte ich …`, `comment purger …`; `python
bench/exp_two_models.py --router`). An English question is ranked by e5 and by the English model
(core/embed/models.py BGE), every other one by e5 alone: bge halves cross-language top-3 (0.93 ->
0.47 dense) while lifting English paraphrases (0.41 -> 0.55; both fused 0.58, docs/SEARCH.md).

Fusing: per question, each side's meaning scores (search/semantic.py: a version's two best passages)
are z-scored over the candidates both sides and the words brought, summed with equal weight, and
put back on e5's scale (e5's mean and spread over the same candidates), so the rest of the
pipeline — the words' share in fusion.py, the lead of identifiers, `vector_rank` — reads one
meaning score as before. A candidate without a vector on one side yet (pending) counts as that
side's weakest. Strength stays e5's calibrated score (search/relevance.py): the English side adds
ranking, not confidence.
"""

from __future__ import annotations

import math
import re

# Function words of German, French, Spanish and Portuguese that are not English words ("do", "a",
# "die", "on", "so" are left out: they would send English questions away).
_OTHER_LATIN = frozenset("""
der das den dem des ein eine einer einem einen eines und oder ist sind war waren wird werden
wurde wurden haben wie wo wer wann warum welche welcher welches ich du er sie wir ihr mich mir uns
euch bei mit von zu zum zur im auf aus auch woher wohin nicht
de le la les un une du et ou est sont etre ont avoir que qui quoi quand comment pourquoi quel
quelle quels quelles ce cet cette ces il elle ils elles nous vous je tu se sa son ses leur leurs
dans sur par pour avec au aux pas
el los las unos unas son esta estan ser fue quien cuando donde como cual cuales cuanto cada del al
en por para con su sus lo mi nos
um uma uns umas sao foi quem quando onde qual quais com da dos das na nas em ao aos seu sua seus suas
""".split())
_WORD = re.compile(r"[a-z]+")
# The words' weight in fusion.py for a question both sides ranked (e5 alone: fusion.WORDS_WEIGHT
# 0.04). The fused meaning is the better judge of a paraphrase, so words count less: on the dev set
# (full, hybrid top-3 paraphrase / reworded / tail) 0.04: 0.56 / 0.97 / 0.93, 0.03: 0.58 / 0.96 /
# 0.93, 0.02: 0.59 / 0.96 / 0.93, 0.01: 0.60 / 0.95 / 0.90, 0: 0.61 / 0.95 / 0.90.
WORDS_WEIGHT = 0.01


def is_english(text: str) -> bool:
    """The router: ASCII and no other Latin-script language's function word."""
    if not text.isascii():
        return False
    return not any(w in _OTHER_LATIN for w in _WORD.findall(text.lower()))


def _z(scores: dict) -> tuple[dict, float, float]:
    """Each score's z over the dict, and the dict's mean and spread."""
    values = list(scores.values())
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1e-6
    return {k: (v - mean) / sd for k, v in scores.items()}, mean, sd


def fused_meaning(base: dict, english: dict, idents: list) -> dict:
    """One meaning score per ident from e5's (`base`) and the English side's scores: the sum of the
    two z-scores, on e5's scale. An ident missing on a side counts as that side's weakest. While one
    side has no vector at all yet (its model's vectors pending), the other side's scores stand alone,
    and only for the idents it has: a version with no vector on any side has no meaning score."""
    if not base or not english:
        alone = base or english
        return {i: alone[i] for i in idents if i in alone}
    zb, mean, sd = _z(base)
    ze, _m, _s = _z(english)
    low_b, low_e = min(zb.values()), min(ze.values())
    both = {i: zb.get(i, low_b) + ze.get(i, low_e) for i in idents}
    zs, _m, _s = _z(both)  # the sum's own spread: words weigh against meaning as with e5 alone
    return {i: mean + sd * v for i, v in zs.items()}


def combine(conn, base, english, s, lexical_vids: list[int]):
    """One SemanticSide from e5's (`base`) and the English side's: the versions either ranked, each
    with e5's Near (its calibrated score, its best passage) and the fused meaning, best first; the
    lexical candidates outside both get their fused meaning in `meanings`."""
    from kyb_cli.core.search.semantic import Near, SemanticSide, meaning_of, nearest

    e5 = {x.vid: x for x in base.ranked}
    en = {x.vid: x for x in english.ranked}
    ranked_vids = list(dict.fromkeys([*e5, *en]))
    need = [v for v in en if v not in e5]
    if need:
        e5.update({x.vid: x for x in nearest(conn, base.qvec, base.fingerprint, s, len(need),
                                               centre=base.centre, only=need)})
    outside = [v for v in dict.fromkeys(lexical_vids) if v not in e5 and v not in en]
    m5 = {v: x.meaning for v, x in e5.items()} | meaning_of(conn, base.qvec, base.fingerprint, outside)
    me = {v: x.meaning for v, x in en.items()}
    me |= meaning_of(conn, english.qvec, english.fingerprint, [v for v in [*ranked_vids, *outside] if v not in me])
    fused = fused_meaning(m5, me, [*ranked_vids, *outside])
    near: list[Near] = []
    for v in ranked_vids:
        x = e5.get(v)
        if x is None:  # no e5 vector yet: the English side's hit, without a calibrated score
            x = en[v]._replace(score=None)
        near.append(Near(*x[:6], fused.get(v, x.meaning)))  # x._replace(meaning=…): ~1.5 µs a hit more
    near.sort(key=lambda x: (-x.meaning, x.key, -x.vid))
    # pending counts both sides: a query with one model's vectors lagging starts the filler too
    return SemanticSide(near, base.pending + english.pending, None,
                        base.calibration, base.qvec, base.fingerprint,
                        meanings={v: fused[v] for v in outside if v in fused}, centre=base.centre)
