// stream_pipeline: chunked host -> device -> host streaming over several streams.
#include <catch2/catch.hpp>

#include <foundry/algorithms/transform.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/managed_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/memory/pipeline.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <algorithm>
#include <stdexcept>
#include <vector>

using Catch::Matchers::Contains;

namespace {

struct affine {
  __host__ __device__ float operator()(float x) const { return 2.0f * x + 1.0f; }
};

// The pipeline's work: one transform per chunk.
struct affine_work {
  void operator()(cuda::std::span<const float> in, cuda::std::span<float> out, cuda::stream_ref s) const {
    foundry::transform(in, out, affine{}, s);
  }
};

// The serial version: copy the whole array in, one transform, copy it back.
std::vector<float> serial_affine(const std::vector<float>& host_in) {
  foundry::stream s;
  auto in = foundry::test::to_device(host_in, s);
  auto out = foundry::test::poisoned_device_buffer<float>(host_in.size(), s);
  foundry::transform(cuda::std::span<const float>(in.span()), out.span(), affine{}, s);
  return foundry::test::to_host(out, s);
}

struct halve_to_double {
  __host__ __device__ double operator()(int v) const { return v / 2.0; }
};

cuda::std::span<const float> const_span(const std::vector<float>& v) { return {v.data(), v.size()}; }
cuda::std::span<float> span(std::vector<float>& v) { return {v.data(), v.size()}; }

constexpr std::size_t chunk = 1000;

}  // namespace

TEST_CASE("a pipeline with a zero chunk, no streams or too many throws invalid_argument before any CUDA call") {
  CHECK_THROWS_AS(foundry::stream_pipeline<float>(0, 4), std::invalid_argument);
  CHECK_THROWS_AS(foundry::stream_pipeline<float>(chunk, 0), std::invalid_argument);
  constexpr std::size_t most = foundry::stream_pipeline<float>::max_stream_count;
  CHECK_THROWS_WITH(foundry::stream_pipeline<float>(chunk, most + 1), Contains("at most 64 streams"));
  CHECK_THROWS_AS(foundry::stream_pipeline<float>(chunk, static_cast<std::size_t>(-1)), std::invalid_argument);
}

TEST_CASE("a pipeline matches the serial version for 1, 2, 3, 7 and a partial last chunk", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 4);
  CHECK(pipeline.chunk_elements() == chunk);
  CHECK(pipeline.stream_count() == 4);
  for (std::size_t n : {chunk, 2 * chunk, 3 * chunk, 7 * chunk, 7 * chunk + 123, std::size_t{1}, chunk - 1}) {
    CAPTURE(n);
    const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, n);
    std::vector<float> out(n, foundry::test::poison_value<float>());
    pipeline.run(const_span(in), span(out), affine_work{});
    CHECK(out == serial_affine(in));
  }
}

TEST_CASE("a pipeline with fewer streams than chunks reuses its buffers correctly", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 2);
  const std::size_t n = 7 * chunk + 5;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 7);
  std::vector<float> out(n, foundry::test::poison_value<float>());
  pipeline.run(const_span(in), span(out), affine_work{});
  CHECK(out == serial_affine(in));
}

TEST_CASE("a pipeline whose first chunk's work is slow still gives each chunk its own result", "[gpu]") {
  // The work of chunk 0 waits ~2 ms before it reads its input and writes its output,
  // while the copies of the later chunks are ready to go: a copy in that did not wait for
  // the work that last read its lane's input buffer (or staging buffer) would overwrite
  // chunk 0's input before it is read. Every lane count, pinned and pageable memory.
  const std::size_t n = 9 * chunk + 31;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 19);
  const auto expected = serial_affine(in);
  foundry::pinned_buffer<float> pinned_in(n), pinned_out(n);
  std::copy(in.begin(), in.end(), pinned_in.begin());
  for (const std::size_t lanes : {std::size_t{1}, std::size_t{2}, std::size_t{3}}) {
    foundry::stream_pipeline<float> pipeline(chunk, lanes);
    for (const bool pinned : {false, true}) {
      CAPTURE(lanes, pinned);
      std::vector<float> pageable_out(n, foundry::test::poison_value<float>());
      std::fill(pinned_out.begin(), pinned_out.end(), foundry::test::poison_value<float>());
      const auto source = pinned ? cuda::std::span<const float>(pinned_in.span()) : const_span(in);
      const auto destination = pinned ? pinned_out.span() : span(pageable_out);
      int calls = 0;
      pipeline.run(source, destination,
                   [&](cuda::std::span<const float> x, cuda::std::span<float> y, cuda::stream_ref s) {
                     if (calls++ == 0) foundry::test::enqueue_spin_cycles(s, 4'000'000);
                     affine_work{}(x, y, s);
                   });
      CHECK(std::vector<float>(destination.begin(), destination.end()) == expected);
    }
  }
}

