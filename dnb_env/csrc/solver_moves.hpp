// Exact solver (solver.hpp), move generation: the moves searched at a position under the reductions of
// solver.hpp's rules 1-3 and 5 (rule 4's simple endgames are recognised here and valued by
// solver_topology.hpp), in search order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <new>

#include "engine.hpp"
#include "solver_topology.hpp"

namespace dnb {
namespace exact {

// Reductions that can be switched off (for tests); kAllRules is the default. kDoubleDealing is only used
// together with kFreeCapture (it assumes every free box has been taken first).
enum Rule : uint32_t {
  kFreeCapture = 1u << 0,
  kDoubleDealing = 1u << 1,
  kEquivalentSacrifices = 1u << 2,
  kSimpleEndgame = 1u << 3,
  kBorderEdges = 1u << 4,
  kAllRules = (1u << 5) - 1,
};

// The moves searched at a node, in search order.
struct Moves {
  EdgeIndex m[kMaxEdges];
  int n = 0;
  void push(int e) { m[n++] = EdgeIndex(e); }
};

// kDeferred: a node whose (quiet) moves were not generated because the caller asked to stop before them.
enum class NodeKind { kTerminal, kForcedCapture, kCaptureChoice, kSimpleEndgame, kQuiet, kAllMoves, kDeferred };

// How often each rule fired (counted by generate()).
struct RuleStats {
  uint64_t free_captures = 0;       // rule 1: forced single capture
  uint64_t run_captures = 0;        // rule 2: forced capture from a run (long run or spare cheap run)
  uint64_t double_deal_choices = 0; // rule 2: nodes searched as {take, double-deal}
  uint64_t equivalent_pruned = 0;   // rule 3: sacrifice moves left out as equivalent or dominated
  uint64_t simple_endgames = 0;     // rule 4: leaves valued by the chain/loop recursion
  uint64_t border_pruned = 0;       // rule 5: border sides left out as the same move as another
  uint64_t choice_cuts = 0;         // rule 2: capture choices cut by their lower bound 0 (no search)
};

// A run of boxes taken one after another from a capturable box: `first` (valence 1) through boxes of
// valence 2. A chain run ends at the border or a joint through `end_edge`; a two-ended run ends in another
// box of valence 1 (an opened loop, or a chain opened at both ends).
struct Run {
  int first_edge = -1;  // the capturing move: undrawn side of the capturable box
  int length = 0;       // boxes
  bool two_ended = false;
  int end_edge = -1;    // chain: the edge beyond the last box (the double-dealing move of a 2-chain)
  int middle_edge = -1; // two-ended run of 4: the edge between its 2nd and 3rd box
};

// Walk the run that starts at capturable box b (valence 1); marks its boxes in `seen`.
inline Run walk_run(const Topology& t, const Pos& p, int b, uint64_t* seen) {
  Run r;
  set_bit(seen, b);
  int e = other_undrawn_side(t, p, b, -1);
  r.first_edge = e;
  r.length = 1;
  int cur = b;
  std::array<int, 3> edges{-1, -1, -1};  // first three edges of the run
  edges[0] = e;
  while (true) {
    const int nxt = t.across(cur, e);
    if (nxt < 0 || p.val[nxt] >= 3) {
      r.end_edge = e;
      return r;
    }
    set_bit(seen, nxt);
    ++r.length;
    if (p.val[nxt] == 1) {  // the other capturable end
      r.two_ended = true;
      if (r.length == 4) r.middle_edge = edges[1];
      return r;
    }
    cur = nxt;
    e = other_undrawn_side(t, p, cur, e);
    if (r.length <= 3) edges[r.length - 1] = e;
  }
}

// Scratch space of the quiet-move generator, reused across calls.
struct Scratch {
  int16_t comp[kMaxBoxes];  // component id of each box of valence 2, -1 otherwise
  int16_t comp_len[kMaxBoxes];
};

// Rule 1: the capture of a box that leaves no new box on offer (its undrawn side leads to the border or to a
// box of other than two undrawn sides), as the node's one move. False when no capturable box is free.
inline bool free_capture(const Topology& t, const Pos& p, Moves& out, RuleStats& stats) {
  for (int w = 0; w < kBoxWords; ++w) for (uint64_t bits = p.cap[w]; bits; bits &= bits - 1) {
    const int b = w * 64 + lowest_bit(bits);
    const int e = other_undrawn_side(t, p, b, -1);
    const int n = t.across(b, e);
    if (n < 0 || p.val[n] != 2) {
      out.push(e);
      ++stats.free_captures;
      return true;
    }
  }
  return false;
}

// Rule 2, once no free capture is left: every capturable box starts a run through boxes of valence 2. The
// node's moves into `out` and its kind into `kind`: a forced capture from a long run or from a spare cheap
// run, or the choice {take, double-deal} of the one cheap run. False when no run is on offer.
inline bool run_capture(const Topology& t, const Pos& p, Moves& out, RuleStats& stats, NodeKind& kind) {
  uint64_t seen[kBoxWords] = {};
  // the runs of 2 (chain) or 4 (two-ended) boxes; raw storage: default-constructing kMaxBoxes runs on
  // every capture node cost a tenth of the search
  alignas(Run) unsigned char runs_storage[sizeof(Run) * kMaxBoxes];
  Run* runs_cheap = reinterpret_cast<Run*>(runs_storage);
  int n_runs = 0, n_chain2 = 0;
  int first_loop4 = -1, first_chain2 = -1;
  for (int w = 0; w < kBoxWords; ++w) for (uint64_t bits = p.cap[w]; bits; bits &= bits - 1) {
    const int b = w * 64 + lowest_bit(bits);
    if (test_bit(seen, b)) continue;
    const Run r = walk_run(t, p, b, seen);
    const bool cheap_run = r.two_ended ? r.length == 4 : r.length == 2;
    if (!cheap_run) {  // a long run (or a two-ended 3): taking its first box keeps every plan
      out.push(r.first_edge);
      ++stats.run_captures;
      kind = NodeKind::kForcedCapture;
      return true;
    }
    new (&runs_cheap[n_runs]) Run(r);
    if (r.two_ended) {
      if (first_loop4 < 0) first_loop4 = n_runs;
    } else {
      ++n_chain2;
      if (first_chain2 < 0) first_chain2 = n_runs;
    }
    ++n_runs;
  }
  if (n_runs >= 2) {
    // take from a run whose double-deal is not the only cheapest one
    const int pick = n_chain2 >= 2 ? first_chain2 : (first_loop4 >= 0 ? first_loop4 : first_chain2);
    out.push(runs_cheap[pick].first_edge);
    ++stats.run_captures;
    kind = NodeKind::kForcedCapture;
    return true;
  }
  if (n_runs == 1) {
    const Run& r = runs_cheap[0];
    out.push(r.first_edge);
    out.push(r.two_ended ? r.middle_edge : r.end_edge);
    ++stats.double_deal_choices;
    kind = NodeKind::kCaptureChoice;
    return true;
  }
  return false;
}

// A component of boxes of valence 2 (traced by trace_component): a loop, or a chain whose two ends leave
// through end_edge[d] to end_box[d] (-1: the border, else a joint); `inner` holds the undrawn edges between
// its boxes.
struct Component {
  int n = 1;  // boxes
  bool loop = false;
  int inner[kMaxBoxes + 1];
  int n_inner = 0;
  int end_edge[2] = {-1, -1}, end_box[2] = {-1, -1};
};

// Trace the component of boxes of valence 2 through box `start` both ways, numbering its boxes `id` in
// sc.comp and its length in sc.comp_len.
inline void trace_component(const Topology& t, const Pos& p, int start, int id, Scratch& sc, Component& c) {
  sc.comp[start] = int16_t(id);
  int e0 = other_undrawn_side(t, p, start, -1);
  int e1 = other_undrawn_side(t, p, start, e0);
  for (int dir = 0; dir < 2 && !c.loop; ++dir) {
    int cur = start;
    int e = dir == 0 ? e0 : e1;
    while (true) {
      const int nxt = t.across(cur, e);
      if (nxt < 0 || p.val[nxt] != 2) {
        c.end_edge[dir] = e;
        c.end_box[dir] = nxt;
        break;
      }
      c.inner[c.n_inner++] = e;
      if (nxt == start) {
        c.loop = true;
        break;
      }
      sc.comp[nxt] = int16_t(id);
      ++c.n;
      cur = nxt;
      e = other_undrawn_side(t, p, cur, e);
    }
  }
  sc.comp_len[id] = int16_t(c.n);
}

// Rule 3's bookkeeping at one node: the moves left out, and the isolated chains and loops already given a
// representative.
struct Pruning {
  bool* pruned;
  RuleStats& stats;
  int16_t kept[kMaxBoxes];  // kind * 128 + length
  int n_kept = 0;

