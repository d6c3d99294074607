// The in-place forms of the C++ frontend (oar::add_, oar::exp_, ...,
// generated or hand-written) all end in one step: the op is computed out of
// place from self.inplace_source(others) -- self itself, or a clone when
// autograd records the write and may need self's current values -- and the
// result is then made self's value by Tensor::update_. So an in-place op bumps
// the memory's version, writes through views into their base, refuses a leaf
// that requires grad, and is recorded by autograd exactly like Tensor::copy_
// and the Python frontend's in-place methods (which take the same path).
#pragma once

#include "oar/tensor.h"

namespace oar {

// `result` (computed out of place from self) becomes self's value; returns
// self (a handle to the same tensor). As in PyTorch, a result of a higher
// kind than self (floating into an integer tensor, a number into bool) is a
// DTypeError naming `op`; a lower or equal kind is converted to self's dtype.
// result broadcasts to self's shape (ShapeError otherwise).
Tensor inplace_assign(const Tensor& self, Tensor result, const char* op = "in-place op");

}  // namespace oar
