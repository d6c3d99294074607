// Eager dispatch: run an op by name on tensors. Dispatch validates arguments
// against the schema, applies the schema's dtype policy and broadcasting,
// infers and allocates outputs, picks the best kernel for the device and dtype
// signature, and calls it through the plugin ABI. When the device has no
// kernel but the CPU does, the op runs on the CPU according to OAR_FALLBACK
// (warn once per op and device, error, or silent) and a counter records it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// Number of times an op ran on the CPU instead of `device_type` (see OAR_FALLBACK).
int64_t fallback_count(const std::string& op, const std::string& device_type);
int64_t fallback_count_total();

}  // namespace oar
