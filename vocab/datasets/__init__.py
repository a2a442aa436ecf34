"""The judged items, where every audit starts: a Vocabscapes run's attempts or an imported dataset, its rubric
(``dataset``), the store that holds millions of items in bounded memory (``items``, DuckDB over Parquet;
``dask_items`` for a folder of parts on a cluster; ``rows`` writes it), rater names (``names``) and a dataset's
cells split by a column it kept (``slicing``). The errors every stage raises on bad input are here too (``errors``).

The rooms above it: :mod:`vocab.sampling` (the blind sample), :mod:`vocab.raters`, then :mod:`vocab.imports` (the
readers of other harnesses' logs: an import whose source holds people's labels writes the sample and the ratings
too, so it sits above them) and :mod:`vocab.estimates`."""

from vocab.datasets.dataset import VOCABSCAPES, Dataset, JudgeRubric, is_imported, load_dataset, read_rubric
from vocab.datasets.errors import CalibrationError

__all__ = ["VOCABSCAPES", "CalibrationError", "Dataset", "JudgeRubric", "is_imported", "load_dataset", "read_rubric"]
