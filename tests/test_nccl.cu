// foundry::nccl on one process: the type map, the row partition, the communicator (both
// ways of building one, and its error paths), the four collectives and the sharded reduce
// against CPU references, on one GPU and on every count of two or more that the machine has.
// The sharded GEMM is in test_nccl_gemm.cu (it compiles the GEMM ladder).
//
// Data: random integers stored in the element type, small enough that every sum in any
// order is exact (|sum| <= 8 ranks x 4 = 32 < 2^8, exact even in bfloat16), so every
// comparison with the CPU is an equality whatever order NCCL reduces in.

#include "support/test_support.cuh"

#include <foundry/nccl.cuh>
#include <foundry/runtime/device.cuh>

#include <cuda_bf16.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// NVLink multicast (NVLS) stays off on the lent machines, also when this binary runs outside
// the scripts (which export it): set before NCCL reads it, unless the caller chose.
[[maybe_unused]] const bool nvls_off = setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0) == 0;

namespace nccl = foundry::nccl;
namespace test = foundry::test;
using nccl::reduction;

// ---------------------------------------------------------------------------------------
// Host only

static_assert(nccl::nccl_data_type<float>() == ncclFloat32);
static_assert(nccl::nccl_data_type<const double>() == ncclFloat64);
static_assert(nccl::nccl_data_type<__half>() == ncclFloat16);
static_assert(nccl::nccl_data_type<__nv_bfloat16>() == ncclBfloat16);
static_assert(nccl::nccl_data_type<std::int8_t>() == ncclInt8);
static_assert(nccl::nccl_data_type<std::uint8_t>() == ncclUint8);
static_assert(nccl::nccl_data_type<std::int32_t>() == ncclInt32);
static_assert(nccl::nccl_data_type<std::uint32_t>() == ncclUint32);
static_assert(nccl::nccl_data_type<std::int64_t>() == ncclInt64);
static_assert(nccl::nccl_data_type<std::uint64_t>() == ncclUint64);
static_assert(nccl::nccl_data_type<long long>() == ncclInt64);
static_assert(!nccl::is_nccl_type_v<char>);  // neither signed nor unsigned: refused, not guessed
static_assert(!nccl::is_nccl_type_v<bool>);
static_assert(!nccl::is_nccl_type_v<std::int16_t>);
static_assert(!nccl::is_nccl_type_v<float2>);

TEST_CASE("nccl: reductions map to NCCL's operators", "[nccl][host]") {
  CHECK(nccl::to_nccl(reduction::sum) == ncclSum);
  CHECK(nccl::to_nccl(reduction::product) == ncclProd);
  CHECK(nccl::to_nccl(reduction::min) == ncclMin);
  CHECK(nccl::to_nccl(reduction::max) == ncclMax);
  CHECK(nccl::to_nccl(reduction::average) == ncclAvg);
}

TEST_CASE("nccl: shard_rows partitions every row once, in rank order, sizes differing by at most one", "[nccl][host]") {
  for (const std::int64_t m : {0, 1, 7, 31, 33, 1024, 1025}) {
    for (const int nranks : {1, 2, 3, 4, 8}) {
      std::int64_t next = 0;
      for (int r = 0; r < nranks; ++r) {
        const auto rows = nccl::shard_rows(m, nranks, r);
        CHECK(rows.begin == next);
        CHECK((rows.count == m / nranks || rows.count == m / nranks + 1));
        next += rows.count;
      }
      CHECK(next == m);
    }
  }
  static_assert(nccl::shard_rows(10, 4, 0).count == 3 && nccl::shard_rows(10, 4, 3).begin == 8);
}

TEST_CASE("nccl: row_block views rows of either layout in place", "[nccl][host]") {
  float storage[64] = {};
  const foundry::matrix_view<float> row_major{storage, 6, 5, 8, foundry::matrix_layout::row_major};
  const auto r = nccl::row_block(row_major, {2, 3});
  CHECK(r.data == storage + 16);
  CHECK((r.rows == 3 && r.cols == 5 && r.ld == 8 && r.layout == foundry::matrix_layout::row_major));
  const foundry::matrix_view<float> col_major{storage, 6, 5, 7, foundry::matrix_layout::col_major};
  const auto c = nccl::row_block(col_major, {2, 3});
  CHECK(c.data == storage + 2);
  CHECK((c.rows == 3 && c.cols == 5 && c.ld == 7));
  const foundry::matrix_view<float> empty{nullptr, 0, 5, 5, foundry::matrix_layout::row_major};
  CHECK(nccl::row_block(empty, {0, 0}).data == nullptr);
}

