"""A toy judge for the judge-bias lesson: rubric weights, position and length bias, and online Elo.

Six authored prompts (P1-P6) each have two fixed answers, A and B, with authored marks from 0 to 2 for
accuracy/completeness and for style. The marks are teaching judgments, not ground truth and not measured
ratings; no model runs here. A *state* picks one of three rubrics, one of three judge rules, one of two
display orders and one of two rating sequences (36 states):

- rubric: base score = accuracy weight × accuracy mark + style weight × style mark;
- rule ``rubric`` uses the base score alone; ``position`` adds 4 to whichever answer is displayed first;
  ``length`` adds 2 to the strictly longer answer (whitespace words; equal lengths get nothing);
- order ``a-first`` / ``b-first`` changes only which answer is displayed first — A and B keep their identity;
- sequence ``forward`` (P1…P6) / ``reverse`` (P6…P1) changes only the order of the online Elo updates.

The larger judged score wins; equal judged scores tie. Online Elo: both start at 1000, K = 32, scale 400,
base 10, S = 1 / 0 / 0.5 for an A win / B win / tie, each expectation from the ratings before that battle,
B changing by minus A's change, no rounding anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vocab import stats
from vocab.errors import InputError

RUBRICS = {"accuracy-first": (3, 1), "balanced": (1, 1), "style-first": (1, 3)}
RULES = ("rubric", "position", "length")
ORDERS = ("a-first", "b-first")
SEQUENCES = ("forward", "reverse")
POSITION_BONUS = 4
LENGTH_BONUS = 2
ELO_START, ELO_K, ELO_SCALE = 1000.0, 32.0, 400.0


@dataclass(frozen=True)
class Answer:
    text: str
    accuracy: int
    style: int

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class Item:
    id: str
    prompt: str
    a: Answer
    b: Answer


ITEMS: tuple[Item, ...] = (
    Item("P1", "What is 2 + 2?", Answer("4.", 2, 1), Answer("5, definitely.", 0, 2)),
    Item(
        "P2",
        "Which country contains Berlin?",
        Answer("Berlin is in Germany.", 2, 2),
        Answer("Berlin is in Germany. Germany is the country that contains Berlin.", 2, 1),
    ),
    Item(
        "P3",
        "Name both listed colors: red and blue.",
        Answer("Red and blue are the two listed colors.", 2, 1),
        Answer("Red.", 1, 2),
    ),
    Item(
        "P4",
        "Explain overfitting in one sentence.",
        Answer("Fitting training quirks can hurt unseen performance.", 2, 1),
        Answer("Overfitting guarantees perfect performance on new data.", 0, 2),
    ),
    Item("P5", "What is 3 times 3?", Answer("9.", 2, 2), Answer("9.", 2, 2)),
    Item(
        "P6",
        "Briefly explain a cache.",
        Answer("Reuse a stored result for the same request.", 2, 2),
        Answer("Cache means storing a reusable result; it is a reusable stored result, used again as a result.", 2, 1),
    ),
)


class LessonError(InputError):
    """An unknown rubric, rule, order or sequence."""


@dataclass(frozen=True)
class State:
    rubric: str = "accuracy-first"
    rule: str = "rubric"
    order: str = "a-first"
    sequence: str = "forward"

    def __post_init__(self):
        for name, value, allowed in (
            ("rubric", self.rubric, tuple(RUBRICS)),
            ("rule", self.rule, RULES),
            ("order", self.order, ORDERS),
            ("sequence", self.sequence, SEQUENCES),
        ):
            if value not in allowed:
                raise LessonError(f"unknown {name} {value!r}: choose one of {', '.join(allowed)}")


REFERENCE_STATE = State()  # accuracy-first + rubric only: the fixed reference


@dataclass(frozen=True)
class ItemResult:
    id: str
    base_a: int
    base_b: int
    bonus_a: int
    bonus_b: int
    judged_a: int
    judged_b: int
    verdict: str  # "A", "B" or "Tie"


@dataclass(frozen=True)
class EloStep:
    id: str
    before_a: float
    before_b: float
    expected_a: float
    outcome_a: float
    delta_a: float
    after_a: float
    after_b: float


@dataclass(frozen=True)
class Outcome:
    state: State
    items: tuple[ItemResult, ...]
    reference: tuple[str, ...]
    elo_steps: tuple[EloStep, ...]

    @property
    def verdicts(self) -> list[str]:
        return [r.verdict for r in self.items]

    @property
    def a_wins(self) -> int:
        return self.verdicts.count("A")

    @property
    def b_wins(self) -> int:
        return self.verdicts.count("B")

    @property
    def ties(self) -> int:
        return self.verdicts.count("Tie")

    @property
    def raw_a_win_rate(self) -> float:
        return self.a_wins / len(self.items)

    @property
    def adjusted_a(self) -> float:
        return (self.a_wins + 0.5 * self.ties) / len(self.items)

    @property
    def adjusted_b(self) -> float:
        return (self.b_wins + 0.5 * self.ties) / len(self.items)

    @property
    def agreement(self) -> float:
        return sum(v == r for v, r in zip(self.verdicts, self.reference, strict=True)) / len(self.items)

    @property
    def elo_a(self) -> float:
        return self.elo_steps[-1].after_a

    @property
    def elo_b(self) -> float:
        return self.elo_steps[-1].after_b

    def summary(self) -> dict[str, Any]:
        return {
            "a_wins": self.a_wins,
            "b_wins": self.b_wins,
            "ties": self.ties,
            "raw_a_win_rate": round(self.raw_a_win_rate, 6),
            "adjusted_a": round(self.adjusted_a, 6),
            "adjusted_b": round(self.adjusted_b, 6),
            "agreement": round(self.agreement, 6),
            "elo_a": round(self.elo_a, 6),
            "elo_b": round(self.elo_b, 6),
            "verdicts": self.verdicts,
        }

    def text(self) -> str:
        """The table ``vocab lesson`` prints: every item's scores and verdict, then the summary."""
        st = self.state
        lines = [
            f"{st.rubric} + {st.rule}, {st.order}, {st.sequence}",
            "item  base A/B  bonus A/B  judged A/B  verdict  reference",
        ]
        for r, ref in zip(self.items, self.reference, strict=True):
            lines.append(
                f"{r.id:4}  {r.base_a:>3}/{r.base_b:<3}  {r.bonus_a:>3}/{r.bonus_b:<3}   "
                f"{r.judged_a:>4}/{r.judged_b:<4}  {r.verdict:7}  {ref}"
            )
        s = self.summary()
        lines.append(
            f"A wins {s['a_wins']}, B wins {s['b_wins']}, ties {s['ties']}; raw A win rate {s['raw_a_win_rate']:.6f}; "
            f"tie-adjusted {s['adjusted_a']:.6f} / {s['adjusted_b']:.6f}; agreement {s['agreement']:.6f}; "
            f"Elo A {s['elo_a']:.6f}, B {s['elo_b']:.6f}"
        )
        return "\n".join(lines)


