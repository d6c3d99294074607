"""dtype objects under their PyTorch names."""
from ._C import dtype as _dtype

float32 = float = _dtype.float32
float64 = double = _dtype.float64
float16 = half = _dtype.float16
bfloat16 = _dtype.bfloat16
int8 = _dtype.int8
uint8 = _dtype.uint8
int32 = int = _dtype.int32
int64 = long = _dtype.int64
bool = _dtype.bool

# torch.dtype's other properties: uint8 and bool are the unsigned types, and oar has no complex dtype.
_dtype.is_signed = property(lambda d: d not in (_dtype.uint8, _dtype.bool))
_dtype.is_complex = property(lambda d: False)

__all__ = ["float32", "float", "float64", "double", "float16", "half", "bfloat16", "int8", "uint8", "int32",
           "int", "int64", "long", "bool"]
