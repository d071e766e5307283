// Learner-vs-random-opponent games for the Gymnasium envs (dnb_env/gym_env.py), one step of the learner
// and the opponent's replies per call, bit-identical to the Python path of the env.
//
// The opponent is baselines.random_agent.RandomAgent: legal_actions()[rng.integers(len(legal))] with
// rng = numpy.random.default_rng(seed). NumpyRng reproduces exactly those draws (numpy's PCG64 seeded
// through SeedSequence, and the Lemire bounded integers of Generator.integers), so a seed gives the same
// games on both backends. The env's own generators (the vector env's per-game generators) are numpy
// generators too: their state is copied in from Python and drawn from here.
#pragma once

#include <cstdint>
#include <cstring>

#include "encoders.hpp"
#include "engine.hpp"

namespace dnb {

// 128-bit unsigned arithmetic without compiler extensions (MSVC has no __uint128_t).
struct U128 {
  uint64_t hi = 0, lo = 0;
};

// (high, low) 64-bit halves of a * b
inline void mul64(uint64_t a, uint64_t b, uint64_t& hi, uint64_t& lo) {
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
  hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

inline U128 mul128(U128 a, U128 b) {  // a * b mod 2^128
  U128 r;
  mul64(a.lo, b.lo, r.hi, r.lo);
  r.hi += a.hi * b.lo + a.lo * b.hi;
  return r;
}

inline U128 add128(U128 a, U128 b) {
  U128 r;
  r.lo = a.lo + b.lo;
  r.hi = a.hi + b.hi + (r.lo < a.lo ? 1 : 0);
  return r;
}

// numpy.random.Generator(PCG64): the state numpy keeps (bit_generator.state) and Generator.integers(high).
class NumpyRng {
 public:
  NumpyRng() = default;

  // numpy.random.default_rng(seed), for 0 <= seed < 2^64 (SeedSequence(seed).generate_state(4, uint64)).
  static NumpyRng from_seed(uint64_t seed) {
    uint32_t entropy[2] = {uint32_t(seed), uint32_t(seed >> 32)};
    const int n = (seed >> 32) ? 2 : 1;  // numpy's uint32 words of the int; trailing zero words hash alike
    uint32_t pool[4];
    uint32_t hash_const = 0x43b0d7e5u;
    auto hashmix = [&hash_const](uint32_t value) {
      value ^= hash_const;
      hash_const *= 0x931e8875u;
      value *= hash_const;
      value ^= value >> 16;
      return value;
    };
    auto mix = [](uint32_t x, uint32_t y) {
      uint32_t r = 0xca01f9ddu * x - 0x4973f715u * y;
      return r ^ (r >> 16);
    };
    for (int i = 0; i < 4; ++i) pool[i] = hashmix(i < n ? entropy[i] : 0u);
    for (int src = 0; src < 4; ++src) {
      for (int dst = 0; dst < 4; ++dst) {
        if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src]));
      }
    }
    uint32_t words[8];
    uint32_t hc = 0x8b51f9ddu;
    for (int i = 0; i < 8; ++i) {
      uint32_t v = pool[i % 4];
      v ^= hc;
      hc *= 0x58f38dedu;
      v *= hc;
      v ^= v >> 16;
      words[i] = v;
    }
    uint64_t w[4];
    for (int k = 0; k < 4; ++k) w[k] = uint64_t(words[2 * k]) | (uint64_t(words[2 * k + 1]) << 32);
    // pcg64_set_seed: initstate = w0:w1, initseq = w2:w3
    NumpyRng r;
    r.inc_ = U128{(w[2] << 1) | (w[3] >> 63), (w[3] << 1) | 1u};
    r.state_ = U128{};
    r.step();
    r.state_ = add128(r.state_, U128{w[0], w[1]});
    r.step();
    return r;
  }

  // The state of a numpy PCG64 (bit_generator.state: state, inc, has_uint32, uinteger).
  static NumpyRng from_state(U128 state, U128 inc, bool has_uint32, uint32_t uinteger) {
    NumpyRng r;
    r.state_ = state;
    r.inc_ = inc;
    r.has_uint32_ = has_uint32;
    r.uinteger_ = uinteger;
    return r;
  }

  // Generator.integers(high) for 1 <= high < 2^64 (numpy's unmasked Lemire rejection; none drawn for 1).
  uint64_t integers(uint64_t high) {
    const uint64_t rng = high - 1;
    if (rng == 0) return 0;
    if (rng <= 0xFFFFFFFFu) {
      const uint64_t excl = rng + 1;
      uint64_t m = uint64_t(next32()) * excl;
      uint32_t leftover = uint32_t(m);
      if (leftover < excl) {
        const uint32_t threshold = uint32_t((0xFFFFFFFFu - rng) % excl);
        while (leftover < threshold) {
          m = uint64_t(next32()) * excl;
          leftover = uint32_t(m);
        }
      }
      return m >> 32;
    }
    const uint64_t excl = rng + 1;
    uint64_t hi, lo;
    mul64(next64(), excl, hi, lo);
    if (lo < excl) {
      const uint64_t threshold = (~uint64_t(0) - rng) % excl;
      while (lo < threshold) mul64(next64(), excl, hi, lo);
    }
    return hi;
  }

 private:
  void step() {
    static const U128 kMult{2549297995355413924ull, 4865540595714422341ull};
    state_ = add128(mul128(state_, kMult), inc_);
  }
  uint64_t next64() {  // XSL-RR output of the advanced state
    step();
    const uint64_t x = state_.hi ^ state_.lo;
    const unsigned rot = unsigned(state_.hi >> 58);
    return (x >> rot) | (x << ((64 - rot) & 63));
  }
  uint32_t next32() {  // numpy hands out the two halves of one 64-bit output, low half first
    if (has_uint32_) {
      has_uint32_ = false;
      return uinteger_;
    }
    const uint64_t next = next64();
    has_uint32_ = true;
    uinteger_ = uint32_t(next >> 32);
    return uint32_t(next);
  }

  U128 state_{}, inc_{};
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
};

