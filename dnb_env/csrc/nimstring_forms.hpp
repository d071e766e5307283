// Canonical forms of Nimstring parts (used by nimstring.hpp): one key for every part that is the same game,
// wherever it lies on the board and whatever its shape.
//
// A part is a strings-and-coins graph: its boxes are coins, its undrawn edges strings between two coins or
// a coin and the ground. The form keeps the coins with other than two strings (joints) and the ground as
// nodes, and replaces each run of two-string coins between two nodes by one edge labelled with the run's
// length, where every length of three or more is the same label: drawing any string of a run of three or
// more coins lets the other player take coins up to one end and decline the last two (a loony move, which
// never counts in a Nimstring value), and runs that join stay three or more long. A part with no node but
// the ground is a closed loop, where every move is loony too. A long run therefore joins nothing: it only holds
// a string at each of its ends that no counting move draws, so it becomes a long run to the ground from each
// end; a joint at two or more such ends is never taken and becomes the ground itself, and long runs from the
// ground to the ground (value 0) are dropped. Two parts with the same form therefore have
// the same Grundy value and the same value beside any nim heap; tests/test_nimstring.py checks the values
// found with the forms against the search without them on every position of the small boards.
//
// The form of the labelled multigraph is made canonical by colour refinement with individualisation (the
// smallest edge list over the labellings the refinement leaves open), and hashed to 128 bits. Graphs with
// more symmetry than `leaf_limit` labellings get no form (the caller keys them by their edges).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace dnb::nim {

struct FormKey {
  uint64_t hi = 0, lo = 0;
  bool ok = false;
};

// A part that is a sum of smaller games (PartForms::split): each piece's undrawn edges. A piece may hold one
// string of a coin that lies outside it, at the far end of a long run: that coin is the ground in the piece
// (it keeps the string, as no move of the run counts), and every search of parts treats a coin with one
// undrawn side that the move being searched did not leave so as the ground (Nimstring::take).
constexpr int kMaxPieces = 16;
struct Pieces {
  std::array<uint64_t, kMaxPieces> edges{};
  int n = 0;
};

class PartForms {
 public:
  PartForms(const std::vector<uint64_t>& box_mask, const std::vector<std::array<int16_t, 2>>& edge_boxes,
            int leaf_limit = 32)
      : box_mask_(box_mask), edge_boxes_(edge_boxes), leaf_limit_(leaf_limit) {
    for (size_t e = 0; e < edge_boxes_.size(); ++e)
      if (edge_boxes_[e][0] < 0 || edge_boxes_[e][1] < 0) ground_edges_ |= uint64_t(1) << e;
  }

  // The form of the part with undrawn edges `part` (connected through coins; a coin with one string in it is
  // the ground, see `Pieces`). When the part is a sum of smaller games (below), no form: `pieces` gets them.
  FormKey key(uint64_t part, Pieces& pieces) const {
    pieces.n = 0;
    if (box_mask_.size() > kMaxCoins) return {};  // a graph of more coins is keyed by its edges only
    Graph g;
    if (!build(part, g)) return {};
    const LongEnds ends = long_ends(g);
    if (split(g, ends, pieces)) return {};
    ground(g, ends);
    if (g.m == 0) return closed_loop();
    std::array<uint8_t, kMaxNodes> colour{};
    colour[0] = 0;  // the ground
    for (int v = 1; v < g.n; ++v) colour[v] = 1;
    refine(g, colour);
    Best best;
    search(g, colour, best);
    if (best.leaves > leaf_limit_ || !best.found) return {};
    return hash(best.code);
  }

 private:
  static constexpr int kMaxNodes = 40;
  static constexpr size_t kMaxCoins = 64;  // build()'s arrays, one entry a coin
  static constexpr int kLong = 3;  // every run of three or more coins has this label

