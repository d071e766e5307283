// Times the native exact solver (dnb_env/csrc/solver.hpp) on positions read from a file, one fresh solver
// per position. Compiled by benchmarks/solver_versions.py against the solver sources of two revisions, so
// that an old and a new solver run side by side on the same positions.
//
// Input lines: "rows cols query w0 w1 w2 threshold", query "value" (exact value by MTD(f)) or "win"
// (the null-window test value >= threshold). Output lines: "value-or-answer seconds nodes", with
// value 999 / answer -1 when the node budget ran out.
// Usage: solver_driver POSITIONS NODE_LIMIT TT_MB THREADS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "solver.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s POSITIONS NODE_LIMIT TT_MB THREADS\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  const uint64_t limit = std::strtoull(argv[2], nullptr, 10);
  const size_t entries = size_t(std::atof(argv[3]) * 1024 * 1024) / sizeof(dnb::exact::TTEntry);
  const int threads = std::atoi(argv[4]);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream is(line);
    int rows, cols, threshold;
    std::string query;
    uint64_t w[3];
    if (!(is >> rows >> cols >> query >> w[0] >> w[1] >> w[2] >> threshold)) continue;
    dnb::exact::Solver solver(rows, cols, entries, dnb::exact::kAllRules);
#ifdef DNB_SOLVER_THREADS
    solver.set_threads(threads);
#else
    (void)threads;
#endif
    const dnb::exact::Pos p = dnb::exact::make_pos(solver.topo(), w);
    const auto start = std::chrono::steady_clock::now();
    int answer;
    if (query == "value") {
      int lo, hi;
      answer = solver.value(p, 0, limit, lo, hi) ? lo : 999;
    } else {
      answer = solver.at_least(p, threshold, limit);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d %.6f %llu\n", answer, seconds, static_cast<unsigned long long>(solver.stats().nodes));
    std::fflush(stdout);
  }
  return 0;
}
