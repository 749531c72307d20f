"""One controller (an Actor) per MatrixOne kind."""
