"""Chapter 7, the bridge: notebooks/bridge.ipynb (does structure predict generalization?).

The package exports the experiment's public names (:mod:`.experiment`: settings per profile,
chapter 1's networks retrained, the masks, what is stored). Its other modules are imported by name:

- ``experiment``  "The networks" (chapter 1's, retrained), "The key code: the mask being trained"
                  (``train_mask``, shown on the page), "Experiment 1: is the compositional solution
                  already inside?" and "Experiment 2: surgery": settings per profile, the runs,
                  what is stored
- ``findings``    the verdict tables of experiments 1, 2 and 3 (``score``: the masks' overlap
                  above chance), and the statements of "Appendix: all results"
- ``figures``     "The question" (``diagram_bridge``), experiment 3's ``diagram_overlap`` and the
                  figures of experiments 1, 2 and 3
- ``digits``      "Experiment 1", subsection "On chapter 3's CNNs": experiment 1 on chapter 3's
                  MNIST setting-A CNNs (retrained by chapter 3's code), settings per profile, the
                  result ``mnist-a``
- ``explorer``    "Explore the networks": a stored network's boundaries, whole, as its Y1
                  subnetwork, as a random one, with its "use X2" weights removed
- ``exercises``   the checks of "Exercises" (the page's score; the random subnetwork of the same
                  size per layer)
- ``sprites``     "Chapter 2's decoders" (in experiment 3): chapter 2's monolithic and
                  compositional decoders retrained, a mask per slot, their overlap and removals,
                  stored as ``sprites-monolithic`` and ``sprites-compositional``

Experiment 2's rule 2 has a stored control of its own (``rule2-random-<f>``,
``experiment.random_exclusive``): the "use X2" mask replaced by random masks of its per-layer
counts, computed from the stored ``toy-<f>``.

The claims of experiments 1-3 on the toy were written down after their results were seen; their
confirmatory copies read the same experiments on fresh networks (``experiment.fresh``: the next
seeds, stored as ``toy-<f>-fresh`` and ``rule2-random-<f>-fresh``), registered before those were
computed.

Experiment 3 ("Experiment 3: does structure predict behaviour?") is computed from what experiments 1
and 2 store (every network and mask); experiment 1 on chapter 3's CNNs (:mod:`.digits`) and
experiment 3 on chapter 2's decoders (:mod:`.sprites`) store theirs.
"""

from modlib.bridge.experiment import (ARMS, CHAPTER, CONDITION, EXCLUSIVE, FRESH, FRESH_PROFILES, RANDOM_X2,
                                      SETS, SETTINGS, BridgeSettings, compute, fetch, fetch_random_exclusive,
                                      fresh, kept, measure, merged, random_exclusive, result_names, run,
                                      run_random_exclusive, scored, settings, suffix, toy_settings,
                                      train_mask, train_network, train_networks, unconfounded,
                                      with_exclusive, with_random_exclusive)

__all__ = ["ARMS", "CHAPTER", "CONDITION", "EXCLUSIVE", "FRESH", "FRESH_PROFILES", "RANDOM_X2", "SETS",
           "SETTINGS", "BridgeSettings", "compute", "fetch", "fetch_random_exclusive", "fresh", "kept", "merged", "measure", "random_exclusive", "result_names",
           "run", "run_random_exclusive", "scored", "settings", "suffix", "toy_settings", "train_mask",
           "train_network", "train_networks", "unconfounded", "with_exclusive", "with_random_exclusive"]
