// oar::nn umbrella: Module and ModuleHolder, layers, recurrent layers,
// activations, pooling, Sequential, losses, init and functional (torch/nn.h's counterpart).
#pragma once

#include "oar/functional.h"
#include "oar/nn/activation.h"
#include "oar/nn/init.h"
#include "oar/nn/layers.h"
#include "oar/nn/loss.h"
#include "oar/nn/module.h"
#include "oar/nn/rnn.h"
#include "oar/nn/sequential.h"
