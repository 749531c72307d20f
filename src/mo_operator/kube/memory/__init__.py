"""How the process keeps its memory small under a large cache: the cyclic
collector paused and frozen, freed memory handed back to the system."""
