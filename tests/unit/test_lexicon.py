"""The level generator's words are real English words: checked against dictionaries it does not read."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import wordfreq

from tests.unit.dictionaries import in_dictionaries
from vocab import levels, wordlist

# The study's design (tiers 1-28 x 5 levels, seed 0) and levels 1-2,000.
DESIGN = levels.design(list(range(1, 29)), 5, 0)
# Words of generator 1.0.0's design that no player would accept (the issue that replaced its lexicon).
UNPLAYABLE = [
    "ings",
    "ive",
    "ands",
    "ars",
    "ers",
    "ses",
    "sion",
    "ster",
    "ness",
    "belive",
    "lile",
    "dier",
    "nier",
    "vater",
    "nach",
    "mein",
    "dass",
    "sie",
    "rhein",
    "rodman",
    "layne",
    "seger",
    "hiro",
    "toru",
    "koda",
    "kona",
    "ironman",
    "saas",
    "oled",
    "cern",
]
# The words of UNPLAYABLE that the independent dictionaries do list, and where from; the dictionaries refuse the
# other twenty. (english_words drops a GCIDE headword's hyphen, so a suffix reads as a word.)
DICTIONARIES_LIST = {
    "ive": "GCIDE's suffix -ive",
    "ster": "GCIDE's suffix -ster",
    "ness": "GCIDE's suffix -ness and headword Ness; WordNet's noun ness, a headland",
    "ers": "GCIDE's headword Ers",
    "belive": "GCIDE's headword Belive",
    "rhein": "GCIDE's headword Rhein",
    "ars": "WordNet's -s rule on the noun ar, a unit of area",
    "ses": "WordNet's -ses -> -s rule on the noun s, the letter",
    "dass": "WordNet's -s rule on the noun das, a hyrax",
    "ironman": "WordNet's noun ironman, a strong man of exceptional endurance",
}


def _share_in_dictionaries(numbers) -> tuple[float, list[str]]:
    lex = levels.lexicon()
    words = [w for n in numbers for w in levels.generate(n, lex).words]
    missing = [w for w in words if not in_dictionaries(w)]
    return 1 - len(missing) / len(words), sorted(set(missing))


@pytest.mark.parametrize("name, numbers", [("design", DESIGN), ("levels 1-2000", range(1, 2001))])
def test_target_words_are_in_independent_dictionaries(name, numbers):
    share, missing = _share_in_dictionaries(numbers)
    assert share >= 0.985, f"{name}: {share:.4f} of target words in the dictionaries; not found: {missing}"


def test_the_dictionary_check_can_fail():
    """The check rejects the fragments, foreign words and names that generator 1.0.0 produced, all but the ten
    that some dictionary lists (DICTIONARIES_LIST)."""
    accepted = {w for w in UNPLAYABLE if in_dictionaries(w)}
    assert accepted == set(DICTIONARIES_LIST)
    assert len(UNPLAYABLE) - len(accepted) == 20
    assert all(in_dictionaries(w) for w in ("stone", "notes", "tones", "making", "stopped", "children", "the"))


def test_no_unplayable_word_of_the_old_lexicon_is_left():
    words = set(levels.lexicon().words)
    assert not words & set(UNPLAYABLE)
    design_words = {w for n in DESIGN for w in levels.generate(n).words}
    assert not design_words & set(UNPLAYABLE)


def test_zipf_is_wordfreqs():
    lex = levels.lexicon()
    for i in range(0, len(lex.words), 997):
        assert math.isclose(lex.zipf[i], wordfreq.zipf_frequency(lex.words[i], "en")), lex.words[i]
    assert lex.zipf.min() >= levels.MIN_ZIPF_LEXICON


def test_committed_wordlist_is_what_its_command_makes(tmp_path):
    scowl = Path("/usr/share/dict/scowl")
    assert scowl.exists(), "Debian's scowl is not installed (make setup installs it)"
    committed = wordlist.WORDLIST.read_text()
    out = tmp_path / "list.txt"
    version = wordlist.source_line().split()[1]
    assert wordlist.main(["--scowl", str(scowl), "--out", str(out), "--version", version]) == 0
    assert out.read_text() == committed
    assert wordlist.COMMAND in committed