  struct Graph {
    int n = 1;  // node 0 is the ground
    int m = 0;  // runs
    std::array<std::array<uint8_t, 3>, 64> edges;  // (node, node, label); the first m are set
    std::array<uint64_t, 64> masks;                // each run's strings (edges of the board)
    const std::array<uint8_t, 3>* begin() const { return edges.data(); }
    const std::array<uint8_t, 3>* end() const { return edges.data() + m; }
  };
  struct Code {  // the node count, then the edges (node, node, label) under a labelling, sorted
    std::array<uint16_t, 65> w{};
    int n = 0;
    bool less(const Code& o) const {
      return std::lexicographical_compare(w.begin(), w.begin() + 1 + n, o.w.begin(), o.w.begin() + 1 + o.n);
    }
  };
  struct Best {
    Code code;
    int leaves = 0;
    bool found = false;
  };

  std::vector<uint64_t> box_mask_;
  std::vector<std::array<int16_t, 2>> edge_boxes_;
  int leaf_limit_;
  uint64_t ground_edges_ = 0;

  static FormKey closed_loop() { return {0x6c6f6f70ull, 0x636c6f736564ull, true}; }

  int other(int e, int from) const { return edge_boxes_[e][0] == from ? edge_boxes_[e][1] : edge_boxes_[e][0]; }

  // Nodes (the ground and the joints) and the runs between them; false when there are too many nodes.
  bool build(uint64_t part, Graph& g) const {
    std::array<int8_t, kMaxCoins> node{};
    std::array<uint8_t, kMaxCoins> strings{};
    std::array<int, kMaxCoins> joints{};
    int num_joints = 0;
    for (size_t b = 0; b < box_mask_.size(); ++b) {
      strings[b] = uint8_t(__builtin_popcountll(part & box_mask_[b]));
      node[b] = -1;
      if (strings[b] >= 3) {
        if (g.n >= kMaxNodes) return false;
        node[b] = int8_t(g.n++);
        joints[num_joints++] = int(b);
      }
    }
    uint64_t used = 0;
    auto walk = [&](int from, int e) {
      uint64_t run = uint64_t(1) << e;
      int at = from, len = 0;
      for (int x = other(e, at); x >= 0 && strings[x] == 2; x = other(e, at)) {
        ++len;
        e = __builtin_ctzll(part & box_mask_[x] & ~(uint64_t(1) << e));
        run |= uint64_t(1) << e;
        at = x;
      }
      used |= run;
      const int to = other(e, at);
      const int a = from < 0 ? 0 : node[from], b = to < 0 || node[to] < 0 ? 0 : node[to];
      g.masks[g.m] = run;
      g.edges[g.m++] = {uint8_t(std::min(a, b)), uint8_t(std::max(a, b)), uint8_t(std::min(len, kLong))};
    };
    for (uint64_t r = part & ground_edges_; r; r &= r - 1)
      if (!(used >> __builtin_ctzll(r) & 1)) walk(-1, __builtin_ctzll(r));
    for (int j = 0; j < num_joints; ++j)
      for (uint64_t r = part & box_mask_[joints[j]]; r; r &= r - 1)
        if (!(used >> __builtin_ctzll(r) & 1)) walk(joints[j], __builtin_ctzll(r));
    return true;
  }

  // The ends of long runs at each node (a run from a node back to itself counts twice), for `split` and `ground`.
  struct LongEnds {
    std::array<uint8_t, kMaxNodes> at;
    bool any = false;     // a long run
    bool joined = false;  // a long run with an end that is not the ground
  };
  static LongEnds long_ends(const Graph& g) {
    LongEnds ends;
    std::fill(ends.at.begin(), ends.at.begin() + g.n, 0);
    for (const auto& e : g)
      if (e[2] == kLong) ++ends.at[e[0]], ++ends.at[e[1]], ends.any = true, ends.joined |= e[1] != 0;
    return ends;
  }

