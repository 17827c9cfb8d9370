// Session 15 probe (not a benchmark of the project): session 14's small_probe.cu with the
// problems on the command line: `probe15 <fp32|bf16|fp16> <sweep name>...`. For each it prints
// the plan and the hot per-call time of foundry::gemm and of cuBLAS (events around 200
// back-to-back calls behind a 5 ms spin kernel, so host cost is not timed; median of 9); with
// PROBE_PROFILE=1 it then runs one call of each between cudaProfilerStart/Stop for
// `ncu --profile-from-start off`.
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

int main(int argc, char** argv) {
  const bool profile = std::getenv("PROBE_PROFILE") != nullptr;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <fp32|bf16|fp16> <sweep name>...\n", argv[0]);
    return 2;
  }
  const std::string precision = argv[1];
  const std::vector<std::string> names(argv + 2, argv + argc);
  if (precision == "fp32") probe<float>("fp32", names, profile);
  if (precision == "bf16") probe<__nv_bfloat16>("bf16", names, profile);
  if (precision == "fp16") probe<__half>("fp16", names, profile);
  return 0;
}
