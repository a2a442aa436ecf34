"""The level generator: deterministic, well-formed, harder with the tier, and the study's design."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from vocab.levels import (
    GENERATOR_VERSION,
    N_TIERS,
    LevelError,
    design,
    generate,
    lexicon,
    parse_ranges,
    subwords,
    tier_levels,
    tier_of,
    tier_settings,
)


def spelled_from(word: str, seed: str) -> bool:
    need, have = Counter(word), Counter(seed)
    return all(have[c] >= n for c, n in need.items())


@pytest.mark.parametrize("level", [1, 7, 20, 21, 140, 333, 600, 601, 5000, 123456])
def test_level_is_well_formed(level):
    lv = generate(level)
    s = lv.settings
    assert lv.level == level and lv.tier == tier_of(level) and lv.generator_version == GENERATOR_VERSION
    assert len(lv.seed_word) == s["seed_length"]
    assert list(lv.words) == sorted(set(lv.words)) and len(lv.words) == s["n_words"]
    for w in lv.words:
        assert w.islower() and w.isalpha() and spelled_from(w, lv.seed_word)
        assert len(w) >= s["min_word_length"] or w == lv.seed_word
    assert (lv.seed_word in lv.words) is s["require_seed_word"]
    assert lv.lexicon["wordfreq"] and lv.lexicon["english_words"]


def test_every_tier_generates():
    for t in range(1, N_TIERS + 1):
        for n in list(tier_levels(t))[:2]:
            assert generate(n).tier == t


def test_difficulty_grows_with_tier():
    first, last = tier_settings(1), tier_settings(N_TIERS)
    keys = ["seed_length", "n_words", "min_word_length"]
    for a, b in zip(range(1, N_TIERS), range(2, N_TIERS + 1), strict=True):
        sa, sb = tier_settings(a), tier_settings(b)
        assert all(getattr(sb, k) >= getattr(sa, k) for k in keys)
        assert sb.min_zipf <= sa.min_zipf and sb.rarity >= sa.rarity
    assert all(getattr(last, k) > getattr(first, k) for k in keys)
    assert not first.require_seed_word and last.require_seed_word
    mean_zipf = {}
    lex = lexicon()
    idx = lex.index()
    for t in (1, N_TIERS):
        zs = [lex.zipf[idx[w]] for n in tier_levels(t) for w in generate(n).words]
        mean_zipf[t] = sum(zs) / len(zs)
    assert mean_zipf[N_TIERS] < mean_zipf[1] - 1.0  # rarer words at the top


def test_lexicon_keeps_out_proper_nouns_abbreviations_and_offensive_words():
    words = set(lexicon().words)
    for w in ("tennessee", "barbara", "london", "tv", "usa", "mph"):
        assert w not in words, w
    for w in ("stone", "notes", "tones", "onset", "train", "making"):
        assert w in words, w
    from vocab.levels import _offensive

    assert not (words & _offensive())


def test_subwords():
    subs = subwords("stone")
    assert {"notes", "tones", "onset", "one", "set", "ten"} <= set(subs)
    assert "stone" not in subs and "stones" not in subs
    assert subs == sorted(subs)


def test_same_output_in_a_fresh_process_with_another_hash_seed():
    ours = [json.dumps(generate(n).as_dict()) for n in (1, 99, 777)]
    code = (
        "import json; from vocab.levels import generate; "
        "print('\\n'.join(json.dumps(generate(n).as_dict()) for n in (1, 99, 777)))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines() == ours


def test_design_is_the_study_sample():
    d = design(list(range(1, 29)), 5, 0)
    assert len(d) == 140 and d == sorted(set(d))
    assert Counter(tier_of(n) for n in d) == {t: 5 for t in range(1, 29)}
    assert design(list(range(1, 29)), 5, 0) == d
    assert design(list(range(1, 29)), 5, 1) != d


@pytest.mark.parametrize(
    "text, expected",
    [("7", [7]), ("1-3,10", [1, 2, 3, 10]), ("3, 1-2", [1, 2, 3]), ("5-5", [5])],
)
def test_parse_ranges(text, expected):
    assert parse_ranges(text) == expected


@pytest.mark.parametrize("text", ["0", "-3", "abc", "9-2", "", " ", "1-", "1,,2", "0-4"])
def test_bad_ranges(text):
    with pytest.raises(LevelError):
        parse_ranges(text)


@pytest.mark.parametrize("bad", [0, -3, 1.5, "7", True])
def test_bad_level_numbers(bad):
    with pytest.raises(LevelError):
        generate(bad)
