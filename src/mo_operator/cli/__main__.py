"""``python -m mo_operator.cli``: the ``mo-operator`` command."""

from .entry import main

main()