def judge_item(item: Item, state: State) -> ItemResult:
    wa, ws = RUBRICS[state.rubric]
    base_a = wa * item.a.accuracy + ws * item.a.style
    base_b = wa * item.b.accuracy + ws * item.b.style
    bonus_a = bonus_b = 0
    if state.rule == "position":
        if state.order == "a-first":
            bonus_a = POSITION_BONUS
        else:
            bonus_b = POSITION_BONUS
    elif state.rule == "length":
        if item.a.words > item.b.words:
            bonus_a = LENGTH_BONUS
        elif item.b.words > item.a.words:
            bonus_b = LENGTH_BONUS
    ja, jb = base_a + bonus_a, base_b + bonus_b
    verdict = "A" if ja > jb else "B" if jb > ja else "Tie"
    return ItemResult(item.id, base_a, base_b, bonus_a, bonus_b, ja, jb, verdict)


def online_elo(battles: list[tuple[str, str]]) -> tuple[EloStep, ...]:
    """Sequential Elo over (item id, verdict) battles of A against B, in the given order (stats.elo_updates)."""
    games = [("A", "B", {"A": 1.0, "B": 0.0, "Tie": 0.5}[verdict]) for _, verdict in battles]
    ups = stats.elo_updates(games, k=ELO_K, scale=ELO_SCALE, start=ELO_START)
    return tuple(
        EloStep(
            item_id,
            u.before_i,
            u.before_j,
            u.expected_i,
            u.score_i,
            u.delta_i,
            u.before_i + u.delta_i,
            u.before_j - u.delta_i,
        )
        for (item_id, _), u in zip(battles, ups, strict=True)
    )


def evaluate(state: State) -> Outcome:
    results = tuple(judge_item(it, state) for it in ITEMS)
    reference = tuple(judge_item(it, REFERENCE_STATE).verdict for it in ITEMS)
    seq = list(results) if state.sequence == "forward" else list(reversed(results))
    return Outcome(state, results, reference, online_elo([(r.id, r.verdict) for r in seq]))


def all_states() -> list[State]:
    return [State(r, u, o, s) for r in RUBRICS for u in RULES for o in ORDERS for s in SEQUENCES]


# --- guided discovery --------------------------------------------------------------------------------


PREDICTIONS = ("A's tie-adjusted score goes up", "it goes down", "it stays the same")


