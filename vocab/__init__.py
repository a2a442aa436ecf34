"""vocab: can an LLM judge be trusted, by how much, and in which direction does it lie?

The few names a researcher imports (the rest lives in the stages' sub-packages, see docs/api.md):

- :func:`vocab.open` — a study run or an imported dataset, read once, to explore: ``.rates()``, ``.rate(cell)``,
  ``.comparisons()``, ``.agreement()``, ``.check_disagreements()``, ``.script_disagreements()``, ``.slices(by)``,
  ``.report()``.

>>> import vocab
>>> ref = vocab.open("data/runs/reference")  # doctest: +SKIP
"""

__all__ = ["Opened", "Rate", "open"]


def __getattr__(name: str):
    # deferred: imported on first use, so that `import vocab.layout` (the packet's wheel, the CLI's start) stays light
    if name in __all__:
        from vocab import explore  # deferred: loaded only when vocab.open is asked for

        return getattr(explore, name)
    raise AttributeError(f"module 'vocab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
