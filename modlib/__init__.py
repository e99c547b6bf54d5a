"""modlib: the helper package behind "Breaking it down".

Each module does one thing; chapters import what they need:

- ``profiles``  pick a profile (smoke / default / full) and validate settings
- ``runtime``   seeding and device choice, each reported in one line
- ``data``      the chapters' data sets
- ``models``    small model builders
- ``training``  training loops, including several seeds trained as one batched model
- ``results``   the results store (load a matching stored result or compute and store it)
- ``masks``     trainable binary masks over the weights of any torch model
- ``toy``       the redundant-input toy experiment (chapter 1)
- ``sprites``   multi-sprite scenes: renderer, compositions, supports, sufficient support (chapter 2)
- ``compositional_sprites`` compositional vs monolithic models on them (chapter 2)
- ``digit_pairs`` MNIST digit pairs in settings A and B (chapter 3)
- ``scan``      the SCAN commands, generated from their grammar, and their splits (chapter 3)
- ``resists_at_scale`` the CNN and seq2seq experiments of chapter 3
- ``modularity`` the weight-mask experiments (chapter 4)
- ``shapes``    panels of random contours with inside / contact / number, decided on pixels (chapter 5)
- ``agreement`` agreement sentences in the style of Marvin & Linzen (chapter 5)
- ``structural_compositionality`` odd-one-out tasks, base models and the subnetwork search (chapter 5)
- ``pretraining`` unlabelled pretraining: the MLM corpus and training of a BERT, SimCLR for the ResNet (chapter 6)
- ``pretraining_consistency`` scratch vs pretrained base models, searched with chapter 5's code (chapter 6)
- ``findings``  what a page says about its results, decided from the numbers (claims tests use it too)
- ``plots``     figures, handed to numbered captions that name their profile, device and seeds
- ``widgets``   ipywidgets explorers over stored results
- ``batch``     run notebooks with papermill (``python -m modlib.batch``)
"""

from modlib import fingerprint as _fingerprint

_fingerprint.install()  # stored results are fingerprinted by the code this process runs

__version__ = "0.1.0"
