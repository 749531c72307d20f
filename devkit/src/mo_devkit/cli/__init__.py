"""The dev kit's commands of ``mo-operator`` (``demo``, ``control-plane``) and the demo itself."""
