"""oar.einsum (torch.einsum): Einstein summation, the catalog's einsum (runtime/src/catalog/composites_einsum.cpp:
diagonal, sum and batched matmul, so it runs on every device and is differentiable). Only torch's call forms
are handled here."""
from ._ops import ops
from ._shape_common import _check_tensor


def einsum(equation, *operands):
    """Einstein summation (torch.einsum): explicit ('ij,jk->ik') or implicit output, ellipsis broadcasting,
    repeated subscripts for diagonals and traces."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    for x in operands:
        _check_tensor(x, "einsum")
    return ops.einsum(list(operands), equation=equation)


__all__ = ["einsum"]