enum class RewardMode : int8_t { win = 0, margin = 1, boxes = 2 };

// One learner-vs-random game (the C++ twin of gym_env._Game with a RandomAgent opponent).
struct LearnerGame {
  Board board = empty_board();
  NumpyRng env_rng;  // the vector env's generator of this game (learner seat and opponent seed at reset)
  NumpyRng opp_rng;  // the opponent's generator, reseeded at every reset
  EdgeIndex history[kMaxEdges];
  int16_t moves = 0;
  int8_t learner = 0;
  bool ready = false;      // reset, and the reset left the learner a move
  bool done = false;       // the episode is over (game finished or illegal action)
  bool autoreset = false;  // vector env: reset at the next step instead of stepping
};

inline void play(const Geometry& g, LearnerGame& G, int a) {
  apply(g, G.board, a);
  G.history[G.moves++] = EdgeIndex(a);
}

// The k-th undrawn edge (0-based) in increasing order.
inline int kth_undrawn(const Geometry& g, const Board& b, uint32_t k) {
  for (int w = 0; w < kEdgeWords; ++w) {
    uint64_t x = ~b.edges[w] & g.full[w];
    const uint32_t c = uint32_t(popcount64(x));
    if (k < c) {
      for (uint32_t j = 0; j < k; ++j) x &= x - 1;
      return w * 64 + lowest_bit(x);
    }
    k -= c;
  }
  return -1;  // unreachable for k < number of undrawn edges
}

// RandomAgent.select_action until it is the learner's turn or the game is over.
inline void opponent_turns(const Geometry& g, LearnerGame& G) {
  while (!is_terminal(g, G.board) && G.board.player != G.learner) {
    const uint32_t n = uint32_t(g.num_actions - G.board.drawn);
    play(g, G, kth_undrawn(g, G.board, uint32_t(G.opp_rng.integers(n))));
  }
}

// A new episode from `history` (legal, checked by the caller) with the learner in seat `learner` and the
// opponent seeded with `seed`; false (and not ready) when the learner is left no move to make.
inline bool reset_game(const Geometry& g, LearnerGame& G, int learner, uint64_t seed, const int* history, int n) {
  G.board = empty_board();
  G.moves = 0;
  for (int k = 0; k < n; ++k) play(g, G, history[k]);
  G.learner = int8_t(learner);
  G.opp_rng = NumpyRng::from_seed(seed);
  G.done = false;
  G.autoreset = false;
  opponent_turns(g, G);
  G.ready = !is_terminal(g, G.board);
  return G.ready;
}

// The vector env's autoreset (and seedless reset): learner seat (drawn when `learner` is 2, "random") and
// opponent seed from the game's own generator, in the order gym_env._Game.reset draws them.
inline bool reset_from_env_rng(const Geometry& g, LearnerGame& G, int learner, const int* history, int n) {
  if (learner == 2) learner = int(G.env_rng.integers(2));
  const uint64_t seed = G.env_rng.integers((uint64_t(1) << 63) - 1);  // np_random.integers(2**63 - 1)
  return reset_game(g, G, learner, seed, history, n);
}

inline int learner_margin(const LearnerGame& G) {
  const int d = G.board.score[0] - G.board.score[1];
  return G.learner == 0 ? d : -d;
}

// The learner plays legal action `a`, the opponent replies; (reward, terminated) as gym_env._Game.step.
inline double step_game(const Geometry& g, LearnerGame& G, int a, RewardMode mode, bool& terminated) {
  const int before = learner_margin(G);
  play(g, G, a);
  opponent_turns(g, G);
  const int after = learner_margin(G);
  const double boxes = double(g.num_boxes);
  double reward = mode == RewardMode::boxes ? double(after - before) / boxes : 0.0;
  terminated = is_terminal(g, G.board);
  if (terminated) {
    G.done = true;
    if (mode == RewardMode::win) reward = double((after > 0) - (after < 0));
    if (mode == RewardMode::margin) reward = double(after) / boxes;
  }
  return reward;
}

// Observation (encoder `e`, from the learner's side) into obs[C * H * W] and the legal mask into
// mask[A] (all 0 once the episode is over).
inline void observe(const Geometry& g, Encoder e, const LearnerGame& G, float* obs, int8_t* mask) {
  Board view = G.board;
  view.player = G.learner;
  encode(e, g, view, obs);
  if (G.done) {
    std::memset(mask, 0, size_t(g.num_actions));
  } else {
    legal_mask(g, G.board, mask);
  }
}

}  // namespace dnb
