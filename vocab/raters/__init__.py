"""Who rates the blind sheet, and how their ratings come in: the ratings files and their checks (``raters``), the
LLM and script raters, the packet a person is handed (``packet``), the notebook form (``form``) and the page that
needs only a browser (``page``), Label Studio (``label_studio``), who leads among the raters (``blind``: people
first) and the whole chain as the demo runs it (``chain``).

Below it :mod:`vocab.sampling` and :mod:`vocab.datasets`; above it :mod:`vocab.estimates`."""

from vocab.raters.packet import check_rater_name, make_packet, rater_order
from vocab.raters.raters import import_ratings, rater_passes, read_ratings, write_script_ratings

__all__ = [
    "check_rater_name",
    "import_ratings",
    "make_packet",
    "rater_order",
    "rater_passes",
    "read_ratings",
    "write_script_ratings",
]
