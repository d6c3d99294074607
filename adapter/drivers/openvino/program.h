// What compile and deserialize share once an OpenVINO CompiledModel exists.
#pragma once

#include "driver_types.h"

namespace oar_openvino {

// Gives the program its infer request, and notes once per context when the
// device runs another precision than OAR_OPENVINO_PRECISION asked for.
void finish_program(oar_adapter_context_s& context, oar_adapter_program_s& program);

}  // namespace oar_openvino
