"""``python -m modlib.weight_masks``: chapter 4's results without the notebook
(:func:`modlib.weight_masks.experiment.main`)."""

from modlib.weight_masks.experiment import main

main()
