// Session 14 probe (not a benchmark of the project): where the time of the sweep's worst small
// products goes. For each named problem it prints the plan, the hot per-call time of
// foundry::gemm and of cuBLAS (events around 200 back-to-back calls behind a 5 ms spin kernel, so host cost is not
// timed; median of 9), and with
// PROBE_PROFILE=1 runs one call of each between cudaProfilerStart/Stop for
// `ncu --profile-from-start off` to list the kernels each enqueues and their durations.
#include "gemm_sweep.cuh"

#include <foundry/foundry.cuh>

#include <cuda_profiler_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using foundry::matrix_layout;
using foundry::matrix_op;
using gemm_sweep::sweep_problem;

sweep_problem parse(const std::string& name) {  // <M>x<N>x<K>_<la><oa>_<lb><ob>_p<a>_<b>_<c>
  sweep_problem p;
  char la = 0, oa = 0, lb = 0, ob = 0;
  long long m = 0, n = 0, k = 0;
  std::sscanf(name.c_str(), "%lldx%lldx%lld_%c%c_%c%c_p%d_%d_%d", &m, &n, &k, &la, &oa, &lb, &ob, &p.pad_a, &p.pad_b,
              &p.pad_c);
  p.m = m, p.n = n, p.k = k;
  p.layout_a = la == 'r' ? matrix_layout::row_major : matrix_layout::col_major;
  p.op_a = oa == 'n' ? matrix_op::none : matrix_op::transpose;
  p.layout_b = lb == 'r' ? matrix_layout::row_major : matrix_layout::col_major;
  p.op_b = ob == 'n' ? matrix_op::none : matrix_op::transpose;
  return p;
}

template <class F>
double per_call_us(F&& call, cuda::stream_ref s) {
  constexpr int batch = 200;
  std::vector<double> t;
  foundry::event a, b;
  for (int r = 0; r < 9; ++r) {
    foundry::bench::detail::enqueue_delay(s, 5e-3);  // the host enqueues the batch meanwhile
    a.record(s);
    for (int i = 0; i < batch; ++i) call();
    b.record(s);
    foundry::synchronize(s);
    t.push_back(1e3 * foundry::elapsed_ms(a, b) / batch);
  }
  std::sort(t.begin(), t.end());
  return t[4];
}

