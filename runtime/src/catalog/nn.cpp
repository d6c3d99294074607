// Catalog: nn ops (to be filled in).
#include "catalog_util.h"

namespace oar {

void register_nn_ops(OpRegistry&) {}

}  // namespace oar
