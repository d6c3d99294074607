"""oar.optim (being written)."""