template <class In>
void probe(const char* precision, const std::vector<std::string>& names, bool profile) {
  foundry::stream s;
  for (const std::string& name : names) {
    const sweep_problem p = parse(name);
    foundry::device_buffer<In> a(std::max<std::size_t>(1, p.a().elements()), s);
    foundry::device_buffer<In> b(std::max<std::size_t>(1, p.b().elements()), s);
    foundry::device_buffer<float> c(std::max<std::size_t>(1, p.c().elements()), s);
    foundry::bench::fill_uniform(a.span(), -1.0, 1.0, 1, s);
    foundry::bench::fill_uniform(b.span(), -1.0, 1.0, 2, s);
    const auto va = p.a().template view<const In>(a.data());
    const auto vb = p.b().template view<const In>(b.data());
    const auto vc = p.c().view(c.data());
    const auto f = [&] { foundry::gemm(1.0f, va, p.op_a, vb, p.op_b, 0.0f, vc, s); };
    const auto g = [&] { gemm_sweep::cublas_gemm<In>(p, a.data(), b.data(), c.data(), s); };
    f(), g(), foundry::synchronize(s);
    const auto problem = foundry::make_gemm_problem<In, float>(1.0f, va, p.op_a, vb, p.op_b, 0.0f, vc);
    const auto plan = foundry::make_gemm_plan(problem, foundry::get_device_properties(foundry::stream_device(s.get())));
    const double tf = per_call_us(f, s), tc = per_call_us(g, s);
    std::printf("%s %-28s foundry %8.2f us  cublas %8.2f us  ratio %.2f  | %s\n", precision, name.c_str(), tf, tc,
                tc / tf, plan.describe().c_str());
    if constexpr (std::is_same_v<In, float>) {
      // Along n, slices of two rounds a warp (session 14) against the 256 before.
      namespace gk = foundry::gemm_kernels;
      const auto o = gk::detail::skinny_orient(problem);
      if (plan.rung == foundry::gemm_rung::skinny && o.b_n_contiguous) {
        foundry::gemm_plan before = plan;
        gk::detail::finish_skinny_plan(before, problem, o, gk::skinny_policy::split_unit_k(true, plan.block_m, 4), 0,
                                       foundry::get_device_properties(foundry::stream_device(s.get())).sm_count,
                                       gk::skinny_policy::min_k_per_split, gk::skinny_policy::max_splits,
                                       gk::skinny_max_rows<float>, false);
        if (before.split_k != plan.split_k) {
          const double tb = per_call_us([&] { gk::launch_skinny<In>(before, problem, {}, s); }, s);
          std::printf("%s %-28s 256-deep slices %8.2f us (new split %.2fx)  | %s\n", precision, name.c_str(), tb,
                      tb / tf, before.describe().c_str());
        }
      }
    } else {
      // The tensor-core skinny kernel's warps sharing K: the same problem with the plan of
      // the warps on their own tiles (the plan before session 14), on the same machine.
      if (plan.rung == foundry::gemm_rung::skinny && std::string(plan.why).find("sharing K") != std::string::npos) {
        namespace gk = foundry::gemm_kernels;
        const auto o = gk::detail::skinny_orient(problem);
        foundry::gemm_plan own = plan;
        own.block_n = gk::skinny_mma_policy::block_large(o.b_n_contiguous);
        gk::detail::finish_skinny_plan(own, problem, o, gk::skinny_mma_policy::split_unit_k(o.b_n_contiguous), 0,
                                       foundry::get_device_properties(foundry::stream_device(s.get())).sm_count,
                                       gk::skinny_mma_policy::min_k_per_split, gk::skinny_mma_policy::max_splits,
                                       gk::skinny_mma_policy::max_rows, true);
        const double to = per_call_us([&] { gk::launch_skinny<In>(own, problem, {}, s); }, s);
        std::printf("%s %-28s own tiles %8.2f us (shared K %.2fx)  | %s\n", precision, name.c_str(), to, to / tf,
                    own.describe().c_str());
      }
    }
    if (profile) {
      foundry::synchronize(s);
      cudaProfilerStart();
      f();
      foundry::synchronize(s);
      g();
      foundry::synchronize(s);
      cudaProfilerStop();
    }
  }
}

}  // namespace

int main() {
  const bool profile = std::getenv("PROBE_PROFILE") != nullptr;
  probe<float>("fp32",
               {"9x570x26_cn_rn_p6_2_2", "82x14x11373_rt_ct_p6_3_5", "18x13x11_rt_ct_p1_6_0", "29x13x2378_rt_rt_p6_6_5",
                "5789x645x1_cn_ct_p6_0_4", "3x58x2835_cn_ct_p2_1_4", "2x100x511_rn_rn_p0_0_0",
                "1x16384x16384_rn_rn_p0_0_0", "8x4096x4096_rn_rn_p0_0_0"},
               profile);
  probe<__nv_bfloat16>("bf16",
                       {"2x5851x224_rt_ct_p6_3_4", "301x1x87_rt_ct_p2_5_3", "10535x4849x17_rt_rt_p5_1_2",
                        "6x9503x662_rn_ct_p4_1_0", "1950x23x670_rn_rn_p0_0_0", "8x16384x16384_rn_rn_p0_0_0",
                        "16384x8x16384_rn_rn_p0_0_0", "4x4096x4096_rn_rn_p0_0_0"},
                       profile);
  probe<__half>("fp16", {"3x58x2835_cn_ct_p2_1_4", "1283x3x31_cn_rn_p4_0_3"}, profile);
  return 0;
}
