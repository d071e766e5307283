// Exact Dots-and-Boxes solver: alpha-beta search over the box margin (C++17, header only).
//
// What it computes. The value v(S) of a position is the margin (boxes) the player to move gets over the
// opponent from the boxes not yet claimed, under optimal play by both. It depends only on the set S of
// drawn edges (the claimed boxes are sunk), so the search and its table are keyed by S alone:
//
//     v(S) = max over undrawn e of   g + v(S + e)   if e completes g > 0 boxes (the mover moves again)
//                                    -v(S + e)      otherwise                          v(full) = 0
//
// This is the recursion of baselines/solver.py (the retrograde reference), searched depth-first instead
// of enumerated, so positions far beyond 2^k tables are in reach.
//
// How it searches.
//  * Negamax alpha-beta, fail-soft, driven by MTD(f) (Plaat et al. 1996): a sequence of null-window
//    searches (beta - 1, beta) that converges on the exact integer value. A single null-window search
//    answers "is v >= t?" (the win/draw query).
//  * A transposition table of lower/upper bounds keyed by the drawn-edge set, canonicalised over the
//    board's symmetries (8 on a square board, 4 on a rectangle): a position carries its edge set seen
//    through every symmetry, updated incrementally as edges are drawn; the smallest of those sets (as a
//    180-bit number) is the canonical form, its mixed bits index the table, and the entry stores the full
//    set, so a hit is never a hash collision. Bounds depend only on the edge set, so entries are reused
//    across searches and across calls.
//  * Move ordering: the table's best move, then safe moves (no box gets its third side) by the undrawn
//    sides of the boxes they touch, fewest first, and from the centre outwards among equals (Barker & Korf
//    2012 report the centre-out order as very effective), then sacrifices by the number of boxes they hand
//    over, fewest first. Captures are handled by the rules below.
//  * Bounds: |v| <= number of unclaimed boxes cuts nodes whose window lies outside that range, and a
//    capture choice of rule 2 (take a run of 2, or an opened loop of 4, or double-deal) is worth >= 0 to
//    the mover, which cuts it at once when the window lies at or below 0. Every value has the parity of
//    the unclaimed boxes, so bounds of the other parity are tightened by one before they are stored.
//
// Which reductions it uses. Only reductions proven to keep the exact value; each is a Rule bit so that
// tests can switch it off, and verify_rules() checks each against a full retrograde table (every edge
// set of a small board: the pruned move set must always contain an optimal move).
//  1. kFreeCapture (Berlekamp 2000, ch. "canonical play"; Barker & Korf 2012, "capturing boxes"): a box
//     with one undrawn side e, where e leads to the border or to a box with other than two undrawn sides,
//     is taken at once: e is the only move searched. Why exact: drawing e affects only this box and that
//     neighbour, and the neighbour is not left capturable by it; any other move x is worth no more than
//     "e, then x" (if x gives the turn away the opponent can take the box and reach the same position two
//     boxes better for him; if x captures, by induction on the undrawn edges or because the two
//     positions after x and after e are the same graph with the two capturable boxes exchanged).
//  2. kDoubleDealing, the all-but-two / all-but-four rule (Berlekamp 2000; Winning Ways ch. 16; the
//     "loony options" theorem: in a position with boxes on offer the player can only gain by taking all
//     of them, or all but two (four for an opened loop) and handing those back with the double-dealing
//     move; every other plan gives boxes away for nothing). Applied once no free capture is left, so each
//     capturable box starts a run of boxes with two undrawn sides:
//       - a run that is a chain of >= 3 boxes, or a two-ended run (opened loop) of 3 or >= 5 boxes: take
//         its first box only (both optimal plans still exist after it);
//       - several runs of 2 (chain) / 4 (opened loop) boxes: take a box of a run whose double-deal is not
//         the only cheapest one (its loss leaves a double-deal of the same cost, with the same position
//         after all captures);
//       - one run left: search exactly two moves, taking its first box and the double-dealing move (the
//         far end of a 2-chain; the middle edge of an opened 4-loop, which leaves two dominoes).
//  3. kEquivalentSacrifices (Berlekamp 2000; Medworth, theorem "a half-hearted handout is never better
//     than a hard-hearted one", and the loony-options theorem for where a long chain is opened), with no
//     box on offer: every edge of a loop gives the same graph, so one is
//     searched; every edge of a chain of >= 3 boxes is equivalent (whatever is cut, the opponent's only
//     sensible plans are "take all" or "all but two", with the same position after all captures), so one
//     is searched; a 2-chain is only opened in the middle (the hard-hearted handout is never worse than the
//     half-hearted one); an isolated 1-chain's two border edges are equivalent; equal isolated chains and
//     loops are searched once. Chains ending in joints qualify only when using up the chain leaves each end
//     joint with >= 2 undrawn sides (so no new box comes on offer while it is taken).
//  4. kSimpleEndgame: when every unclaimed box has exactly two undrawn sides the position is a sum of
//     isolated chains and loops and its value is the opener/controller recursion of
//     dnb_env/analysis.py (simple_endgame_value): v(empty) = 0, v(G) = min over components C of
//     chain 1: 1 - v(G-C), chain 2: 2 - v(G-C), chain n >= 3: n - 2 + |2 - v(G-C)|,
//     loop n: n - 4 + |4 - v(G-C)| (margin of the controller; the mover's value is -v).
//  5. kBorderEdges (Barker & Korf 2012, the corner symmetry; in strings-and-coins terms, two strings that
//     tie the same coin to the ground): the sides of one box that lie on the border (two for a corner box,
//     three for the end box of a 1 x n board) lead to the same graph whichever of them is drawn. So only
//     one of a box's undrawn border sides is searched, and the table key counts, for each such box, how
//     many of its border sides are drawn rather than which (the key marks the first ones in a fixed order).
//     Why exact: cutting either string gives isomorphic graphs, and the value is a function of the graph.
//
// References: J. K. Barker and R. E. Korf, "Solving Dots-And-Boxes", AAAI 2012; E. Berlekamp, "The
// Dots-and-Boxes Game: Sophisticated Child's Play", A K Peters 2000; E. Berlekamp, J. Conway, R. Guy,
// "Winning Ways", ch. 16; A. Medworth, "The Dots-and-Boxes Game" (notes, github.com/amdw/dotsandboxes:
// theorems on loony options, free coins, half-hearted handouts); A. Plaat et al., "Best-first fixed-depth
// minimax algorithms", Artificial Intelligence 1996 (MTD(f)). The rules are stated here in this solver's
// terms with the argument for each; verify_rules() re-checks them exhaustively (0 violations on every
// edge set of 1xN up to 1x7, 2x2, 2x3, 2x4, 2x5 and 3x3).
#pragma once

#define DNB_SOLVER_THREADS 1  // Solver::set_threads exists (benchmarks/solver_driver.cpp checks)

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <exception>
#include <thread>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "analysis.hpp"
#include "engine.hpp"

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

constexpr int kMaxSymmetries = 8;

constexpr uint8_t kNoMove = 255;
// Positions with fewer undrawn edges are searched without the table: their subtrees cost less than the
// table's cache misses (about 5% faster at 40 undrawn on 5x5, 1% more nodes).
constexpr int kTableMinUndrawn = 10;
// Null-window searches at positions with fewer undrawn edges stay in one thread (threads cost ~0.1 ms).
constexpr int kParallelUndrawn = 24;
constexpr uint64_t kSerialNodes = 100000;  // nodes a search runs in one thread before the others join
constexpr uint64_t kTableMagic = 0x3154544E42443A53ull;  // "S:DBNTT1": solver table files, format 1
constexpr int kInf = 1000;

// Thrown inside a search when its node budget is spent; caught by the public entry points.
struct BudgetExceeded {};

