// oar-predict: runs a saved graph (or an ONNX model) from the command line
// through the C++ inference API, so a deployment can be checked without Python:
//
//   oar-predict MODEL [INPUTS OUTPUTS] [--device D] [--adapter NAME]
//               [--adapter-option OAR_<DRIVER>_<OPTION>=VALUE]... [--deny PIN]... [--explain]
//
// MODEL is a graph saved with oar.jit.save (.oarg) or, where liboar_onnx is
// built, an ONNX model (.onnx). INPUTS is a state file (oar.save) whose
// entries are taken in order as the graph's inputs; the outputs are written
// as "output0", "output1", ... --adapter (or OAR_ADAPTER) offloads subgraphs
// to an adapter driver; --explain prints which node went where and why
// (with MODEL alone it only prints that). Errors (bad files, shapes, devices,
// drivers) print the typed message and exit 1; bad usage exits 2.
#include <cstdio>
#include <cstring>
#include <string>

#include "oar/inference.h"
#include "oar/serialize.h"
#ifdef OAR_PREDICT_HAVE_ONNX
#include "oar/onnx/onnx.h"
#endif

namespace {

constexpr const char* kUsage =
    "usage: oar-predict MODEL [INPUTS OUTPUTS] [--device DEVICE] [--adapter DRIVER]\n"
    "                   [--adapter-option NAME=VALUE]... [--deny PIN]... [--explain]\n";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu";
  bool explain = false;
  oar::adapter::OffloadOptions adapter;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--device" && has_value) {
      device = argv[++i];
    } else if (a == "--adapter" && has_value) {
      adapter.driver = argv[++i];
    } else if (a == "--adapter-option" && has_value) {
      std::string kv = argv[++i];
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr, "oar-predict: --adapter-option takes NAME=VALUE, got '%s'\n%s", kv.c_str(), kUsage);
        return 2;
      }
      adapter.options[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (a == "--deny" && has_value) {
      adapter.deny.push_back(argv[++i]);
    } else if (a == "--explain") {
      explain = true;
    } else if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "oar-predict: unknown or incomplete option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else {
      paths.push_back(a);
    }
  }
  if (!(paths.size() == 3 || (paths.size() == 1 && explain))) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  try {
    oar::Device dev = oar::Device::parse(device);
    std::unique_ptr<oar::inference::Predictor> predictor;
    if (ends_with(paths[0], ".onnx")) {
#ifdef OAR_PREDICT_HAVE_ONNX
      std::shared_ptr<oar::graph::Graph> graph = oar::onnx::import_model(paths[0]);
      predictor = std::make_unique<oar::inference::Predictor>(graph, dev, adapter);
#else
      throw oar::NotImplementedError(paths[0] + ": this oar was built without ONNX support (libonnx-dev)");
#endif
    } else {
      predictor = std::make_unique<oar::inference::Predictor>(paths[0], dev, adapter);
    }
    if (explain) {
      if (const oar::adapter::Placement* p = predictor->placement()) {
        std::printf("%s", p->explain().c_str());
      } else {
        std::printf("no adapter driver selected (--adapter or OAR_ADAPTER): all %zu nodes run on %s\n",
                    predictor->graph().node_count(), predictor->device().str().c_str());
      }
    }
    if (paths.size() == 1) return 0;
    std::vector<oar::Tensor> inputs;
    for (const auto& [name, t] : oar::load(paths[1], predictor->device())) inputs.push_back(t);
    std::vector<oar::Tensor> outputs = predictor->run(inputs);
    oar::StateDict out;
    for (size_t i = 0; i < outputs.size(); ++i) out.insert("output" + std::to_string(i), outputs[i]);
    oar::save(out, paths[2]);
    std::printf("%s: %zu inputs -> %zu outputs on %s\n", paths[0].c_str(), inputs.size(), outputs.size(),
                predictor->device().str().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oar-predict: %s\n", e.what());
    return 1;
  }
  return 0;
}
