// Gradient rules for indexing ops (being written).
#include "rules_util.h"

namespace oar::autograd {

void register_indexing_grad_rules() {}

}  // namespace oar::autograd
