// Eager dispatch: run an op by name on tensors. Dispatch validates arguments
// against the schema, applies the schema's dtype policy and broadcasting,
// infers and allocates outputs, picks the best kernel for the device and dtype
// signature, and calls it through the plugin ABI. When the device has no
// kernel but the CPU does, the op runs on the CPU according to OAR_FALLBACK
// (warn once per op and device, error, or silent) and a counter records it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "oar/kernel_registry.h"
#include "oar/op_schema.h"
#include "oar/tensor.h"

namespace oar {

struct CallOptions {
  std::optional<Device> device;  // creation ops; defaults to the default device
};

std::vector<Tensor> call(const OpSchema& op, const std::vector<Tensor>& inputs,
                         const Attrs& attrs = {}, const CallOptions& options = {});
std::vector<Tensor> call(const std::string& op, const std::vector<Tensor>& inputs,
                         const Attrs& attrs = {}, const CallOptions& options = {});
// Single-output convenience.
Tensor call1(const std::string& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {},
             const CallOptions& options = {});

// Runs `op` into caller-provided outputs (same shapes/dtypes as inference).
void call_out(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
              const std::vector<Tensor>& outputs);

// ---- The steps of call(), for graph executors that resolve a node once ----

// The attributes in schema order with defaults filled and values coerced to
// the schema's types; ValueError for unknown, missing or mistyped ones.
Attrs normalize_attrs(const OpSchema& op, const Attrs& given);
// One input as type promotion sees it: a 0-dim tensor (a Python number is
// one too) only raises the category of the dimensioned inputs, as in PyTorch.
struct PromotionOperand {
  DType dtype;
  bool zero_dim = false;
};
// The dtype the op's dtype policy casts its promoted inputs to, given each of
// `count` inputs (nullopt: an absent optional input); nullopt when the op
// casts nothing.
std::optional<DType> promoted_dtype(const OpSchema& op, size_t count,
                                    const std::function<std::optional<PromotionOperand>(size_t)>& operand_of);
// Attributes in ABI form; they point into `attrs`, which must outlive them.
std::vector<oar_attr> abi_attrs(const Attrs& attrs);
// Runs the first of `impls` that accepts the call on inputs already prepared
// as the kernel expects them (promoted, broadcast, contiguous unless the op
// takes strides) into allocated outputs; typed errors as call().
void launch_kernel(const OpSchema& op, Device device, const std::vector<KernelEntry>& impls,
                   const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                   const std::vector<oar_attr>& attrs);

// Number of times an op ran on the CPU instead of `device_type` (see OAR_FALLBACK).
int64_t fallback_count(const std::string& op, const std::string& device_type);
int64_t fallback_count_total();

}  // namespace oar
