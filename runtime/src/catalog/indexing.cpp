// Catalog: indexing ops (to be filled in).
#include "catalog_util.h"

namespace oar {

void register_indexing_ops(OpRegistry&) {}

}  // namespace oar
