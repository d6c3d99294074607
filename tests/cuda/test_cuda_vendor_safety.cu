// The CUDA plugin's host code around NCCL, cuBLAS and cuDNN, run against
// fakes of those libraries and of the CUDA runtime (fakes/), so it is tested
// on every machine: collectives that wait for peers give up after
// OAR_CUDA_NCCL_TIMEOUT_MS with a typed error and nothing left allocated,
// one thread can set up the ranks of several devices, an exchange of sends
// and receives is one NCCL group, and the per-thread vendor handles are
// destroyed on their own device and left alone once the process is exiting.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>

#include "collectives.h"
#include "fakes/fake_vendor.h"
#include "gpu_device.h"
#include "vendor_handles.h"

namespace {

using Clock = std::chrono::steady_clock;

// The host table the core would give: errors kept for the test, the NCCL
// timeout at 300 ms so a wait that gives up does so quickly.
std::string g_last_error;
void host_set_error(oar_status_t, const char* message) { g_last_error = message ? message : ""; }
void host_log(oar_log_level_t, const char*) {}
int host_get_flag(const char* name, char* buf, size_t size) {
  if (std::strcmp(name, "OAR_CUDA_NCCL_TIMEOUT_MS") != 0) return 0;
  std::snprintf(buf, size, "300");
  return 1;
}
const oar_host_api* fake_host() {
  static oar_host_api h = [] {
    oar_host_api a{};
    a.struct_size = sizeof(a);
    a.abi_major = OAR_ABI_VERSION_MAJOR;
    a.abi_minor = OAR_ABI_VERSION_MINOR;
    a.set_error = host_set_error;
    a.log = host_log;
    a.get_flag = host_get_flag;
    return a;
  }();
  return &h;
}

class Collectives : public ::testing::Test {
 protected:
  void SetUp() override {
    oar_gpu::set_host(fake_host());
    fake_cudart_reset(2);
    fake_nccl_reset();
    g_last_error.clear();
    api_ = oar_gpu::nccl_collectives();
    ASSERT_TRUE(OAR_STRUCT_HAS(api_, oar_collectives_api, comm_init_ranks));
  }
  void TearDown() override {
    EXPECT_EQ(fake_nccl_live_comms(), 0) << "NCCL communicators left behind";
    EXPECT_EQ(fake_cudart_live_allocations(), 0) << "device memory left behind";
  }

  // Runs `call` with a watchdog: a call that never returns is a failure (the
  // fake peers are then released so the thread can finish), not a hung test.
  template <class F>
  oar_status_t bounded(F&& call, double* seconds) {
    auto start = Clock::now();
    auto result = std::async(std::launch::async, std::forward<F>(call));
    if (result.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      ADD_FAILURE() << "the call did not return within 20 s";
      fake_nccl_finalize_hangs(0);
      fake_nccl_operations_hang(0);
      fake_nccl_release_all();
    }
    oar_status_t st = result.get();
    *seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return st;
  }

  oar_comm_unique_id new_id() {
    oar_comm_unique_id id;
    EXPECT_EQ(api_->get_unique_id(&id), OAR_STATUS_OK);
    return id;
  }

  // Both ranks of a world of two, on devices 0 and 1 of this process.
  void init_pair(oar_comm_t comms[2]) {
    oar_comm_unique_id id = new_id();
    const int32_t devices[2] = {0, 1}, ranks[2] = {0, 1};
    ASSERT_EQ(api_->comm_init_ranks(&id, 2, 2, devices, ranks, 0, comms), OAR_STATUS_OK) << g_last_error;
  }

