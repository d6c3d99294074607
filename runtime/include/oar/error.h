// Typed errors thrown by the oar core. Each kind names what was wrong (shape,
// dtype, device, index, value, plugin, I/O) so callers and the Python bindings
// can map them onto their own exception types; the message always says which
// argument and which values were involved.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace oar {

enum class ErrorKind {
  kShape,
  kDType,
  kDevice,
  kIndex,
  kValue,
  kNotImplemented,
  kPlugin,
  kIO,
  kInternal,
  kGraph,  // an invalid graph, or eager code that cannot be captured as one
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

#define OAR_DEFINE_ERROR(Name, Kind) \
  class Name : public Error {        \
   public:                           \
    explicit Name(const std::string& m) : Error(ErrorKind::Kind, m) {} \
  };
OAR_DEFINE_ERROR(ShapeError, kShape)
OAR_DEFINE_ERROR(DTypeError, kDType)
OAR_DEFINE_ERROR(DeviceError, kDevice)
OAR_DEFINE_ERROR(IndexError, kIndex)
OAR_DEFINE_ERROR(ValueError, kValue)
OAR_DEFINE_ERROR(NotImplementedError, kNotImplemented)
OAR_DEFINE_ERROR(PluginError, kPlugin)
OAR_DEFINE_ERROR(IOError, kIO)
OAR_DEFINE_ERROR(InternalError, kInternal)
OAR_DEFINE_ERROR(GraphError, kGraph)
#undef OAR_DEFINE_ERROR

// Builds a message from streamable parts: throw ShapeError(str("got ", n)).
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace oar
