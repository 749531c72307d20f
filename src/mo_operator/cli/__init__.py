"""The ``mo-operator`` command line."""