// Board tables of the search: neighbours across each side, symmetries as edge permutations and the static
// centre-out move order. Built once per board size by topology().
struct Topology {
  const Geometry* g = nullptr;
  int num_edges = 0, num_boxes = 0, num_sym = 0;
  std::vector<std::array<int16_t, 2>> edge_boxes;          // [A] boxes beside each edge, -1 pads
  std::vector<std::array<int16_t, 4>> box_sides;           // [B] the four sides
  std::vector<std::array<uint8_t, 2>> side_bit;            // [A] e's bit in the side mask of each box beside it
  std::vector<std::array<uint8_t, kMaxEdges>> perm, inv;   // [S][A] edge images under each symmetry
  std::vector<uint8_t> centre_order;                        // all edges, centre first
  // rule 5: boxes with two or more border sides, and their border sides in centre order
  struct BorderGroup {
    int n = 0;
    uint8_t side[4];
  };
  std::vector<BorderGroup> border_groups;
  std::vector<int8_t> border_group_of;                      // [A] group of a border side, -1 otherwise
  std::vector<int16_t> order_rank;                          // [A] position of each edge in centre_order

  explicit Topology(const Geometry& geo) : g(&geo) {
    num_edges = geo.num_actions;
    num_boxes = geo.num_boxes;
    edge_boxes = geo.action_boxes;
    box_sides = geo.box_sides;
    side_bit.assign(num_edges, {0, 0});
    for (int a = 0; a < num_edges; ++a) {
      for (int i = 0; i < 2 && edge_boxes[a][i] >= 0; ++i) {
        const auto& sides = box_sides[edge_boxes[a][i]];
        for (int k = 0; k < 4; ++k) {
          if (sides[k] == a) side_bit[a][i] = uint8_t(1u << k);
        }
      }
    }
    const int H = geo.height, W = geo.width;
    std::vector<int> cell_edge(size_t(H) * W, -1);
    for (int a = 0; a < num_edges; ++a) cell_edge[geo.action_cell[a]] = a;
    // grid-cell maps (y, x) -> (y', x'): the dihedral group of the rectangle, of the square if H == W
    std::vector<std::array<int, 3>> maps = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};  // flip y, flip x, swap
    if (H == W) maps.insert(maps.end(), {{0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}});
    num_sym = int(maps.size());
    perm.resize(num_sym);
    inv.resize(num_sym);
    for (int s = 0; s < num_sym; ++s) {
      for (int a = 0; a < num_edges; ++a) {
        int y = geo.action_cell[a] / W, x = geo.action_cell[a] % W;
        if (maps[s][0]) y = H - 1 - y;
        if (maps[s][1]) x = W - 1 - x;
        if (maps[s][2]) std::swap(y, x);
        const int b = cell_edge[size_t(y) * W + x];
        if (b < 0) throw std::logic_error("solver: a board symmetry does not map edges to edges");
        perm[s][a] = uint8_t(b);
        inv[s][b] = uint8_t(a);
      }
    }
    centre_order.resize(num_edges);
    for (int a = 0; a < num_edges; ++a) centre_order[a] = uint8_t(a);
    auto dist = [&](int a) {
      const int y = geo.action_cell[a] / W, x = geo.action_cell[a] % W;
      return (2 * y - (H - 1)) * (2 * y - (H - 1)) + (2 * x - (W - 1)) * (2 * x - (W - 1));
    };
    std::stable_sort(centre_order.begin(), centre_order.end(), [&](int a, int b) { return dist(a) < dist(b); });
    order_rank.resize(num_edges);
    for (int i = 0; i < num_edges; ++i) order_rank[centre_order[i]] = int16_t(i);
    border_group_of.assign(num_edges, -1);
    for (int b = 0; b < num_boxes; ++b) {
      BorderGroup grp{};
      for (int i = 0; i < num_edges; ++i) {
        const int e = centre_order[i];
        const bool side = box_sides[b][0] == e || box_sides[b][1] == e || box_sides[b][2] == e || box_sides[b][3] == e;
        if (side && edge_boxes[e][1] < 0) grp.side[grp.n++] = uint8_t(e);
      }
      if (grp.n < 2) continue;
      for (int k = 0; k < grp.n; ++k) border_group_of[grp.side[k]] = int8_t(border_groups.size());
      border_groups.push_back(grp);
    }
  }

  // Edge e drawn in a key (an edge set seen through a symmetry). With `border` (rule 5) the key keeps, in
  // each border group, the group's first sides set, as many as are drawn: drawing a border side sets the
  // group's next side.
  void add_to_key(uint64_t* key, int e, bool border) const {
    if (border && border_group_of[e] >= 0) {
      const BorderGroup& grp = border_groups[border_group_of[e]];
      for (int k = 0; k < grp.n; ++k) {
        if (!test_bit(key, grp.side[k])) {
          set_bit(key, grp.side[k]);
          return;
        }
      }
    }
    set_bit(key, e);
  }

  // The bit of side e in box b's side mask (e must be a side of b).
  unsigned bit_of(int b, int e) const { return edge_boxes[e][0] == b ? side_bit[e][0] : side_bit[e][1]; }

  // The box across edge e from box b (-1: the border).
  int across(int b, int e) const {
    const auto& eb = edge_boxes[e];
    return eb[0] == b ? eb[1] : eb[0];
  }
};

// The cached topology of a board (std::invalid_argument outside 1..kMaxSize).
inline const Topology& topology(int rows, int cols) {
  const Geometry& geo = geometry(rows, cols);
  static std::array<std::unique_ptr<Topology>, kMaxSize * kMaxSize> cache;
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  auto& slot = cache[(rows - 1) * kMaxSize + (cols - 1)];
  if (!slot) slot = std::make_unique<Topology>(geo);
  return *slot;
}

// A position of the search: drawn edges, the table key of the edge set seen through each symmetry (with
// `border`, rule 5's key: see Topology::add_to_key), undrawn sides per box (valence; 0 = claimed) and the
// capturable boxes.
struct Pos {
  uint64_t edges[kEdgeWords];
  uint64_t img[kMaxSymmetries][kEdgeWords];  // img[s]: the key of the set mapped by symmetry s
  bool border;
  uint8_t val[kMaxBoxes];
  uint8_t open[kMaxBoxes];  // undrawn sides of each box, bit k = Topology::box_sides[b][k]
  uint64_t cap[kBoxWords];  // boxes of valence 1 (capturable), kept up to date by draw()
  int16_t remaining;  // unclaimed boxes
  int16_t undrawn;    // undrawn edges
  int16_t joints;     // boxes of valence 3 or 4
};

inline Pos make_pos(const Topology& t, const uint64_t* edges, bool border = false) {
  Pos p{};
  for (int w = 0; w < kEdgeWords; ++w) p.edges[w] = edges[w];
  p.border = border && !t.border_groups.empty();
  p.undrawn = 0;
  for (int a = 0; a < t.num_edges; ++a) {
    if (test_bit(edges, a)) {
      for (int s = 0; s < t.num_sym; ++s) t.add_to_key(p.img[s], t.perm[s][a], p.border);
    } else {
      ++p.undrawn;
    }
  }
  p.remaining = 0;
  p.joints = 0;
  for (int b = 0; b < t.num_boxes; ++b) {
    int v = 0;
    for (int k = 0; k < 4; ++k) {
      if (!test_bit(edges, t.box_sides[b][k])) {
        ++v;
        p.open[b] = uint8_t(p.open[b] | (1u << k));
      }
    }
    p.val[b] = uint8_t(v);
    p.remaining = int16_t(p.remaining + (v > 0));
    p.joints = int16_t(p.joints + (v >= 3));
    if (v == 1) set_bit(p.cap, b);
  }
  return p;
}

