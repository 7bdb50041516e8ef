//===- fma_peak.cpp - this machine's fp32 FMA throughput ------------------===//
//
// bench-fma-peak [--threads N] [--json]: the fp32 FMA rate of the widest
// vector FMA this CPU has (AVX-512, AVX2+FMA, else SSE multiply-add), on 1 to
// N threads, each running independent FMA chains long enough to hide the FMA
// latency. The bench report divides every CPU row's GFLOP/s by it. A probe
// rather than ISA x cores x nominal clock: the clock under load is what the
// kernels get, and these machines do not say it.
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// 12 chains: more than latency x FMA ports on the CPUs this runs on (4 x 2).
constexpr int kChains = 12;
constexpr long kIterations = 50'000'000;

template <int Width> struct Probe {
  typedef float Vector __attribute__((ext_vector_type(Width)));
  static float run(float seed) {
    Vector chains[kChains];
    for (int c = 0; c < kChains; ++c)
      chains[c] = seed + c;
    Vector scale = 0.999999f, offset = 1e-7f;
    for (long i = 0; i < kIterations; ++i)
      for (int c = 0; c < kChains; ++c)
        chains[c] = __builtin_elementwise_fma(chains[c], scale, offset);
    float sum = 0;
    for (int c = 0; c < kChains; ++c)
      for (int lane = 0; lane < Width; ++lane)
        sum += chains[c][lane];
    return sum;
  }
};

__attribute__((target("avx512f"))) float probe512(float seed) {
  return Probe<16>::run(seed);
}
__attribute__((target("avx2,fma"))) float probe256(float seed) {
  return Probe<8>::run(seed);
}
float probe128(float seed) { return Probe<4>::run(seed); }

struct Isa {
  const char *name;
  int width;
  float (*probe)(float);
};

Isa detect() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return {"avx512", 16, probe512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {"avx2", 8, probe256};
  return {"sse", 4, probe128};
}

/// GFLOP/s of `threads` threads probing at once (an FMA is 2 FLOP).
double measure(const Isa &isa, int threads) {
  std::vector<std::thread> workers;
  std::vector<float> sink(threads);
  auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] { sink[t] = isa.probe(1.0f + t); });
  for (std::thread &worker : workers)
    worker.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  volatile float keep = sink[0];
  (void)keep;
  return 2.0 * kChains * isa.width * kIterations * threads / seconds / 1e9;
}

} // namespace

int main(int argc, char **argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--json")) {
      json = true;
    } else {
      std::fprintf(stderr, "usage: bench-fma-peak [--threads N] [--json]\n");
      return 2;
    }
  }
  if (threads < 1) {
    std::fprintf(stderr, "bench-fma-peak: --threads must be positive\n");
    return 2;
  }
  Isa isa = detect();
  std::string rates;
  for (int count = 1; count <= threads; ++count) {
    // The best of three: a shared machine only ever slows a probe down.
    double best = 0;
    for (int repeat = 0; repeat < 3; ++repeat)
      best = std::max(best, measure(isa, count));
    char entry[64];
    std::snprintf(entry, sizeof entry, "%s\"%d\": %.1f", count > 1 ? ", " : "",
                  count, best);
    rates += entry;
    if (!json)
      std::printf("%s fp32 FMA peak, %d thread%s: %.1f GFLOP/s\n", isa.name,
                  count, count > 1 ? "s" : "", best);
  }
  if (json)
    std::printf("{\"isa\": \"%s\", \"vector_width\": %d, \"gflops\": {%s}}\n",
                isa.name, isa.width, rates.c_str());
  return 0;
}
