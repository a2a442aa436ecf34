"""The judge-bias lesson: the seed's published values, the 36 states, the bonuses, guided discovery, CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vocab.lesson import ITEMS, PREDICTIONS, LessonError, Session, State, all_states, evaluate, online_elo

WORDS = {"P1": (1, 2), "P2": (4, 11), "P3": (8, 1), "P4": (7, 7), "P5": (1, 1), "P6": (8, 17)}


def test_authored_word_counts():
    assert {it.id: (it.a.words, it.b.words) for it in ITEMS} == WORDS


def test_published_default_state():
    o = evaluate(State("accuracy-first", "rubric", "a-first", "forward"))
    assert (o.a_wins, o.b_wins, o.ties) == (5, 0, 1)
    assert o.verdicts == ["A", "A", "A", "A", "Tie", "A"]
    assert round(o.raw_a_win_rate, 6) == 0.833333
    assert (round(o.adjusted_a, 6), round(o.adjusted_b, 6)) == (0.916667, 0.083333)
    assert o.agreement == 1.0
    assert (round(o.elo_a, 6), round(o.elo_b, 6)) == (1062.278708, 937.721292)
    assert [(it.base_a, it.base_b) for it in o.items] == [(7, 2), (8, 7), (7, 5), (7, 2), (8, 8), (8, 7)]


def test_published_elo_steps_and_reverse_sequence():
    o = evaluate(State())
    assert [round(s.expected_a, 6) for s in o.elo_steps] == [0.5, 0.545922, 0.58698, 0.623318, 0.655303, 0.642267]
    assert round(o.elo_steps[4].delta_a, 6) == -4.969697  # a tie moves unequal ratings
    r = evaluate(State(sequence="reverse"))
    assert (round(r.elo_a, 6), round(r.elo_b, 6)) == (1065.813398, 934.186602)
    assert r.verdicts == o.verdicts  # same votes, another order


def test_36_states_and_invariants():
    states = all_states()
    assert len(states) == len(set(states)) == 36
    for s in states:
        o = evaluate(s)
        assert o.a_wins + o.b_wins + o.ties == 6
        assert abs(o.adjusted_a + o.adjusted_b - 1) < 1e-12
        assert abs(o.elo_a + o.elo_b - 2000) < 1e-9
        assert o.reference == ("A", "A", "A", "A", "Tie", "A")
        if s.rule != "position":  # order only matters through the position bonus
            assert (
                o.verdicts
                == evaluate(
                    State(s.rubric, s.rule, "b-first" if s.order == "a-first" else "a-first", s.sequence)
                ).verdicts
            )


def test_position_bonus_goes_to_the_first_displayed():
    a = evaluate(State(rule="position", order="a-first"))
    b = evaluate(State(rule="position", order="b-first"))
    assert all(r.bonus_a == 4 and r.bonus_b == 0 for r in a.items)
    assert all(r.bonus_b == 4 and r.bonus_a == 0 for r in b.items)
    assert b.verdicts == ["A", "B", "B", "A", "B", "B"]  # a score gap of 5 outweighs the bonus of 4


def test_length_bonus_only_for_the_strictly_longer():
    o = evaluate(State(rule="length"))
    bonus = {r.id: (r.bonus_a, r.bonus_b) for r in o.items}
    assert bonus == {"P1": (0, 2), "P2": (0, 2), "P3": (2, 0), "P4": (0, 0), "P5": (0, 0), "P6": (0, 2)}


def test_unknown_choices_are_refused():
    with pytest.raises(LessonError):
        State(rubric="brevity-first")
    with pytest.raises(LessonError):
        State(order="c-first")


def test_online_elo_is_order_dependent_but_conserves_the_sum():
    votes = [("x", "A"), ("y", "A"), ("z", "B")]
    f, r = online_elo(votes), online_elo(votes[::-1])
    assert f[-1].after_a != r[-1].after_a
    assert abs(f[-1].after_a + f[-1].after_b - 2000) < 1e-9


def test_guided_discovery_clears_a_stale_explanation_and_keeps_a_current_one():
    s = Session()
    s.predict(PREDICTIONS[1])
    s.apply(State(rule="position", order="b-first"))
    assert s.explanation and "Your prediction held." in s.explanation
    kept = s.explanation
    s.apply(State(rule="position", order="b-first"))  # the same state again: nothing stale to clear
    assert s.explanation == kept
    s.apply(State(rule="length"))  # a real change: a new explanation replaces the old one
    assert s.explanation != kept and "→" in s.explanation


def test_prediction_and_reset_restore_accuracy_first():
    s = Session()
    s.apply(State(rubric="style-first", rule="length"))
    s.reset()
    assert s.state == State(rubric="accuracy-first", rule="length")
    s.apply(State(rubric="balanced", rule="length"))
    s.predict(PREDICTIONS[2])
    assert s.state.rubric == "accuracy-first" and s.explanation is None


def test_cli_json_and_bad_choice():
    cmd = [
        sys.executable,
        "-m",
        "vocab.cli",
        "lesson",
        "--rubric",
        "accuracy-first",
        "--rule",
        "rubric",
        "--order",
        "a-first",
        "--sequence",
        "reverse",
        "--json",
    ]
    out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    assert out["elo_a"] == 1065.813398 and out["verdicts"] == ["A", "A", "A", "A", "Tie", "A"]
    assert set(out) == {
        "a_wins",
        "b_wins",
        "ties",
        "raw_a_win_rate",
        "adjusted_a",
        "adjusted_b",
        "agreement",
        "elo_a",
        "elo_b",
        "verdicts",
    }
    bad = subprocess.run(
        [sys.executable, "-m", "vocab.cli", "lesson", "--rule", "loudest"], capture_output=True, text=True
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_toy_biases_show_the_constructed_biases():
    from vocab.lesson import toy_biases

    rubric, position, length = (toy_biases(r) for r in ("rubric", "position", "length"))
    assert rubric["position_consistency"] == 1.0 and rubric["first_slot_rate"] == 0.5
    # +4 to the first slot: the winner follows the slot on most pairs
    assert position["first_slot_rate"] == pytest.approx(10 / 12) and position["position_consistency"] == pytest.approx(
        2 / 6
    )
    # +2 to the longer answer: order-independent, and the longer answer wins more often than under the rubric
    assert length["position_consistency"] == 1.0 and length["prefers_longer"] > rubric["prefers_longer"]


def test_the_widget_drives_the_session():
    from vocab.lesson import lesson_widget

    box = lesson_widget(State())
    rubric, rule, order, sequence, prediction, reset, _out = box.children
    prediction.value = PREDICTIONS[0]
    rubric.value = "balanced"
    s = box.session
    assert s.state.rubric == "balanced" and s.explanation and s.history
    reset.click()
    assert s.state.rubric == "accuracy-first" and rubric.value == "accuracy-first"
