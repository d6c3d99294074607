// Learning-rate schedulers with torch.optim.lr_scheduler's semantics: the
// scheduler records each group's lr at construction as its base lr (epoch 0);
// every step() advances one epoch and writes the new lr into every group.
//
//   optim::StepLR sched(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (epoch ...) { train(...); sched.step(); }
#pragma once

#include <cstdint>
#include <vector>

#include "oar/optim/optimizer.h"

namespace oar::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;
  // Advances one epoch and sets the groups' learning rates.
  void step();
  // The learning rates set by the latest step() (the base ones before any).
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }

 protected:
  // Learning rates for epoch last_epoch() (already advanced).
  virtual std::vector<double> get_lrs() = 0;
  std::vector<double> get_current_lrs() const;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
  int64_t last_epoch_ = 0;
};

// Multiplies the lr by gamma every step_size epochs:
// lr = base_lr * gamma^floor(epoch / step_size) (applied to the current lr, as PyTorch).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lrs() override;

 private:
  int64_t step_size_;
  double gamma_;
};

// Cosine annealing from base_lr to eta_min over T_max epochs (PyTorch's closed form):
// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);

 protected:
  std::vector<double> get_lrs() override;

 private:
  int64_t t_max_;
  double eta_min_;
};

}  // namespace oar::optim
