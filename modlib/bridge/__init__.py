"""Chapter 7, the bridge: notebooks/bridge.ipynb (does structure predict generalization?).

The package exports the experiment's public names (:mod:`.experiment`: settings per profile,
chapter 1's networks retrained, the masks, what is stored). Its other modules are imported by name:

- ``experiment``  "The networks", "Is the solution already inside?" (experiment 1) and "Surgery"
                  (experiment 2): settings per profile, the runs, what is stored
- ``findings``    the verdicts of "Is the solution already inside?" and "Surgery", and the
                  statements of "Appendix: all results"
- ``figures``     "The question" (``diagram_bridge``), and the figures of both experiments
- ``exercises``   the checks of "Exercises" (the page's score; the random subnetwork of the same
                  size per layer)
"""

from modlib.bridge.experiment import (ARMS, CHAPTER, CONDITION, SETS, SETTINGS, BridgeSettings,
                                      compute, fetch, kept, measure, result_names, run, scored,
                                      settings, toy_settings, train_mask, train_networks,
                                      unconfounded)

__all__ = ["ARMS", "CHAPTER", "CONDITION", "SETS", "SETTINGS", "BridgeSettings", "compute", "fetch",
           "kept", "measure", "result_names", "run", "scored", "settings", "toy_settings",
           "train_mask", "train_networks", "unconfounded"]
