"""Controls beside a notebook's papermill parameters, for the values meant to be played with: each runs the same
code the notebook's cells run (``vocab.estimates.correction_table``), on the data the notebook already read.

The controls are live widgets (ipywidgets): nbval cannot compare them (their model ids differ in every kernel), so
the cell that shows one is marked ``NBVAL_IGNORE_OUTPUT``; the committed tables beside them are what is compared.
"""

from __future__ import annotations

INTERVALS = ("fiducial", "jeffreys", "seed")
POPULATIONS = ("finite", "superpopulation")


def correction_controls(data, key, variants: dict, *, n_boot: int, seed: int, interval: str, population: str):
    """Dropdowns for the interval method, the population and the rater variant, and the correction table they
    give (:func:`vocab.notebooks.views.rates_view` of :func:`vocab.estimates.correct.correction_table`), redrawn on
    each change."""
    import ipywidgets as w  # deferred: loaded only when a notebook shows its controls
    from IPython.display import display

    from vocab.estimates.correct import correction_table  # deferred: as above
    from vocab.notebooks.views import rates_view

    pick = {
        "interval": w.Dropdown(options=INTERVALS, value=interval, description="interval"),
        "population": w.Dropdown(options=POPULATIONS, value=population, description="population"),
        "rater": w.Dropdown(options=sorted(variants), value=sorted(variants)[0], description="rater"),
    }
    out = w.Output()

    def redraw(_=None) -> None:
        table = correction_table(
            data,
            key,
            {pick["rater"].value: variants[pick["rater"].value]},
            n_boot=n_boot,
            seed=seed,
            interval=pick["interval"].value,
            population=pick["population"].value,
        )
        out.clear_output(wait=True)
        with out:
            display(rates_view(table))

    for control in pick.values():
        control.observe(redraw, names="value")
    # the output area fills on the first change (the notebook's table above shows the starting values): drawn now,
    # with no frontend to hold the widget, the table would land in the cell's own output
    return w.VBox([w.HBox(list(pick.values())), out])


def coverage_controls(*, methods: tuple[str, ...], levels: int, n_boot: int, seed: int, sims: int = 200):
    """Sliders for one point of 08's grid (the writer's θ, the critic's q1 = q0, rows per pile, the levels'
    spread) and the coverage, width and bias :func:`vocab.coverage.coverage_grid` simulates there for ``methods``:
    the grid's own function at the grid's own seed (so a point already in the grid shows the same numbers, at
    ``sims`` studies)."""
    import ipywidgets as w  # deferred: loaded only when a notebook shows its controls
    from IPython.display import display

    from vocab.coverage import coverage_grid  # deferred: as above

    pick = {
        "theta": w.FloatSlider(value=0.5, min=0.05, max=0.95, step=0.05, description="θ"),
        "q": w.FloatSlider(value=0.8, min=0.5, max=0.99, step=0.01, description="q1 = q0"),
        "pile": w.IntSlider(value=10, min=3, max=80, description="rows a pile"),
        "spread": w.Dropdown(
            options=(("varied (2)", 2.0), ("none (inf)", float("inf"))), value=2.0, description="levels"
        ),
    }
    run = w.Button(description=f"simulate {sims} studies")
    out = w.Output()

    def simulate(_=None) -> None:
        grid = coverage_grid(
            methods=methods,
            piles=(pick["pile"].value,),
            thetas=(pick["theta"].value,),
            q1s=(pick["q"].value,),
            q0s=(pick["q"].value,),
            spreads=(pick["spread"].value,),
            levels=levels,
            sims=sims,
            seed=seed,
            n_boot=n_boot,
        )
        out.clear_output(wait=True)
        with out:
            display(grid.round(3))

    run.on_click(simulate)  # a click, not every slider move: a point takes seconds
    return w.VBox([w.HBox(list(pick.values())[:2]), w.HBox([*list(pick.values())[2:], run]), out])
