"""Independent English dictionaries for checking the level generator's words; the generator reads none of them.

- GCIDE (Webster's 1913, revised and extended), from the ``english-words`` package;
- WordNet 3.0 (Princeton), from Debian's ``wordnet-base`` (``/usr/share/wordnet``), the lemmas that some synset
  writes in lower case (``Rhine``, ``OLED`` are not taken), with WordNet's own
  morphology: its exception lists (``noun.exc`` ...) and its detachment rules (``-s``, ``-ies`` → ``-y`` ...);
- inflected forms: a word counts when ``lemminflect`` (its own lexicon) gives a lemma that GCIDE lists
  (dictionaries list ``stone``, not ``stones``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

WORDNET = Path("/usr/share/wordnet")
_POS = ("noun", "verb", "adj", "adv")
# WordNet's morphy detachment rules (wndb(5WN), "morphy")
_RULES = {
    "noun": (
        ("s", ""),
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "verb": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")),
    "adj": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "adv": (),
}


@lru_cache(maxsize=1)
def _webster() -> frozenset[str]:
    from english_words import get_english_words_set

    # GCIDE capitalises its headwords, so their case says nothing; Webster's 2nd is left out: it lists thousands
    # of obscure lower-case entries ("rodman", "mein", "sie", "hiro") and would pass the words this checks for.
    return frozenset(get_english_words_set(["gcide"], lower=True, alpha=True))


@lru_cache(maxsize=1)
def _wordnet() -> tuple[dict, dict]:
    if not (WORDNET / "index.noun").exists():
        raise FileNotFoundError(f"WordNet 3.0 is not in {WORDNET}: apt-get install wordnet-base (make setup does)")
    lemmas, exceptions = {}, {}
    for pos in _POS:
        # The index is all lower case; the synsets (data.*) keep a lemma's case, so a lemma that is only ever
        # capitalised there ("Rhine", "OLED") is a name or an abbreviation and is not taken.
        lower: set[str] = set()
        for ln in (WORDNET / f"data.{pos}").read_text(encoding="latin-1").splitlines():
            if not ln or ln.startswith(" "):
                continue
            fields = ln.split(" ")
            n = int(fields[3], 16)
            for lemma in fields[4 : 4 + 2 * n : 2]:
                lemma = lemma.split("(", 1)[0]  # adjective markers: "long(a)"
                if lemma.islower() and lemma.isalpha():
                    lower.add(lemma)
        lemmas[pos] = frozenset(lower)
        exc: dict[str, list[str]] = {}
        for ln in (WORDNET / f"{pos}.exc").read_text(encoding="latin-1").splitlines():
            parts = ln.split()
            if len(parts) >= 2:
                exc.setdefault(parts[0], []).extend(parts[1:])
        exceptions[pos] = exc
    return lemmas, exceptions


def in_wordnet(word: str) -> bool:
    lemmas, exceptions = _wordnet()
    for pos in _POS:
        if word in lemmas[pos] or any(b in lemmas[pos] for b in exceptions[pos].get(word, ())):
            return True
        for suffix, repl in _RULES[pos]:
            if word.endswith(suffix) and word[: len(word) - len(suffix)] + repl in lemmas[pos]:
                return True
    return False


def in_dictionaries(word: str) -> bool:
    """Listed by Webster's 2nd, GCIDE or WordNet 3.0, as it stands or as an inflection of a listed word."""
    from lemminflect import getAllLemmas

    web = _webster()
    if word in web or in_wordnet(word):
        return True
    return any(lemma in web for lemmas in getAllLemmas(word).values() for lemma in lemmas)