TEST_CASE("nccl: nccl_error carries NCCL's message, the expression, file and line", "[nccl][host]") {
  const nccl::nccl_error e(ncclInvalidArgument, "ncclAllReduce(x)", "file.cu", 42);
  const std::string what = e.what();
  CHECK(e.code() == ncclInvalidArgument);
  CHECK(what.find("file.cu:42: ncclAllReduce(x) failed: ") == 0);
  CHECK(what.find(ncclGetErrorString(ncclInvalidArgument)) != std::string::npos);
  CHECK_THROWS_AS(FOUNDRY_NCCL_TRY(ncclInvalidUsage), nccl::nccl_error);
  CHECK_NOTHROW(FOUNDRY_NCCL_TRY(ncclSuccess));
}

TEST_CASE("nccl: an empty communicator and an empty device list are refused before any GPU work", "[nccl][host]") {
  nccl::communicator empty;
  CHECK(empty.size() == 0);
  CHECK_THROWS_AS(empty.get(0), std::invalid_argument);
  std::vector<cuda::std::span<float>> none;
  CHECK_THROWS_AS(nccl::all_reduce(empty, none, reduction::sum, {}), std::invalid_argument);
  CHECK_THROWS_AS(nccl::device_set(std::vector<int>{}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Helpers for the GPU cases

std::vector<int> first_devices(int count) {
  std::vector<int> v(static_cast<std::size_t>(count));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Per-rank host data: rank r's vector of `n` small random integers in T.
template <class T>
std::vector<std::vector<T>> rank_data(int ranks, std::size_t n, std::uint64_t stream_id) {
  std::vector<std::vector<T>> v;
  for (int r = 0; r < ranks; ++r) {
    const auto ints = test::random_vector<int>(n, -4, 4, stream_id * 64 + static_cast<std::uint64_t>(r));
    std::vector<T> x(n);
    for (std::size_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        x[i] = test::from_float<__nv_bfloat16>(static_cast<float>(ints[i]));
      } else {
        x[i] = static_cast<T>(ints[i]);
      }
    }
    v.push_back(std::move(x));
  }
  return v;
}

template <class T>
double value(T x) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return test::to_float(x);
  } else {
    return static_cast<double>(x);
  }
}

template <class T>
std::vector<foundry::device_buffer<T>> upload(const nccl::device_set& devices,
                                              const std::vector<std::vector<T>>& host) {
  std::vector<foundry::device_buffer<T>> d;
  devices.for_each([&](int i) { d.push_back(test::to_device(host[static_cast<std::size_t>(i)], devices.stream(i))); });
  return d;
}

// test::poison_value covers arithmetic types; a bfloat16 is poisoned with its NaN.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return test::from_float<__nv_bfloat16>(std::numeric_limits<float>::quiet_NaN());
  } else {
    return test::poison_value<T>();
  }
}

template <class T>
std::vector<foundry::device_buffer<T>> poisoned(const nccl::device_set& devices, std::size_t n) {
  std::vector<foundry::device_buffer<T>> d;
  devices.for_each([&](int i) { d.emplace_back(n, devices.stream(i), poison<T>()); });
  return d;
}

template <class T>
std::vector<std::vector<T>> download(const nccl::device_set& devices, const std::vector<foundry::device_buffer<T>>& d) {
  std::vector<std::vector<T>> h;
  devices.for_each([&](int i) { h.push_back(test::to_host(d[static_cast<std::size_t>(i)], devices.stream(i))); });
  return h;
}

template <class T>
double combine(reduction op, double a, double b) {
  switch (op) {
    case reduction::sum: return a + b;
    case reduction::min: return std::min(a, b);
    case reduction::max: return std::max(a, b);
    default: return a * b;
  }
}

