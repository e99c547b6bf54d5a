"""modlib: the helper package behind "Breaking it down", laid out by chapter over a small shared core.

The core, which every chapter may import:

- ``profiles``  pick a profile (smoke / default / full / paper) and validate settings
- ``runtime``   seeding and device choice, each reported in one line
- ``models``    small model builders
- ``training``  training loops, including several seeds trained as one batched model
- ``results``   the results store (load a matching stored result or compute and store it);
                ``fingerprint`` the code a stored result depends on; ``restamp`` carries results over
                a refactor the fingerprint cannot see through
- ``masks``     trainable binary masks over the weights of any torch model
- ``stats``     the findings' statistics: intervals, tests and the verdict rule (:class:`stats.Finding`)
- ``plots``     what every page's figures share: numbered captions (``glue``), the page's width,
                code blocks (``source_block``)
- ``widgets``   what every explorer shares; ``checks`` what every exercise check shares
- ``batch``     run notebooks with papermill (``python -m modlib.batch``); ``jobs`` every stored
                result as a job; ``student`` the student edition (``python -m modlib.student``)

``data/``: one module per data source: ``toy``, ``sprites``, ``digits`` (MNIST, MNIST pairs, two-digit
arithmetic), ``scan``, ``shapes``, ``sentences`` (agreement sentences).

One package per chapter, named as its notebook: ``redundant_input_toy`` (chapter 1),
``compositional_sprites`` (2), ``resists_at_scale`` (3), ``weight_masks`` (4),
``structural_compositionality`` (5), ``pretraining_consistency`` (6) and ``bridge`` (7; its
networks are chapter 1's, retrained by chapter 1's code). Each holds ``experiment``
(settings per profile, the runs, what is stored), ``findings`` (what the page says about its
results, decided from the numbers; the claims tests use it too), ``figures``, ``explorer`` and
``exercises``; its ``__init__`` exports the experiment's public names and says which of the
notebook's sections use which module. A chapter imports the core and ``data``, never another
chapter, except where it reuses an experiment on purpose: chapter 6 imports chapter 5's by name.
"""

from modlib import fingerprint as _fingerprint

_fingerprint.install()  # stored results are fingerprinted by the code this process runs

# The release: pyproject.toml reads it; the book's Colab links (_config.yml's repository.branch),
# the notebooks' install cells and the results fetched where missing (modlib.remote) all name the
# tag v<__version__>, so that Colab runs a release's notebook on that release's package and stored
# results (README, "Releases"; tests/test_repository.py checks they agree).
__version__ = "0.2.0"
