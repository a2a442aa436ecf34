"""The level generator: deterministic, well-formed, harder with the tier, and the study's design."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from itertools import islice

import pytest

from vocab import levels
from vocab.levels import (
    GENERATOR_VERSION,
    MAX_LEVEL,
    N_TIERS,
    LevelError,
    design,
    fill_table,
    generate,
    iter_levels,
    lexicon,
    parse_ranges,
    parse_spans,
    subwords,
    tier_levels,
    tier_of,
    tier_pool,
    tier_settings,
)


def spelled_from(word: str, seed: str) -> bool:
    need, have = Counter(word), Counter(seed)
    return all(have[c] >= n for c, n in need.items())


@pytest.mark.parametrize("level", [1, 7, 20, 21, 140, 333, 600, 601, 5000, 123456, 2**53 - 1])
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
    assert lv.lexicon["wordfreq"] and lv.lexicon["wordlist"].startswith("SCOWL")


def test_every_tier_generates_with_its_settings():
    for t in range(1, N_TIERS + 1):
        s = tier_settings(t)
        for n in tier_levels(t):
            lv = generate(n)
            assert lv.tier == t and len(lv.seed_word) == s.seed_length
            assert len(lv.words) == s.n_words + s.require_seed_word
            assert all(len(w) >= s.min_word_length for w in lv.words)


def test_every_tier_has_seed_words_that_fill_a_level():
    table = fill_table()
    assert list(table.index) == list(range(1, N_TIERS + 1))
    assert (table.fillable >= 500).all() and (table.share > 0.5).all()
    assert (table.median_candidates >= table.n_words + 2).all()


def test_tier_pools_hold_exactly_the_subwords_of_each_seed():
    """The bitset pair finder against a plain Counter check, on seeds of every seed length."""
    lex = lexicon()
    for t in (1, 7, 13, 16, 19, 25, 31):
        s, pool = tier_settings(t), tier_pool(t)
        seeds = [
            w
            for w, z, n in zip(lex.words, lex.zipf, lex.lengths, strict=True)
            if n == s.seed_length and z >= s.seed_min_zipf
        ]
        assert [lex.words[i] for i in pool.seeds] == seeds
        for k in (0, len(pool.fillable) // 2, len(pool.fillable) - 1):
            seed = lex.words[pool.fillable[k]]
            got = [lex.words[j] for j in pool.cand[pool.ptr[k] : pool.ptr[k + 1]]]
            want = [
                w
                for w, z in zip(lex.words, lex.zipf, strict=True)
                if w != seed and len(w) >= s.min_word_length and z >= s.min_zipf and spelled_from(w, seed)
            ]
            assert got == want, (t, seed)


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
    for w in ("tennessee", "barbara", "london", "tv", "usa", "mph", "nasa", "dont", "isnt"):
        assert w not in words, w
    for w in ("stone", "notes", "tones", "onset", "train", "making"):
        assert w in words, w
    from vocab.lexicon import offensive_words as _offensive

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


@pytest.mark.parametrize("text", ["0", "-3", "abc", "9-2", "", " ", "1-", "1,,2", "0-4", "1-1000001", "9" * 30])
def test_bad_ranges(text):
    with pytest.raises(LevelError):
        parse_ranges(text)


def test_spans_are_merged_and_counted_without_their_members():
    sp = parse_spans("10-20, 1-3, 15-30, 4")
    assert sp.spans == ((1, 4), (10, 30)) and len(sp) == 25
    assert list(sp) == [1, 2, 3, 4, *range(10, 31)]
    big = parse_spans("1-1000000")  # the limit itself: allowed, and held as one span
    assert len(big) == 1_000_000 and big.spans == ((1, 1_000_000),)
    assert len(parse_spans("5-999999, 1-1000000")) == 1_000_000  # overlaps count once
    with pytest.raises(LevelError, match="at most 1000000"):
        parse_spans("1-500000, 600000-1200000")
    with pytest.raises(LevelError, match="tier numbers go up to 31"):
        parse_spans("1-99999999999", "tier")
    with pytest.raises(LevelError, match="go up to"):
        parse_spans(f"{MAX_LEVEL + 1}")


def _vocab_levels(args: list[str], mem_limit: int | None = None) -> subprocess.CompletedProcess:
    def cap():  # runs in the child: an address-space cap far below what an unbounded range would take
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))

    return subprocess.run(
        [sys.executable, "-m", "vocab.cli", "levels", *args],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=cap if mem_limit else None,
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["1-99999999999"], "holds 99999999999 levels; at most 1000000"),
        (["--tiers", "1-99999999999", "--per-tier", "5"], "tier numbers go up to 31"),
        (["--tiers", "1-28", "--per-tier", "99999999999"], "per-tier must lie in 1..20"),
        (["1-" + "9" * 40], "expected N or N-M"),
    ],
)
def test_an_unbounded_request_is_refused_in_one_line_under_a_memory_cap(args, message):
    out = _vocab_levels(args, mem_limit=1 << 30)  # 1 GiB; the old generator grew to 23.8 GB on the first one
    assert out.returncode == 2, out.stderr
    assert out.stdout == "" and out.stderr.count("\n") == 1 and message in out.stderr


def test_a_long_range_streams(monkeypatch):
    out = _vocab_levels(["99999-100002"])
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["level"] for r in rows] == [99999, 100000, 100001, 100002]
    assert rows[0] == generate(99999).as_dict()
    # nothing is generated up front: the first three of a million levels generate three levels, no more
    generated = []

    def counting_generate(n, lex=None):
        generated.append(n)
        return generate(n, lex)

    monkeypatch.setattr(levels, "generate", counting_generate)
    stream = iter_levels(parse_spans("1-1000000"))
    assert generated == []
    first = [lv.as_dict() for lv in islice(stream, 3)]
    assert generated == [1, 2, 3]
    assert first == [generate(n).as_dict() for n in (1, 2, 3)]


@pytest.mark.parametrize("bad", [0, -3, 1.5, "7", True])
def test_bad_level_numbers(bad):
    with pytest.raises(LevelError):
        generate(bad)
