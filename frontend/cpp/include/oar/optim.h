// oar::optim umbrella: optimizers (SGD, Adam, AdamW) and LR schedulers.
#pragma once

#include "oar/optim/optimizer.h"
#include "oar/optim/schedulers.h"
