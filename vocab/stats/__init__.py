"""Pure numeric functions, one home each: the correction of a critic's pass rate (:mod:`.correction`), its
intervals vectorised over studies (:mod:`.intervals`), agreement between raters (:mod:`.agreement`), ratings from
pairwise judgments (:mod:`.ranking`) and the one way an estimate gets its random numbers (:mod:`.seeds`).

Nothing here knows about models or files. Inputs are numbers and numpy arrays; randomness comes from a passed
:class:`numpy.random.Generator`.
"""

from vocab.stats.agreement import (
    AgreementInterval,
    KappaInterval,
    agreement_bootstrap,
    cohens_kappa,
    gwet_ac1,
    kappa_bootstrap,
    krippendorff_alpha_nominal,
)
from vocab.stats.correction import (
    Correction,
    LostAttemptBounds,
    correct,
    corrected_rate,
    design_effect,
    design_effect_from_sums,
    invert_flip_rate,
    kish_rows,
    lost_attempt_bounds,
    sensitivity,
    specificity,
)
from vocab.stats.intervals import (
    DEFAULT_INTERVAL,
    INTERVALS,
    CorrectionInterval,
    Intervals,
    Piles,
    binomial_cd_draws,
    bootstrap_correction,
    correction_interval,
    correction_intervals,
    fiducial_correction,
    holding,
    percentile_interval,
    pile_bootstrap,
)
from vocab.stats.ranking import (
    BradleyTerry,
    BradleyTerryInterval,
    EloUpdate,
    bradley_terry,
    bradley_terry_bootstrap,
    elo_updates,
    online_elo,
)
from vocab.stats.seeds import derived_seed, stream

__all__ = [
    "DEFAULT_INTERVAL",
    "INTERVALS",
    "AgreementInterval",
    "CorrectionInterval",
    "BradleyTerry",
    "BradleyTerryInterval",
    "Correction",
    "EloUpdate",
    "Intervals",
    "KappaInterval",
    "LostAttemptBounds",
    "Piles",
    "agreement_bootstrap",
    "binomial_cd_draws",
    "bootstrap_correction",
    "bradley_terry",
    "bradley_terry_bootstrap",
    "cohens_kappa",
    "correct",
    "corrected_rate",
    "correction_interval",
    "correction_intervals",
    "derived_seed",
    "design_effect",
    "design_effect_from_sums",
    "elo_updates",
    "fiducial_correction",
    "gwet_ac1",
    "holding",
    "invert_flip_rate",
    "kappa_bootstrap",
    "kish_rows",
    "krippendorff_alpha_nominal",
    "lost_attempt_bounds",
    "online_elo",
    "percentile_interval",
    "pile_bootstrap",
    "sensitivity",
    "specificity",
    "stream",
]
