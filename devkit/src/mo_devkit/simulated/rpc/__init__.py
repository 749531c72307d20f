"""The simulated MatrixOne's morpc servers (``server``, ``services``), opened and closed
with its processes (``network``), and the address book that leads a cluster's names
and ports to them (``addressbook``)."""