TEST_CASE("a pipeline gives chunk c's work the stream of lane c mod the lane count, a stream per lane", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 3);
  const std::size_t n = 7 * chunk;
  const std::vector<float> in(n, 1.0f);
  std::vector<float> out(n);
  std::vector<cudaStream_t> streams;
  const auto record_stream = [&](cuda::std::span<const float> x, cuda::std::span<float> y, cuda::stream_ref s) {
    streams.push_back(s.get());
    affine_work{}(x, y, s);
  };
  pipeline.run(const_span(in), span(out), record_stream);
  REQUIRE(streams.size() == 7);
  CHECK(streams[0] != streams[1]);
  CHECK(streams[1] != streams[2]);
  CHECK(streams[0] != streams[2]);
  for (std::size_t c = 3; c < streams.size(); ++c) CHECK(streams[c] == streams[c % 3]);
  CHECK(out == std::vector<float>(n, 3.0f));
}

TEST_CASE("a pipeline streams pinned and pageable input and output in every combination", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 3);
  const std::size_t n = 5 * chunk + 17;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 5);
  const auto expected = serial_affine(in);
  foundry::pinned_buffer<float> pinned_in(n);
  std::copy(in.begin(), in.end(), pinned_in.begin());

  for (const bool input_pinned : {false, true}) {
    for (const bool output_pinned : {false, true}) {
      CAPTURE(input_pinned, output_pinned);
      std::vector<float> pageable_out(n, foundry::test::poison_value<float>());
      foundry::pinned_buffer<float> pinned_out(n);
      std::fill(pinned_out.begin(), pinned_out.end(), foundry::test::poison_value<float>());
      const auto source = input_pinned ? cuda::std::span<const float>(pinned_in.span()) : const_span(in);
      const auto destination = output_pinned ? pinned_out.span() : span(pageable_out);
      pipeline.run(source, destination, affine_work{});
      CHECK(std::vector<float>(destination.begin(), destination.end()) == expected);
    }
  }
}

TEST_CASE("a pipeline streams managed memory through the copy engines, never staging it", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 3);
  const std::size_t n = 4 * chunk + 5;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 9);
  foundry::managed_buffer<float> managed_in(n);
  foundry::managed_buffer<float> managed_out(n);
  std::copy(in.begin(), in.end(), managed_in.data());
  std::fill(managed_out.data(), managed_out.data() + n, foundry::test::poison_value<float>());
  pipeline.run(cuda::std::span<const float>(managed_in.data(), n), cuda::std::span<float>(managed_out.data(), n),
               affine_work{});
  CHECK(std::vector<float>(managed_out.data(), managed_out.data() + n) == serial_affine(in));
  CHECK(pipeline.staging_bytes() == 0);
}

TEST_CASE("a pipeline run on empty input does nothing", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 2);
  int calls = 0;
  pipeline.run(cuda::std::span<const float>{}, cuda::std::span<float>{},
               [&](cuda::std::span<const float>, cuda::std::span<float>, cuda::stream_ref) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("a pipeline rejects input and output of different sizes", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 2);
  const std::vector<float> in(10, 1.0f);
  std::vector<float> out(11);
  CHECK_THROWS_AS(pipeline.run(const_span(in), span(out), affine_work{}), std::invalid_argument);
}

TEST_CASE("an exception from the work on chunk 2 propagates and the pipeline runs again", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 4);
  const std::size_t n = 6 * chunk + 3;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 2);
  std::vector<float> out(n, foundry::test::poison_value<float>());
  int calls = 0;
  const auto failing_work = [&](cuda::std::span<const float> in_chunk, cuda::std::span<float> out_chunk,
                                cuda::stream_ref s) {
    if (calls++ == 2) throw std::runtime_error("work failed on chunk 2");
    affine_work{}(in_chunk, out_chunk, s);
  };
  CHECK_THROWS_AS(pipeline.run(const_span(in), span(out), failing_work), std::runtime_error);
  CHECK(calls == 3);
  calls = 0;
  CHECK_THROWS_WITH(pipeline.run(const_span(in), span(out), failing_work), Contains("chunk 2"));
  CHECK(cudaPeekAtLastError() == cudaSuccess);  // nothing left for a later launch check to report

  pipeline.run(const_span(in), span(out), affine_work{});
  CHECK(out == serial_affine(in));
}

