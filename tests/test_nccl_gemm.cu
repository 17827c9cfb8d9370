// foundry::nccl::sharded_gemm: A split by row blocks over 1..all GPUs, C gathered on every
// GPU or left sharded, against foundry::gemm on one GPU and a CPU reference.
//
// Bit for bit: rank r's rows are foundry::gemm of its row block, so they must equal, bit
// for bit, the same call made on GPU 0 with the block in its own allocation as on the rank
// (same kind of GPU, same alignment, hence the same kernel and the same split of K).
// Against foundry::gemm of the whole A they are bit-identical on one GPU (the same call);
// on several, a row block has fewer C tiles, so the GEMM may split K differently and sum
// in another order: there the check is the CPU tolerance below.
//
// Tolerance (as in test_gemm_tensor_core.cu): the CPU multiplies the very values the GPU
// multiplies (inputs rounded to In), in double, so what remains is fp32 accumulation:
// |c - ref| <= 1e-3 * sum_p |a_ip * b_pj| for every element.

#include "support/test_support.cuh"

#include <foundry/gemm/gemm.cuh>
#include <foundry/nccl.cuh>
#include <foundry/runtime/device.cuh>

#include <cuda_bf16.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// NVLink multicast (NVLS) stays off on the lent machines, also when this binary runs outside
// the scripts (which export it): set before NCCL reads it, unless the caller chose.
[[maybe_unused]] const bool nvls_off = setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0) == 0;

namespace nccl = foundry::nccl;
namespace test = foundry::test;
using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;
using nccl::result_placement;

struct shape {
  std::int64_t m, n, k;
};

template <class In>
std::vector<In> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t stream_id) {
  const auto f = test::random_vector<float>(static_cast<std::size_t>(rows * cols), -1.0f, 1.0f, stream_id);
  if constexpr (std::is_same_v<In, float>) {
    return f;
  } else {
    return test::from_floats<In>(f);
  }
}

template <class In>
double as_double(In x) {
  return test::as_double(x);
}

// Counts elements of row-major `c` (m x n) outside |c - ref| <= 1e-3 * sum |a b|.
template <class In>
std::size_t cpu_mismatches(const shape& sh, const std::vector<In>& a, const std::vector<In>& b,
                           const std::vector<float>& c) {
  std::size_t wrong = 0;
  for (std::int64_t i = 0; i < sh.m; ++i) {
    for (std::int64_t j = 0; j < sh.n; ++j) {
      double ref = 0, mag = 0;
      for (std::int64_t p = 0; p < sh.k; ++p) {
        const double t =
            as_double(a[static_cast<std::size_t>(i * sh.k + p)]) * as_double(b[static_cast<std::size_t>(p * sh.n + j)]);
        ref += t;
        mag += std::fabs(t);
      }
      const double got = c[static_cast<std::size_t>(i * sh.n + j)];
      if (!(std::fabs(got - ref) <= 1e-3 * mag)) ++wrong;  // NaN (poison left) counts as wrong
    }
  }
  return wrong;
}

