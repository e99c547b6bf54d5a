"""Chapter 4, finding modules with binary weight masks: notebooks/weight_masks.ipynb (Csordás et al.
2021). ``python -m modlib.weight_masks --profile full`` computes its results without the notebook.

The package exports the public names of :mod:`.experiment` (settings per profile, the runs, what is
stored, the cost of a profile) and :mod:`.protocol` (training and scoring of networks and masks,
and the three experiments), which the page uses in every section from "The tool" to the appendix
("how the `full` profile was chosen"). Its other modules are imported by name:

- ``experiment``  settings per profile, the runs, what is stored (the data: :mod:`modlib.data.digits`)
- ``causes``      the added experiments (what the verdicts depend on: the width and α curves, the
                  authors' mask schedule, held-out problems, the forced-reuse control, class
                  removal layer by layer), on the protocol's training and scoring
- ``protocol``    what decides a run (``MaskSettings``), how networks and masks are trained and
                  scored; addition/multiplication, double addition and class removal
- ``findings``    the statements the page prints ("Specialization", "Reuse", "Class removal",
                  "Summary")
- ``figures``     every figure of the page, and the concept diagram of "The tool"
- ``explorer``    "How the regularisation strength matters"
- ``exercises``   the checks of "The tool" and "Exercises"

The masks themselves are the shared core's :mod:`modlib.masks`.
"""

from modlib.weight_masks.causes import (CauseSettings, class_layers, copy_pairs, held_out_problems, heldout,
                                        layer_sizes, mask_sizes, op_point, point, total_shared, reuse_control)
from modlib.weight_masks.experiment import (ADDED, CAUSES, CHAPTER, EXPERIMENTS, SETTINGS, USES, Point, added_jobs,
                                            all_jobs, causes_settings, collect, curves, estimate, jobs, main, names, run,
                                            run_added, settings, shape_name, stored)
from modlib.weight_masks.protocol import (CHANCE, CLIP, CONTROL_ROWS, MASKS, PAIR_CONTROL_ROWS,
                                          PAIR_MASKS, PAIR_ROWS, ROWS, MaskSettings, Pairwise,
                                          addmul, applied, class_removal, cnn, confusion,
                                          digit_accuracy, digit_loss, double, only_pair,
                                          removal_accuracy, score, sweep, sweep_arrays, sweep_point,
                                          train_mask, train_network)

__all__ = ["CHAPTER", "SETTINGS", "settings", "shape_name", "USES", "EXPERIMENTS", "jobs", "names",
           "stored", "run", "estimate", "main", "CHANCE", "CLIP", "MaskSettings", "digit_loss",
           "digit_accuracy", "Pairwise", "only_pair", "train_network", "train_mask", "applied",
           "score", "ROWS", "CONTROL_ROWS", "MASKS", "addmul", "sweep_point", "sweep",
           "sweep_arrays", "PAIR_ROWS", "PAIR_CONTROL_ROWS", "PAIR_MASKS", "double", "cnn",
           "confusion", "removal_accuracy", "class_removal", "CauseSettings", "CAUSES", "causes_settings",
           "ADDED", "Point", "added_jobs", "all_jobs", "run_added", "collect", "curves", "op_point", "heldout", "reuse_control",
           "class_layers", "copy_pairs", "held_out_problems", "layer_sizes", "mask_sizes", "point", "total_shared"]
