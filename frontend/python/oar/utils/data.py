"""oar.utils.data (being written)."""