@dataclass
class Session:
    """The lesson's interaction state: the current settings, the reader's prediction, the explanation.

    A real change of the settings clears a stale explanation (it explained another state); applying the
    same state again keeps it. Reset returns to accuracy-first for the current experiment (the other
    controls stay), and so does picking a new prediction, so that every experiment starts from the
    reference rubric.
    """

    state: State = field(default_factory=State)
    prediction: str | None = None
    explanation: str | None = None
    history: list[dict] = field(default_factory=list)

    def predict(self, choice: str) -> None:
        if choice not in PREDICTIONS:
            raise LessonError(f"unknown prediction {choice!r}")
        self.prediction = choice
        self.explanation = None
        self.state = replace(self.state, rubric="accuracy-first")

    def reset(self) -> None:
        self.apply(replace(self.state, rubric="accuracy-first"))

    def apply(self, new: State) -> Outcome:
        before = evaluate(self.state)
        if new == self.state:
            return before
        after = evaluate(new)
        self.history.append({"from": self.state, "to": new, "prediction": self.prediction})
        self.state = new
        self.explanation = explain(before, after, self.prediction)
        self.prediction = None
        return after


def explain(before: Outcome, after: Outcome, prediction: str | None) -> str:
    d = after.adjusted_a - before.adjusted_a
    moved = PREDICTIONS[0] if d > 1e-12 else PREDICTIONS[1] if d < -1e-12 else PREDICTIONS[2]
    flipped = [b.id for b, a in zip(before.items, after.items, strict=True) if a.verdict != b.verdict]
    lines = [f"A's tie-adjusted score: {before.adjusted_a:.6f} → {after.adjusted_a:.6f} ({moved})."]
    lines.append(f"Verdicts that changed: {', '.join(flipped) if flipped else 'none'}.")
    if prediction is not None:
        lines.append("Your prediction held." if prediction == moved else f"You predicted: {prediction}.")
    if before.state.sequence != after.state.sequence and not flipped:
        lines.append(f"Same votes in another order: only online Elo moved (A {before.elo_a:.6f} → {after.elo_a:.6f}).")
    return " ".join(lines)


def toy_biases(rule: str, rubric: str = "accuracy-first") -> dict[str, Any]:
    """The toy judge's position consistency, first-slot rate and prefers-the-longer rate over P1-P6 shown in
    both orders: the same definitions as the real critics' in :func:`vocab.exam.tournament.tournament_table`."""
    res = {o: evaluate(State(rubric, rule, o, "forward")).items for o in ORDERS}
    winners = {o: [r.verdict for r in res[o]] for o in ORDERS}
    consistent = sum(x == y for x, y in zip(winners["a-first"], winners["b-first"], strict=True)) / len(ITEMS)
    first = decided = longer = unequal = 0
    for o in ORDERS:
        for it, v in zip(ITEMS, winners[o], strict=True):
            if v == "Tie":
                continue
            decided += 1
            first += (v == "A") == (o == "a-first")
            if it.a.words != it.b.words:
                unequal += 1
                longer += (v == "A") == (it.a.words > it.b.words)
    return {
        "judge": f"toy: {rule}",
        "games": 2 * len(ITEMS),
        "first_slot_rate": first / decided if decided else None,
        "position_consistency": consistent,
        "prefers_longer": longer / unequal if unequal else None,
    }


def lesson_widget(state: State):
    """The lesson's live form (ipywidgets): the four controls, a prediction, a reset button and an output area
    that shows the items, the summary and the explanation after each change. The logic is :class:`Session`'s."""
    import ipywidgets as w
    import pandas as pd
    from IPython.display import display

    session = Session(state)
    controls = {
        "rubric": w.ToggleButtons(options=list(RUBRICS), value=state.rubric, description="rubric"),
        "rule": w.ToggleButtons(options=list(RULES), value=state.rule, description="rule"),
        "order": w.ToggleButtons(options=list(ORDERS), value=state.order, description="order"),
        "sequence": w.ToggleButtons(options=list(SEQUENCES), value=state.sequence, description="sequence"),
    }
    prediction = w.RadioButtons(options=list(PREDICTIONS), value=None, description="I predict")
    reset = w.Button(description="reset to accuracy-first")
    out = w.Output()

    def redraw(outcome: Outcome) -> None:
        out.clear_output()
        with out:
            display(pd.DataFrame([r.__dict__ for r in outcome.items]).set_index("id"))
            display(pd.Series(outcome.summary()).to_frame(str(outcome.state)))
            print(session.explanation or "(make a prediction, then change a control)")

    def sync() -> None:
        for name, c in controls.items():
            c.value = getattr(session.state, name)

    def on_change(_) -> None:
        redraw(session.apply(State(**{k: c.value for k, c in controls.items()})))

    def on_predict(change) -> None:
        if change["new"] is not None:
            session.predict(change["new"])
            sync()
            redraw(evaluate(session.state))

    def on_reset(_) -> None:
        session.reset()
        sync()
        redraw(evaluate(session.state))

    for c in controls.values():
        c.observe(on_change, names="value")
    prediction.observe(on_predict, names="value")
    reset.on_click(on_reset)
    box = w.VBox([*controls.values(), prediction, reset, out])
    box.session = session  # the state behind the form, for inspection
    return box
