// Observation encoders on the (2R+1) x (2C+1) grid, bit-identical to dnb_env/observations.py:
// float32, channels first, from the point of view of the player to move.
//
//   baseline4    0 dots and box centres = 1; 1 every edge cell = 1; 2 drawn edges = 1;
//                3 (mover's boxes - opponent's boxes) / (R*C) on every cell
//   chainloop6   baseline4 + 4: 1 on edges of count-1 structures beside a box with three drawn sides;
//                5: the structure's count on edges of structures with count > 2
//   chainloop64  baseline4 + 4..63: one structure each (1 on its edges), largest count first, ties by
//                lowest edge; then count-1 structures by edge; at most 60
//   alphazero4   0 drawn lines; 1 mover's box centres; 2 opponent's box centres; 3 dots
//
// Structures (Dotsformer 4.1 Chain-Loop Detection): undrawn edges are linked when they are the two undrawn
// sides of one box with exactly two drawn sides; each connected group is a structure, its count the number
// of undrawn edges in it. Edges of a box in no link are count-1 structures.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>

#include "engine.hpp"

namespace dnb {

enum class Encoder { baseline4, chainloop6, chainloop64, alphazero4 };

inline const char* const kEncoderNames[] = {"baseline4", "chainloop6", "chainloop64", "alphazero4"};
inline constexpr int kNumEncoders = int(sizeof(kEncoderNames) / sizeof(kEncoderNames[0]));

// "baseline4, chainloop6, ...": the names above, for messages.
inline std::string encoder_names() {
  std::string out;
  for (int k = 0; k < kNumEncoders; ++k) out += (k ? ", " : "") + std::string(kEncoderNames[k]);
  return out;
}

inline bool encoder_from_name(const std::string& name, Encoder& out) {
  for (int k = 0; k < kNumEncoders; ++k) {
    if (name == kEncoderNames[k]) {
      out = static_cast<Encoder>(k);
      return true;
    }
  }
  return false;
}

inline int encoder_channels(Encoder e) {
  switch (e) {
    case Encoder::baseline4: return 4;
    case Encoder::chainloop6: return 6;
    case Encoder::chainloop64: return 64;
    case Encoder::alphazero4: return 4;
  }
  return 0;
}

// Union-find over the undrawn edges of one board, linked through boxes with exactly two drawn sides.
struct Structures {
  int16_t parent[kMaxEdges];
  int16_t size[kMaxEdges];   // at a root: number of edges in its structure (paired edges only)
  uint8_t paired[kMaxEdges]; // 1 = in a structure of two or more edges
  uint8_t three[kMaxEdges];  // 1 = the undrawn side of a box with three drawn sides

  int16_t find(int16_t a) {
    while (parent[a] != a) {
      parent[a] = parent[parent[a]];
      a = parent[a];
    }
    return a;
  }