TEST_CASE("an exception from the first or the last chunk's work propagates with pinned and pageable data", "[gpu]") {
  // 7 chunks over 3 lanes: the last chunk's lane has wrapped twice.
  foundry::stream_pipeline<float> pipeline(chunk, 3);
  const std::size_t n = 6 * chunk + 11;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 4);
  foundry::pinned_buffer<float> pinned_in(n);
  foundry::pinned_buffer<float> pinned_out(n);
  std::copy(in.begin(), in.end(), pinned_in.begin());
  std::vector<float> pageable_out(n);
  for (const bool pinned : {false, true}) {
    for (const int failing : {0, 6}) {
      CAPTURE(pinned, failing);
      int calls = 0;
      const auto failing_work = [&](cuda::std::span<const float> in_chunk, cuda::std::span<float> out_chunk,
                                    cuda::stream_ref s) {
        if (calls++ == failing) throw std::out_of_range("work failed");
        affine_work{}(in_chunk, out_chunk, s);
      };
      const auto source = pinned ? cuda::std::span<const float>(pinned_in.span()) : const_span(in);
      const auto destination = pinned ? pinned_out.span() : span(pageable_out);
      CHECK_THROWS_AS(pipeline.run(source, destination, failing_work), std::out_of_range);
      CHECK(calls == failing + 1);
      CHECK(cudaPeekAtLastError() == cudaSuccess);
      pipeline.run(source, destination, affine_work{});
      CHECK(std::vector<float>(destination.begin(), destination.end()) == serial_affine(in));
    }
  }
}

TEST_CASE("a pipeline runs exactly in place", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 2);
  const std::size_t n = 3 * chunk + 7;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 6);
  std::vector<float> data = in;
  pipeline.run(const_span(data), span(data), affine_work{});
  CHECK(data == serial_affine(in));
  // A shifted overlap would let one chunk's copy in read another's result: refused.
  CHECK_THROWS_AS(pipeline.run(cuda::std::span<const float>(data.data(), n - 1),
                               cuda::std::span<float>(data.data() + 1, n - 1), affine_work{}),
                  std::invalid_argument);
}

TEST_CASE("a moved-from pipeline throws invalid_argument instead of dividing by zero", "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 2);
  foundry::stream_pipeline<float> moved_to(std::move(pipeline));
  std::vector<float> in(10, 1.0f), out(10, 0.0f);
  const auto run = [&](foundry::stream_pipeline<float>& p) {
    p.run(cuda::std::span<const float>(in.data(), in.size()), cuda::std::span<float>(out.data(), out.size()),
          [](cuda::std::span<const float> x, cuda::std::span<float> y, cuda::stream_ref s) {
            foundry::device_copy(y, x, s);
          });
  };
  CHECK_THROWS_AS(run(pipeline), std::invalid_argument);  // NOLINT(bugprone-use-after-move): what is tested
  run(moved_to);
  CHECK(out == in);
}

TEST_CASE("a pipeline pins staging memory only for pageable data, once, and only the direction that needs it",
          "[gpu]") {
  foundry::stream_pipeline<float> pipeline(chunk, 3);
  CHECK(pipeline.staging_bytes() == 0);
  const std::size_t n = 4 * chunk + 9;
  const auto in = foundry::test::random_vector<float>(n, -10.0f, 10.0f, 11);
  const auto expected = serial_affine(in);
  foundry::pinned_buffer<float> pinned_in(n), pinned_out(n);
  std::copy(in.begin(), in.end(), pinned_in.begin());

  pipeline.run(cuda::std::span<const float>(pinned_in.span()), pinned_out.span(), affine_work{});
  CHECK(pipeline.staging_bytes() == 0);
  CHECK(std::vector<float>(pinned_out.begin(), pinned_out.end()) == expected);

  std::vector<float> pageable_out(n, foundry::test::poison_value<float>());
  pipeline.run(cuda::std::span<const float>(pinned_in.span()), span(pageable_out), affine_work{});
  CHECK(pipeline.staging_bytes() == 3 * chunk * sizeof(float));  // output staging only
  CHECK(pageable_out == expected);

  std::fill(pageable_out.begin(), pageable_out.end(), foundry::test::poison_value<float>());
  pipeline.run(const_span(in), span(pageable_out), affine_work{});
  pipeline.run(const_span(in), span(pageable_out), affine_work{});
  CHECK(pipeline.staging_bytes() == 2 * 3 * chunk * sizeof(float));  // both ways, allocated once
  CHECK(pageable_out == expected);
}

TEST_CASE("a pipeline converts between element types and refuses device memory as its host array", "[gpu]") {
  foundry::stream_pipeline<int, double> pipeline(chunk, 2);
  const std::size_t n = 3 * chunk + 1;
  std::vector<int> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<int>(i * 7919 % 1000) - 500;
  std::vector<double> out(n, foundry::test::poison_value<double>());
  const auto halve = [](cuda::std::span<const int> x, cuda::std::span<double> y, cuda::stream_ref s) {
    foundry::transform(x, y, halve_to_double{}, s);
  };
  pipeline.run(cuda::std::span<const int>(in.data(), n), cuda::std::span<double>(out.data(), n), halve);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(out[i] == in[i] / 2.0);

  foundry::stream s;
  foundry::device_buffer<int> device_in(n, s);
  CHECK_THROWS_WITH(
      pipeline.run(cuda::std::span<const int>(device_in.data(), n), cuda::std::span<double>(out.data(), n), halve),
      Contains("device memory"));
}
