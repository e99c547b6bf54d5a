"""Chapter 1, the redundant-input toy: notebooks/redundant_input_toy.ipynb (Li et al., section 6).

The package exports the experiment's public names (:mod:`.experiment`: settings per profile, the
toy's training sets, the batched runs and what is stored), which the page uses throughout ("The
model, and what the paper's "step" is", "Controls", "Measured, not just drawn"). Its other modules
are imported by name:

- ``experiment``  settings per profile, the runs, what is stored (the data: :mod:`modlib.data.toy`)
- ``findings``    the statements the page prints ("Epoch by epoch", "Measured, not just drawn")
- ``figures``     every figure of the page, from "The data" to "What decides whether the bias hurts"
- ``explorer``    "Explore it yourself"
- ``exercises``   the checks of "Exercises"
- ``members``     one sweep member's data and initial network, for the studies below
- ``baselines``   "Without gradient descent": minimisers that take no gradient step
- ``mechanism``   "Inherited or built?": the x2 weights started at zero
- ``scale``       "The scale of (a) and (b)": scale and margin apart
- ``coverage``    "Coverage or correlation?": Y1 = 1 at one band, X2 uncorrelated (issue 51)
- ``mechanism_norm`` "Inherited or built?": the zero-x2 start with the first layer's norm matched
- ``scale_lr``    "The scale of (a) and (b)": the scale control with the learning rate matched
- ``trajectory``  "Without gradient descent": the linear model trained on the page's loss, step by step
- ``studies``     the stored studies, looked up beside the sweep
"""

from modlib.redundant_input_toy.experiment import (BAND_GAP, CHAPTER, GENERALIZES, LOSSES,
                                                   PAPER_EPOCHS, SETTINGS, TERNARY, ToySettings,
                                                   ToySweep, binary_covariance, curve_epochs,
                                                   held_out_band, loss_fn,
                                                   mutual_information, playground_batches, reliance,
                                                   run, run_group, settings, snapshot_epochs,
                                                   ternary_toy, test_set, to_probability,
                                                   training_set, window)

__all__ = ["CHAPTER", "LOSSES", "GENERALIZES", "PAPER_EPOCHS", "TERNARY", "BAND_GAP", "ToySettings",
           "SETTINGS", "settings", "snapshot_epochs", "curve_epochs", "playground_batches",
           "ternary_toy", "window", "held_out_band", "mutual_information", "binary_covariance",
           "loss_fn",
           "to_probability", "reliance", "training_set", "test_set", "run_group", "ToySweep", "run"]

# the later studies, imported by name (``toy.baselines``, ...): see each module's docstring
from modlib.redundant_input_toy import (baselines, coverage, mechanism, mechanism_norm, members,  # noqa: E402, F401
                                        scale, scale_lr, studies, trajectory)
