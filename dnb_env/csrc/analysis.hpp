// Board structure over one Board: valences, chains and loops, move classes, initiative labels, the
// captures-or-declines move set and the exact value of simple endgames. The C++ twin of
// dnb_env/analysis.py (which keeps the definitions and their sources in its docstrings); the tests check
// every function here against it on random and realistic positions of every board size.
//
//   valence(box)          undrawn sides of a box (0 = claimed; 1 = capturable; 3 or 4 = joint)
//   components            boxes of valence 1 or 2 linked through shared undrawn sides: paths (chains) and
//                         cycles (loops); opened when one of their boxes is capturable
//   simple endgame        every unclaimed box has valence 2: isolated chains (ends on the border) and loops;
//                         its value is the opener/controller recursion of simple_endgame_value
//   move class            Dotsformer Definition 3: forbidden > scoring > conceding > safe
//   initiative            Dotsformer Definition 2: capture / sacrifice when a box can be taken, else neutral
//   capture or decline    with a box on offer: the captures and the all-but-two declines (double-dealing)
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine.hpp"

namespace dnb {

enum MoveClass : int8_t { kForbidden = 0, kConceding = 1, kSafe = 2, kScoring = 3 };
enum Initiative : int8_t { kCapture = 0, kSacrifice = 1, kNeutral = 2 };

inline int valence(const Geometry& g, const Board& b, int box) { return 4 - drawn_sides(g, b.edges, box); }

// Move classes of every action into out[0..A).
inline void move_classes(const Geometry& g, const Board& b, int8_t* out) {
  int8_t drawn[kMaxBoxes];
  for (int box = 0; box < g.num_boxes; ++box) drawn[box] = int8_t(drawn_sides(g, b.edges, box));
  for (int a = 0; a < g.num_actions; ++a) {
    if (test_bit(b.edges, a)) {
      out[a] = kForbidden;
      continue;
    }
    int8_t best = kSafe;
    for (int k = 0; k < 2; ++k) {
      int box = g.action_boxes[a][k];
      if (box < 0) break;
      if (drawn[box] == 3) {
        best = kScoring;
        break;
      }
      if (drawn[box] == 2) best = kConceding;
    }
    out[a] = best;
  }
}

inline bool can_score(const Geometry& g, const Board& b) {
  for (int box = 0; box < g.num_boxes; ++box) {
    if (drawn_sides(g, b.edges, box) == 3) return true;
  }
  return false;
}

// Initiative label of a legal action.
inline int8_t initiative(const Geometry& g, const Board& b, int a) {
  if (!can_score(g, b)) return kNeutral;
  for (int k = 0; k < 2; ++k) {
    int box = g.action_boxes[a][k];
    if (box >= 0 && drawn_sides(g, b.edges, box) == 3) return kCapture;
  }
  return kSacrifice;
}

// The box across undrawn edge e from `box` (-1: the border).
inline int across(const Geometry& g, int e, int box) {
  const auto& ab = g.action_boxes[e];
  return ab[0] == box ? ab[1] : ab[0];
}

// A component: a chain or a loop of `length` boxes; `opened` if one of them is capturable.
struct Component {
  bool loop;
  int length;
  bool opened;
};

// The chains and loops of a position (order: by the lowest-numbered box reached first, as in Python).
inline std::vector<Component> components(const Geometry& g, const Board& b) {
  int8_t val[kMaxBoxes];
  bool member[kMaxBoxes], seen[kMaxBoxes];
  for (int box = 0; box < g.num_boxes; ++box) {
    val[box] = int8_t(valence(g, b, box));
    member[box] = val[box] == 1 || val[box] == 2;
    seen[box] = false;
  }
  std::vector<Component> out;
  for (int start = 0; start < g.num_boxes; ++start) {
    if (!member[start] || seen[start]) continue;
    // flood the component; it is a loop when every box has two member neighbours through undrawn sides
    int stack[kMaxBoxes], n = 0, length = 0;
    bool opened = false, loop = true;
    stack[n++] = start;
    seen[start] = true;
    while (n) {
      int box = stack[--n];
      ++length;
      opened |= val[box] == 1;
      int links = 0;
      for (int e : g.box_sides[box]) {
        if (test_bit(b.edges, e)) continue;
        int o = across(g, e, box);
        if (o >= 0 && member[o]) {
          ++links;
          if (!seen[o]) {
            seen[o] = true;
            stack[n++] = o;
          }
        }
      }
      if (links != 2) loop = false;
    }
    out.push_back({loop, length, opened});
  }
  return out;
}

inline int long_chain_count(const Geometry& g, const Board& b) {
  int n = 0;
  for (const auto& c : components(g, b)) n += !c.loop && !c.opened && c.length >= 3;
  return n;
}

inline bool is_simple_endgame(const Geometry& g, const Board& b) {
  for (int box = 0; box < g.num_boxes; ++box) {
    int v = valence(g, b, box);
    if (v != 0 && v != 2) return false;
  }
  return true;
}

// A simple endgame as a sorted multiset of components, one byte each: a chain of n boxes is n, a loop of
// n boxes 128 + n (n <= 81 on a 9x9 board).
using EndgameKey = std::string;

inline char component_code(bool loop, int length) { return char(loop ? 128 + length : length); }

// The controller's margin after the opener opens component `code` and play goes on optimally in the rest,
// worth `rest` to the controller of the rest.
inline int option_value(int code, int rest) {
  if (code >= 128) return code - 128 - 4 + std::abs(4 - rest);  // loop: all-but-four or take all
  if (code == 1) return 1 - rest;
  if (code == 2) return 2 - rest;  // the hard-hearted handout leaves no double-deal
  return code - 2 + std::abs(2 - rest);  // long chain: all-but-two or take all
}

// v(G): the margin the controller (the player NOT to move) gets from a simple endgame given by its sorted
// key; the recursion of dnb_env.analysis.simple_endgame_value (the opener picks the component whose value
// is least for the controller). Memoised per thread (bounded, like the Python lru_cache). The exact solver
// values its simple-endgame leaves with it too.
inline int simple_endgame_value(const EndgameKey& key) {
  if (key.empty()) return 0;
  thread_local std::unordered_map<EndgameKey, int> memo;
  auto it = memo.find(key);
  if (it != memo.end()) return it->second;
  int best = 0;
  bool first = true;
  for (size_t i = 0; i < key.size(); ++i) {
    if (i && key[i] == key[i - 1]) continue;  // equal components: one is enough
    const int v = option_value(uint8_t(key[i]), simple_endgame_value(key.substr(0, i) + key.substr(i + 1)));
    if (first || v < best) best = v, first = false;
  }
  if (memo.size() > (1u << 16)) memo.clear();
  memo.emplace(key, best);
  return best;
}

// Sort a key built component by component (as unsigned bytes).
inline void sort_key(EndgameKey& key) {
  std::sort(key.begin(), key.end(), [](char a, char b) { return uint8_t(a) < uint8_t(b); });
}

// Exact margin for the player to move from the remaining boxes of a simple endgame; false when the
// position is not one.
inline bool endgame_value(const Geometry& g, const Board& b, int& value) {
  if (!is_simple_endgame(g, b)) return false;
  EndgameKey key;
  for (const auto& c : components(g, b)) key.push_back(component_code(c.loop, c.length));
  sort_key(key);
  value = -simple_endgame_value(key);
  return true;
}

// With a box on offer: mask (out[0..A) = 1) of the captures and the all-but-two declines (the far undrawn
// side of a two-sided box beside a capturable one). Returns false (out untouched) when no box is on offer.
inline bool capture_or_decline(const Geometry& g, const Board& b, int8_t* out) {
  int8_t drawn[kMaxBoxes];
  bool offer = false;
  for (int box = 0; box < g.num_boxes; ++box) {
    drawn[box] = int8_t(drawn_sides(g, b.edges, box));
    offer |= drawn[box] == 3;
  }
  if (!offer) return false;
  std::fill(out, out + g.num_actions, int8_t(0));
  for (int a = 0; a < g.num_actions; ++a) {
    if (test_bit(b.edges, a)) continue;
    for (int k = 0; k < 2; ++k) {
      int box = g.action_boxes[a][k];
      if (box >= 0 && drawn[box] == 3) out[a] = 1;
    }
  }
  for (int b1 = 0; b1 < g.num_boxes; ++b1) {
    if (drawn[b1] != 3) continue;
    for (int e : g.box_sides[b1]) {
      if (test_bit(b.edges, e)) continue;
      int b2 = across(g, e, b1);
      if (b2 < 0 || drawn[b2] != 2) continue;
      for (int f : g.box_sides[b2]) {
        if (f != e && !test_bit(b.edges, f)) out[f] = 1;
      }
    }
  }
  return true;
}

}  // namespace dnb
