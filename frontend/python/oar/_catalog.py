"""oar.<op>, Tensor.<op> and the in-place <op>_ for every public catalog op, generated at import time.

A PyTorch-style wrapper written by hand (_functions.py, _creation.py: torch signatures, Python numbers,
dtype rules) keeps its name; every other public op is oar.ops.<op> itself, so a new catalog entry (a new
line of kernel_primitives' unary_ops.def included) is oar.<op> and Tensor.<op> without touching a list.
Backward kernels and fusions stay reachable by name only, as oar.ops.<op>.

Signature (_ops.py): the op's tensor inputs (a variadic one takes a list), then its attributes in catalog
order, positionally or by keyword: oar.erf(x), oar.select(x, 0, 2), x.leaky_relu(negative_slope=0.2).
"""
from ._ops import ops, schemas


def _takes_tensor_first(schema):
    inputs = schema["inputs"]
    return not schema["creation"] and bool(inputs) and not inputs[0]["variadic"]


def _unary_same_kind(schema):
    """An elementwise op of one tensor whose attributes all have defaults: it has an in-place form."""
    return (schema["elementwise"] and len(schema["inputs"]) == 1 and schema["gradient"] != "none"
            and all(a["has_default"] for a in schema["attrs"]))


def public_schemas():
    return [s for s in schemas.values() if s["public"]]


def install(namespace, tensor_cls, inplace_method):
    """Adds what the hand-written frontend lacks; returns the names added to `namespace`."""
    added = []
    for schema in public_schemas():
        name = schema["name"]
        fn = namespace.get(name)
        if fn is None:
            fn = namespace[name] = getattr(ops, name)
            added.append(name)
        if _takes_tensor_first(schema) and not hasattr(tensor_cls, name):
            setattr(tensor_cls, name, fn)
        if _unary_same_kind(schema) and name + "_" not in namespace and not hasattr(tensor_cls, name + "_"):
            namespace[name + "_"] = inplace = inplace_method(fn)
            setattr(tensor_cls, name + "_", inplace)
            added.append(name + "_")
    return added