  const oar_collectives_api* api_ = nullptr;
};

TEST_F(Collectives, CommInitGivesUpOnAPeerThatNeverJoins) {
  oar_comm_unique_id id = new_id();
  oar_comm_t comm = reinterpret_cast<oar_comm_t>(0x1);
  double seconds = 0;
  oar_status_t st = bounded([&] { return api_->comm_init(0, &id, 2, 0, &comm); }, &seconds);
  EXPECT_EQ(st, OAR_STATUS_TIMEOUT);
  EXPECT_EQ(comm, nullptr);
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(g_last_error.find("rank(s) 0 of a world of 2 still waiting"), std::string::npos) << g_last_error;
  EXPECT_NE(g_last_error.find("300 ms"), std::string::npos) << g_last_error;
  EXPECT_NE(std::string(fake_nccl_log()).find("CommAbort(rank=0)"), std::string::npos) << fake_nccl_log();
}

TEST_F(Collectives, OneThreadSetsUpTheRanksOfTwoDevices) {
  // One comm_init after the other waits in the first for a peer not created yet.
  oar_comm_unique_id id = new_id();
  oar_comm_t first = nullptr;
  double seconds = 0;
  EXPECT_EQ(bounded([&] { return api_->comm_init(0, &id, 2, 0, &first); }, &seconds), OAR_STATUS_TIMEOUT);

  // comm_init_ranks creates both in one NCCL group, each on its own device.
  fake_nccl_reset();
  oar_comm_t comms[2] = {nullptr, nullptr};
  init_pair(comms);
  ASSERT_NE(comms[0], nullptr);
  ASSERT_NE(comms[1], nullptr);
  EXPECT_STREQ(fake_nccl_log(),
               "GroupStart;CommInitRankConfig(rank=0,dev=0,depth=1,blocking=0);"
               "CommInitRankConfig(rank=1,dev=1,depth=1,blocking=0);GroupEnd;");
  for (oar_comm_t c : comms) EXPECT_EQ(api_->comm_destroy(c), OAR_STATUS_OK) << g_last_error;
}

TEST_F(Collectives, CommInitRanksRefusesBadInputAndLeavesNothing) {
  oar_comm_unique_id id = new_id();
  oar_comm_t comms[2] = {reinterpret_cast<oar_comm_t>(0x1), reinterpret_cast<oar_comm_t>(0x1)};
  const int32_t devices[2] = {0, 1}, same_rank[2] = {1, 1}, bad_device[2] = {0, 7}, ranks[2] = {0, 1};
  EXPECT_EQ(api_->comm_init_ranks(&id, 2, 2, devices, same_rank, 0, comms), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_last_error.find("rank 1 given twice"), std::string::npos) << g_last_error;
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_EQ(comms[1], nullptr);
  EXPECT_EQ(api_->comm_init_ranks(&id, 2, 2, bad_device, ranks, 0, comms), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_last_error.find("device index 7 out of range"), std::string::npos) << g_last_error;
  EXPECT_EQ(api_->comm_init_ranks(&id, 1, 2, devices, ranks, 0, comms), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(api_->comm_init_ranks(&id, 2, 0, devices, ranks, 0, comms), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(api_->comm_init_ranks(nullptr, 2, 2, devices, ranks, 0, comms), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(api_->comm_init_ranks(&id, 2, 2, devices, ranks, 0, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(fake_nccl_log()), "") << "nothing reaches NCCL on bad input";
}

TEST_F(Collectives, AnExchangeIsOneGroup) {
  oar_comm_t comms[2] = {nullptr, nullptr};
  init_pair(comms);
  fake_nccl_clear_log();
  float out[4] = {1, 2, 3, 4}, in[4] = {};
  const oar_p2p_op ops[2] = {{OAR_P2P_SEND, 1, OAR_DTYPE_F32, 0, out, 4}, {OAR_P2P_RECV, 1, OAR_DTYPE_F32, 0, in, 4}};
  EXPECT_EQ(api_->p2p_batch(comms[0], ops, 2, nullptr), OAR_STATUS_OK) << g_last_error;
  EXPECT_STREQ(fake_nccl_log(),
               "GroupStart;Send(rank=0,peer=1,count=4,depth=1);Recv(rank=0,peer=1,count=4,depth=1);GroupEnd;");
  EXPECT_EQ(api_->p2p_batch(comms[0], ops, 0, nullptr), OAR_STATUS_OK);  // nothing to do

  oar_p2p_op bad = ops[0];
  bad.kind = 7;
  EXPECT_EQ(api_->p2p_batch(comms[0], &bad, 1, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(g_last_error.find("op 0: kind 7"), std::string::npos) << g_last_error;
  bad = ops[0];
  bad.peer = 0;  // this rank
  EXPECT_EQ(api_->p2p_batch(comms[0], &bad, 1, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  bad.peer = 2;
  EXPECT_EQ(api_->p2p_batch(comms[0], &bad, 1, nullptr), OAR_STATUS_OUT_OF_RANGE);
  bad = ops[1];
  bad.buffer = nullptr;
  EXPECT_EQ(api_->p2p_batch(comms[0], &bad, 1, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  bad = ops[1];
  bad.dtype = 99;
  EXPECT_EQ(api_->p2p_batch(comms[0], &bad, 1, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  bad = ops[1];
  bad.reserved = 1;
  EXPECT_EQ(api_->p2p_batch(comms[0], &bad, 1, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(api_->p2p_batch(comms[0], nullptr, 1, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(api_->p2p_batch(nullptr, ops, 2, nullptr), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_STREQ(fake_nccl_log(), "GroupStart;Send(rank=0,peer=1,count=4,depth=1);Recv(rank=0,peer=1,count=4,depth=1);GroupEnd;")
      << "bad ops are refused before anything is enqueued";
  for (oar_comm_t c : comms) EXPECT_EQ(api_->comm_destroy(c), OAR_STATUS_OK) << g_last_error;
}

TEST_F(Collectives, CommDestroyGivesUpOnAPeerThatNeverArrives) {
  oar_comm_t comms[2] = {nullptr, nullptr};
  init_pair(comms);
  fake_nccl_finalize_hangs(1);
  double seconds = 0;
  EXPECT_EQ(bounded([&] { return api_->comm_destroy(comms[0]); }, &seconds), OAR_STATUS_TIMEOUT);
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(g_last_error.find("still flushing its operations after 300 ms"), std::string::npos) << g_last_error;
  EXPECT_NE(std::string(fake_nccl_log()).find("CommAbort(rank=0)"), std::string::npos) << fake_nccl_log();
  fake_nccl_finalize_hangs(0);
  EXPECT_EQ(api_->comm_destroy(comms[1]), OAR_STATUS_OK) << g_last_error;
}

TEST_F(Collectives, AnOperationThatNeverSettlesTimesOut) {
  oar_comm_t comms[2] = {nullptr, nullptr};
  init_pair(comms);
  fake_nccl_operations_hang(1);
  float x[2] = {1, 2};
  double seconds = 0;
  EXPECT_EQ(bounded([&] { return api_->all_reduce(comms[0], x, x, 2, OAR_DTYPE_F32, OAR_REDUCE_SUM, nullptr); },
                    &seconds),
            OAR_STATUS_TIMEOUT);
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(g_last_error.find("comm_abort"), std::string::npos) << g_last_error;
  for (oar_comm_t c : comms) EXPECT_EQ(api_->comm_abort(c, 0), OAR_STATUS_TIMEOUT) << g_last_error;
}

// ---- the per-thread cuBLAS / cuDNN handles ----

TEST(VendorHandles, DestroyedWithTheirOwnDeviceCurrent) {
  fake_cudart_reset(2);
  fake_handles_reset();
  std::thread worker([] {
    cudaSetDevice(1);
    oar_gpu::cublas_handle(1, nullptr);
    oar_gpu::cudnn_handle(1, nullptr);
    cudaSetDevice(0);
    oar_gpu::cublas_handle(0, nullptr);
  });  // exits with device 0 current
  worker.join();
  std::string blas = fake_blas_log(), dnn = fake_dnn_log();
  EXPECT_NE(blas.find("destroy(cublas,created_on=0,current=0)"), std::string::npos) << blas;
  EXPECT_NE(blas.find("destroy(cublas,created_on=1,current=1)"), std::string::npos) << blas;
  EXPECT_NE(dnn.find("destroy(cudnn,created_on=1,current=1)"), std::string::npos) << dnn;
  EXPECT_EQ(blas.find("destroy(cublas,created_on=1,current=0)"), std::string::npos) << blas;
}

// A thread joined by a static object's destructor exits after the CUDA
// runtime's exit handler has run; destroying its handles then is what
// crashes (the fake ends the process with code 3 instead).
TEST(VendorHandlesDeathTest, LeftAloneOnceTheProcessExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct Joiner {
          std::promise<void> stop;
          std::thread worker;
          ~Joiner() {
            stop.set_value();
            worker.join();
          }
        };
        static Joiner joiner;  // destroyed after the runtime's exit handler: constructed before its first call
        std::promise<void> ready;
        std::shared_future<void> stop = joiner.stop.get_future().share();
        joiner.worker = std::thread([&ready, stop] {
          cudaSetDevice(0);
          oar_gpu::cublas_handle(0, nullptr);
          ready.set_value();
          stop.wait();
        });
        ready.get_future().wait();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
