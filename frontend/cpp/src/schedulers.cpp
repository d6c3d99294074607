// Learning-rate schedulers: StepLR and CosineAnnealingLR over the base
// LRScheduler, which owns the epoch counter and writes lrs into the groups.
#include "oar/optim/schedulers.h"

#include <cmath>
#include <numbers>

#include "oar/error.h"

namespace oar::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  base_lrs_ = get_current_lrs();
  last_lr_ = base_lrs_;
}

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const auto& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

void LRScheduler::step() {
  ++last_epoch_;
  std::vector<double> lrs = get_lrs();
  auto& groups = optimizer_.param_groups();
  if (lrs.size() != groups.size())
    throw ValueError(str("LRScheduler: the optimizer has ", groups.size(), " parameter groups but the scheduler ",
                         "was created with ", lrs.size(), " (groups added after the scheduler are not supported)"));
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = std::move(lrs);
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) throw ValueError(str("StepLR: step_size must be positive, got ", step_size));
}

std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  if (last_epoch_ % step_size_ == 0)
    for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  if (T_max <= 0) throw ValueError(str("CosineAnnealingLR: T_max must be positive, got ", T_max));
}

std::vector<double> CosineAnnealingLR::get_lrs() {
  std::vector<double> lrs;
  const double c = std::cos(std::numbers::pi * double(last_epoch_) / double(t_max_));
  for (double base : base_lrs_) lrs.push_back(eta_min_ + (base - eta_min_) * (1.0 + c) / 2.0);
  return lrs;
}

}  // namespace oar::optim
