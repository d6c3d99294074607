// Whole-file reads and atomic writes (see file_io.h).
#include "oar/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "oar/error.h"

namespace oar {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw IOError(str(path, ": no such file"));
  if (fs::is_directory(path, ec)) throw IOError(str(path, ": is a directory, not a file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(str(path, ": cannot open for reading"));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw IOError(str(path, ": read error"));
  return ss.str();
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IOError(str(path, ": directory ", dir.string(), " does not exist"));
  // Same directory as the target, so the rename cannot cross file systems.
  std::string tmp = (dir / str(".", target.filename().string(), ".tmp", ::getpid())).string();
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IOError(str(path, ": cannot create temporary file ", tmp, ": ", std::strerror(errno)));
  auto fail = [&](const std::string& what) {
    std::string why = std::strerror(errno);
    ::close(fd);
    fs::remove(tmp, ec);
    throw IOError(str(path, ": ", what, " ", tmp, " failed: ", why));
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write to");
    done += size_t(n);
  }
  if (::fsync(fd) != 0) fail("fsync of");
  ::close(fd);
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw IOError(str(path, ": cannot rename ", tmp, " into place: ", ec.message()));
  }
  // Persist the rename itself; best effort, the data is already durable.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace oar
