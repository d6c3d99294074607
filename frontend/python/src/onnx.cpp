// oar._C's ONNX functions (liboar_onnx.so) for oar.onnx: import a model file
// as a graph and export a graph to a model file. Built only where the ONNX
// library is (OAR_HAVE_ONNX); oar.onnx says so otherwise.
#include "bindings.h"

#ifdef OAR_HAVE_ONNX
#include <nanobind/stl/shared_ptr.h>

#include "oar/graph/graph.h"
#include "oar/onnx/onnx.h"
#endif

namespace oar::py {

void bind_onnx(nb::module_& m) {
#ifdef OAR_HAVE_ONNX
  m.def(
      "onnx_import",
      [](const std::string& path, const std::vector<std::vector<int64_t>>& input_shapes) {
        onnx::ImportOptions options;
        for (const auto& s : input_shapes) options.input_shapes.emplace_back(s.begin(), s.end());
        return std::shared_ptr<graph::Graph>(onnx::import_model(path, options));
      },
      nb::arg("path"), nb::arg("input_shapes") = std::vector<std::vector<int64_t>>{});
  m.def(
      "onnx_export",
      [](const graph::Graph& g, const std::string& path, int opset, const std::vector<std::string>& input_names,
         const std::vector<std::string>& output_names) {
        onnx::export_model(g, path, onnx::ExportOptions{opset, input_names, output_names});
      },
      nb::arg("graph"), nb::arg("path"), nb::arg("opset") = 17, nb::arg("input_names") = std::vector<std::string>{},
      nb::arg("output_names") = std::vector<std::string>{});
  m.def(
      "onnx_export_bytes",
      [](const graph::Graph& g, int opset, const std::vector<std::string>& input_names,
         const std::vector<std::string>& output_names) {
        std::string bytes = onnx::export_model_bytes(g, onnx::ExportOptions{opset, input_names, output_names});
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("graph"), nb::arg("opset") = 17, nb::arg("input_names") = std::vector<std::string>{},
      nb::arg("output_names") = std::vector<std::string>{});
  m.def("onnx_supported_ops", &onnx::supported_op_types);
#else
  (void)m;
#endif
}

}  // namespace oar::py