  // Whether the graph is a sum of two or more games, each then a piece of `pieces`. With the rule of `ground`
  // (long runs join nothing, joints at two long ends are the ground), the graph's joints fall into groups that
  // no other run joins; each group, with its runs (a long run with both of its ends' groups, a run between two
  // grounds on its own), is a game of its own. A piece also takes every long run of each grounded joint it
  // reaches, so that the joint stays grounded in it; the far end of a long run that lies outside the piece
  // keeps one string there, and a coin with one string is the ground.
  static bool split(const Graph& g, const LongEnds& ends, Pieces& pieces) {
    if (!ends.any) return false;
    std::array<uint8_t, kMaxNodes> up;
    std::array<uint64_t, kMaxNodes> long_runs;  // of each grounded joint
    for (int v = 0; v < g.n; ++v) up[v] = uint8_t(v), long_runs[v] = 0;
    auto find = [&](int v) {
      while (up[v] != v) v = up[v] = up[up[v]];
      return v;
    };
    auto joint = [&](int v) { return v != 0 && ends.at[v] < 2; };  // a node of a group: not the ground, not grounded
    for (int i = 0; i < g.m; ++i) {
      const auto& e = g.edges[i];
      if (e[2] == kLong) {
        for (int v : {e[0], e[1]})
          if (v != 0 && !joint(v)) long_runs[v] |= g.masks[i];
      } else if (joint(e[0]) && joint(e[1])) {
        up[find(e[0])] = uint8_t(find(e[1]));
      }
    }
    std::array<int8_t, kMaxNodes> piece_of;
    piece_of.fill(-1);
    std::array<uint64_t, kMaxPieces> grounded_reached{};  // as a mask of nodes
    int n = 0;
    auto add = [&](int piece, int i) {
      pieces.edges[piece] |= g.masks[i];
      for (int v : {g.edges[i][0], g.edges[i][1]})
        if (v != 0 && !joint(v)) grounded_reached[piece] |= uint64_t(1) << v;
    };
    auto group = [&](int v) {
      const int r = find(v);
      if (piece_of[r] < 0) {
        if (n == kMaxPieces) return -1;
        piece_of[r] = int8_t(n);
        pieces.edges[n++] = 0;
      }
      return int(piece_of[r]);
    };
    for (int i = 0; i < g.m; ++i) {
      const auto& e = g.edges[i];
      bool placed = false;
      for (int v : {e[0], e[1]}) {
        if (!joint(v)) continue;
        const int k = group(v);
        if (k < 0) return false;
        add(k, i);
        placed = true;
        if (e[2] != kLong) break;  // a short run joins one group (its ends' groups are one)
      }
      if (!placed && e[2] != kLong) {  // a short run between two grounds: a game of its own
        if (n == kMaxPieces) return false;
        pieces.edges[n] = 0;
        add(n++, i);
      }
    }
    if (n < 2) return false;
    for (int k = 0; k < n; ++k)
      for (uint64_t r = grounded_reached[k]; r; r &= r - 1) pieces.edges[k] |= long_runs[__builtin_ctzll(r)];
    pieces.n = n;
    return true;
  }

  // A long run joins nothing: each of its moves is loony, so it only keeps a string at each end that no move that
  // counts can draw. It becomes a long run to the ground at each end. A joint at two or more such ends is the
  // ground: it is never taken, and once its other strings are gone its runs join into one long run, as at the
  // ground. Such joints merge into the ground, and long runs from the ground to the ground (value 0, every move
  // loony) are dropped.
  static void ground(Graph& g, const LongEnds& ends) {
    if (!ends.joined) return;
    std::array<uint8_t, kMaxNodes> to{};
    int n = 1;
    for (int v = 1; v < g.n; ++v) to[v] = uint8_t(ends.at[v] >= 2 ? 0 : n++);
    std::array<std::array<uint8_t, 3>, 64> kept;
    int m = 0;
    for (int i = 0; i < g.m; ++i) {
      const int a = to[g.edges[i][0]], b = to[g.edges[i][1]], label = g.edges[i][2];
      if (label != kLong) {
        kept[m++] = {uint8_t(std::min(a, b)), uint8_t(std::max(a, b)), uint8_t(label)};
        continue;
      }
      for (int end : {a, b})  // a long run: to the ground from each of its ends that is not the ground
        if (end != 0) kept[m++] = {0, uint8_t(end), uint8_t(kLong)};
    }
    g.edges = kept;
    g.n = n;
    g.m = m;
  }

