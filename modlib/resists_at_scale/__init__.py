"""Chapter 3, gradient descent resists compositionality, at scale: notebooks/resists_at_scale.ipynb
(Li et al., sections 5.1 and 5.2).

The package exports the public names of :mod:`.experiment` (settings per profile, the runs, what is
stored) and :mod:`.networks` (the CNN on MNIST pairs and the seq2seq model on SCAN, and their
training), which the page uses in "MNIST pairs", "The CNN and its training", "SCAN "jump"" and
"How this page relates to the paper". Its other modules are imported by name:

- ``experiment``  settings per profile, the runs, what is stored (the data: :mod:`modlib.data.digits`
                  and :mod:`modlib.data.scan`)
- ``networks``    what decides a run (``ResistSettings``), the two networks, their training and
                  evaluation
- ``controls``    "Controls": the controls that remove the correlation (``mnist-C``, ``scan-C``),
                  the dose-response, the authors' setting B, A and B measured as the authors do,
                  and the ablation of the authors' defaults (``ControlSettings``)
- ``findings``    the statements the page prints ("The CNN and its training", "Summary")
- ``figures``     every figure of the page
- ``explorer``    "Explore"
- ``exercises``   the checks of "Exercises"
"""

from modlib.resists_at_scale.controls import (ControlSettings, FeedingSeq2Seq, authors_init,
                                              information_table, result_names, teacher_forced,
                                              train_measured, train_offsets)
from modlib.resists_at_scale.experiment import (CHAPTER, PAPER, RESULTS, SETTINGS, ResistRuns,
                                                estimate_seconds, run, run_one, settings)
from modlib.resists_at_scale.networks import (EXPERIMENTS, SETTING_NAMES, SHOWN, ResistSettings,
                                              Seq2Seq, accuracy, categorical_hinge, digit_cnn,
                                              digit_pools, encoded, exact_match, scan_data,
                                              scan_eval_steps, scan_pairs, shown_commands,
                                              train_digits, train_scan)

__all__ = ["CHAPTER", "RESULTS", "PAPER", "SETTINGS", "settings", "estimate_seconds", "run_one",
           "ResistRuns", "run", "EXPERIMENTS", "SETTING_NAMES", "SHOWN", "ResistSettings",
           "digit_cnn", "categorical_hinge", "accuracy", "train_digits", "digit_pools", "Seq2Seq",
           "exact_match", "scan_eval_steps", "scan_pairs", "encoded", "scan_data", "train_scan",
           "shown_commands", "ControlSettings", "result_names", "train_offsets", "train_measured",
           "teacher_forced", "authors_init", "FeedingSeq2Seq", "information_table"]
