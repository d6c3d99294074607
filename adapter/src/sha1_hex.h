// SHA-1 of bytes as 40 hex digits (Boost's header-only implementation): the
// cache keys of compiled subgraphs and the fingerprints of their weights.
// Not for security; a key collision is further guarded by the full check of
// a cache entry against the model on load.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include <boost/uuid/detail/sha1.hpp>

namespace oar::adapter {

class Sha1 {
 public:
  Sha1& add(const void* data, size_t size) {
    if (size > 0) hash_.process_bytes(data, size);
    return *this;
  }
  Sha1& add(std::string_view text) { return add(text.data(), text.size()); }
  std::string hex() {
    boost::uuids::detail::sha1::digest_type digest;
    hash_.get_digest(digest);
    char out[41];
    for (int i = 0; i < 5; ++i) std::snprintf(out + 8 * i, 9, "%08x", digest[i]);
    return std::string(out, 40);
  }

 private:
  boost::uuids::detail::sha1 hash_;
};

inline std::string sha1_hex(std::string_view text) { return Sha1().add(text).hex(); }

}  // namespace oar::adapter
