"""torch.backends.openmp: whether ops may use OpenMP threads (oar's CPU plugin does)."""


def is_available():
    return True