  Pruning(bool* pruned_moves, RuleStats& rule_stats) : pruned(pruned_moves), stats(rule_stats) {}
  void prune(int e) {
    if (!pruned[e]) {
      pruned[e] = true;
      ++stats.equivalent_pruned;
    }
  }
  // Whether a component of this code already has its representative (and it is now this one if not).
  bool already_kept(int code) {
    if (std::find(kept, kept + n_kept, int16_t(code)) != kept + n_kept) return true;
    kept[n_kept++] = int16_t(code);
    return false;
  }
};

// Rule 3 on one component: the sacrifices in it that are equivalent to one kept, or dominated, left out.
inline void prune_component(const Pos& p, const Component& c, Pruning& pr) {
  if (c.loop) {
    // every edge of a loop gives the same graph; equal loops are the same move
    const bool dup = pr.already_kept(128 + c.n);
    for (int k = dup ? 0 : 1; k < c.n_inner; ++k) pr.prune(c.inner[k]);
    return;
  }
  const bool isolated = c.end_box[0] < 0 && c.end_box[1] < 0;
  if (isolated) {
    if (pr.already_kept(c.n)) {
      for (int k = 0; k < c.n_inner; ++k) pr.prune(c.inner[k]);
      pr.prune(c.end_edge[0]);
      pr.prune(c.end_edge[1]);
      return;
    }
    if (c.n == 2) {  // hard-hearted handout only
      pr.prune(c.end_edge[0]);
      pr.prune(c.end_edge[1]);
    } else {         // n == 1: the two border edges are symmetric; n >= 3: all edges equivalent
      pr.prune(c.end_edge[1]);
      for (int k = 0; k < c.n_inner; ++k) pr.prune(c.inner[k]);
    }
    return;
  }
  if (c.n < 2) return;
  // a chain ending in joint(s): usable when each end joint keeps >= 2 undrawn sides after the chain
  // is used up (no new box comes on offer while it is taken)
  for (int d = 0; d < 2; ++d) {
    const int j = c.end_box[d];
    if (j < 0) continue;
    const int uses = 1 + (c.end_box[1 - d] == j);
    if (p.val[j] - uses < 2) return;
  }
  pr.prune(c.end_edge[0]);
  pr.prune(c.end_edge[1]);
  if (c.n > 2) {
    for (int k = 1; k < c.n_inner; ++k) pr.prune(c.inner[k]);
  }
}

// The components of boxes of valence 2 of a node with no box on offer, chains (ends at the border or at
// joints) and loops, numbered in sc; with rule 3 their equivalent sacrifices are marked in `pruned`.
inline void prune_sacrifices(const Topology& t, const Pos& p, uint32_t rules, bool* pruned, Scratch& sc,
                             RuleStats& stats) {
  Pruning pr(pruned, stats);
  int n_comp = 0;
  for (int start = 0; start < t.num_boxes; ++start) {
    if (p.val[start] != 2 || sc.comp[start] >= 0) continue;
    Component c;
    trace_component(t, p, start, n_comp++, sc, c);
    if (rules & kEquivalentSacrifices) prune_component(p, c, pr);
  }
}

// Rule 5: one undrawn border side per box is searched (the first not already left out).
inline void prune_border_sides(const Topology& t, const Pos& p, bool* pruned, RuleStats& stats) {
  for (const auto& grp : t.border_groups) {
    int keep = -1;
    for (int k = 0; k < grp.n; ++k) {
      const int e = grp.side[k];
      if (drawn(p, e)) continue;
      if (keep < 0) {
        if (!pruned[e]) keep = e;
      } else if (!pruned[e]) {
        pruned[e] = true;
        ++stats.border_pruned;
      }
    }
  }
}

// Safe moves by the undrawn sides of the boxes they touch, fewest first (the border counts as an untouched
// box), centre order among equals: moves where the chains are taking shape come before moves in open areas
// (13% fewer nodes at 40 undrawn on 5x5 than centre order alone).
inline void sort_safe_moves(const Topology& t, const Pos& p, Moves& out) {
  int key[kMaxEdges];
  for (int i = 0; i < out.n; ++i) {
    const auto& eb = t.edge_boxes[out.m[i]];
    key[i] = p.val[eb[0]] + (eb[1] < 0 ? 4 : p.val[eb[1]]);
  }
  for (int i = 1; i < out.n; ++i) {
    const EdgeIndex m = out.m[i];
    const int k = key[i];
    int j = i - 1;
    while (j >= 0 && key[j] > k) {
      out.m[j + 1] = out.m[j];
      key[j + 1] = key[j];
      --j;
    }
    out.m[j + 1] = m;
    key[j + 1] = k;
  }
}

// Insertion sort of the sacrifices by boxes given (stable: centre order among equals).
inline void sort_sacrifices(EdgeIndex* sac, int16_t* sac_key, int sac_n) {
  for (int i = 1; i < sac_n; ++i) {
    const EdgeIndex m = sac[i];
    const int16_t k = sac_key[i];
    int j = i - 1;
    while (j >= 0 && sac_key[j] > k) {
      sac[j + 1] = sac[j];
      sac_key[j + 1] = sac_key[j];
      --j;
    }
    sac[j + 1] = m;
    sac_key[j + 1] = k;
  }
}

// The moves not left out, in search order: safe moves (see sort_safe_moves), then captures (only reached
// with the capture rules off), then sacrifices by the boxes they hand over (the length of the component
// they open, from sc).
inline void order_moves(const Topology& t, const Pos& p, const bool* pruned, const Scratch& sc, Moves& out) {
  EdgeIndex sac[kMaxEdges];
  int16_t sac_key[kMaxEdges];
  int sac_n = 0;
  EdgeIndex caps[kMaxEdges];
  int caps_n = 0;
  for (int i = 0; i < t.num_edges; ++i) {
    const int e = t.centre_order[i];
    if (drawn(p, e) || pruned[e]) continue;
    int given = 0;
    bool capture = false, sacrifice = false;
    int seen_comp = -1;
    for (int b : t.edge_boxes[e]) {
      if (b < 0) break;
      if (p.val[b] == 1) capture = true;
      if (p.val[b] == 2) {
        sacrifice = true;
        const int c = sc.comp[b];
        if (c >= 0 && c != seen_comp) {
          given += sc.comp_len[c];
          seen_comp = c;
        } else if (c < 0) {
          given += 1;
        }
      }
    }
    if (capture) {
      caps[caps_n++] = EdgeIndex(e);
    } else if (sacrifice) {
      sac[sac_n] = EdgeIndex(e);
      sac_key[sac_n++] = int16_t(given);
    } else {
      out.push(e);
    }
  }
  sort_safe_moves(t, p, out);
  sort_sacrifices(sac, sac_key, sac_n);
  for (int i = 0; i < caps_n; ++i) out.push(caps[i]);
  for (int i = 0; i < sac_n; ++i) out.push(sac[i]);
}

// The moves searched at position p under `rules`. Capture nodes return their one or two moves; quiet
// nodes return the legal moves minus rule-3 and rule-5 reductions, ordered: safe moves from the centre out
// (a history heuristic ordering was tried and searched more nodes), then sacrifices by the number of boxes
// they hand over.
// A simple endgame returns no moves (kSimpleEndgame) when rule 4 is on. With `quiet` false a node that
// needs the full move list returns kDeferred and no moves (the search first probes its table).
inline NodeKind generate(const Topology& t, const Pos& p, uint32_t rules, Moves& out, Scratch& sc,
                         RuleStats& stats, bool quiet = true) {
  out.n = 0;
  if (p.remaining == 0) return NodeKind::kTerminal;
  uint64_t any_cap = 0;
  for (int w = 0; w < kBoxWords; ++w) any_cap |= p.cap[w];
  const bool capturable = any_cap != 0;
  const bool joints = p.joints > 0;
  if (capturable && (rules & kFreeCapture)) {
    if (free_capture(t, p, out, stats)) return NodeKind::kForcedCapture;
    NodeKind kind;
    if ((rules & kDoubleDealing) && run_capture(t, p, out, stats, kind)) return kind;
  }
  if (!capturable && !joints && (rules & kSimpleEndgame)) {
    ++stats.simple_endgames;
    return NodeKind::kSimpleEndgame;
  }
  if (!quiet) return NodeKind::kDeferred;
  // quiet node (or a capture node with the capture rules off): all moves, rule 3 and 5 reductions
  bool pruned[kMaxEdges];
  std::fill(pruned, pruned + t.num_edges, false);
  for (int b = 0; b < t.num_boxes; ++b) {
    sc.comp[b] = -1;
  }
  if (!capturable) prune_sacrifices(t, p, rules, pruned, sc, stats);
  if (rules & kBorderEdges) prune_border_sides(t, p, pruned, stats);
  order_moves(t, p, pruned, sc, out);
  return capturable ? NodeKind::kAllMoves : NodeKind::kQuiet;
}

}  // namespace exact
}  // namespace dnb
