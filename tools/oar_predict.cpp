// oar-predict: runs a saved graph from the command line through the C++
// inference API, so a deployment can be checked without Python:
//
//   oar-predict model.oarg inputs.oar outputs.oar [--device opencl]
//
// inputs.oar is a state file (oar.save) whose entries are taken in order as
// the graph's inputs; the outputs are written as "output0", "output1", ...
// Errors (bad files, shapes, devices) print the typed message and exit 1.
#include <cstdio>
#include <cstring>
#include <string>

#include "oar/inference.h"
#include "oar/serialize.h"

int main(int argc, char** argv) {
  std::string device = "cpu";
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0 && i + 1 < argc) device = argv[++i];
    else paths.emplace_back(argv[i]);
  }
  if (paths.size() != 3) {
    std::fprintf(stderr, "usage: oar-predict GRAPH INPUTS OUTPUTS [--device DEVICE]\n");
    return 2;
  }
  try {
    oar::inference::Predictor predictor(paths[0], oar::Device::parse(device));
    std::vector<oar::Tensor> inputs;
    for (const auto& [name, t] : oar::load(paths[1], predictor.device())) inputs.push_back(t);
    std::vector<oar::Tensor> outputs = predictor.run(inputs);
    oar::StateDict out;
    for (size_t i = 0; i < outputs.size(); ++i) out.insert("output" + std::to_string(i), outputs[i]);
    oar::save(out, paths[2]);
    std::printf("%s: %zu inputs -> %zu outputs on %s\n", paths[0].c_str(), inputs.size(), outputs.size(),
                predictor.device().str().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oar-predict: %s\n", e.what());
    return 1;
  }
  return 0;
}