std::vector<int> first_devices(int count) {
  std::vector<int> v(static_cast<std::size_t>(count));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

template <class T>
matrix_view<T> row_major(T* data, std::int64_t rows, std::int64_t cols) {
  return {data, rows, cols, cols, matrix_layout::row_major};
}

// foundry::gemm on GPU 0 of the whole A, and of each of the `gpus` row blocks, row-major C.
template <class In>
void one_gpu_references(const shape& sh, int gpus, const std::vector<In>& a, const std::vector<In>& b,
                        std::vector<float>& whole, std::vector<float>& by_blocks) {
  foundry::device_guard on(0);
  foundry::stream s;
  auto da = test::to_device(a, s);
  auto db = test::to_device(b, s);
  auto c_whole = test::poisoned_device_buffer<float>(static_cast<std::size_t>(sh.m * sh.n), s);
  auto c_blocks = test::poisoned_device_buffer<float>(static_cast<std::size_t>(sh.m * sh.n), s);
  const matrix_view<const In> va = row_major<const In>(da.data(), sh.m, sh.k);
  const matrix_view<const In> vb = row_major<const In>(db.data(), sh.k, sh.n);
  foundry::gemm(1.0f, va, matrix_op::none, vb, matrix_op::none, 0.0f, row_major(c_whole.data(), sh.m, sh.n), s);
  for (int r = 0; r < gpus; ++r) {
    // Each block in its own allocation, as on its rank: the operands' alignment picks the
    // kernel (wgmma needs 16-byte aligned bases), so a view into the whole A might not.
    const auto rows = nccl::shard_rows(sh.m, gpus, r);
    auto block = test::to_device(
        std::vector<In>(a.begin() + rows.begin * sh.k, a.begin() + (rows.begin + rows.count) * sh.k), s);
    foundry::gemm(1.0f, row_major<const In>(block.data(), rows.count, sh.k), matrix_op::none, vb, matrix_op::none, 0.0f,
                  nccl::row_block(row_major(c_blocks.data(), sh.m, sh.n), rows), s);
  }
  whole = test::to_host(c_whole, s);
  by_blocks = test::to_host(c_blocks, s);
}

// `devices` and `comm` (one rank per device) are built once per GPU count by the caller:
// NCCL's set-up costs about a second each time.
template <class In>
void check_sharded_gemm(nccl::device_set& devices, nccl::communicator& comm, const shape& sh,
                        result_placement placement, matrix_layout sharded_c_layout) {
  const int gpus = devices.size();
  INFO(gpus << " GPU(s), " << sh.m << " x " << sh.n << " x " << sh.k << ", "
            << (placement == result_placement::gathered ? "gathered" : "sharded") << ", "
            << (sharded_c_layout == matrix_layout::row_major ? "row-major" : "column-major") << " C");
  const auto a = random_matrix<In>(sh.m, sh.k, 21);
  const auto b = random_matrix<In>(sh.k, sh.n, 22);
  std::vector<float> whole, by_blocks;
  one_gpu_references(sh, gpus, a, b, whole, by_blocks);

  std::vector<foundry::device_buffer<In>> da, db;
  std::vector<foundry::device_buffer<float>> dc;
  std::vector<matrix_view<const In>> va, vb;
  std::vector<matrix_view<float>> vc;
  devices.for_each([&](int i) {
    const auto rows = nccl::shard_rows(sh.m, gpus, i);
    const auto s = devices.stream(i);
    da.push_back(test::to_device(
        std::vector<In>(a.begin() + rows.begin * sh.k, a.begin() + (rows.begin + rows.count) * sh.k), s));
    db.push_back(test::to_device(b, s));
    const std::int64_t c_rows = placement == result_placement::gathered ? sh.m : rows.count;
    dc.push_back(test::poisoned_device_buffer<float>(static_cast<std::size_t>(c_rows * sh.n), s));
    va.push_back(row_major<const In>(da.back().data(), rows.count, sh.k));
    vb.push_back(row_major<const In>(db.back().data(), sh.k, sh.n));
    if (sharded_c_layout == matrix_layout::col_major) {
      vc.push_back({dc.back().data(), c_rows, sh.n, std::max<std::int64_t>(c_rows, 1), matrix_layout::col_major});
    } else {
      vc.push_back(row_major(dc.back().data(), c_rows, sh.n));
    }
  });
  nccl::sharded_gemm(comm, 1.0f, va, vb, matrix_op::none, 0.0f, vc, placement, devices.streams());
  devices.for_each([&](int i) {
    const auto rows = nccl::shard_rows(sh.m, gpus, i);
    auto c = test::to_host(dc[static_cast<std::size_t>(i)], devices.stream(i));
    INFO("rank " << i);
    if (placement == result_placement::gathered) {
      CHECK(std::memcmp(c.data(), by_blocks.data(), c.size() * sizeof(float)) == 0);
      if (gpus == 1) CHECK(std::memcmp(c.data(), whole.data(), c.size() * sizeof(float)) == 0);
      if (i == 0) CHECK(cpu_mismatches<In>(sh, a, b, c) == 0);
      return;
    }
    // Sharded: rank i's rows only, compared in row-major order.
    std::vector<float> mine(static_cast<std::size_t>(rows.count * sh.n));
    for (std::int64_t r = 0; r < rows.count; ++r) {
      for (std::int64_t j = 0; j < sh.n; ++j) {
        mine[static_cast<std::size_t>(r * sh.n + j)] = sharded_c_layout == matrix_layout::row_major
                                                           ? c[static_cast<std::size_t>(r * sh.n + j)]
                                                           : c[static_cast<std::size_t>(j * rows.count + r)];
      }
    }
    const std::vector<In> a_rows(a.begin() + rows.begin * sh.k, a.begin() + (rows.begin + rows.count) * sh.k);
    CHECK(cpu_mismatches<In>({rows.count, sh.n, sh.k}, a_rows, b, mine) == 0);
    if (sharded_c_layout == matrix_layout::row_major) {
      CHECK(std::memcmp(mine.data(), by_blocks.data() + rows.begin * sh.n, mine.size() * sizeof(float)) == 0);
    }
  });
}

// 256 rows: every GPU count up to 8 divides it (one in-place all-gather); 257: none but one
// does (the blocks are broadcast from their owners); 3: with more than 3 GPUs some ranks own no row.
const shape shapes[] = {{256, 128, 512}, {257, 129, 300}, {3, 64, 64}};

// Calls `f(devices, comm)` on the devices 0..g-1 with one communicator over them, for each g.
void for_gpu_counts(int from, int to, const std::function<void(nccl::device_set&, nccl::communicator&)>& f) {
  for (int g = from; g <= to; ++g) {
    INFO(g << " GPU(s)");
    nccl::device_set devices(first_devices(g));
    nccl::communicator comm(devices);
    REQUIRE(comm.size() == g);
    f(devices, comm);
    devices.synchronize();
  }
}

// [racecheck_slow]: about thirty GEMM launches (ten checks, each with its one-GPU references)
// and no kernel of its own: racecheck covers the GEMM kernels in test_gemm_*.
TEST_CASE("nccl: sharded bf16 GEMM on one GPU is foundry::gemm, bit for bit, gathered or sharded",
          "[nccl][gpu][gemm][racecheck_slow]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  for_gpu_counts(1, 1, [](nccl::device_set& devices, nccl::communicator& comm) {
    for (const auto& sh : shapes) {
      check_sharded_gemm<__nv_bfloat16>(devices, comm, sh, result_placement::gathered, matrix_layout::row_major);
      check_sharded_gemm<__nv_bfloat16>(devices, comm, sh, result_placement::sharded, matrix_layout::row_major);
      check_sharded_gemm<__nv_bfloat16>(devices, comm, sh, result_placement::sharded, matrix_layout::col_major);
    }
    check_sharded_gemm<float>(devices, comm, shapes[1], result_placement::gathered, matrix_layout::row_major);
  });
}

