#include "oar/autograd.h"

namespace oar::autograd {

namespace {
thread_local bool t_grad_enabled = true;
}

bool is_grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }

}  // namespace oar::autograd
