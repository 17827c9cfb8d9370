// Session 20, no GPU needed: make_gemm_plan over 360,000 random problems (extents log-uniform
// to 2^33 within 10^12 elements an operand, every layout and op, pads 0-7, bases 0-7 elements
// off, fp32 (with and without TF32), bf16 and fp16, six device descriptions from sm_75 to
// sm_120): prints each plan that throws or whose split misses part of K, then the count.
// Build (from the repository root): nvcc -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode
//   arch=compute_90a,code=sm_90a -I include bench/results/h200/runs/session20/plan_fuzz.cu -o /tmp/plan_fuzz
#include <cstdio>
#include <foundry/foundry.cuh>
#include <random>
#include <string>

template <class In>
void one(std::mt19937_64& g, const foundry::device_properties& dev, const char* tag, long& bad) {
  auto ext = [&](int maxlog) {
    double u = std::uniform_real_distribution<double>(0, maxlog)(g);
    return std::max<std::int64_t>(1, (std::int64_t)std::llround(std::exp2(u)));
  };
  std::int64_t m = ext(33), n = ext(33), k = ext(33);
  // keep the stored extents within 2^40 elements
  while ((double)m * k > 1e12 || (double)k * n > 1e12 || (double)m * n > 1e12) {
    m = ext(20);
    n = ext(20);
    k = ext(20);
  }
  auto lay = [&] { return g() & 1 ? foundry::matrix_layout::row_major : foundry::matrix_layout::col_major; };
  auto op = [&] { return g() & 1 ? foundry::matrix_op::none : foundry::matrix_op::transpose; };
  auto la = lay(), lb = lay();
  auto oa = op(), ob = op();
  int pa = g() % 8, pb = g() % 8, pc = g() % 8;
  std::int64_t ar = oa == foundry::matrix_op::none ? m : k, ac = oa == foundry::matrix_op::none ? k : m;
  std::int64_t br = ob == foundry::matrix_op::none ? k : n, bc = ob == foundry::matrix_op::none ? n : k;
  auto ld = [](std::int64_t r, std::int64_t c, foundry::matrix_layout l, int pad) {
    return (l == foundry::matrix_layout::row_major ? c : r) + pad;
  };
  std::uintptr_t base = std::uintptr_t{1} << 44;
  int offa = g() % 4 == 0 ? (int)(g() % 8) : 0, offb = g() % 4 == 0 ? (int)(g() % 8) : 0,
      offc = g() % 4 == 0 ? (int)(g() % 4) : 0;
  const In* a = reinterpret_cast<const In*>(base) + offa;
  const In* b = reinterpret_cast<const In*>(base * 2) + offb;
  float* c = reinterpret_cast<float*>(base * 3) + offc;
  foundry::matrix_view<const In> av{a, ar, ac, ld(ar, ac, la, pa), la};
  foundry::matrix_view<const In> bv{b, br, bc, ld(br, bc, lb, pb), lb};
  foundry::matrix_view<float> cv{c, m, n, n + pc, foundry::matrix_layout::row_major};
  char name[256];
  std::snprintf(name, sizeof name, "%s %lldx%lldx%lld a(%lldx%lld %c ld%lld +%d) b(%lldx%lld %c ld%lld +%d) op%c%c",
                tag, (long long)m, (long long)n, (long long)k, (long long)ar, (long long)ac,
                la == foundry::matrix_layout::row_major ? 'r' : 'c', (long long)av.ld, offa, (long long)br,
                (long long)bc, lb == foundry::matrix_layout::row_major ? 'r' : 'c', (long long)bv.ld, offb,
                oa == foundry::matrix_op::none ? 'n' : 't', ob == foundry::matrix_op::none ? 'n' : 't');
  try {
    auto p = foundry::make_gemm_problem<In, float>(1.0f, av, oa, bv, ob, 0.0f, cv);
    for (auto math : {foundry::gemm_math::fp32, foundry::gemm_math::tf32}) {
      p.math = math;
      const auto plan = foundry::make_gemm_plan(p, dev);
      if (plan.split_k > 1 && plan.k_per_split * plan.split_k < p.k) {
        ++bad;
        std::printf("BADSPLIT %s %s\n", name, plan.describe().c_str());
      }
    }
  } catch (const std::exception& e) {
    ++bad;
    std::printf("THROW %s: %s\n", name, e.what());
  }
}

int main() {
  std::mt19937_64 g(12345);
  struct d {
    const char* tag;
    int major, minor, sms;
    std::size_t optin;
  };
  const d devs[] = {{"sm90", 9, 0, 132, 232448}, {"sm80", 8, 0, 108, 166912},   {"sm86", 8, 6, 84, 101376},
                    {"sm89", 8, 9, 128, 101376}, {"sm120", 12, 0, 170, 101376}, {"sm75", 7, 5, 40, 65536}};
  long bad = 0;
  for (const auto& x : devs) {
    foundry::device_properties dev;
    dev.compute_capability_major = x.major;
    dev.compute_capability_minor = x.minor;
    dev.sm_count = x.sms;
    dev.shared_memory_per_block_optin = x.optin;
    dev.max_grid_x = 2147483647;
    dev.max_grid_y = 65535;
    dev.max_grid_z = 65535;
    for (int i = 0; i < 20000; ++i) {
      one<float>(g, dev, x.tag, bad);
      one<__nv_bfloat16>(g, dev, x.tag, bad);
      one<__half>(g, dev, x.tag, bad);
    }
  }
  std::printf("bad=%ld\n", bad);
}
