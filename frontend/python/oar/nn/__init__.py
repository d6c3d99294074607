"""oar.nn (being written)."""
