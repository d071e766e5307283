// Rules of Dots-and-Boxes over fixed-width edge bitsets: board geometry and one board's state.
//
// Numbering is OpenSpiel's dots_and_boxes one (as in dnb_env/core.py), on an R x C board of boxes:
//   horizontal edge h(r, c) = r * C + c                      r in 0..R,   c in 0..C-1
//   vertical edge   v(r, c) = (R + 1) * C + r * (C + 1) + c   r in 0..R-1, c in 0..C
// Grid cells of the (2R+1) x (2C+1) observation planes: dot (2r, 2c), h(r, c) at (2r, 2c+1),
// v(r, c) at (2r+1, 2c), centre of box (r, c) at (2r+1, 2c+1). Boxes are numbered r * C + c.
//
// A board is one fixed-size record: drawn edges (kEdgeWords x 64 bits), each player's boxes (kBoxWords x
// 64 bits), scores, the number of drawn edges and the player to move. Drawing the
// fourth side of a box scores it and the same player moves again; the game ends when every edge is drawn.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(_MSC_VER)
#include <intrin.h>
#endif

namespace dnb {

// The largest board (rows and cols of boxes, 1..kMaxSize) sets every fixed width below; the build may
// choose it (-DDNB_MAX_SIZE=N).
#ifndef DNB_MAX_SIZE
#define DNB_MAX_SIZE 9
#endif
constexpr int kMaxSize = DNB_MAX_SIZE;
constexpr int kMaxEdges = 2 * kMaxSize * (kMaxSize + 1);
constexpr int kMaxBoxes = kMaxSize * kMaxSize;
constexpr int kEdgeWords = (kMaxEdges + 63) / 64;  // 9x9: 3 words >= 180 edges; 12x12: 5 >= 312
constexpr int kBoxWords = (kMaxBoxes + 63) / 64;   // 9x9: 2 words >= 81 boxes; 12x12: 3 >= 144
static_assert(kMaxSize >= 1 && kMaxSize <= 16, "DNB_MAX_SIZE must be in 1..16");

// An edge index in compact tables (move lists, histories, symmetry maps): one byte while every edge fits.
using EdgeIndex = std::conditional_t<(kMaxEdges <= 255), uint8_t, uint16_t>;

inline int popcount64(uint64_t x) {
#if defined(_MSC_VER)
  return static_cast<int>(__popcnt64(x));
#else
  return __builtin_popcountll(x);
#endif
}

// index of the lowest set bit of x (x != 0)
inline int lowest_bit(uint64_t x) {
#if defined(_MSC_VER)
  unsigned long i;
  _BitScanForward64(&i, x);
  return int(i);
#else
  return __builtin_ctzll(x);
#endif
}

inline bool test_bit(const uint64_t* words, int i) { return (words[i >> 6] >> (i & 63)) & 1u; }
inline void set_bit(uint64_t* words, int i) { words[i >> 6] |= uint64_t(1) << (i & 63); }

// Lookup tables of one rows x cols board (the C++ twin of dnb_env.core.Geometry); get them through
// geometry(), which builds each size once.
struct Geometry {
  int rows = 0, cols = 0, num_h = 0, num_actions = 0, num_boxes = 0, height = 0, width = 0;
  std::vector<int32_t> action_cell;                  // [A] flat grid index y * width + x of each edge
  std::vector<int32_t> box_cell;                     // [B] flat grid index of each box centre
  std::vector<std::array<int16_t, 4>> box_sides;     // [B] (top, bottom, left, right) edges
  std::vector<std::array<int16_t, 2>> action_boxes;  // [A] the 1 or 2 boxes beside an edge, -1 pads
  std::array<uint64_t, kEdgeWords> full{};           // every edge drawn
  std::vector<float> dots_centres, edge_cells, dots; // [H * W] constant planes of the encoders

