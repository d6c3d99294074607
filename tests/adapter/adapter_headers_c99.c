/* The adapter driver ABI headers must be valid C99 (a driver may be C). */
#include "oar/adapter/oar_adapter_driver.h"

/* One use of each table type, so an error in any of them shows. */
size_t oar_adapter_c99_check_sizes(void) {
  return sizeof(oar_adapter_model) + sizeof(oar_adapter_operand) + sizeof(oar_adapter_operation) +
         sizeof(oar_adapter_quant) + sizeof(oar_adapter_dim) + sizeof(oar_adapter_buffer) +
         sizeof(oar_adapter_host_api) + sizeof(oar_adapter_driver_api) + sizeof(oar_adapter_option);
}
