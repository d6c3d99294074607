// oar._C.BatchPrefetcher: the fast path of oar.utils.data.DataLoader for
// tensor datasets. The epoch's batches (index lists, drawn by the Python
// sampler so oar.manual_seed governs the order) are gathered by worker threads
// with one index_select per tensor, ahead of the consumer and without the GIL,
// so Python only receives ready batches, in order.
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "bindings.h"

namespace oar::py {

namespace {

class BatchPrefetcher {
 public:
  BatchPrefetcher(std::vector<Tensor> tensors, std::vector<std::vector<int64_t>> batches, int num_threads,
                  int prefetch)
      : tensors_(std::move(tensors)), batches_(std::move(batches)) {
    if (tensors_.empty()) throw ValueError("BatchPrefetcher: no tensors");
    if (num_threads <= 0 || prefetch <= 0) throw ValueError("num_threads and prefetch must be positive");
    n_ = tensors_[0].dim() > 0 ? tensors_[0].size(0) : 0;
    for (const auto& t : tensors_) {
      if (t.dim() == 0 || t.size(0) != n_)
        throw ShapeError(str("all tensors must have the same first dimension (", n_, "), got shape ", shape_str(t.shape())));
    }
    for (const auto& b : batches_)
      for (int64_t i : b)
        if (i < 0 || i >= n_) throw IndexError(str("sample index ", i, " is out of range for ", n_, " samples"));
    num_batches_ = int64_t(batches_.size());
    capacity_ = size_t(prefetch);
    for (int i = 0; i < num_threads; ++i) workers_.emplace_back([this] { work(); });
  }

  ~BatchPrefetcher() {
    if (getpid() != owner_pid_) {
      // A fork (a DataLoader worker process) copied this object but not its
      // threads: the mutex and condition variable may record waiters that do
      // not exist here, and destroying them would wait forever. Leave them.
      new std::vector<std::thread>(std::move(workers_));
      sync_.release();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  int64_t num_batches() const { return num_batches_; }

  // Next batch in order; empty when done. Rethrows a worker's error.
  std::vector<Tensor> next() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (delivered_ >= num_batches_) return {};
    cv_.wait(lock, [&] { return ready_.count(delivered_) || error_; });
    if (error_) std::rethrow_exception(error_);
    auto batch = std::move(ready_[delivered_]);
    ready_.erase(delivered_);
    ++delivered_;
    cv_.notify_all();
    return batch;
  }

 private:
  void work() {
    for (;;) {
      int64_t b;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        // Stay at most `capacity_` batches ahead of the consumer.
        cv_.wait(lock, [&] { return stop_ || next_batch_ >= num_batches_ || next_batch_ < delivered_ + int64_t(capacity_); });
        if (stop_ || next_batch_ >= num_batches_) return;
        b = next_batch_++;
      }
      try {
        const std::vector<int64_t>& idx = batches_[size_t(b)];
        std::vector<Tensor> batch;
        std::vector<std::pair<Device, Tensor>> index_on;  // one index tensor per device
        for (const auto& t : tensors_) {
          Tensor index;
          for (auto& [d, i] : index_on)
            if (d == t.device()) index = i;
          if (!index.defined()) {
            index = Tensor::from_vector<int64_t>(idx, {int64_t(idx.size())}, t.device());
            index_on.emplace_back(t.device(), index);
          }
          batch.push_back(call1("index_select", {t, index}, {{"dim", int64_t(0)}}));
        }
        std::lock_guard<std::mutex> lock(mutex_);
        ready_[b] = std::move(batch);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      cv_.notify_all();
    }
  }

  std::vector<Tensor> tensors_;
  std::vector<std::vector<int64_t>> batches_;
  int64_t n_ = 0, num_batches_ = 0;
  size_t capacity_;
  struct Sync {
    std::mutex mutex;
    std::condition_variable cv;
  };
  std::unique_ptr<Sync> sync_ = std::make_unique<Sync>();
  std::mutex& mutex_ = sync_->mutex;
  std::condition_variable& cv_ = sync_->cv;
  pid_t owner_pid_ = getpid();
  std::map<int64_t, std::vector<Tensor>> ready_;
  int64_t next_batch_ = 0, delivered_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

}  // namespace

void bind_data(nb::module_& m) {
  nb::class_<BatchPrefetcher>(m, "BatchPrefetcher")
      .def(nb::init<std::vector<Tensor>, std::vector<std::vector<int64_t>>, int, int>(), nb::arg("tensors"),
           nb::arg("batches"), nb::arg("num_threads") = 1, nb::arg("prefetch") = 2)
      .def("__len__", &BatchPrefetcher::num_batches)
      .def("__iter__", [](nb::handle self) { return self; })
      .def("__next__", [](BatchPrefetcher& p) {
        std::vector<Tensor> batch;
        {
          nb::gil_scoped_release release;  // wait for workers without holding the GIL
          batch = p.next();
        }
        if (batch.empty()) throw nb::stop_iteration();
        nb::list l;
        for (auto& t : batch) l.append(nb::cast(std::move(t)));
        return nb::tuple(l);
      });
}

}  // namespace oar::py