TEST_CASE("nccl: sharded GEMM on 2..all GPUs: each rank's rows are foundry::gemm's bit for bit, C gathered everywhere",
          "[nccl][gpu][gemm][multi_gpu][racecheck_slow]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  const int count = foundry::device_count();
  if (count < 2) {
    WARN("SKIPPED: " << count << " visible GPU(s); this case needs at least two");
    return;
  }
  for_gpu_counts(2, count, [](nccl::device_set& devices, nccl::communicator& comm) {
    for (const auto& sh : shapes) {
      check_sharded_gemm<__nv_bfloat16>(devices, comm, sh, result_placement::gathered, matrix_layout::row_major);
      check_sharded_gemm<__nv_bfloat16>(devices, comm, sh, result_placement::sharded, matrix_layout::row_major);
      check_sharded_gemm<__nv_bfloat16>(devices, comm, sh, result_placement::sharded, matrix_layout::col_major);
    }
    check_sharded_gemm<float>(devices, comm, shapes[1], result_placement::gathered, matrix_layout::row_major);
  });
}

TEST_CASE("nccl: sharded GEMM refuses a gathered C without contiguous row blocks, and A blocks of the wrong size",
          "[nccl][gpu][gemm]") {
  FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE();
  nccl::device_set devices;
  nccl::communicator comm(devices);
  const int g = devices.size();
  const std::int64_t m = 4 * g, n = 8, k = 8;
  std::vector<foundry::device_buffer<float>> buffers;
  std::vector<matrix_view<const float>> va, vb;
  std::vector<matrix_view<float>> col_c, padded_c, row_c;
  devices.for_each([&](int i) {
    buffers.emplace_back(static_cast<std::size_t>(m * 16 + m * k + k * n), devices.stream(i));
    float* base = buffers.back().data();
    va.push_back(row_major<const float>(base, 4, k));
    vb.push_back(row_major<const float>(base + m * k, k, n));
    float* c = base + m * k + k * n;
    col_c.push_back({c, m, n, m, matrix_layout::col_major});
    padded_c.push_back({c, m, n, 16, matrix_layout::row_major});
    row_c.push_back(row_major(c, m, n));
  });
  CHECK_THROWS_AS(nccl::sharded_gemm(comm, 1.0f, va, vb, matrix_op::none, 0.0f, col_c, result_placement::gathered,
                                     devices.streams()),
                  std::invalid_argument);
  CHECK_THROWS_AS(nccl::sharded_gemm(comm, 1.0f, va, vb, matrix_op::none, 0.0f, padded_c, result_placement::gathered,
                                     devices.streams()),
                  std::invalid_argument);
  auto wrong_a = va;
  wrong_a[0].rows = 5;  // shard_rows gives every rank 4 rows
  CHECK_THROWS_AS(nccl::sharded_gemm(comm, 1.0f, wrong_a, vb, matrix_op::none, 0.0f, row_c, result_placement::gathered,
                                     devices.streams()),
                  std::invalid_argument);
  CHECK(comm.size() == g);
  devices.synchronize();
}

}  // namespace
