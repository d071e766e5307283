// Exact solver (solver.hpp), the board and its positions: the board tables of the search (neighbours,
// symmetries, centre-out order, border groups), the search position with its incremental table keys and
// box valences, and the chains and loops of a simple endgame (rule 4).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "engine.hpp"

namespace dnb {
namespace exact {

constexpr int kMaxSymmetries = 8;

// Board tables of the search: neighbours across each side, symmetries as edge permutations and the static
// centre-out move order. Built once per board size by topology().
struct Topology {
  const Geometry* g = nullptr;
  int num_edges = 0, num_boxes = 0, num_sym = 0;
  std::vector<std::array<int16_t, 2>> edge_boxes;          // [A] boxes beside each edge, -1 pads
  std::vector<std::array<int16_t, 4>> box_sides;           // [B] the four sides
  std::vector<std::array<uint8_t, 2>> side_bit;            // [A] e's bit in the side mask of each box beside it
  std::vector<std::array<EdgeIndex, kMaxEdges>> perm, inv; // [S][A] edge images under each symmetry
  std::vector<EdgeIndex> centre_order;                      // all edges, centre first
  // rule 5: boxes with two or more border sides, and their border sides in centre order
  struct BorderGroup {
    int n = 0;
    EdgeIndex side[4];
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
        perm[s][a] = EdgeIndex(b);
        inv[s][b] = EdgeIndex(a);
      }
    }
    centre_order.resize(num_edges);
    for (int a = 0; a < num_edges; ++a) centre_order[a] = EdgeIndex(a);
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
        if (side && edge_boxes[e][1] < 0) grp.side[grp.n++] = EdgeIndex(e);
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
  uint64_t seen[kBoxWords] = {};
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

}  // namespace exact
}  // namespace dnb
