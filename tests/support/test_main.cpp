// Catch2 main shared by every foundry test binary.
//
// Catch2 v2 has no SKIP, and ctest must report GPU tests as *skipped*, not
// passed, on a machine without a GPU. So: when no CUDA device is usable and
// the selected test cases are all tagged [gpu], print why and exit with 77,
// which the CMake test registration declares as SKIP_RETURN_CODE. If a run
// mixes host and [gpu] cases without a device, the [gpu] ones are filtered out
// and counted in a message.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>

namespace {

constexpr int skip_exit_code = 77;

bool has_gpu_tag(const Catch::TestCase& test) {
  return std::find(test.tags.begin(), test.tags.end(), "gpu") != test.tags.end();
}

// Why no device is usable, or nullptr if one is.
const char* missing_device_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaGetErrorName(status);
  }
  return count > 0 ? nullptr : "no device visible";
}

}  // namespace

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::Config& config = session.config();
  if (config.listTestNamesOnly() || config.listTests() || config.listTags() || config.listReporters()) {
    return session.run();  // listing touches no GPU
  }
  const char* reason = missing_device_reason();
  if (reason == nullptr) return session.run();

  const auto selected = Catch::filterTests(Catch::getAllTestCasesSorted(config), config.testSpec(), config);
  const auto gpu_cases = std::count_if(selected.begin(), selected.end(), has_gpu_tag);
  if (gpu_cases == 0) return session.run();
  if (gpu_cases == static_cast<long>(selected.size())) {
    std::printf("SKIPPED: %ld [gpu] test case(s): no usable CUDA device (%s)\n", static_cast<long>(gpu_cases), reason);
    return skip_exit_code;
  }
  std::printf("note: %ld [gpu] test case(s) not run: no usable CUDA device (%s)\n", static_cast<long>(gpu_cases),
              reason);
  auto& data = session.configData();
  if (data.testsOrTags.empty()) {
    data.testsOrTags.push_back("~[gpu]");
  } else {
    return skip_exit_code;  // a user filter that mixes host and [gpu] cases: nothing sensible to run alone
  }
  session.useConfigData(data);
  return session.run();
}
