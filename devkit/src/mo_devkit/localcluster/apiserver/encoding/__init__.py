"""What passing through Go types does to JSON objects, and how stored
objects are encoded: quantities in canonical form (``quantities``), the
fields Go always writes (``go_zero_values``), fast encoding and copies
(``jsonutil``)."""
