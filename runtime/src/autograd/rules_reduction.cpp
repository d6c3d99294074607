// Gradient rules for reduction ops (being written).
#include "rules_util.h"

namespace oar::autograd {

void register_reduction_grad_rules() {}

}  // namespace oar::autograd
