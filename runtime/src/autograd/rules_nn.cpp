// Gradient rules for nn ops (being written).
#include "rules_util.h"

namespace oar::autograd {

void register_nn_grad_rules() {}

}  // namespace oar::autograd