  Structures(const Geometry& g, const Board& b) {
    const int A = g.num_actions;
    for (int a = 0; a < A; ++a) parent[a] = int16_t(a);
    // sized by the board, not the arrays: a small memset of constant size is inlined as a slow `rep stos`
    const unsigned n = unsigned(A);
    std::memset(size, 0, sizeof(int16_t) * n);
    std::memset(paired, 0, n);
    std::memset(three, 0, n);
    for (int box = 0; box < g.num_boxes; ++box) {
      const auto& s = g.box_sides[box];
      int16_t undrawn[4];
      int n = 0;
      for (int k = 0; k < 4; ++k) {
        if (!test_bit(b.edges, s[k])) undrawn[n++] = s[k];
      }
      if (n == 2) {
        int16_t u = find(undrawn[0]), v = find(undrawn[1]);
        if (u != v) parent[u] = v;
        paired[undrawn[0]] = paired[undrawn[1]] = 1;
      } else if (n == 1) {
        three[undrawn[0]] = 1;
      }
    }
    for (int a = 0; a < A; ++a) {
      if (paired[a]) ++size[find(int16_t(a))];
    }
  }
};

inline float score_diff(const Geometry& g, const Board& b) {
  int d = b.score[0] - b.score[1];
  if (b.player == 1) d = -d;
  // Python: float64 true division of the integers, then float32
  return static_cast<float>(static_cast<double>(d) / static_cast<double>(g.num_boxes));
}

// The four shared channels into out[0..3] (each plane H*W floats); other channels are left as they are.
inline void encode_base4(const Geometry& g, const Board& b, float* out) {
  const int cells = g.height * g.width;
  std::memcpy(out, g.dots_centres.data(), sizeof(float) * cells);
  std::memcpy(out + cells, g.edge_cells.data(), sizeof(float) * cells);
  float* drawn = out + 2 * cells;
  std::fill(drawn, drawn + cells, 0.0f);
  for (int w = 0; w < kEdgeWords; ++w) {
    for (uint64_t x = b.edges[w]; x; x &= x - 1) drawn[g.action_cell[w * 64 + lowest_bit(x)]] = 1.0f;
  }
  float* diff = out + 3 * cells;
  std::fill(diff, diff + cells, score_diff(g, b));
}

inline void encode_chainloop6(const Geometry& g, const Board& b, float* out) {
  const int cells = g.height * g.width;
  encode_base4(g, b, out);
  float* ch4 = out + 4 * cells;
  float* ch5 = out + 5 * cells;
  std::fill(ch4, ch4 + 2 * cells, 0.0f);
  Structures st(g, b);
  for (int w = 0; w < kEdgeWords; ++w) {
    for (uint64_t x = ~b.edges[w] & g.full[w]; x; x &= x - 1) {  // the undrawn edges
      const int a = w * 64 + lowest_bit(x);
      if (st.paired[a]) {
        int n = st.size[st.find(int16_t(a))];
        if (n > 2) ch5[g.action_cell[a]] = static_cast<float>(n);
      } else if (st.three[a]) {
        ch4[g.action_cell[a]] = 1.0f;
      }
    }
  }
}

inline void encode_chainloop64(const Geometry& g, const Board& b, float* out) {
  const int cells = g.height * g.width;
  const int A = g.num_actions;
  encode_base4(g, b, out);
  std::fill(out + 4 * cells, out + 64 * cells, 0.0f);
  Structures st(g, b);
  // structures of two or more edges: (count, lowest edge, root), in order of lowest edge
  struct Group {
    int16_t count, low, root;
  };
  Group groups[kMaxEdges];
  int ngroups = 0;
  int16_t channel_of_root[kMaxEdges];
  int16_t seen[kMaxEdges];
  std::fill(seen, seen + A, int16_t(0));
  for (int a = 0; a < A; ++a) {
    if (!st.paired[a]) continue;
    int16_t r = st.find(int16_t(a));
    if (!seen[r]) {
      seen[r] = 1;
      groups[ngroups++] = Group{st.size[r], int16_t(a), r};
    }
  }
  std::sort(groups, groups + ngroups, [](const Group& x, const Group& y) {
    return x.count != y.count ? x.count > y.count : x.low < y.low;
  });
  std::fill(channel_of_root, channel_of_root + A, int16_t(-1));
  const int kept = std::min(ngroups, 60);
  for (int k = 0; k < kept; ++k) channel_of_root[groups[k].root] = int16_t(k);
  int next = kept;  // count-1 structures fill the channels left, lowest edge first
  for (int a = 0; a < A; ++a) {
    if (test_bit(b.edges, a)) continue;
    int ch;
    if (st.paired[a]) {
      ch = channel_of_root[st.find(int16_t(a))];
    } else {
      ch = next < 60 ? next++ : -1;
    }
    if (ch >= 0) out[(4 + ch) * cells + g.action_cell[a]] = 1.0f;
  }
}

inline void encode_alphazero4(const Geometry& g, const Board& b, float* out) {
  const int cells = g.height * g.width;
  std::fill(out, out + 3 * cells, 0.0f);
  for (int a = 0; a < g.num_actions; ++a) {
    if (test_bit(b.edges, a)) out[g.action_cell[a]] = 1.0f;
  }
  const uint64_t* mine = b.owners[b.player];
  const uint64_t* theirs = b.owners[b.player ^ 1];
  for (int box = 0; box < g.num_boxes; ++box) {
    if (test_bit(mine, box)) out[cells + g.box_cell[box]] = 1.0f;
    if (test_bit(theirs, box)) out[2 * cells + g.box_cell[box]] = 1.0f;
  }
  std::memcpy(out + 3 * cells, g.dots.data(), sizeof(float) * cells);
}

// One board into out[C * H * W].
inline void encode(Encoder e, const Geometry& g, const Board& b, float* out) {
  switch (e) {
    case Encoder::baseline4: encode_base4(g, b, out); break;
    case Encoder::chainloop6: encode_chainloop6(g, b, out); break;
    case Encoder::chainloop64: encode_chainloop64(g, b, out); break;
    case Encoder::alphazero4: encode_alphazero4(g, b, out); break;
  }
}

}  // namespace dnb
