"""Chapter 5, subnetworks for subroutines: notebooks/structural_compositionality.ipynb (Lepori, Serre
& Pavlick 2023). Chapter 6 reuses its experiment, by name.

The package exports the public names of :mod:`.experiment` (settings per profile, the base models,
the subnetwork search, the runs and what is stored) and :mod:`.tasks` (the odd-one-out problems and
the decision rule), which the page uses in "Rules, subroutines and the odd one out", "Base models"
and "Searching for a subnetwork". Its other modules are imported by name:

- ``experiment``  settings per profile, models, the search, the runs, what is stored
- ``tasks``       the problem sets per rule and kind (the data: :mod:`modlib.data.shapes` and
                  :mod:`modlib.data.sentences`)
- ``findings``    the table and the statements the page prints ("Base models", "Results")
- ``figures``     every figure of the page ("Rules", "Results", "Controls", "Where the subnetworks
                  sit")
- ``explorer``    "Explore"
- ``exercises``   the checks of "The decision rule" and "Searching for a subnetwork"
"""

from modlib.structural_compositionality.experiment import (CHANCE, CHAPTER, GATE, PAPER,
                                                           PAPER_TOTAL_MASKED, RESNETS, SETTINGS,
                                                           STAGES, LanguageModel, StructureRuns,
                                                           StructureSettings, VisionModel, accuracy,
                                                           evaluate, grid_settings, make_model,
                                                           mask_patterns, quality, result_names, run,
                                                           run_one, score, search, settings,
                                                           train_base, train_mask)
from modlib.structural_compositionality.tasks import (KINDS, RULES, VISION, layout, odd_scores,
                                                      problems)

__all__ = ["CHAPTER", "CHANCE", "GATE", "PAPER_TOTAL_MASKED", "StructureSettings", "RESNETS",
           "STAGES", "PAPER", "SETTINGS", "settings", "VisionModel", "LanguageModel", "make_model",
           "mask_patterns", "score", "accuracy", "train_base", "train_mask", "evaluate", "quality",
           "search", "grid_settings", "run_one", "result_names", "StructureRuns", "run", "KINDS",
           "RULES", "VISION", "layout", "problems", "odd_scores"]
