"""Python functions for every op in the catalog, generated at import time.

`oar.ops.<name>(*tensors, **attrs)` calls the op; tensors are positional (a
variadic input takes a list), attributes are keywords with the catalog's
defaults. Nothing here is written per op: a new catalog entry appears here.
"""
import types

from . import _C

ops = types.SimpleNamespace()
schemas = {}


def _make(schema):
    name = schema["name"]
    attr_names = [a["name"] for a in schema["attrs"]]
    n_inputs = len(schema["inputs"])
    creation = schema["creation"]

    def op(*tensors, device=None, **attrs):
        unknown = [k for k in attrs if k not in attr_names]
        if unknown:
            raise TypeError(f"{name}() got unexpected keyword argument(s) {unknown}; attributes: {attr_names}")
        if not creation and len(tensors) > n_inputs and not schema["inputs"][-1]["variadic"]:
            raise TypeError(f"{name}() takes {n_inputs} tensor argument(s), got {len(tensors)}")
        return _C.call(name, list(tensors), attrs, device)

    op.__name__ = name
    inputs = ", ".join(i["name"] + ("..." if i["variadic"] else "") for i in schema["inputs"])
    attrs = ", ".join(a["name"] + (f"={a['default']!r}" if a["has_default"] else "") for a in schema["attrs"])
    op.__doc__ = f"{name}({inputs}; {attrs}) -> {', '.join(schema['outputs']) or 'tensors'}\n\n{schema['doc']}"
    return op


def _install_ops():
    for schema in _C.op_schemas():
        schemas[schema["name"]] = schema
        setattr(ops, schema["name"], _make(schema))


_install_ops()
