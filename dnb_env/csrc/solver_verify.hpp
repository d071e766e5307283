// Exact solver (solver.hpp), the exhaustive check of its rules: the move generator against a full
// retrograde table on every edge set of a small board.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "engine.hpp"
#include "solver_moves.hpp"
#include "solver_search.hpp"
#include "solver_topology.hpp"

namespace dnb {
namespace exact {

struct RuleCheck {
  uint64_t positions = 0, violations = 0;
  RuleStats stats;
  std::vector<std::array<uint64_t, kEdgeWords>> examples;  // first few positions where a rule lost value
};

// For every edge set of a rows x cols board with at most 27 edges: the exact value by a full retrograde
// table, and the generator's move set under `rules` (with simple-endgame leaves valued by rule 4), which
// must contain an optimal move. Since the search only ever combines these, a board with no violation is
// solved exactly by the search. `drop_double_deal` is a negative control for the tests: it searches only
// the capture where rule 2 offers {take, double-deal} (an unsound greedy rule the check must catch).
inline RuleCheck verify_rules(int rows, int cols, uint32_t rules, bool drop_double_deal = false) {
  const Topology& t = topology(rows, cols);
  const int A = t.num_edges;
  if (A > 27) throw std::invalid_argument("verify_rules enumerates 2^edges positions: at most 27 edges");
  const uint32_t full = (uint32_t(1) << A) - 1;
  std::vector<int8_t> v(size_t(full) + 1, 0);
  // requirement masks: edge e completes box b of e when the other three sides are drawn
  std::vector<std::array<uint32_t, 2>> req(A, {0u, 0u});
  std::vector<int> nreq(A, 0);
  for (int e = 0; e < A; ++e) {
    for (int b : t.edge_boxes[e]) {
      if (b < 0) break;
      uint32_t m = 0;
      for (int s : t.box_sides[b]) {
        if (s != e) m |= uint32_t(1) << s;
      }
      req[e][nreq[e]++] = m;
    }
  }
  auto move_value = [&](uint32_t mask, int e) {
    int g = 0;
    for (int k = 0; k < nreq[e]; ++k) g += (mask & req[e][k]) == req[e][k];
    const int child = v[mask | (uint32_t(1) << e)];
    return g ? g + child : -child;
  };
  for (uint32_t mask = full; mask-- > 0;) {
    int best = -kInf;
    for (int e = 0; e < A; ++e) {
      if (!(mask >> e & 1)) best = std::max(best, move_value(mask, e));
    }
    v[mask] = int8_t(best);
  }
  RuleCheck out;
  Moves moves;
  Scratch sc;
  for (uint32_t mask = 0; mask < full; ++mask) {
    const uint64_t edges[kEdgeWords] = {mask};
    const Pos p = make_pos(t, edges);
    const NodeKind kind = generate(t, p, rules, moves, sc, out.stats);
    if (drop_double_deal && kind == NodeKind::kCaptureChoice) moves.n = 1;
    int got;
    if (kind == NodeKind::kSimpleEndgame) {
      got = simple_endgame_value(t, p);
    } else {
      got = -kInf;
      for (int i = 0; i < moves.n; ++i) got = std::max(got, move_value(mask, moves.m[i]));
    }
    ++out.positions;
    if (got != v[mask]) {
      ++out.violations;
      if (out.examples.size() < 8) out.examples.push_back({mask, 0, 0});
    }
  }
  return out;
}

}  // namespace exact
}  // namespace dnb