// all_reduce (out of place) of random data against the CPU, for every size.
template <class T>
void check_all_reduce(nccl::device_set& devices, nccl::communicator& comm, reduction op, std::uint64_t id) {
  const int g = devices.size();
  for (const std::size_t n : test::odd_sizes()) {
    INFO("all_reduce on " << g << " GPU(s), n = " << n);
    const auto host = rank_data<T>(g, n, id);
    auto send = upload(devices, host);
    auto recv = poisoned<T>(devices, n);
    nccl::all_reduce(comm, nccl::const_spans(send), nccl::spans(recv), op, devices.streams());
    const auto got = download(devices, recv);
    std::size_t wrong = 0;
    for (std::size_t k = 0; k < n; ++k) {
      double expected = value(host[0][k]);
      for (int r = 1; r < g; ++r) expected = combine<T>(op, expected, value(host[static_cast<std::size_t>(r)][k]));
      for (int r = 0; r < g; ++r) wrong += value(got[static_cast<std::size_t>(r)][k]) != expected ? 1 : 0;
    }
    CHECK(wrong == 0);
  }
}

void check_reduce_scatter(nccl::device_set& devices, nccl::communicator& comm) {
  const int g = devices.size();
  for (const std::size_t n : test::odd_sizes()) {  // n: elements each rank receives
    INFO("reduce_scatter on " << g << " GPU(s), n = " << n);
    const auto host = rank_data<float>(g, n * static_cast<std::size_t>(g), 11);
    auto send = upload(devices, host);
    auto recv = poisoned<float>(devices, n);
    nccl::reduce_scatter(comm, nccl::const_spans(send), nccl::spans(recv), reduction::sum, devices.streams());
    const auto got = download(devices, recv);
    std::size_t wrong = 0;
    for (int r = 0; r < g; ++r) {
      for (std::size_t k = 0; k < n; ++k) {
        double expected = 0;
        for (int q = 0; q < g; ++q) expected += host[static_cast<std::size_t>(q)][static_cast<std::size_t>(r) * n + k];
        wrong += got[static_cast<std::size_t>(r)][k] != expected ? 1 : 0;
      }
    }
    CHECK(wrong == 0);
  }
}

template <class T>
void check_all_gather(nccl::device_set& devices, nccl::communicator& comm) {
  const int g = devices.size();
  for (const std::size_t n : test::odd_sizes()) {  // n: elements each rank sends
    INFO("all_gather on " << g << " GPU(s), n = " << n);
    const auto host = rank_data<T>(g, n, 12);
    auto send = upload(devices, host);
    auto recv = poisoned<T>(devices, n * static_cast<std::size_t>(g));
    nccl::all_gather(comm, nccl::const_spans(send), nccl::spans(recv), devices.streams());
    const auto got = download(devices, recv);
    std::size_t wrong = 0;
    for (int i = 0; i < g; ++i) {
      for (int r = 0; r < g; ++r) {
        wrong += std::memcmp(got[static_cast<std::size_t>(i)].data() + static_cast<std::size_t>(r) * n,
                             host[static_cast<std::size_t>(r)].data(), n * sizeof(T)) != 0
                     ? 1
                     : 0;
      }
    }
    CHECK(wrong == 0);
  }
}

void check_broadcast(nccl::device_set& devices, nccl::communicator& comm) {
  const int g = devices.size();
  const int root = g - 1;  // not rank 0, so that a root ignored would show
  for (const std::size_t n : test::odd_sizes()) {
    INFO("broadcast from rank " << root << " on " << g << " GPU(s), n = " << n);
    const auto host = rank_data<double>(g, n, 13);
    auto data = upload(devices, host);
    nccl::broadcast(comm, nccl::spans(data), root, devices.streams());
    const auto got = download(devices, data);
    for (int i = 0; i < g; ++i) CHECK(got[static_cast<std::size_t>(i)] == host[static_cast<std::size_t>(root)]);
  }
}

