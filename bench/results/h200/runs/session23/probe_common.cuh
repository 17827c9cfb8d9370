// What session 22's and 23's probes (trigger_probe.cu, plan_space_probe.cu) share: a sweep
// problem's operands on the device, and the timing loop.
#pragma once

#include <foundry/foundry.cuh>

#include "gemm_sweep.cuh"

#include <algorithm>

/// `shape`'s operands, A and B filled with the bytes 0x3c (finite in every input type), and the
/// problem C = A B over them (alpha 1, beta 0); allocated and filled on `s`.
template <class In>
struct probe_operands {
  foundry::device_buffer<In> a, b;
  foundry::device_buffer<float> c;
  foundry::gemm_problem<In, float> p;

  probe_operands(const gemm_sweep::sweep_problem& shape, foundry::stream& s)
      : a(shape.a().elements(), s), b(shape.b().elements(), s), c(shape.c().elements(), s) {
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(a.data(), 0x3c, a.size() * sizeof(In), s.get()));
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(b.data(), 0x3c, b.size() * sizeof(In), s.get()));
    p = foundry::make_gemm_problem<In, float>(1.0f, shape.a().template view<const In>(a.data()), shape.op_a,
                                              shape.b().template view<const In>(b.data()), shape.op_b, 0.0f,
                                              shape.c().template view<float>(c.data()));
  }
};

/// The per-call time of `call()` enqueued back to back on `s`, in us: the fastest of 5 batches
/// of at least 20 calls and 2 ms each, after 3 calls of warm-up and one timed call that sizes
/// the batch.
template <class Call>
double time_back_to_back(Call&& call, foundry::stream& s) {
  for (int i = 0; i < 3; ++i) call();
  foundry::event start, stop;
  start.record(s.view());
  call();
  stop.record(s.view());
  stop.synchronize();
  const double one_us = 1000.0 * foundry::elapsed_ms(start, stop);
  const int calls = std::max(20, static_cast<int>(2000.0 / std::max(one_us, 1.0)));
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    start.record(s.view());
    for (int i = 0; i < calls; ++i) call();
    stop.record(s.view());
    stop.synchronize();
    best = std::min(best, 1000.0 * foundry::elapsed_ms(start, stop) / calls);
  }
  return best;
}
