"""Chapter 2, compositional generalization from first principles: notebooks/compositional_sprites.ipynb
(Wiedemer et al. 2023).

The package exports the experiment's public names (:mod:`.experiment`: the rows of the paper's
table, the decoders and models, training, the live demo's settings and the stored rows), which the
page uses in "The models and their training", "How soft must the composition be?" and "How `full`
differs from the paper".
Its other modules are imported by name:

- ``experiment``  settings per profile, the runs, what is stored (the data: :mod:`modlib.data.sprites`)
- ``findings``    the statements and the table beside the paper ("The support ablations, beside the
                  paper", "Why some seeds never train")
- ``figures``     every figure of the page, from "The data: sprites and scenes" on
- ``explorer``    "Explore"
- ``exercises``   the checks of "Exercises"
"""

from modlib.compositional_sprites.experiment import (CHAPTER, DECODERS, DEMO, FULL, MODELS,
                                                     PAPER_R2, ROWS, SETTINGS, SLICE,
                                                     Compositional, Monolithic, SpriteRuns,
                                                     SpriteSettings, build, data, decoder,
                                                     demo_settings, estimate_seconds, eval_epochs,
                                                     predict, r2_score, run, run_row, settings,
                                                     slice_latents, train)

__all__ = ["CHAPTER", "MODELS", "DECODERS", "ROWS", "PAPER_R2", "SLICE", "SpriteSettings", "FULL",
           "SETTINGS", "settings", "DEMO", "demo_settings", "decoder", "Compositional", "Monolithic",
           "build", "data", "r2_score", "predict", "slice_latents", "eval_epochs", "train", "estimate_seconds",
           "run_row", "SpriteRuns", "run"]