void check_sharded_reduce(nccl::device_set& devices, nccl::communicator& comm) {
  const int g = devices.size();
  for (const std::size_t n : test::odd_sizes()) {  // n: the whole input, split by shard_rows
    INFO("sharded_reduce of " << n << " elements on " << g << " GPU(s)");
    const auto whole = rank_data<float>(1, n, 14)[0];
    std::vector<std::vector<float>> shards;
    for (int r = 0; r < g; ++r) {
      const auto rows = nccl::shard_rows(static_cast<std::int64_t>(n), g, r);
      shards.emplace_back(whole.begin() + rows.begin, whole.begin() + rows.begin + rows.count);
    }
    auto in = upload(devices, shards);
    for (const reduction op : {reduction::sum, reduction::min, reduction::max}) {
      auto out = poisoned<float>(devices, 1);
      nccl::sharded_reduce(comm, nccl::const_spans(in), nccl::spans(out), op, devices.streams());
      const auto got = download(devices, out);
      double expected = op == reduction::sum ? 0.0 : (op == reduction::min ? HUGE_VAL : -HUGE_VAL);
      for (const float x : whole) expected = combine<float>(op, expected, x);
      for (int i = 0; i < g; ++i) CHECK(got[static_cast<std::size_t>(i)][0] == static_cast<float>(expected));
    }
  }
}

void check_every_collective(int gpus) {
  nccl::device_set devices(first_devices(gpus));
  nccl::communicator comm(devices);
  REQUIRE(comm.size() == gpus);
  REQUIRE(comm.nranks() == gpus);
  for (int i = 0; i < gpus; ++i) {
    CHECK(comm.rank(i) == i);
    CHECK(comm.device(i) == i);
  }
  check_all_reduce<float>(devices, comm, reduction::sum, 1);
  check_all_reduce<__nv_bfloat16>(devices, comm, reduction::sum, 2);
  check_all_reduce<std::int32_t>(devices, comm, reduction::max, 3);
  check_all_reduce<std::int64_t>(devices, comm, reduction::min, 4);
  check_reduce_scatter(devices, comm);
  check_all_gather<float>(devices, comm);
  check_all_gather<std::uint8_t>(devices, comm);
  check_broadcast(devices, comm);
  check_sharded_reduce(devices, comm);
}

// ---------------------------------------------------------------------------------------
// GPU cases

TEST_CASE("nccl: every collective and the sharded reduce on one GPU match the CPU", "[nccl][gpu]") {
  check_every_collective(1);
}

TEST_CASE("nccl: every collective and the sharded reduce on 2..all GPUs match the CPU", "[nccl][gpu][multi_gpu]") {
  const int count = foundry::device_count();
  if (count < 2) {
    WARN("SKIPPED: " << count << " visible GPU(s); this case needs at least two");
    return;
  }
  for (int g = 2; g <= count; ++g) {
    INFO(g << " GPUs");
    check_every_collective(g);
  }
}

