// Exact solver (solver.hpp), the search: MTD(f) null-window alpha-beta over the box margin with the
// transposition table, in one thread or several (lazy SMP), its public queries (value, win test, move
// values, best moves, the safe-phase searches) and the table saved to a file and loaded back.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine.hpp"
#include "solver_moves.hpp"
#include "solver_table.hpp"
#include "solver_topology.hpp"

namespace dnb {
namespace exact {

// Positions with fewer undrawn edges are searched without the table: their subtrees cost less than the
// table's cache misses (about 5% faster at 40 undrawn on 5x5, 1% more nodes).
constexpr int kTableMinUndrawn = 10;
// Null-window searches at positions with fewer undrawn edges stay in one thread (threads cost ~0.1 ms).
constexpr int kParallelUndrawn = 24;
constexpr uint64_t kSerialNodes = 100000;  // nodes a search runs in one thread before the others join
// solver table files: "S:DBNTT1" (format 1, 8-bit bounds) or "S:DBNTT2" (format 2, the wide build's 16-bit
// bounds; its entries are as large as format 1's were there, so the size check alone would not tell them apart)
constexpr uint64_t kTableMagic = sizeof(Bound) == 1 ? 0x3154544E42443A53ull : 0x3254544E42443A53ull;
constexpr int kInf = 1000;

// Thrown inside a search when its node budget is spent; caught by the public entry points.
struct BudgetExceeded {};
// Thrown inside a helper thread's search when another thread has finished the same search.
struct Stopped {};

struct SearchStats {
  uint64_t nodes = 0, tt_hits = 0, tt_cuts = 0;
  RuleStats rules;
};

class Solver {
 public:
  // `tt_entries`: transposition-table entries (32 bytes each up to 9x9); the table grows to this size on demand.
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

