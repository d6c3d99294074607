// OpenCL device discovery and error names (see cl_device.h).
#include "cl_device.h"

#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_ocl {

const char* cl_error_name(cl_int err) {
  switch (err) {
#define OAR_CL_ERR(e) case e: return #e;
    OAR_CL_ERR(CL_SUCCESS) OAR_CL_ERR(CL_DEVICE_NOT_FOUND) OAR_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    OAR_CL_ERR(CL_COMPILER_NOT_AVAILABLE) OAR_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    OAR_CL_ERR(CL_OUT_OF_RESOURCES) OAR_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    OAR_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE) OAR_CL_ERR(CL_MEM_COPY_OVERLAP)
    OAR_CL_ERR(CL_BUILD_PROGRAM_FAILURE) OAR_CL_ERR(CL_MAP_FAILURE)
    OAR_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET) OAR_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
    OAR_CL_ERR(CL_LINK_PROGRAM_FAILURE) OAR_CL_ERR(CL_INVALID_VALUE) OAR_CL_ERR(CL_INVALID_DEVICE_TYPE)
    OAR_CL_ERR(CL_INVALID_PLATFORM) OAR_CL_ERR(CL_INVALID_DEVICE) OAR_CL_ERR(CL_INVALID_CONTEXT)
    OAR_CL_ERR(CL_INVALID_QUEUE_PROPERTIES) OAR_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    OAR_CL_ERR(CL_INVALID_HOST_PTR) OAR_CL_ERR(CL_INVALID_MEM_OBJECT) OAR_CL_ERR(CL_INVALID_BINARY)
    OAR_CL_ERR(CL_INVALID_BUILD_OPTIONS) OAR_CL_ERR(CL_INVALID_PROGRAM)
    OAR_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE) OAR_CL_ERR(CL_INVALID_KERNEL_NAME)
    OAR_CL_ERR(CL_INVALID_KERNEL) OAR_CL_ERR(CL_INVALID_ARG_INDEX) OAR_CL_ERR(CL_INVALID_ARG_VALUE)
    OAR_CL_ERR(CL_INVALID_ARG_SIZE) OAR_CL_ERR(CL_INVALID_KERNEL_ARGS)
    OAR_CL_ERR(CL_INVALID_WORK_DIMENSION) OAR_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    OAR_CL_ERR(CL_INVALID_WORK_ITEM_SIZE) OAR_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    OAR_CL_ERR(CL_INVALID_EVENT_WAIT_LIST) OAR_CL_ERR(CL_INVALID_EVENT) OAR_CL_ERR(CL_INVALID_OPERATION)
    OAR_CL_ERR(CL_INVALID_BUFFER_SIZE) OAR_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
#undef OAR_CL_ERR
    default: return "unknown OpenCL error";
  }
}

void check(cl_int err, const char* what) {
  if (err == CL_SUCCESS) return;
  oar_status_t code = (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY ||
                       err == CL_OUT_OF_RESOURCES || err == CL_INVALID_BUFFER_SIZE)
                          ? OAR_STATUS_OUT_OF_MEMORY
                          : OAR_STATUS_DEVICE_ERROR;
  oar::sdk::fail(code, std::string(what) + " failed: " + cl_error_name(err) + " (" + std::to_string(err) + ")");
}

namespace {

std::string info_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}
template <class T> T info(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof(v), &v, nullptr);
  return v;
}

std::vector<std::unique_ptr<Device>> discover() {
  std::vector<std::unique_ptr<Device>> out;
  cl_uint nplat = 0;
  if (clGetPlatformIDs(0, nullptr, &nplat) != CL_SUCCESS || nplat == 0) return out;
  std::vector<cl_platform_id> plats(nplat);
  clGetPlatformIDs(nplat, plats.data(), nullptr);
  for (cl_platform_id p : plats) {
    cl_uint ndev = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev) != CL_SUCCESS || ndev == 0) continue;
    std::vector<cl_device_id> ids(ndev);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, ids.data(), nullptr);
    for (cl_device_id id : ids) {
      cl_int err = CL_SUCCESS;
      cl_context ctx = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &err);
      if (err != CL_SUCCESS) continue;
      cl_command_queue q = clCreateCommandQueue(ctx, id, CL_QUEUE_PROFILING_ENABLE, &err);
      if (err != CL_SUCCESS) {
        clReleaseContext(ctx);
        continue;
      }
      auto d = std::make_unique<Device>();
      d->index = int32_t(out.size());
      d->platform = p;
      d->id = id;
      d->context = ctx;
      d->queue = q;
      d->name = info_string(id, CL_DEVICE_NAME);
      d->vendor = info_string(id, CL_DEVICE_VENDOR);
      d->driver_version = info_string(id, CL_DRIVER_VERSION);
      d->device_version = info_string(id, CL_DEVICE_VERSION);
      d->platform_name = platform_string(p, CL_PLATFORM_NAME);
      d->platform_version = platform_string(p, CL_PLATFORM_VERSION);
      d->fp64 = info_string(id, CL_DEVICE_EXTENSIONS).find("cl_khr_fp64") != std::string::npos;
      d->global_memory = info<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
      d->compute_units = int32_t(info<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
      d->max_work_group = std::max<size_t>(1, info<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
      d->max_parameter_size = info<size_t>(id, CL_DEVICE_MAX_PARAMETER_SIZE);
      d->base_address_align = std::max<uint64_t>(64, info<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::vector<std::unique_ptr<Device>>& storage() {
  static std::vector<std::unique_ptr<Device>> list = discover();
  return list;
}

}  // namespace

const std::vector<std::unique_ptr<Device>>& devices() { return storage(); }

Device& device(int32_t index) {
  auto& list = storage();
  if (index < 0 || size_t(index) >= list.size())
    oar::sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "opencl device index " + std::to_string(index) + " is out of range (" +
                                                   std::to_string(list.size()) + " OpenCL devices)");
  return *list[size_t(index)];
}

void release_devices() {
  for (auto& d : storage()) {
    if (d->queue) clFinish(d->queue);
  }
}

}  // namespace oar_ocl