TEST_CASE("nccl: device_set gives each device a stream and reports peer access symmetrically to the driver",
          "[nccl][gpu]") {
  nccl::device_set devices;
  REQUIRE(devices.size() == foundry::device_count());
  for (int i = 0; i < devices.size(); ++i) {
    CHECK(devices.device(i) == i);
    CHECK(devices.stream(i).get() != nullptr);
    CHECK_FALSE(devices.peer_access(i, i));
    for (int j = 0; j < devices.size(); ++j) {
      if (i == j) continue;
      int can = 0;
      REQUIRE(cudaDeviceCanAccessPeer(&can, i, j) == cudaSuccess);
      CHECK(devices.peer_access(i, j) == (can != 0));
    }
  }
  CHECK_THROWS_AS(nccl::device_set(std::vector<int>{0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(nccl::device_set(std::vector<int>{foundry::device_count()}), std::invalid_argument);
  CHECK_THROWS_AS(devices.stream(devices.size()), std::invalid_argument);
}

TEST_CASE("nccl: no call leaves the caller's current device changed", "[nccl][gpu]") {
  const int count = foundry::device_count();
  const int caller = count - 1;  // with several GPUs, not the device of rank 0
  REQUIRE(cudaSetDevice(caller) == cudaSuccess);
  {
    nccl::device_set devices;
    CHECK(foundry::current_device() == caller);
    nccl::communicator comm(devices);
    CHECK(foundry::current_device() == caller);
    auto x = devices.allocate<float>(1025);
    CHECK(foundry::current_device() == caller);
    devices.for_each([&](int i) { foundry::fill(x[static_cast<std::size_t>(i)].span(), 1.0f, devices.stream(i)); });
    CHECK(foundry::current_device() == caller);
    nccl::all_reduce(comm, nccl::spans(x), reduction::sum, devices.streams());
    CHECK(foundry::current_device() == caller);
    auto all = devices.allocate<float>(1025 * static_cast<std::size_t>(count));
    nccl::all_gather(comm, nccl::const_spans(x), nccl::spans(all), devices.streams());
    CHECK(foundry::current_device() == caller);
    nccl::reduce_scatter(comm, nccl::const_spans(all), nccl::spans(x), reduction::sum, devices.streams());
    CHECK(foundry::current_device() == caller);
    nccl::broadcast(comm, nccl::spans(x), 0, devices.streams());
    CHECK(foundry::current_device() == caller);
    auto total = devices.allocate<float>(1);
    nccl::sharded_reduce(comm, nccl::const_spans(x), nccl::spans(total), reduction::sum, devices.streams());
    CHECK(foundry::current_device() == caller);
    // A throwing call restores it too.
    CHECK_THROWS_AS(nccl::broadcast(comm, nccl::spans(x), count, devices.streams()), std::invalid_argument);
    CHECK(foundry::current_device() == caller);
    devices.synchronize();
    CHECK(foundry::current_device() == caller);
    // 1025 ones summed over `count` ranks, gathered, reduce-scattered (x count again), broadcast.
    std::vector<float> h;
    devices.for_each([&](int i) {
      if (i == 0) h = test::to_host(x[0], devices.stream(0));
    });
    CHECK(h[0] == static_cast<float>(count * count));
    CHECK(foundry::current_device() == caller);
  }
  CHECK(foundry::current_device() == caller);  // destructors too
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("nccl: collectives refuse arguments that do not match the ranks, before calling NCCL", "[nccl][gpu]") {
  nccl::device_set devices;
  nccl::communicator comm(devices);
  const int g = devices.size();
  auto x = devices.allocate<float>(33);
  auto odd = devices.allocate<float>(34);  // never 33 x nranks, nor 33 / nranks
  auto streams = devices.streams();
  auto few_streams = streams;
  few_streams.pop_back();
  CHECK_THROWS_AS(nccl::all_reduce(comm, nccl::spans(x), reduction::sum, few_streams), std::invalid_argument);
  auto null_streams = streams;
  null_streams[0] = cuda::stream_ref{};
  CHECK_THROWS_AS(nccl::all_reduce(comm, nccl::spans(x), reduction::sum, null_streams), std::invalid_argument);
  CHECK_THROWS_AS(nccl::all_reduce(comm, nccl::const_spans(x), nccl::spans(odd), reduction::sum, streams),
                  std::invalid_argument);
  CHECK_THROWS_AS(nccl::all_gather(comm, nccl::const_spans(x), nccl::spans(odd), streams), std::invalid_argument);
  CHECK_THROWS_AS(nccl::reduce_scatter(comm, nccl::const_spans(x), nccl::spans(odd), reduction::sum, streams),
                  std::invalid_argument);
  CHECK_THROWS_AS(nccl::broadcast(comm, nccl::spans(x), -1, streams), std::invalid_argument);
  CHECK_THROWS_AS(nccl::sharded_reduce(comm, nccl::const_spans(x), nccl::spans(x), reduction::sum, streams),
                  std::invalid_argument);  // outputs of 33 elements, not one
  CHECK_THROWS_AS(nccl::sharded_reduce(comm, nccl::const_spans(x), nccl::spans(x), reduction::product, streams),
                  std::invalid_argument);
  CHECK(comm.size() == g);  // argument errors do not abort the communicator
  devices.synchronize();
}

// Ranks ncclCommInitRank refuses. NCCL checks the rank before it reads the id, so the
// zero id starts no bootstrap root.
const std::vector<std::pair<int, int>> invalid_ranks{{1, 1}, {2, -1}, {0, 0}, {4, 7}};

TEST_CASE("nccl: an invalid rank raises nccl_error with NCCL's reason", "[nccl][gpu]") {
  const ncclUniqueId id{};
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  for (const auto& [nranks, rank] : invalid_ranks) {
    INFO("nranks " << nranks << ", rank " << rank);
    try {
      nccl::communicator comm(id, nranks, rank, 0);
      FAIL("no exception");
    } catch (const nccl::nccl_error& e) {
      CHECK(e.code() == ncclInvalidArgument);
      CHECK(std::string(e.what()).find("ncclCommInitRank") != std::string::npos);
    }
    CHECK(foundry::current_device() == 0);
  }
  CHECK_THROWS_AS(nccl::communicator(id, 1, 0, foundry::device_count()), std::invalid_argument);
}

// Device-wide free memory, compared: not under compute-sanitizer (which allocates its own),
// and run alone by scripts/gpu-check.sh (its name says "without a leak").
TEST_CASE("nccl: a communicator refused for an invalid rank is released without a leak",
          "[nccl][gpu][not_under_sanitizer]") {
  const ncclUniqueId id{};
  // Once, so that NCCL's one-time initialisation is not counted below.
  CHECK_THROWS_AS(nccl::communicator(id, 1, 1, 0), nccl::nccl_error);
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  std::size_t free_before = 0, free_after = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free_before, &total) == cudaSuccess);
  for (const auto& [nranks, rank] : invalid_ranks) {
    CHECK_THROWS_AS(nccl::communicator(id, nranks, rank, 0), nccl::nccl_error);
  }
  REQUIRE(cudaMemGetInfo(&free_after, &total) == cudaSuccess);
  CHECK(free_after == free_before);
}

TEST_CASE("nccl: an aborted communicator holds no ranks and collectives refuse it", "[nccl][gpu]") {
  nccl::device_set devices;
  nccl::communicator comm(devices);
  auto x = devices.allocate<float>(7);
  comm.abort();
  CHECK(comm.size() == 0);
  CHECK_THROWS_AS(nccl::all_reduce(comm, nccl::spans(x), reduction::sum, devices.streams()), std::invalid_argument);
  nccl::communicator moved(std::move(comm));
  CHECK(moved.size() == 0);
  devices.synchronize();
}

TEST_CASE("nccl: one rank per thread (ncclCommInitRank with a shared unique id) all-reduces like the CPU",
          "[nccl][gpu]") {
  const int g = foundry::device_count();
  const ncclUniqueId id = nccl::unique_id();
  constexpr std::size_t n = 1025;
  const auto host = rank_data<float>(g, n, 15);
  std::vector<std::vector<float>> got(static_cast<std::size_t>(g));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(g));
  std::vector<int> ranks(static_cast<std::size_t>(g), -1), sizes(static_cast<std::size_t>(g), -1);
  std::vector<std::thread> threads;
  for (int r = 0; r < g; ++r) {
    threads.emplace_back([&, r] {
      const auto k = static_cast<std::size_t>(r);
      try {
        FOUNDRY_CUDA_TRY(cudaSetDevice(r));  // each thread starts on device 0 (no Catch2 macros off the main thread)
        foundry::stream s;
        nccl::communicator comm(id, g, r, r);  // blocks until every rank has joined
        ranks[k] = comm.rank(0);
        sizes[k] = comm.nranks();
        auto x = test::to_device(host[k], s);
        nccl::all_reduce<float>(comm, std::vector<cuda::std::span<float>>{x.span()}, reduction::sum, {s.view()});
        got[k] = test::to_host(x, s);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (int r = 0; r < g; ++r) {
    const auto k = static_cast<std::size_t>(r);
    CHECK(ranks[k] == r);
    CHECK(sizes[k] == g);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float expected = 0;
      for (int q = 0; q < g; ++q) expected += host[static_cast<std::size_t>(q)][i];
      wrong += got[k][i] != expected ? 1 : 0;
    }
    CHECK(wrong == 0);
  }
}

}  // namespace
