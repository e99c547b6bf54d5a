"""Chapter 6, does pretraining make the parts consistent?: notebooks/pretraining_consistency.ipynb
(Lepori et al. 2023, section 6). It reuses chapter 5's experiment, imported by name
(``from modlib.structural_compositionality import experiment as sc``).

The package exports the public names of :mod:`.experiment` (settings per profile, the pretrained
weights, fine-tuning and chapter 5's search in the fine-tuned models, the runs and what is
stored), which the page uses in "Two pretrained starting points" and "Fine-tuning and searching".
Its other modules are imported by name:

- ``experiment``   settings per profile, the runs, what is stored
- ``pretraining``  the MLM corpus and training of the language model, SimCLR for the vision model
                   ("Two pretrained starting points")
- ``findings``     the ablation effects and the statements the page prints ("Consistency")
- ``figures``      every figure of the page
- ``explorer``     "Explore the seeds"
- ``exercises``    the checks of "Two pretrained starting points"
"""

from modlib.pretraining_consistency.experiment import (CHAPTER, FULL, HUB_MODEL, INITS, PAPER,
                                                       SETTINGS, SOURCE, HubLanguageModel,
                                                       PretrainingRuns, PretrainingSettings,
                                                       hub_language_model, language_init,
                                                       pretrained, pretrained_model, property_probe,
                                                       result_names, run, run_one, settings, sweep,
                                                       sweep_names, sweep_pretrained, sweeps, MATCH_LAMS,
                                                       matched, matched_masks, matched_names, STRUCTURE,
                                                       SWEEPS, EXTRA_MASKS, borrowed, fine_tune,
                                                       own_structure, profile_text, structure)

__all__ = ["CHAPTER", "INITS", "HUB_MODEL", "PretrainingSettings", "PAPER", "FULL", "SETTINGS",
           "SOURCE", "settings", "property_probe", "pretrained", "HubLanguageModel",
           "hub_language_model", "language_init", "pretrained_model", "run_one", "result_names",
           "PretrainingRuns", "run", "sweep_pretrained", "sweep_names", "sweep", "sweeps",
           "MATCH_LAMS", "matched_masks", "matched_names", "matched", "STRUCTURE", "SWEEPS", "structure",
           "own_structure", "borrowed", "profile_text", "fine_tune", "EXTRA_MASKS"]