// Draw undrawn edge e; returns the boxes it completes (0, 1 or 2).
inline int draw(const Topology& t, Pos& p, int e) {
  set_bit(p.edges, e);
  --p.undrawn;
  if (p.border) {
    for (int s = 0; s < t.num_sym; ++s) t.add_to_key(p.img[s], t.perm[s][e], true);
  } else {
    for (int s = 0; s < t.num_sym; ++s) set_bit(p.img[s], t.perm[s][e]);
  }
  int gained = 0;
  for (int i = 0; i < 2; ++i) {
    const int b = t.edge_boxes[e][i];
    if (b < 0) break;
    p.open[b] = uint8_t(p.open[b] & ~t.side_bit[e][i]);
    switch (--p.val[b]) {
      case 2: --p.joints; break;
      case 1: set_bit(p.cap, b); break;
      case 0: p.cap[b >> 6] &= ~(uint64_t(1) << (b & 63)); ++gained; break;
      default: break;
    }
  }
  p.remaining = int16_t(p.remaining - gained);
  return gained;
}

inline bool drawn(const Pos& p, int e) { return test_bit(p.edges, e); }

// The undrawn side of a box of valence 1, or the undrawn side other than `not_this` of a box of valence 2.
inline int other_undrawn_side(const Topology& t, const Pos& p, int b, int not_this) {
  unsigned m = p.open[b];
  if (not_this >= 0) m &= ~t.bit_of(b, not_this);
  return m ? t.box_sides[b][__builtin_ctz(m)] : -1;
}

// ------------------------------------------------------------------ simple endgames (rule 4)
// Exact value for the player to move of a simple endgame: every unclaimed box has two undrawn sides.
inline int simple_endgame_value(const Topology& t, const Pos& p) {
  std::string key;
  uint64_t seen[kBoxWords] = {0, 0};
  for (int start = 0; start < t.num_boxes; ++start) {
    if (p.val[start] != 2 || test_bit(seen, start)) continue;
    // walk both ways from `start` along undrawn sides; a loop returns to it
    int n = 1;
    bool loop = false;
    set_bit(seen, start);
    int first_exit = -1;
    for (int dir = 0; dir < 2 && !loop; ++dir) {
      int prev_edge = dir == 0 ? -1 : first_exit;
      int cur = start;
      int e = other_undrawn_side(t, p, cur, prev_edge);
      if (dir == 0) first_exit = e;
      if (dir == 1) e = other_undrawn_side(t, p, start, first_exit);
      while (true) {
        const int nxt = t.across(cur, e);
        if (nxt < 0) break;  // the border
        if (nxt == start) {
          loop = true;
          break;
        }
        set_bit(seen, nxt);
        ++n;
        cur = nxt;
        e = other_undrawn_side(t, p, cur, e);
      }
    }
    key.push_back(component_code(loop, n));
  }
  sort_key(key);
  return -dnb::simple_endgame_value(key);  // the recursion of analysis.hpp
}

