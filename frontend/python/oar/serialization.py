"""oar.save / oar.load (being written)."""


def save(obj, path):
    raise NotImplementedError("oar.save is not implemented yet")


def load(path, map_location=None):
    raise NotImplementedError("oar.load is not implemented yet")
