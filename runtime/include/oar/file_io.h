// Whole-file reads and atomic writes, for everything oar persists (ONNX
// exports, compiled-subgraph caches, reports): a write goes to a temporary
// file in the target's directory, is fsynced, then renamed over the target,
// so a crash or a full disk leaves the previous file intact, never half a file.
#pragma once

#include <string>
#include <string_view>

namespace oar {

// IOError naming the path: missing, a directory, unreadable.
std::string read_file(const std::string& path);
// IOError naming the path: no such directory, cannot create, write or fsync
// failed (disk full), rename failed; the temporary file is removed on failure.
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace oar
