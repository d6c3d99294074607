// The compiled-subgraph cache (OAR_ADAPTER_CACHE_DIR): a driver's serialized
// program per key, the key being a hash of the canonical subgraph (weights
// included), the driver's name and version, its option values, the adapter
// ABI version and the shapes (which the canonical form holds). An entry is a
// file <dir>/<driver>/<key>.oarprog written atomically; on load every field
// of its header is checked against what is expected and the payload against
// its checksum, and the driver's deserialize makes its own compatibility
// check. Anything stale or corrupt is reported, then rebuilt, never trusted.
#pragma once

#include <string>

#include "driver_registry.h"
#include "subgraph_model.h"

namespace oar::adapter {

class ProgramCache {
 public:
  ProgramCache(std::string dir, const DriverContext& context);
  bool enabled() const { return !dir_.empty(); }
  std::string key(const SubgraphModel& model) const;
  // The cached program, or nullptr (none there, or stale/corrupt: then `why` says what).
  oar_adapter_program_t load(const SubgraphModel& model, std::string* why) const;
  // Stores `program` (a no-op for a driver without serialization); a failure
  // to write is a warning, not an error: the program still runs.
  void store(const SubgraphModel& model, oar_adapter_program_t program) const;

 private:
  std::string path_for(const std::string& key) const;
  std::string options_text() const;
  std::string dir_;
  const DriverContext& context_;
};

}  // namespace oar::adapter
