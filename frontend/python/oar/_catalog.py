"""oar.<op>, Tensor.<op> and the in-place <op>_ for every public catalog op, generated at import time.

A PyTorch-style wrapper written by hand (_functions.py, _creation.py: torch signatures, Python numbers,
dtype rules) keeps its name; every other public op gets a generic one here, so a new catalog entry (a new
line of kernel_primitives' unary_ops.def included) is oar.<op> and Tensor.<op> without touching a list.
Backward kernels and fusions stay reachable by name only, as oar.ops.<op>.

Generic signature: the op's tensor inputs (a variadic one takes a list), then its attributes in catalog
order, positionally or by keyword: oar.erf(x), oar.select(x, 0, 2), x.leaky_relu(negative_slope=0.2).
"""
from ._ops import ops, schemas


def _generic(schema):
    name = schema["name"]
    n_inputs = len(schema["inputs"])
    attr_names = [a["name"] for a in schema["attrs"]]
    call = getattr(ops, name)

    def op(*args, **attrs):
        tensors, positional = args[:n_inputs], args[n_inputs:]
        if len(positional) > len(attr_names):
            raise TypeError(f"{name}() takes {n_inputs} tensor(s) and {len(attr_names)} attribute(s) "
                            f"({', '.join(attr_names)}), got {len(args)} positional arguments")
        for key, value in zip(attr_names, positional):
            if key in attrs:
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
            attrs[key] = value
        return call(*tensors, **attrs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = call.__doc__
    return op


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
            fn = namespace[name] = _generic(schema)
            added.append(name)
        if _takes_tensor_first(schema) and not hasattr(tensor_cls, name):
            setattr(tensor_cls, name, fn)
        if _unary_same_kind(schema) and name + "_" not in namespace and not hasattr(tensor_cls, name + "_"):
            namespace[name + "_"] = inplace = inplace_method(fn)
            setattr(tensor_cls, name + "_", inplace)
            added.append(name + "_")
    return added