  // A move that keeps v >= threshold for the mover, from the one null-window test of at_least: the move
  // that proved it (the table's move of p, or the forced capture), confirmed by a test of that move alone,
  // which the table settles at once; the other moves of p in the search's order only if the table lost it.
  // Returns the move, -1 when v(p) < threshold (or p has no move), -2 when the budget ran out.
  int proving_move(const Pos& given, int threshold, uint64_t node_limit) {
    const Pos p = prepared(given);
    begin(p, node_limit);
    if (threshold > p.remaining || p.undrawn == 0) return -1;
    try {
      if (root_search(p, threshold - 1, threshold) < threshold) return -1;
      Moves moves;
      NodeKind kind = generate(t_, p, rules_, moves, scratch_, stats_.rules, false);
      if (kind == NodeKind::kForcedCapture) return moves.m[0];  // an optimal move by rules 1 and 2
      if (kind == NodeKind::kDeferred) generate(t_, p, rules_, moves, scratch_, stats_.rules, true);
      const int first = root_table_move(p);
      if (first >= 0 && keeps(p, first, threshold)) return first;
      for (int i = 0; i < moves.n; ++i) {
        if (moves.m[i] != first && keeps(p, moves.m[i], threshold)) return moves.m[i];
      }
      for (int e = 0; e < t_.num_edges; ++e) {  // a simple endgame generates no moves
        if (!drawn(p, e) && e != first && keeps(p, e, threshold)) return e;
      }
    } catch (const BudgetExceeded&) {
      return -2;
    }
    throw std::logic_error("solver: no move keeps a bound the position was shown to have");
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
        if (!drawn(p, e) && keeps(p, e, value)) out.push_back(e);
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
  // position is beyond the leaf budget: more than `leaf_node_limit` nodes, or more than `leaf_max_undrawn`
  // undrawn edges (not searched; the Python reference's solver refuses those too). Empty when the position
  // has no safe move.
  bool safe_phase_values(const Pos& given, uint64_t position_limit, uint64_t leaf_node_limit,
                         std::vector<std::pair<int, int>>& out, int leaf_max_undrawn = kMaxEdges) {
    const Pos p = prepared(given);
    out.clear();
    SafePhase sp{*this, {}, position_limit, leaf_node_limit, leaf_max_undrawn};
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
  // `leaf_max_undrawn` as in safe_phase_values.
  bool sacrifice_phase_values(const Pos& given, int sacrifices, uint64_t position_limit, uint64_t leaf_node_limit,
                              std::vector<std::pair<int, int>>& out, int alpha = -kInf, int beta = kInf,
                              int leaf_max_undrawn = kMaxEdges) {
    if (alpha >= beta) throw std::invalid_argument("the window must have alpha < beta");
    if (sacrifices < 0) throw std::invalid_argument("sacrifices must be >= 0");
    const Pos p = prepared(given);
    out.clear();
    SacrificePhase sp{*this, {}, position_limit, leaf_node_limit, leaf_max_undrawn};
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
    int leaf_max_undrawn;  // an end of the phase with more undrawn edges is beyond the budget

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
        if (p.undrawn > leaf_max_undrawn || !solver.value(p, 0, leaf_node_limit, lo, hi)) throw BudgetExceeded{};
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
    int leaf_max_undrawn;  // an end of the phase with more undrawn edges is beyond the budget

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
        if (p.undrawn > leaf_max_undrawn || !solver.value(p, 0, leaf_node_limit, lo, hi)) throw BudgetExceeded{};
        table[key] = Bounds{lo, lo, -1};
        return lo;
      }
      // the move that decided this position's last search first, then captures, safe moves and sacrifices
      // (each move classified once)
      EdgeIndex order[3][kMaxEdges];
      int count[3] = {0, 0, 0};
      int first_pass = -1;  // the pass of b.best, when it is a move of this node
      for (int e = 0; e < solver.t_.num_edges; ++e) {
        if (drawn(p, e)) continue;
        const int cls = solver.phase_class(p, e);
        const int pass = cls == kPhaseScoring ? 0 : cls == kPhaseSafe ? 1 : 2;
        if (pass == 2 && left == 0) continue;
        if (e == b.best) first_pass = pass;
        else order[pass][count[pass]++] = EdgeIndex(e);
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

  // Whether move e of p keeps v >= threshold for p's mover (one null-window test of the position after it,
  // none when the threshold lies outside that position's range).
  bool keeps(const Pos& p, int e, int threshold) {
    Pos c = p;
    const int gain = draw(t_, c, e);
    if (gain) {  // gain + v(c) >= threshold
      const int need = threshold - gain;
      return need <= -c.remaining || (need <= c.remaining && root_search(c, need - 1, need) >= need);
    }
    const int over = 1 - threshold;  // -v(c) >= threshold, i.e. not v(c) >= 1 - threshold
    return over > c.remaining || (over > -c.remaining && root_search(c, over - 1, over) < over);
  }

  // The best move the table holds for p itself, in p's orientation (-1: none).
  int root_table_move(const Pos& p) {
    if (p.undrawn < kTableMinUndrawn) return -1;
    TableSlot slot;
    slot.sym = canonical(p, slot.key);
    slot.hash = key_hash(slot.key);
    EdgeIndex move = kNoMove;
    {
      TranspositionTable::Guard guard(tt_, slot.hash);
      if (const TTEntry* e = tt_.probe(slot.hash, slot.key)) move = e->move;
    }
    return move == kNoMove ? -1 : table_move(p, t_.inv[slot.sym][move]);
  }

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
    const uint64_t* best = p.img[0];
    int s_best = 0;
    for (int s = 1; s < t_.num_sym; ++s) {
      const uint64_t* k = p.img[s];
      int w = kEdgeWords - 1;
      while (w > 0 && k[w] == best[w]) --w;
      if (k[w] < best[w]) {
        best = k;
        s_best = s;
      }
    }
    for (int w = 0; w < kEdgeWords; ++w) key[w] = best[w];
    return s_best;
  }

  // Where a position goes in the table: its canonical key, the key's hash and the symmetry that maps the
  // position to it.
  struct TableSlot {
    uint64_t key[kEdgeWords] = {};
    uint64_t hash = 0;
    int sym = 0;
  };

  // The move m stored in the table, in p: itself, or when it is drawn and a border side (stored by a
  // position with another border side of this box drawn, rule 5) its undrawn twin (-1: none).
  int table_move(const Pos& p, int m) const {
    if (!drawn(p, m) || t_.border_group_of[m] < 0) return m;
    const auto& grp = t_.border_groups[t_.border_group_of[m]];
    for (int k = 0; k < grp.n; ++k) {
      if (!drawn(p, grp.side[k])) return grp.side[k];
    }
    return -1;
  }

  // Looks p up in the table: true when the stored bounds settle the window (alpha, beta), with the value in
  // `cut`; otherwise the stored best move in p's orientation goes to `tt_move` (left as it is without one).
  bool probe_table(const Pos& p, const TableSlot& slot, int alpha, int beta, int& cut, int& tt_move) {
    bool hit = false;
    Bound hit_lo = 0, hit_hi = 0;
    EdgeIndex hit_move = kNoMove;
    {
      TranspositionTable::Guard guard(tt_, slot.hash);
      if (const TTEntry* e = tt_.probe(slot.hash, slot.key)) {
        hit = true;
        hit_lo = e->lo;
        hit_hi = e->hi;
        hit_move = e->move;
      }
    }
    if (!hit) return false;
    ++stats_.tt_hits;
    if (hit_lo >= beta || hit_hi <= alpha || hit_lo == hit_hi) {
      ++stats_.tt_cuts;
      cut = hit_lo >= beta ? hit_lo : hit_hi;
      return true;
    }
    if (hit_move != kNoMove) tt_move = table_move(p, t_.inv[slot.sym][hit_move]);
    return false;
  }

  // The table move first (or, rule 5, the border side searched in its place); in a helper thread near the
  // root, the moves after the first in another order than the main thread's.
  void reorder(const Pos& p, int tt_move, Moves& moves) const {
    if (tt_move >= 0) {
      const int grp = t_.border_group_of[tt_move];
      for (int i = 0; i < moves.n; ++i) {
        if (moves.m[i] == tt_move || (grp >= 0 && t_.border_group_of[moves.m[i]] == grp)) {
          std::rotate(moves.m, moves.m + i, moves.m + i + 1);
          break;
        }
      }
    }
    if (id_ > 0 && p.undrawn + 2 >= root_undrawn_ && moves.n > 2) {
      const int first = tt_move >= 0 ? 1 : 0;
      std::rotate(moves.m + first, moves.m + first + (id_ % (moves.n - first)), moves.m + moves.n);
    }
  }

  // Stores the result `best` of a search on the window (alpha, beta) of a position with r unclaimed boxes:
  // a bound (or the exact value) in its table entry, the move that gave it when it beat alpha, and the
  // work of the search's `nodes` nodes.
  void store(const TableSlot& slot, int r, int alpha, int beta, int best, int best_move, uint64_t nodes) {
    uint8_t work = 1;
    while (work < 64 && (uint64_t(1) << work) <= nodes) ++work;
    TranspositionTable::Guard guard(tt_, slot.hash);
    TTEntry* e = tt_.probe(slot.hash, slot.key);
    if (!e) {
      e = tt_.insert(slot.hash, slot.key, work);
      e->lo = Bound(-r);
      e->hi = Bound(r);
      e->move = kNoMove;
    }
    if (best <= alpha) e->hi = Bound(std::min<int>(e->hi, best));
    else if (best >= beta) e->lo = Bound(std::max<int>(e->lo, best));
    else e->lo = e->hi = Bound(best);
    e->work = std::max(e->work, work);
    if (best > alpha && best_move >= 0) e->move = t_.perm[slot.sym][best_move];
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
    TableSlot slot;
    const bool use_tt = p.undrawn >= kTableMinUndrawn;
    int tt_move = -1;
    if (use_tt) {
      slot.sym = canonical(p, slot.key);
      slot.hash = key_hash(slot.key);
      int cut;
      if (probe_table(p, slot, alpha, beta, cut, tt_move)) return gained + cut;
    }
    if (kind == NodeKind::kDeferred) generate(t_, p, rules_, moves, scratch_, stats_.rules, true);
    if (moves.n == 0) throw std::logic_error("solver: no move generated at a live position");
    reorder(p, tt_move, moves);
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
    if (use_tt) store(slot, r, alpha, beta, best, best_move, stats_.nodes - nodes_before + 1);
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

}  // namespace exact
}  // namespace dnb
