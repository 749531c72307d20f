"""The simulated components as level-based loops: watch, decide from the
cached snapshot with a pure function from ``decisions``, write the difference."""
