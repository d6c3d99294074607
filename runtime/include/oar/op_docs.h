// Renders the op catalog as Markdown (docs/ops.md): every op with its inputs,
// outputs, attributes and defaults, dtype policy and description, plus the
// dtypes each loaded device type has kernels for. Generated, never hand-edited:
// `oar-op-docs > docs/ops.md`, and a test fails when the file is stale.
#pragma once

#include <string>

namespace oar {

// `with_kernels`: add per-device-type kernel dtypes (needs loaded plugins).
std::string catalog_markdown(bool with_kernels = true);

}  // namespace oar
