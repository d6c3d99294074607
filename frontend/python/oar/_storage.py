"""Tensor.untyped_storage() and Tensor.storage(): the memory under a tensor, as PyTorch shows it.

A storage here is a window onto the tensor's memory, not a separate object the runtime tracks: it keeps
the memory alive and answers what scripts ask of it: where it starts (data_ptr(), which tells whether
two tensors share memory, as safetensors and HuggingFace's tied-weight checks do), how large it is
(nbytes(), size(), len()), its values (tolist(), indexing) and its device. The typed form
(TypedStorage, what storage() returns) counts elements of the tensor's dtype; the untyped form counts
bytes.
"""
import numpy as np


def _whole(tensor, count):
    """The storage's first `count` elements as a flat tensor (entries outside the tensor's view too)."""
    return tensor.detach().as_strided((count,), (1,), 0)


class UntypedStorage:
    """The bytes under a tensor (torch.UntypedStorage)."""

    def __init__(self, tensor):
        self._tensor = tensor.detach()

    @property
    def device(self):
        return self._tensor.device

    @property
    def is_cuda(self):
        return self._tensor.device.type == "cuda"

    def nbytes(self):
        return self._tensor._storage_nbytes()

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.size()

    def element_size(self):
        return 1

    def data_ptr(self):
        """Address of the storage's first byte (the tensor's data_ptr() less its offset)."""
        t = self._tensor
        return t.data_ptr() - t.storage_offset() * t.element_size()

    def is_shared(self):
        shared = getattr(self._tensor, "is_shared", None)
        return bool(shared()) if shared is not None else False

    def _bytes(self):
        t = self._tensor
        values = _whole(t, self.nbytes() // t.element_size()).cpu().numpy()
        return np.ascontiguousarray(values).view(np.uint8)

    def tolist(self):
        return self._bytes().tolist()

    def __getitem__(self, index):
        return self._bytes()[index].tolist()

    def __iter__(self):
        return iter(self.tolist())

    def cpu(self):
        return self if self.device.type == "cpu" else type(self)(self._tensor.cpu())

    def untyped(self):
        return self

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[torch.storage.UntypedStorage(device={self.device}) of size {self.size()}]".lstrip("\n")


class TypedStorage(UntypedStorage):
    """The elements of the tensor's dtype under it (torch.TypedStorage, what Tensor.storage() returns)."""

    @property
    def dtype(self):
        return self._tensor.dtype

    def element_size(self):
        return self._tensor.element_size()

    def size(self):
        return self.nbytes() // self.element_size()

    def _values(self):
        return _whole(self._tensor, self.size())

    def tolist(self):
        return self._values().tolist()

    def __getitem__(self, index):
        return self._values()[index].tolist()

    def untyped(self):
        return UntypedStorage(self._tensor)

    @property
    def _untyped_storage(self):
        return self.untyped()

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        name = str(self.dtype).replace("oar.", "torch.")
        return (f"{body}\n[torch.storage.TypedStorage(dtype={name}, device={self.device}) "
                f"of size {self.size()}]").lstrip("\n")


def untyped_storage(tensor):
    return UntypedStorage(tensor)


def typed_storage(tensor):
    return TypedStorage(tensor)
