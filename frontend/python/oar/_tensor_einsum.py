"""oar.einsum (torch.einsum): Einstein summation built from diagonal, sum and batched matmul, so it runs on
every device and is differentiable. Operands are contracted left to right, each pair as one matmul."""
import builtins
import math

from . import _C
from ._ops import ops
from ._functions import result_type
from ._shape_common import _check_tensor
from ._tensor_layout import diagonal


def _einsum_labels(term, equation):
    labels, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            labels.append("...")
            i += 3
        elif term[i].isascii() and term[i].isalpha():
            labels.append(term[i])
            i += 1
        else:
            raise ValueError(f"einsum(): invalid subscript given at index {i} in the equation string "
                             f"{equation!r}; subscripts must be in [a-zA-Z]")
    if labels.count("...") > 1:
        raise ValueError(f"einsum(): more than one ellipsis ('...') in the subscripts {term!r}")
    return labels


def _einsum_diagonals(x, labels):
    """A label repeated within one operand takes the diagonal of those dims."""
    while len(set(labels)) != len(labels):
        label = next(lab for lab in labels if labels.count(lab) > 1)
        i = labels.index(label)
        j = labels.index(label, i + 1)
        if x.shape[i] != x.shape[j]:
            raise _C.ShapeError(f"einsum(): subscript {label} is repeated for operand but the sizes don't match, "
                                f"{x.shape[i]} != {x.shape[j]}")
        x = diagonal(x, 0, i, j)
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [label]
    return x, labels


def _einsum_sum_out(x, labels, keep):
    gone = [i for i, lab in enumerate(labels) if lab not in keep]
    if not gone:
        return x, labels
    return ops.sum(x, dims=gone), [lab for lab in labels if lab in keep]


def _einsum_pair(a, al, b, bl, later):
    """The product of two labelled operands summed over the labels nothing later needs, as one batched
    matmul [batch, a-only, shared] @ [batch, shared, b-only] (a broadcast product when nothing is shared)."""
    a, al = _einsum_sum_out(a, al, set(later) | set(bl))
    b, bl = _einsum_sum_out(b, bl, set(later) | set(al))
    size = {lab: a.shape[i] for i, lab in enumerate(al)}
    for lab, n in zip(bl, b.shape):
        if lab in size and size[lab] != n and size[lab] != 1 and n != 1:
            raise _C.ShapeError(f"einsum(): operands do not broadcast with remapped shapes: subscript {lab} has "
                                f"sizes {size[lab]} and {n}")
        if lab not in size or size[lab] == 1:  # a size-1 dim broadcasts against the other operand's
            size[lab] = n
    a = a.expand([size[lab] for lab in al])
    b = b.expand([size[lab] for lab in bl])
    batch = [lab for lab in al if lab in bl and lab in later]
    summed = [lab for lab in al if lab in bl and lab not in later]
    a_only = [lab for lab in al if lab not in bl]
    b_only = [lab for lab in bl if lab not in al]
    a = a.permute([al.index(lab) for lab in batch + a_only + summed])
    b = b.permute([bl.index(lab) for lab in batch + summed + b_only])
    bs, ms, ks, ns = ([size[lab] for lab in g] for g in (batch, a_only, summed, b_only))
    if not summed:
        y = a.reshape(bs + ms + [1] * len(ns)) * b.reshape(bs + [1] * len(ms) + ns)
    else:
        B, M, K, N = math.prod(bs), math.prod(ms), math.prod(ks), math.prod(ns)
        y = (a.reshape(B, M, K) @ b.reshape(B, K, N)).reshape(bs + ms + ns)
    return y, batch + a_only + b_only


def einsum(equation, *operands):
    """Einstein summation (torch.einsum): explicit ('ij,jk->ik') or implicit output, ellipsis broadcasting,
    repeated subscripts for diagonals and traces. Built from diagonal, sum and batched matmul, so it runs on
    every device and is differentiable."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"einsum(): more than one '->' in the equation {equation!r}")
    lhs, rhs = eq.split("->") if "->" in eq else (eq, None)
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): {len(terms)} subscript groups in the equation but {len(operands)} operands")
    parsed = [_einsum_labels(term, equation) for term in terms]
    ellipsis_ranks = []
    for k, (labels, x) in enumerate(zip(parsed, operands)):
        _check_tensor(x, "einsum")
        letters = len(labels) - ("..." in labels)
        if ("..." in labels and x.ndim < letters) or ("..." not in labels and x.ndim != letters):
            raise _C.ShapeError(f"einsum(): the number of subscripts in the equation ({letters}) does not match the "
                                f"number of dimensions ({x.ndim}) for operand {k}"
                                f"{' and no ellipsis was given' if '...' not in labels else ''}")
        ellipsis_ranks.append(x.ndim - letters)
    rank = builtins.max(ellipsis_ranks)
    # Ellipsis dims are labelled by ints 0..rank-1, right-aligned, so they broadcast like NumPy's.
    expanded = [[e for lab in labels for e in (range(rank - k, rank) if lab == "..." else [lab])]
                for labels, k in zip(parsed, ellipsis_ranks)]
    letters = [lab for labels in expanded for lab in labels if isinstance(lab, str)]
    if rhs is None:
        once = sorted((lab for lab in set(letters) if letters.count(lab) == 1), key=lambda c: (c.islower(), c))
        out = list(range(rank)) + once
    else:
        out_labels = _einsum_labels(rhs, equation)
        out = [e for lab in out_labels for e in (range(rank) if lab == "..." else [lab])]
        for lab in out:
            if isinstance(lab, str) and lab not in letters:
                raise ValueError(f"einsum(): output subscript {lab} does not appear in the equation for any input "
                                 "operand")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum(): output subscripts in {rhs!r} appear more than once")
    dtype = result_type(*operands)
    pairs = [_einsum_diagonals(x.to(dtype), labels) for x, labels in zip(operands, expanded)]
    later_of = [set(out).union(*(set(lb) for _, lb in pairs[k + 1:])) for k in range(len(pairs))]
    y, labels = _einsum_sum_out(*pairs[0], later_of[0])
    for k in range(1, len(pairs)):
        y, labels = _einsum_pair(y, labels, pairs[k][0], pairs[k][1], later_of[k])
    y, labels = _einsum_sum_out(y, labels, set(out))
    y = y.permute([labels.index(lab) for lab in out]) if out else y
    return y if y.dtype == dtype else y.to(dtype)


__all__ = ["einsum"]
