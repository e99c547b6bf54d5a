"""The book's data sources, one module each, made on the fly or read from files that ship with a
package. A chapter imports the module it draws from (``from modlib.data import digits``):

- ``toy``        the redundant-input toy's two formulations (chapter 1)
- ``sprites``    multi-sprite scenes: renderer, compositions, supports, sufficient support (chapter 2)
- ``digits``     MNIST, offline first, and MNIST digit pairs in settings A and B (chapter 3);
                 two-digit addition / multiplication and double addition (chapter 4, with MNIST)
- ``scan``       the SCAN commands, generated from their grammar, and their splits (chapter 3)
- ``shapes``     panels of random contours with inside / contact / number, decided on pixels
                 (chapters 5 and 6)
- ``sentences``  agreement sentences in the style of Marvin & Linzen, imported as ``agreement``
                 (chapters 5 and 6)
"""
