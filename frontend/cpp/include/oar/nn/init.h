// oar::nn::init: in-place parameter initialisation with torch.nn.init's
// names and formulas. Values come from the catalog's random ops (uniform,
// normal), so oar::manual_seed makes them reproducible on every device. Each
// function fills the tensor's existing storage without recording gradients
// and returns the tensor.
#pragma once

#include <string>
#include <utility>

#include "oar/tensor.h"

namespace oar::nn::init {

Tensor uniform_(Tensor tensor, double low = 0.0, double high = 1.0);
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor tensor, double value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);

// Recommended gain for a nonlinearity: "linear", "conv2d", "sigmoid", "tanh",
// "relu", "leaky_relu" (param = negative slope), "selu".
double calculate_gain(const std::string& nonlinearity, double param = 0.01);
// (fan_in, fan_out) of a weight [out, in, k...]; at least 2-D.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

// mode: "fan_in" or "fan_out". bound = gain * sqrt(3 / fan).
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu");
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);

}  // namespace oar::nn::init