// ------------------------------------------------------------------ move generation
struct Moves {
  uint8_t m[kMaxEdges];
  int n = 0;
  void push(int e) { m[n++] = uint8_t(e); }
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

// The moves searched at position p under `rules`. Capture nodes return their one or two moves; quiet
// nodes return the legal moves minus rule-3 reductions, ordered: safe moves from the centre out (a history
// heuristic ordering was tried and searched more nodes), then sacrifices by the number of boxes they hand
// over.
// A simple endgame returns no moves (kSimpleEndgame) when rule 4 is on. With `quiet` false a node that
// needs the full move list returns kDeferred and no moves (the search first probes its table).
inline NodeKind generate(const Topology& t, const Pos& p, uint32_t rules, Moves& out, Scratch& sc,
                         RuleStats& stats, bool quiet = true) {
  out.n = 0;
  if (p.remaining == 0) return NodeKind::kTerminal;
  const bool capturable = (p.cap[0] | p.cap[1]) != 0;
  const bool joints = p.joints > 0;
  static_assert(kBoxWords == 2, "the capturable-box mask is two words");
  if (capturable && (rules & kFreeCapture)) {
    // rule 1: a box whose capture leaves no new box on offer
    for (int w = 0; w < kBoxWords; ++w) for (uint64_t bits = p.cap[w]; bits; bits &= bits - 1) {
      const int b = w * 64 + lowest_bit(bits);
      const int e = other_undrawn_side(t, p, b, -1);
      const int n = t.across(b, e);
      if (n < 0 || p.val[n] != 2) {
        out.push(e);
        ++stats.free_captures;
        return NodeKind::kForcedCapture;
      }
    }
    if (rules & kDoubleDealing) {
      // rule 2: every capturable box now starts a run through boxes of valence 2
      uint64_t seen[kBoxWords] = {0, 0};
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
          return NodeKind::kForcedCapture;
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
        return NodeKind::kForcedCapture;
      }
      if (n_runs == 1) {
        const Run& r = runs_cheap[0];
        out.push(r.first_edge);
        out.push(r.two_ended ? r.middle_edge : r.end_edge);
        ++stats.double_deal_choices;
        return NodeKind::kCaptureChoice;
      }
    }
  }
  if (!capturable && !joints && (rules & kSimpleEndgame)) {
    ++stats.simple_endgames;
    return NodeKind::kSimpleEndgame;
  }
  if (!quiet) return NodeKind::kDeferred;
  // quiet node (or a capture node with the capture rules off): all moves, rule 3 reductions
  bool pruned[kMaxEdges];
  std::fill(pruned, pruned + t.num_edges, false);
  for (int b = 0; b < t.num_boxes; ++b) {
    sc.comp[b] = -1;
  }
  int n_comp = 0;
  if (!capturable) {
    // components of boxes of valence 2: chains (ends at the border or at joints) and loops
    // isolated chains and loops already given a representative, as kind * 128 + length
    int16_t kept[kMaxBoxes];
    int n_kept = 0;
    auto already_kept = [&](int code) {
      if (std::find(kept, kept + n_kept, int16_t(code)) != kept + n_kept) return true;
      kept[n_kept++] = int16_t(code);
      return false;
    };
    for (int start = 0; start < t.num_boxes; ++start) {
      if (p.val[start] != 2 || sc.comp[start] >= 0) continue;
      const int id = n_comp++;
      sc.comp[start] = int16_t(id);
      int n = 1;
      bool loop = false;
      int inner[kMaxBoxes + 1];
      int n_inner = 0;
      int end_edge[2] = {-1, -1}, end_box[2] = {-1, -1};
      int e0 = other_undrawn_side(t, p, start, -1);
      int e1 = other_undrawn_side(t, p, start, e0);
      for (int dir = 0; dir < 2 && !loop; ++dir) {
        int cur = start;
        int e = dir == 0 ? e0 : e1;
        while (true) {
          const int nxt = t.across(cur, e);
          if (nxt < 0 || p.val[nxt] != 2) {
            end_edge[dir] = e;
            end_box[dir] = nxt;
            break;
          }
          inner[n_inner++] = e;
          if (nxt == start) {
            loop = true;
            break;
          }
          sc.comp[nxt] = int16_t(id);
          ++n;
          cur = nxt;
          e = other_undrawn_side(t, p, cur, e);
        }
      }
      sc.comp_len[id] = int16_t(n);
      if (!(rules & kEquivalentSacrifices)) continue;
      auto prune = [&](int e) {
        if (!pruned[e]) {
          pruned[e] = true;
          ++stats.equivalent_pruned;
        }
      };
      if (loop) {
        // every edge of a loop gives the same graph; equal loops are the same move
        const bool dup = already_kept(128 + n);
        for (int k = dup ? 0 : 1; k < n_inner; ++k) prune(inner[k]);
        continue;
      }
      const bool isolated = end_box[0] < 0 && end_box[1] < 0;
      if (isolated) {
        if (already_kept(n)) {
          for (int k = 0; k < n_inner; ++k) prune(inner[k]);
          prune(end_edge[0]);
          prune(end_edge[1]);
          continue;
        }
        if (n == 2) {  // hard-hearted handout only
          prune(end_edge[0]);
          prune(end_edge[1]);
        } else {       // n == 1: the two border edges are symmetric; n >= 3: all edges equivalent
          prune(end_edge[1]);
          for (int k = 0; k < n_inner; ++k) prune(inner[k]);
        }
        continue;
      }
      if (n < 2) continue;
      // a chain ending in joint(s): usable when each end joint keeps >= 2 undrawn sides after the chain
      // is used up (no new box comes on offer while it is taken)
      bool closure_ok = true;
      for (int d = 0; d < 2; ++d) {
        const int j = end_box[d];
        if (j < 0) continue;
        const int uses = 1 + (end_box[1 - d] == j);
        if (p.val[j] - uses < 2) closure_ok = false;
      }
      if (!closure_ok) continue;
      if (n == 2) {
        prune(end_edge[0]);
        prune(end_edge[1]);
      } else {
        prune(end_edge[0]);
        prune(end_edge[1]);
        for (int k = 1; k < n_inner; ++k) prune(inner[k]);
      }
    }
  }
  if (rules & kBorderEdges) {
    // rule 5: one undrawn border side per box is searched (the first not already left out)
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
  // order: safe moves (centre out), then sacrifices by boxes handed over, then captures (only reached
  // with the capture rules off)
  uint8_t sac[kMaxEdges];
  int16_t sac_key[kMaxEdges];
  int sac_n = 0;
  uint8_t caps[kMaxEdges];
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
      caps[caps_n++] = uint8_t(e);
    } else if (sacrifice) {
      sac[sac_n] = uint8_t(e);
      sac_key[sac_n++] = int16_t(given);
    } else {
      out.push(e);
    }
  }
  {
    // safe moves by the undrawn sides of the boxes they touch, fewest first (the border counts as an
    // untouched box), centre order among equals: moves where the chains are taking shape come before
    // moves in open areas (13% fewer nodes at 40 undrawn on 5x5 than centre order alone)
    int key[kMaxEdges];
    for (int i = 0; i < out.n; ++i) {
      const auto& eb = t.edge_boxes[out.m[i]];
      key[i] = p.val[eb[0]] + (eb[1] < 0 ? 4 : p.val[eb[1]]);
    }
    for (int i = 1; i < out.n; ++i) {
      const uint8_t m = out.m[i];
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
  // insertion sort of the sacrifices by boxes given (stable: centre order among equals)
  for (int i = 1; i < sac_n; ++i) {
    const uint8_t m = sac[i];
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
  for (int i = 0; i < caps_n; ++i) out.push(caps[i]);
  for (int i = 0; i < sac_n; ++i) out.push(sac[i]);
  return capturable ? NodeKind::kAllMoves : NodeKind::kQuiet;
}

// ------------------------------------------------------------------ transposition table
struct TTEntry {
  uint64_t key[kEdgeWords];  // canonical drawn-edge set
  int8_t lo, hi;             // lo <= v <= hi
  uint8_t move;              // best move in canonical orientation (kNoMove: none)
  uint8_t work;              // 1 + log2(nodes of the search that stored it); 0 = empty slot
  uint32_t pad;
};
static_assert(sizeof(TTEntry) == 32, "TTEntry is 32 bytes");

// The table index of a canonical edge set: its words mixed (multiply-xorshift).
inline uint64_t key_hash(const uint64_t* key) {
  uint64_t h = key[0] * 0x9E3779B97F4A7C15ull ^ key[1] * 0xC2B2AE3D27D4EB4Full ^ key[2] * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

// Memory for the table aligned to 64 bytes, so that a two-entry bucket is one cache line (a plain vector
// starts 16 bytes into a line, and every bucket then straddles two lines). A table of 2 MB or more is
// aligned to 2 MB and, on Linux, asks for transparent huge pages: a probe is a random access into
// hundreds of MB, and with 4 KB pages nearly every one also misses the TLB.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  static size_t alignment(size_t bytes) { return bytes >= kHuge ? kHuge : 64; }
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    void* p = ::operator new(bytes, std::align_val_t(alignment(bytes)));
#ifdef MADV_HUGEPAGE
    if (bytes >= kHuge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: its failure changes nothing
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) { ::operator delete(p, std::align_val_t(alignment(n * sizeof(T)))); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};

// Two-entry buckets indexed by the canonical hash. The table starts small and grows (x4, rehashing every
// entry from its stored key) while it is more than half full, up to `limit` entries, so a small problem
// does not pay for clearing a large table.
class TranspositionTable {
 public:
  explicit TranspositionTable(size_t limit) {
    limit_ = 2;
    while (limit_ * 2 <= std::max<size_t>(limit, 2)) limit_ <<= 1;
    allocate(std::min<size_t>(limit_, size_t(1) << 12));
  }
  void clear() {
    std::fill(table_.begin(), table_.end(), TTEntry{});
    used_ = 0;
    stale_ = false;
  }
  size_t size() const { return table_.size(); }
  size_t used() const {
    if (stale_) {  // counted again after a concurrent phase
      used_ = 0;
      for (const TTEntry& e : table_) used_ += e.work != 0;
      stale_ = false;
    }
    return used_;
  }

  // Several searching threads at once (Solver::set_threads): the table is grown first to room for 32
  // times its entries (at least 2^20, at most its limit; it cannot grow while shared) and each bucket is
  // read and written under one of kLocks spin locks.
  void set_concurrent(bool on) {
    if (on) {
      const size_t want = std::min(limit_, std::max(size_t(1) << 20, 32 * used()));
      while (table_.size() < want) grow();
      if (!locks_) locks_.reset(new std::atomic<uint8_t>[kLocks]());
      stale_ = true;
    }
    concurrent_ = on;
  }
  struct Guard {  // holds the lock of a bucket while concurrent
    Guard(const TranspositionTable& t, uint64_t hash) : lock_(t.concurrent_ ? &t.locks_[(hash >> 1) & (kLocks - 1)] : nullptr) {
      if (lock_) {
        while (lock_->exchange(1, std::memory_order_acquire)) {
          while (lock_->load(std::memory_order_relaxed)) {}
        }
      }
    }
    ~Guard() {
      if (lock_) lock_->store(0, std::memory_order_release);
    }
    std::atomic<uint8_t>* lock_;
  };

  // The entries as raw bytes (the Solver writes the header), and back: `n` entries replace the table.
  bool write(std::FILE* f) const {
    return std::fwrite(table_.data(), sizeof(TTEntry), table_.size(), f) == table_.size();
  }
  bool read(std::FILE* f, size_t n) {
    if (n < 2 || (n & (n - 1))) return false;
    Entries fresh(n);
    if (std::fread(fresh.data(), sizeof(TTEntry), n, f) != n) return false;
    table_.swap(fresh);
    mask_ = n - 2;
    limit_ = std::max(limit_, n);
    used_ = 0;
    for (const TTEntry& e : table_) used_ += e.work != 0;
    stale_ = false;
    return true;
  }

  TTEntry* probe(uint64_t hash, const uint64_t* key) {
    TTEntry* b = &table_[hash & mask_];
    for (int i = 0; i < 2; ++i) {
      if (b[i].work && b[i].key[0] == key[0] && b[i].key[1] == key[1] && b[i].key[2] == key[2]) return &b[i];
    }
    return nullptr;
  }

  // Slot for a new entry of `key` (not in the table): bucket slot 0 keeps the entry with the most work,
  // slot 1 takes the rest. The slot is returned emptied (work 0) with its key set.
  TTEntry* insert(uint64_t hash, const uint64_t* key, uint8_t work) {
    if (!concurrent_ && 2 * used_ > table_.size() && table_.size() < limit_) grow();
    TTEntry* b = &table_[hash & mask_];
    if (!concurrent_) used_ += b[1].work == 0;  // slot 1 is the one overwritten in both cases
    TTEntry* e;
    if (b[0].work <= work) {
      b[1] = b[0];
      e = &b[0];
    } else {
      e = &b[1];
    }
    *e = TTEntry{};
    e->key[0] = key[0];
    e->key[1] = key[1];
    e->key[2] = key[2];
    return e;
  }

 private:
  void allocate(size_t n) {
    table_.assign(n, TTEntry{});
    mask_ = n - 2;
    used_ = 0;
  }

  void grow() {
    Entries old;
    old.swap(table_);
    allocate(std::min(limit_, old.size() * 4));
    for (const TTEntry& e : old) {
      if (!e.work) continue;
      const uint64_t h = key_hash(e.key);
      TTEntry* b = &table_[h & mask_];
      TTEntry* slot = !b[0].work ? &b[0] : !b[1].work ? &b[1] : (b[1].work < e.work ? &b[1] : nullptr);
      if (!slot) continue;
      used_ += slot->work == 0;
      *slot = e;
    }
  }

  static constexpr size_t kLocks = size_t(1) << 14;
  using Entries = std::vector<TTEntry, CacheLineAllocator<TTEntry>>;
  Entries table_;
  size_t mask_ = 0, limit_ = 2;
  mutable size_t used_ = 0;     // filled slots (not counted while concurrent: recounted on demand)
  mutable bool stale_ = false;
  bool concurrent_ = false;
  std::unique_ptr<std::atomic<uint8_t>[]> locks_;
};

// Thrown inside a helper thread's search when another thread has finished the same search.
struct Stopped {};

// ------------------------------------------------------------------ the search
struct SearchStats {
  uint64_t nodes = 0, tt_hits = 0, tt_cuts = 0;
  RuleStats rules;
};

class Solver {
 public:
  // `tt_entries`: transposition-table entries (32 bytes each); the table grows to this size on demand.
  Solver(int rows, int cols, size_t tt_entries, uint32_t rules)
      : t_(topology(rows, cols)), rules_(rules & kAllRules), own_tt_(new TranspositionTable(tt_entries)),
        tt_(*own_tt_) {}

  // Threads per search (1: this thread only). With n > 1 every null-window search at a position of at
  // least kParallelUndrawn undrawn edges runs in n threads over the shared table (lazy SMP): helper
  // threads take the moves near the root in another order, the first thread to finish gives the result
  // (all search the same window, so any result is the same exact answer) and the others stop. Node
  // budgets count each thread's nodes separately.
  void set_threads(int n) {
    if (n < 1 || n > 64) throw std::invalid_argument("threads must be in 1..64");
    threads_ = n;
    while (int(helpers_.size()) < n - 1) {
      helpers_.emplace_back(new Solver(*this, int(helpers_.size()) + 1));
    }
  }
  int threads() const { return threads_; }

  // A wall-clock deadline for every query from now on: a query still searching at `at` stops as if its
  // node budget were spent (the clock is read every 1,024 nodes, and a query started past the deadline
  // stops at its first node). clear_deadline() lifts it; helper threads share it.
  using Clock = std::chrono::steady_clock;
  void set_deadline(Clock::time_point at) {
    timed_ = true;
    deadline_ = at;
  }
  void clear_deadline() { timed_ = false; }
  bool past_deadline() const { return timed_ && Clock::now() >= deadline_; }

  const Topology& topo() const { return t_; }
  uint32_t rules() const { return rules_; }
  SearchStats& stats() { return stats_; }
  void clear() { tt_.clear(); }

  // Exact value by MTD(f) from `guess`. On a spent budget returns false with the bounds found so far
  // (lo <= v <= hi); `node_limit` 0 = unlimited, counted from this call.
  bool value(const Pos& given, int guess, uint64_t node_limit, int& lo, int& hi) {
    const Pos p = prepared(given);
    begin(p, node_limit);
    lo = -p.remaining;
    hi = p.remaining;
    try {
      mtdf(p, guess, lo, hi);
    } catch (const BudgetExceeded&) {
      return false;
    }
    return true;
  }

  // Whether v(p) >= threshold: one null-window search. Returns 1 (yes), 0 (no), -1 (budget spent).
  int at_least(const Pos& given, int threshold, uint64_t node_limit) {
    const Pos p = prepared(given);
    begin(p, node_limit);
    if (threshold <= -p.remaining) return 1;
    if (threshold > p.remaining) return 0;
    try {
      return root_search(p, threshold - 1, threshold) >= threshold ? 1 : 0;
    } catch (const BudgetExceeded&) {
      return -1;
    }
  }

  // Exact value of every legal move (margin for the mover, boxes captured by the move included), in
  // increasing edge order. False if the budget ran out.
  bool move_values(const Pos& given, uint64_t node_limit, std::vector<std::pair<int, int>>& out) {
    const Pos p = prepared(given);
    begin(p, node_limit);
    out.clear();
    try {
      const int root = exact_value(p);
      for (int e = 0; e < t_.num_edges; ++e) {
        if (drawn(p, e)) continue;
        Pos c = p;
        const int gain = draw(t_, c, e);
        int clo = -c.remaining, chi = c.remaining;
        if (gain) {
          mtdf(c, root - gain, clo, chi);
          out.emplace_back(e, gain + clo);
        } else {
          mtdf(c, -root, clo, chi);
          out.emplace_back(e, -clo);
        }
      }
    } catch (const BudgetExceeded&) {
      return false;
    }
    return true;
  }

  // Exact value of p and the moves that keep it (margin for the mover, boxes captured by the move
  // included): the value by MTD(f), then one null-window test per move. Moves in increasing edge order;
  // false if the budget ran out.
  bool best_moves(const Pos& given, uint64_t node_limit, int& value, std::vector<int>& out) {
    const Pos p = prepared(given);
    begin(p, node_limit);
    out.clear();
    try {
      value = exact_value(p);
      for (int e = 0; e < t_.num_edges; ++e) {
        if (drawn(p, e)) continue;
        Pos c = p;
        const int gain = draw(t_, c, e);
        bool keeps;
        if (gain) {  // gain + v(c) >= value
          const int need = value - gain;
          keeps = need <= -c.remaining || (need <= c.remaining && root_search(c, need - 1, need) >= need);
        } else {     // -v(c) >= value, i.e. not v(c) >= 1 - value
          const int over = 1 - value;
          keeps = over > c.remaining || (over > -c.remaining && root_search(c, over - 1, over) < over);
        }
        if (keeps) out.push_back(e);
      }
    } catch (const BudgetExceeded&) {
      out.clear();
      return false;
    }
    return true;
  }

  // The transposition table to a file and back, so that a long solve can stop and continue. The file
  // holds a header (format, board, rules, entry size and count) and the raw entries; a file of another
  // board or rule set is refused (std::invalid_argument), a short or unreadable one too (the table is
  // then left as it was).
  // A failed save throws std::system_error with the system's errno (ENOSPC for a full disk).
  void save_table(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw std::system_error(errno, std::generic_category(), "cannot write the solver table to " + path);
    const uint64_t head[6] = {kTableMagic, uint64_t(t_.g->rows), uint64_t(t_.g->cols), rules_, sizeof(TTEntry),
                              tt_.size()};
    const bool ok = std::fwrite(head, sizeof(head), 1, f) == 1 && tt_.write(f) && std::fflush(f) == 0;
    const int err = ok ? 0 : errno;
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed)
      throw std::system_error(ok ? errno : err, std::generic_category(), "writing the solver table to " + path + " failed");
  }
  void load_table(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw std::invalid_argument("cannot read a solver table from " + path);
    uint64_t head[6];
    std::string why;
    if (std::fread(head, sizeof(head), 1, f) != 1 || head[0] != kTableMagic) {
      why = "not a solver table file (or an older format)";
    } else if (head[1] != uint64_t(t_.g->rows) || head[2] != uint64_t(t_.g->cols)) {
      why = "a table of the " + std::to_string(head[1]) + "x" + std::to_string(head[2]) + " board";
    } else if (head[3] != rules_) {
      why = "a table made with rules " + std::to_string(head[3]) + ", this solver uses " + std::to_string(rules_);
    } else if (head[4] != sizeof(TTEntry)) {
      why = "entries of another size";
    } else if (!tt_.read(f, head[5])) {
      why = "the file is truncated or damaged";
    }
    std::fclose(f);
    if (!why.empty()) throw std::invalid_argument("cannot load the solver table " + path + ": " + why);
  }
  size_t table_entries() const { return tt_.size(); }
  size_t table_used() const { return tt_.used(); }

  // The safe-phase search (dnb_env.features): for each safe or capturing move, the mover's margin if it
  // is played and both players then draw only safe moves (no box gets its third side) and captures while
  // any safe move is left, and play exactly (this solver, within `leaf_node_limit` nodes) once none is.
  // Values in increasing edge order; false when it needs more than `position_limit` positions or an end
  // position is beyond the leaf budget. Empty when the position has no safe move.
  bool safe_phase_values(const Pos& given, uint64_t position_limit, uint64_t leaf_node_limit,
                         std::vector<std::pair<int, int>>& out) {
    const Pos p = prepared(given);
    out.clear();
    SafePhase sp{*this, {}, position_limit, leaf_node_limit};
    if (!has_safe_move(p)) return true;
    try {
      for (int e = 0; e < t_.num_edges; ++e) {
        if (drawn(p, e) || phase_class(p, e) == kPhaseConceding) continue;
        out.emplace_back(e, sp.after(p, e));
      }
    } catch (const BudgetExceeded&) {
      out.clear();
      return false;
    }
    return true;
  }

  // The safe-phase search with sacrifices (dnb_env.features): as safe_phase_values, but while safe moves
  // are left the players may also make up to `sacrifices` sacrifices between them, each a move that gives
  // a box its third side and hands over at most kSacrificeBoxes boxes (the boxes the opponent can then
  // take in a row). For each safe, capturing or such sacrificing move (a sacrifice at the root uses one
  // of the budget), the mover's exact margin under those rules. An alpha-beta search with a table of
  // bounds; with `sacrifices` 0 it gives the values of safe_phase_values. False when it needs more than
  // `position_limit` positions or an end position is beyond the leaf budget; empty without a safe move.
  static constexpr int kSacrificeBoxes = 2;
  // With a window (alpha, beta) narrower than the default, each move's value is searched in that window
  // only (fail-soft): exact inside it, else a bound on the side it fails (at most alpha, or at least beta),
  // which is what a win/draw/loss question needs, and cheaper.
  bool sacrifice_phase_values(const Pos& given, int sacrifices, uint64_t position_limit, uint64_t leaf_node_limit,
                              std::vector<std::pair<int, int>>& out, int alpha = -kInf, int beta = kInf) {
    if (alpha >= beta) throw std::invalid_argument("the window must have alpha < beta");
    if (sacrifices < 0) throw std::invalid_argument("sacrifices must be >= 0");
    const Pos p = prepared(given);
    out.clear();
    SacrificePhase sp{*this, {}, position_limit, leaf_node_limit};
    if (!has_safe_move(p)) return true;
    try {
      for (int e = 0; e < t_.num_edges; ++e) {
        if (drawn(p, e)) continue;
        int left = sacrifices;
        if (phase_class(p, e) == kPhaseConceding) {
          if (left == 0 || sp.handout(p, e) > kSacrificeBoxes) continue;
          --left;
        }
        if (alpha > -kInf || beta < kInf) {  // a window asked for: one fail-soft search of it
          out.emplace_back(e, sp.after(p, e, left, alpha, beta));
          continue;
        }
        // the exact value by null-window tests (MTD(f)), each first guess the last move's value: the
        // table's bounds carry over from test to test and from move to move
        int lo = -p.remaining, hi = p.remaining;
        int g = out.empty() ? 0 : std::max(lo, std::min(hi, out.back().second));
        while (lo < hi) {
          const int b = g == lo ? g + 1 : g;
          g = sp.after(p, e, left, b - 1, b);
          if (g < b) hi = g;
          else lo = g;
        }
        out.emplace_back(e, lo);
      }
    } catch (const BudgetExceeded&) {
      out.clear();
      return false;
    }
    return true;
  }

 private:
  // Kinds of a move for the safe-phase searches: safe (no box gets its third side), scoring (completes a
  // box), conceding (gives a box its third side and completes none).
  enum { kPhaseSafe, kPhaseScoring, kPhaseConceding };
  int phase_class(const Pos& p, int e) const {
    int cls = kPhaseSafe;
    for (int b : t_.edge_boxes[e]) {
      if (b < 0) break;
      if (p.val[b] == 1) return kPhaseScoring;
      if (p.val[b] == 2) cls = kPhaseConceding;
    }
    return cls;
  }
  bool has_safe_move(const Pos& p) const {
    for (int e = 0; e < t_.num_edges; ++e) {
      if (!drawn(p, e) && phase_class(p, e) == kPhaseSafe) return true;
    }
    return false;
  }

  struct EdgeKey {
    uint64_t w[kEdgeWords];
    bool operator==(const EdgeKey& o) const {
      for (int i = 0; i < kEdgeWords; ++i) if (w[i] != o.w[i]) return false;
      return true;
    }
  };
  struct EdgeKeyHash {
    size_t operator()(const EdgeKey& k) const {
      uint64_t h = 0x9E3779B97F4A7C15ull;
      for (int i = 0; i < kEdgeWords; ++i) h = (h ^ k.w[i]) * 0xBF58476D1CE4E5B9ull;
      return size_t(h ^ (h >> 31));
    }
  };
  struct SafePhase {
    Solver& solver;
    std::unordered_map<EdgeKey, int, EdgeKeyHash> table;
    uint64_t positions_left;
    uint64_t leaf_node_limit;

    // margin for the mover of p if it draws e, then the safe phase
    int after(const Pos& p, int e) {
      Pos c = p;
      const int gain = draw(solver.t_, c, e);
      return gain ? gain + value(c) : -value(c);
    }
    int value(const Pos& p) {
      EdgeKey key;
      for (int i = 0; i < kEdgeWords; ++i) key.w[i] = p.edges[i];
      auto hit = table.find(key);
      if (hit != table.end()) return hit->second;
      if (positions_left == 0) throw BudgetExceeded{};
      --positions_left;
      int v;
      if (p.undrawn == 0) {
        v = 0;
      } else if (!solver.has_safe_move(p)) {
        int lo, hi;
        if (!solver.value(p, 0, leaf_node_limit, lo, hi)) throw BudgetExceeded{};
        v = lo;
      } else {
        v = std::numeric_limits<int>::min();
        for (int e = 0; e < solver.t_.num_edges; ++e) {
          if (drawn(p, e) || solver.phase_class(p, e) == kPhaseConceding) continue;
          v = std::max(v, after(p, e));
        }
      }
      table.emplace(key, v);
      return v;
    }
  };

  // The search of sacrifice_phase_values: fail-soft alpha-beta over safe moves, captures and short
  // sacrifices (while the budget `left` lasts), with a table of bounds keyed by the drawn edges and the
  // sacrifices left. Exact values at the end of the safe phase come from the solver.
  struct SacrificePhase {
    struct Key {
      EdgeKey edges;
      int left;
      bool operator==(const Key& o) const { return left == o.left && edges == o.edges; }
    };
    struct KeyHash {
      size_t operator()(const Key& k) const { return EdgeKeyHash()(k.edges) ^ size_t(k.left) * 0x9E3779B97F4A7C15ull; }
    };
    struct Bounds {
      int lo, hi;
      int best;  // the move that gave the last search of this position its value or cut (-1: none)
    };
    Solver& solver;
    std::unordered_map<Key, Bounds, KeyHash> table;
    uint64_t positions_left;
    uint64_t leaf_node_limit;

    // boxes the opponent can take in a row after the sacrifice e (counted up to kSacrificeBoxes + 1)
    int handout(const Pos& p, int e) const {
      const Topology& t = solver.t_;
      Pos c = p;
      draw(t, c, e);
      int n = 0;
      for (int b : t.edge_boxes[e]) {
        if (b < 0) break;
        if (c.val[b] != 1) continue;
        int cur = b, from = e;
        while (true) {
          if (++n > kSacrificeBoxes) return n;
          const int side = other_undrawn_side(t, c, cur, from);
          const int next = side < 0 ? -1 : t.across(cur, side);
          if (next < 0 || next == b || c.val[next] != 2) break;
          from = side;
          cur = next;
        }
      }
      return n;
    }
    // the mover's margin if it draws e (with `left` sacrifices left after it), then the phase
    int after(const Pos& p, int e, int left, int alpha, int beta) {
      Pos c = p;
      const int gain = draw(solver.t_, c, e);
      return gain ? gain + value(c, left, alpha - gain, beta - gain) : -value(c, left, -beta, -alpha);
    }
    int value(const Pos& p, int left, int alpha, int beta) {
      if (p.undrawn == 0) return 0;
      Key key;
      for (int i = 0; i < kEdgeWords; ++i) key.edges.w[i] = p.edges[i];
      key.left = left;
      auto hit = table.find(key);
      Bounds b = hit != table.end() ? hit->second : Bounds{-p.remaining, p.remaining, -1};
      if (b.lo == b.hi || b.lo >= beta) return b.lo;
      if (b.hi <= alpha) return b.hi;
      alpha = std::max(alpha, b.lo);
      beta = std::min(beta, b.hi);
      if (positions_left == 0) throw BudgetExceeded{};
      --positions_left;
      int v;
      if (!solver.has_safe_move(p)) {
        int lo, hi;
        if (!solver.value(p, 0, leaf_node_limit, lo, hi)) throw BudgetExceeded{};
        table[key] = Bounds{lo, lo, -1};
        return lo;
      }
      // the move that decided this position's last search first, then captures, safe moves and sacrifices
      // (each move classified once)
      uint8_t order[3][kMaxEdges];
      int count[3] = {0, 0, 0};
      int first_pass = -1;  // the pass of b.best, when it is a move of this node
      for (int e = 0; e < solver.t_.num_edges; ++e) {
        if (drawn(p, e)) continue;
        const int cls = solver.phase_class(p, e);
        const int pass = cls == kPhaseScoring ? 0 : cls == kPhaseSafe ? 1 : 2;
        if (pass == 2 && left == 0) continue;
        if (e == b.best) first_pass = pass;
        else order[pass][count[pass]++] = uint8_t(e);
      }
      v = -kInf;
      int best = -1;
      auto consider = [&](int pass, int e) {
        if (pass == 2 && handout(p, e) > kSacrificeBoxes) return;  // only when sacrifices are reached
        const int w = after(p, e, pass == 2 ? left - 1 : left, std::max(alpha, v), beta);
        if (w > v) {
          v = w;
          best = e;
        }
      };
      if (first_pass >= 0) consider(first_pass, b.best);
      for (int pass = 0; pass < 3 && v < beta; ++pass) {
        for (int i = 0; i < count[pass] && v < beta; ++i) consider(pass, order[pass][i]);
      }
      b.best = best;
      if (v <= alpha) b.hi = v;
      else if (v >= beta) b.lo = v;
      else b.lo = b.hi = v;
      table[key] = b;
      return v;
    }
  };

  // The position with the table keys this solver uses (rule 5 on or off).
  Pos prepared(const Pos& p) const {
    const bool border = (rules_ & kBorderEdges) && !t_.border_groups.empty();
    return p.border == border ? p : make_pos(t_, p.edges, border);
  }

  void begin(const Pos& p, uint64_t node_limit) {
    (void)p;
    limit_ = node_limit ? stats_.nodes + node_limit : std::numeric_limits<uint64_t>::max();
    if (past_deadline()) limit_ = stats_.nodes;  // the first node of the query stops it
  }

  // The exact value of p by MTD(f) from 0 (BudgetExceeded past the budget).
  int exact_value(const Pos& p) {
    int lo = -p.remaining, hi = p.remaining;
    mtdf(p, 0, lo, hi);
    return lo;
  }

  void mtdf(const Pos& p, int guess, int& lo, int& hi) {
    int g = std::max(lo, std::min(hi, guess));
    while (lo < hi) {
      const int beta = g == lo ? g + 1 : g;
      g = root_search(p, beta - 1, beta);
      if (g < beta) hi = g;
      else lo = g;
    }
  }

  // A helper thread's solver: the same board, rules and table, its own counters.
  Solver(const Solver& main, int id)
      : t_(main.t_), rules_(main.rules_), tt_(main.tt_), id_(id) {}

  // search() of the root window, in threads_ threads when set_threads asked for them.
  int root_search(const Pos& p, int alpha, int beta) {
    if (threads_ <= 1 || p.undrawn < kParallelUndrawn) {
      Pos q = p;
      return search(q, alpha, beta);
    }
    {  // a short try in this thread first: most small searches end there, without the threads' cost
      const uint64_t limit = limit_;
      limit_ = std::min(limit, stats_.nodes + kSerialNodes);
      try {
        Pos q = p;
        const int v = search(q, alpha, beta);
        limit_ = limit;
        return v;
      } catch (const BudgetExceeded&) {
        limit_ = limit;
        if (stats_.nodes >= limit || past_deadline()) throw;
      }
    }
    tt_.set_concurrent(true);
    std::atomic<bool> stop{false};
    std::atomic<int> winner{-1};
    std::vector<int> result(threads_, 0);
    std::vector<std::exception_ptr> failed(threads_);
    auto run = [&](Solver& s, int k) {
      try {
        s.stop_ = &stop;
        s.root_undrawn_ = p.undrawn;
        Pos q = p;
        const int v = s.search(q, alpha, beta);
        result[k] = v;
        int none = -1;
        if (winner.compare_exchange_strong(none, k)) stop = true;
      } catch (const Stopped&) {
      } catch (const BudgetExceeded&) {  // a helper out of nodes leaves the others searching
        failed[k] = std::current_exception();
        if (k == 0) stop = true;
      } catch (...) {
        failed[k] = std::current_exception();
        stop = true;
      }
      s.stop_ = nullptr;
    };
    std::vector<std::thread> pool;
    for (int k = 1; k < threads_; ++k) {
      Solver& h = *helpers_[k - 1];
      h.limit_ = limit_ == std::numeric_limits<uint64_t>::max() ? limit_ : h.stats_.nodes + (limit_ - stats_.nodes);
      h.timed_ = timed_;
      h.deadline_ = deadline_;
      pool.emplace_back(run, std::ref(h), k);
    }
    run(*this, 0);
    for (auto& th : pool) th.join();
    tt_.set_concurrent(false);
    for (int k = 1; k < threads_; ++k) {  // the helpers' counters join this solver's
      SearchStats& h = helpers_[k - 1]->stats_;
      stats_.nodes += h.nodes;
      stats_.tt_hits += h.tt_hits;
      stats_.tt_cuts += h.tt_cuts;
      stats_.rules.free_captures += h.rules.free_captures;
      stats_.rules.run_captures += h.rules.run_captures;
      stats_.rules.double_deal_choices += h.rules.double_deal_choices;
      stats_.rules.equivalent_pruned += h.rules.equivalent_pruned;
      stats_.rules.simple_endgames += h.rules.simple_endgames;
      stats_.rules.border_pruned += h.rules.border_pruned;
      stats_.rules.choice_cuts += h.rules.choice_cuts;
      h = SearchStats{};
    }
    if (winner >= 0) return result[winner];
    for (auto& f : failed) {
      if (f) std::rethrow_exception(f);  // BudgetExceeded (every thread ran out) or a real error
    }
    throw std::logic_error("solver: a parallel search ended without a result");
  }

  // Canonical orientation of p: the symmetry whose image of the edge set is the smallest (compared as a
  // number, highest word first), and that image.
  // With rule 5 the keys count the drawn border sides of a box rather than name them, so positions that
  // differ only in which border side of a box is drawn share the key.
  int canonical(const Pos& p, uint64_t* key) const {
    static_assert(kEdgeWords == 3, "canonical() compares three words");
    const uint64_t* best = p.img[0];
    int s_best = 0;
    for (int s = 1; s < t_.num_sym; ++s) {
      const uint64_t* k = p.img[s];
      if (k[2] < best[2] || (k[2] == best[2] && (k[1] < best[1] || (k[1] == best[1] && k[0] < best[0])))) {
        best = k;
        s_best = s;
      }
    }
    key[0] = best[0];
    key[1] = best[1];
    key[2] = best[2];
    return s_best;
  }

  // Fail-soft negamax on the null or open window (alpha, beta); value for the player to move. `p` is the
  // caller's scratch copy (a child drawn from its parent, or a copy of the root): forced captures are
  // drawn on it in place, which saves copying the position (some 400 bytes) once more per node.
  int search(Pos& p, int alpha, int beta) {
    if (++stats_.nodes > limit_) throw BudgetExceeded{};
    if (timed_ && (stats_.nodes & 1023) == 0 && Clock::now() >= deadline_) throw BudgetExceeded{};
    if (stop_ && stop_->load(std::memory_order_relaxed)) throw Stopped{};
    int gained = 0;
    Moves moves;
    NodeKind kind;
    while (true) {  // forced captures need no table entry of their own
      kind = generate(t_, p, rules_, moves, scratch_, stats_.rules, false);
      if (kind != NodeKind::kForcedCapture) break;
      gained += draw(t_, p, moves.m[0]);
    }
    if (kind == NodeKind::kTerminal) return gained;
    alpha -= gained;
    beta -= gained;
    const int r = p.remaining;
    if (r <= alpha) return gained + r;
    if (-r >= beta) return gained - r;
    if (kind == NodeKind::kSimpleEndgame) return gained + simple_endgame_value(t_, p);
    // Every value of p has the parity of its r unclaimed boxes (v = 2 * mine - r): bounds are rounded to it.
    const int floor0 = r & 1;  // the least value >= 0 of that parity
    if (kind == NodeKind::kCaptureChoice && beta <= floor0) {
      // One run of 2 boxes (or an opened loop of 4) on offer: taking it all (+2, then the mover moves on) and
      // the double-deal (the opponent takes the 2 and moves on) reach the same edge set with the turn on
      // opposite sides, so the node is worth at least max(2 + x, -2 - x) = |2 + x| >= 0 (|4 + x| for the
      // loop), x being the value of that edge set for whoever moves there; >= 1 when r is odd. A window at
      // or below that fails high at once, with no search of the run's rest (1.7x fewer nodes at 40
      // undrawn edges on 5x5).
      ++stats_.rules.choice_cuts;
      return gained + floor0;
    }

    uint64_t key[kEdgeWords] = {0, 0, 0};
    const bool use_tt = p.undrawn >= kTableMinUndrawn;
    const int sym = use_tt ? canonical(p, key) : 0;
    const uint64_t hash = use_tt ? key_hash(key) : 0;
    int tt_move = -1;
    bool hit = false;
    int8_t hit_lo = 0, hit_hi = 0;
    uint8_t hit_move = kNoMove;
    if (use_tt) {
      TranspositionTable::Guard guard(tt_, hash);
      if (const TTEntry* e = tt_.probe(hash, key)) {
        hit = true;
        hit_lo = e->lo;
        hit_hi = e->hi;
        hit_move = e->move;
      }
    }
    if (hit) {
      ++stats_.tt_hits;
      if (hit_lo >= beta || hit_hi <= alpha || hit_lo == hit_hi) {
        ++stats_.tt_cuts;
        return gained + (hit_lo >= beta ? hit_lo : hit_hi);
      }
      if (hit_move != kNoMove) tt_move = t_.inv[sym][hit_move];
      if (tt_move >= 0 && drawn(p, tt_move) && t_.border_group_of[tt_move] >= 0) {
        // stored by a position with another border side of this box drawn (rule 5): its undrawn twin
        const auto& grp = t_.border_groups[t_.border_group_of[tt_move]];
        tt_move = -1;
        for (int k = 0; k < grp.n && tt_move < 0; ++k) {
          if (!drawn(p, grp.side[k])) tt_move = grp.side[k];
        }
      }
    }
    if (kind == NodeKind::kDeferred) generate(t_, p, rules_, moves, scratch_, stats_.rules, true);
    if (tt_move >= 0) {  // table move first (or, rule 5, the border side searched in its place)
      const int grp = t_.border_group_of[tt_move];
      for (int i = 0; i < moves.n; ++i) {
        if (moves.m[i] == tt_move || (grp >= 0 && t_.border_group_of[moves.m[i]] == grp)) {
          std::rotate(moves.m, moves.m + i, moves.m + i + 1);
          break;
        }
      }
    }
    if (moves.n == 0) throw std::logic_error("solver: no move generated at a live position");
    if (id_ > 0 && p.undrawn + 2 >= root_undrawn_ && moves.n > 2) {
      // a helper thread: near the root, the moves after the first in another order than the main thread
      const int first = tt_move >= 0 ? 1 : 0;
      std::rotate(moves.m + first, moves.m + first + (id_ % (moves.n - first)), moves.m + moves.n);
    }
    const uint64_t nodes_before = stats_.nodes;
    int best = -kInf, best_move = -1;
    int a = alpha;
    for (int i = 0; i < moves.n; ++i) {
      const int m = moves.m[i];
      Pos c = p;
      const int g = draw(t_, c, m);
      const int v = g ? g + search(c, a - g, beta - g) : -search(c, -beta, -a);
      if (v > best) {
        best = v;
        best_move = m;
        if (v > a) {
          a = v;
          if (a >= beta) break;
        }
      }
    }
    if ((best - r) & 1) best += best >= beta ? 1 : -1;  // a bound of the wrong parity, tightened by one
    if (!use_tt) return gained + best;
    // store the bound
    const uint64_t work_nodes = stats_.nodes - nodes_before + 1;
    uint8_t work = 1;
    while (work < 64 && (uint64_t(1) << work) <= work_nodes) ++work;
    TranspositionTable::Guard guard(tt_, hash);
    TTEntry* e = tt_.probe(hash, key);
    if (!e) {
      e = tt_.insert(hash, key, work);
      e->lo = int8_t(-r);
      e->hi = int8_t(r);
      e->move = kNoMove;
    }
    if (best <= alpha) e->hi = int8_t(std::min<int>(e->hi, best));
    else if (best >= beta) e->lo = int8_t(std::max<int>(e->lo, best));
    else e->lo = e->hi = int8_t(best);
    e->work = std::max(e->work, work);
    if (best > alpha && best_move >= 0) e->move = t_.perm[sym][best_move];
    return gained + best;
  }

  const Topology& t_;
  uint32_t rules_;
  uint64_t limit_ = 0;
  bool timed_ = false;                          // set_deadline: stop at deadline_ as well
  Clock::time_point deadline_{};
  std::unique_ptr<TranspositionTable> own_tt_;  // null in a helper thread's solver
  TranspositionTable& tt_;
  Scratch scratch_;
  SearchStats stats_;
  int id_ = 0;                                  // 0: the main solver; k: helper thread k
  int threads_ = 1;
  int root_undrawn_ = 0;
  const std::atomic<bool>* stop_ = nullptr;
  std::vector<std::unique_ptr<Solver>> helpers_;
};

// ------------------------------------------------------------------ exhaustive check of the rules
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
    const uint64_t edges[kEdgeWords] = {mask, 0, 0};
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