  Geometry(int R, int C) : rows(R), cols(C) {
    num_h = (R + 1) * C;
    num_actions = num_h + R * (C + 1);
    num_boxes = R * C;
    height = 2 * R + 1;
    width = 2 * C + 1;
    action_cell.resize(num_actions);
    action_boxes.assign(num_actions, {int16_t(-1), int16_t(-1)});
    for (int a = 0; a < num_actions; ++a) {
      if (a < num_h) {
        int r = a / C, c = a % C;
        action_cell[a] = (2 * r) * width + 2 * c + 1;
      } else {
        int r = (a - num_h) / (C + 1), c = (a - num_h) % (C + 1);
        action_cell[a] = (2 * r + 1) * width + 2 * c;
      }
      set_bit(full.data(), a);
    }
    box_cell.resize(num_boxes);
    box_sides.resize(num_boxes);
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < C; ++c) {
        int b = r * C + c;
        int top = r * C + c, bottom = (r + 1) * C + c, left = num_h + r * (C + 1) + c, right = left + 1;
        box_sides[b] = {int16_t(top), int16_t(bottom), int16_t(left), int16_t(right)};
        box_cell[b] = (2 * r + 1) * width + 2 * c + 1;
        for (int e : {top, bottom, left, right}) {
          auto& slot = action_boxes[e];
          (slot[0] < 0 ? slot[0] : slot[1]) = int16_t(b);
        }
      }
    }
    const int cells = height * width;
    dots_centres.assign(cells, 0.0f);
    edge_cells.assign(cells, 0.0f);
    dots.assign(cells, 0.0f);
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        bool same = (y % 2) == (x % 2);
        dots_centres[y * width + x] = same ? 1.0f : 0.0f;
        edge_cells[y * width + x] = same ? 0.0f : 1.0f;
        dots[y * width + x] = (y % 2 == 0 && x % 2 == 0) ? 1.0f : 0.0f;
      }
    }
  }

  // "h r c" / "v r c", the notation of dnb_env.core.Geometry.action_name
  std::string action_name(int a) const {
    if (a < num_h) return "h " + std::to_string(a / cols) + " " + std::to_string(a % cols);
    int k = a - num_h;
    return "v " + std::to_string(k / (cols + 1)) + " " + std::to_string(k % (cols + 1));
  }

  std::string name() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

// The cached geometry of a board; std::invalid_argument for a size outside 1..kMaxSize.
inline const Geometry& geometry(int rows, int cols) {
  static std::array<std::unique_ptr<Geometry>, kMaxSize * kMaxSize> cache;
  static std::mutex lock;
  if (rows < 1 || rows > kMaxSize || cols < 1 || cols > kMaxSize) {
    throw std::invalid_argument("the native engine takes boards of 1.." + std::to_string(kMaxSize) + " rows and 1.." +
                                std::to_string(kMaxSize) + " columns of boxes, got " + std::to_string(rows) + "x" +
                                std::to_string(cols));
  }
  std::lock_guard<std::mutex> guard(lock);
  auto& slot = cache[(rows - 1) * kMaxSize + (cols - 1)];
  if (!slot) slot = std::make_unique<Geometry>(rows, cols);
  return *slot;
}

// One game, trivially copyable.
struct Board {
  uint64_t edges[kEdgeWords];
  uint64_t owners[2][kBoxWords];  // owners[p]: bit b set = box b belongs to player p
  int16_t score[2];
  int16_t drawn;                  // number of drawn edges; the game is over at drawn == num_actions
  int8_t player;                  // 0 or 1, the player to move
  int8_t pad_ = 0;
};

inline Board empty_board() {
  Board b{};
  return b;
}

inline bool is_terminal(const Geometry& g, const Board& b) { return b.drawn == g.num_actions; }

// The legal-move mask of `b` into out[num_actions]: 1 on undrawn edges.
inline void legal_mask(const Geometry& g, const Board& b, int8_t* out) {
  for (int a = 0; a < g.num_actions; ++a) out[a] = int8_t(!test_bit(b.edges, a));
}

inline bool box_complete(const Geometry& g, const uint64_t* edges, int box) {
  const auto& s = g.box_sides[box];
  return test_bit(edges, s[0]) && test_bit(edges, s[1]) && test_bit(edges, s[2]) && test_bit(edges, s[3]);
}

inline int drawn_sides(const Geometry& g, const uint64_t* edges, int box) {
  const auto& s = g.box_sides[box];
  return int(test_bit(edges, s[0])) + int(test_bit(edges, s[1])) + int(test_bit(edges, s[2])) +
         int(test_bit(edges, s[3]));
}

