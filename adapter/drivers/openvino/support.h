// Which oar operations the OpenVINO driver maps, and why not the others.
#pragma once

#include <string>

#include "oar/adapter/oar_adapter_model.h"

namespace oar_openvino {

// Empty when operation `index` of a validated model passes the driver's
// rules (op type, dtypes, static shapes, attributes, OpenVINO's known
// semantic gaps); otherwise a reason that starts with the op type. Throws
// INVALID_ARGUMENT for an attribute of the wrong kind (a broken model).
std::string unsupported_reason(const oar_adapter_model* model, uint32_t index);

}  // namespace oar_openvino