  // Colour refinement: split colour classes by a sum over each node's runs of a hash of (label, the colour
  // at the other end) until stable. The sum depends on the multiset only and colours stay ordered as before
  // each split, so the result depends on the graph only (two multisets of one sum merely stay together).
  static void refine(const Graph& g, std::array<uint8_t, kMaxNodes>& colour) {
    std::array<uint64_t, kMaxNodes> sig{};
    std::array<uint8_t, kMaxNodes> order{};
    int classes = count(g.n, colour);
    while (true) {
      for (int v = 0; v < g.n; ++v) sig[v] = 0;
      for (const auto& e : g) {
        if (e[0] == e[1]) {
          sig[e[0]] += mix(uint64_t(256 + 64 * e[2] + colour[e[0]]));
          continue;
        }
        sig[e[0]] += mix(uint64_t(64 * e[2] + colour[e[1]]));
        sig[e[1]] += mix(uint64_t(64 * e[2] + colour[e[0]]));
      }
      for (int v = 0; v < g.n; ++v) order[v] = uint8_t(v);
      std::sort(order.begin(), order.begin() + g.n, [&](uint8_t a, uint8_t b) {
        return colour[a] != colour[b] ? colour[a] < colour[b] : sig[a] < sig[b];
      });
      int c = 0;
      std::array<uint8_t, kMaxNodes> next{};
      for (int i = 0; i < g.n; ++i) {
        const int v = order[i], u = i ? order[i - 1] : v;
        if (i && (colour[v] != colour[u] || sig[v] != sig[u])) ++c;
        next[v] = uint8_t(c);
      }
      colour = next;
      if (c + 1 == classes) return;
      classes = c + 1;
    }
  }

  static int count(int n, const std::array<uint8_t, kMaxNodes>& colour) {
    uint64_t seen = 0;
    for (int v = 0; v < n; ++v) seen |= uint64_t(1) << colour[v];
    return __builtin_popcountll(seen);
  }

  // Individualise each node of the first colour class with two or more nodes in turn, refine, and keep the
  // smallest edge list of the discrete colourings reached.
  void search(const Graph& g, const std::array<uint8_t, kMaxNodes>& colour, Best& best) const {
    if (best.leaves > leaf_limit_) return;
    std::array<int, kMaxNodes> size{};
    for (int v = 0; v < g.n; ++v) ++size[colour[v]];
    int cell = -1;
    for (int c = 0; c < g.n && cell < 0; ++c)
      if (size[c] > 1) cell = c;
    if (cell < 0) {
      ++best.leaves;
      Code code;
      code.n = g.m;
      code.w[0] = uint16_t(g.n);
      for (int i = 0; i < code.n; ++i) {
        const auto& e = g.edges[i];
        const int a = colour[e[0]], b = colour[e[1]];
        code.w[i + 1] = uint16_t((std::min(a, b) << 8 | std::max(a, b)) * 4 + e[2]);
      }
      std::sort(code.w.begin() + 1, code.w.begin() + 1 + code.n);
      if (!best.found || code.less(best.code)) best.code = code, best.found = true;
      return;
    }
    for (int v = 0; v < g.n; ++v) {
      if (colour[v] != cell) continue;
      std::array<uint8_t, kMaxNodes> split{};
      for (int u = 0; u < g.n; ++u)
        split[u] = uint8_t(colour[u] < cell || u == v ? colour[u] : colour[u] + 1);
      refine(g, split);
      search(g, split, best);
    }
  }

  static FormKey hash(const Code& code) {
    uint64_t a = 0x9E3779B97F4A7C15ull, b = 0xD1B54A32D192ED03ull;
    for (int i = 0; i <= code.n; ++i) {
      a = mix(a ^ code.w[i]);
      b = mix(b + code.w[i] * 0xA24BAED4963EE407ull);
    }
    return {mix(a ^ uint64_t(code.n)), mix(b ^ (uint64_t(code.n) << 32)), true};
  }
  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
};

}  // namespace dnb::nim