// Why `a` cannot be played on `b` (the wording of dnb_env.core), or "" if it is legal.
inline std::string illegal_reason(const Geometry& g, const Board& b, int64_t a) {
  if (a < 0 || a >= g.num_actions) {
    return "action " + std::to_string(a) + " is out of range: a " + g.name() + " board has actions 0.." +
           std::to_string(g.num_actions - 1);
  }
  if (is_terminal(g, b)) return "action " + std::to_string(a) + " played after the game ended";
  if (test_bit(b.edges, int(a))) {
    return "action " + std::to_string(a) + " (" + g.action_name(int(a)) + ") is already drawn";
  }
  return "";
}

// Draw edge `a` (legal, unchecked); returns the number of boxes it completed (0, 1 or 2).
inline int apply(const Geometry& g, Board& b, int a) {
  set_bit(b.edges, a);
  ++b.drawn;
  int gained = 0;
  const auto& boxes = g.action_boxes[a];
  for (int k = 0; k < 2; ++k) {
    int box = boxes[k];
    if (box < 0) break;
    if (box_complete(g, b.edges, box)) {
      set_bit(b.owners[b.player], box);
      ++gained;
    }
  }
  if (gained) {
    b.score[b.player] = int16_t(b.score[b.player] + gained);
  } else {
    b.player ^= 1;
  }
  return gained;
}

// Why (edges, owners, player) is not a reachable-looking position, or "": no edge beyond the board,
// every box with four drawn sides owned by exactly one player, no other box owned, player 0 or 1.
// Fills the derived fields (scores, drawn count) of `b` when it is valid.
inline std::string load_board(const Geometry& g, const uint64_t* edges, const uint64_t* owners0,
                              const uint64_t* owners1, int64_t player, Board& b) {
  b = empty_board();
  for (int w = 0; w < kEdgeWords; ++w) {
    if (edges[w] & ~g.full[w]) {
      return "edges has bits set beyond the " + std::to_string(g.num_actions) + " edges of a " + g.name() +
             " board";
    }
    b.edges[w] = edges[w];
  }
  if (player != 0 && player != 1) return "mover must be 0 or 1, got " + std::to_string(player);
  for (int w = 0; w < kBoxWords; ++w) {
    uint64_t valid = 0;
    for (int i = 0; i < 64; ++i) {
      if (w * 64 + i < g.num_boxes) valid |= uint64_t(1) << i;
    }
    if ((owners0[w] | owners1[w]) & ~valid) {
      return "owners has bits set beyond the " + std::to_string(g.num_boxes) + " boxes of a " + g.name() + " board";
    }
    if (owners0[w] & owners1[w]) return "a box is owned by both players";
    b.owners[0][w] = owners0[w];
    b.owners[1][w] = owners1[w];
  }
  for (int box = 0; box < g.num_boxes; ++box) {
    bool complete = box_complete(g, b.edges, box);
    bool owned = test_bit(b.owners[0], box) || test_bit(b.owners[1], box);
    if (complete != owned) {
      return "box (" + std::to_string(box / g.cols) + ", " + std::to_string(box % g.cols) + ") " +
             (complete ? "is complete but has no owner" : "has an owner but is not complete");
    }
  }
  int drawn = 0;
  for (int w = 0; w < kEdgeWords; ++w) drawn += popcount64(b.edges[w]);
  b.drawn = int16_t(drawn);
  for (int p = 0; p < 2; ++p) {
    int n = 0;
    for (int w = 0; w < kBoxWords; ++w) n += popcount64(b.owners[p][w]);
    b.score[p] = int16_t(n);
  }
  b.player = int8_t(player);
  return "";
}

// xoshiro256** seeded through splitmix64: small, fast, and the same stream on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // uniform in 0..n-1 for n <= 2^32 (multiply-shift; bias below n / 2^32)
  uint32_t below(uint32_t n) { return uint32_t(((next() >> 32) * uint64_t(n)) >> 32); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Play uniformly random legal moves on a copy of `start` to the end; returns the final box margin
// (player 0 minus player 1).
inline int random_playout(const Geometry& g, const Board& start, Rng& rng) {
  Board b = start;
  EdgeIndex legal[kMaxEdges];
  uint32_t n = 0;
  for (int a = 0; a < g.num_actions; ++a) {
    if (!test_bit(b.edges, a)) legal[n++] = EdgeIndex(a);
  }
  while (n) {
    uint32_t i = rng.below(n);
    int a = legal[i];
    legal[i] = legal[--n];
    apply(g, b, a);
  }
  return b.score[0] - b.score[1];
}

}  // namespace dnb
