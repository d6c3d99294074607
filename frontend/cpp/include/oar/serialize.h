// Saving and loading state dicts (named tensors) in oar's versioned binary
// format, documented in docs/serialization.md: magic "OARSTATE", a format
// version, the entries (name, dtype, shape, raw little-endian bytes) and an
// FNV-1a 64 checksum of everything before it.
//
// save() is atomic: it writes `path + ".tmp.<pid>"`, fsyncs it and renames it
// over `path`, so a crash or a failed write never leaves a partial file at
// `path` (an existing file stays intact). load() rejects truncated files,
// foreign files, newer format versions and checksum mismatches with an
// oar::IOError naming the file and the problem.
//
//   oar::save(model->state_dict(), "model.oar");    // or oar::save(model, ...)
//   model->load_state_dict(oar::load("model.oar")); // or oar::load(model, ...)
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "oar/device.h"
#include "oar/nn/module.h"
#include "oar/ordered_dict.h"
#include "oar/tensor.h"

namespace oar {

// The format version this build writes; it reads versions 1..kStateFormatVersion.
inline constexpr uint32_t kStateFormatVersion = 1;

// Writes every entry (defined tensors, any device and dtype) to `path`.
void save(const StateDict& state_dict, const std::string& path);
// Reads a file written by save(); tensors are placed on `device` (cpu by default).
StateDict load(const std::string& path);
StateDict load(const std::string& path, Device device);

// Module convenience (torch::save / torch::load): the module's state_dict().
void save(const nn::Module& module, const std::string& path);
nn::LoadStateDictResult load(nn::Module& module, const std::string& path, bool strict = true);

template <class M>
void save(const std::shared_ptr<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <class M>
void save(const nn::ModuleHolder<M>& module, const std::string& path) {
  save(static_cast<const nn::Module&>(*module), path);
}
template <class M>
nn::LoadStateDictResult load(const std::shared_ptr<M>& module, const std::string& path, bool strict = true) {
  return load(static_cast<nn::Module&>(*module), path, strict);
}
template <class M>
nn::LoadStateDictResult load(const nn::ModuleHolder<M>& module, const std::string& path, bool strict = true) {
  return load(static_cast<nn::Module&>(*module), path, strict);
}

}  // namespace oar
