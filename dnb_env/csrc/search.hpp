// Tree search over Board positions (PUCT, or UCT as a selection rule): the C++ twin of
// agents/search/python.py (MCTS), step for step, so that both give bit-identical visit counts and values on
// the same evaluator outputs (PUCT; UCT draws its move orders from a generator of its own).
//
//   Tree     one search: a node pool with each node's child edges stored contiguously (struct of arrays:
//            P, N, W, Q, U, child, action), compacted to the kept subtree when the root moves (tree reuse),
//            so memory stays at the size of one search over a whole game
//   Forest   G trees run in lockstep: collect(limits) gathers up to limits[g] leaves of tree g with virtual
//            loss (leaf positions, legal masks, encoded planes), complete(priors, values) backs them up;
//            or run_builtin() runs every tree to the end with an evaluator written here (uniform priors
//            with value 0, or uniform priors with random playouts)
//
// The semantics (agents/search/python.py is the reference, its docstrings the explanation):
//   per node and child edge i: P renormalised in float64 over the searched moves (numpy's pairwise sum;
//   uniform when it sums to <= 0), N, W, Q = W / N (0 while N == 0), U = P / (1 + N), total = sum of updates;
//   selection (PUCT): first argmax of Q[i] + (c_puct * sqrt(max(total, 1))) * U[i];
//   selection (UCT): the node's edges in an order drawn when it is expanded (O, from the tree's own Rng,
//   seeded by seed_orders), the first unvisited one, else the first in that order maximising
//   Q[i] + c_puct * sqrt(ln N(s) / N[i]), N(s) = the root's total, below it N of the edge into the node;
//   priors are not used and the root is not evaluated (agents/search/native.py gives it uniform priors);
//   descent adds (+vl visits, -vl value); backup adds (1 - vl, v + vl) from the leaf up, negating v only
//   where the mover changes; a leaf met twice in one collect is reverted (-vl, +vl) and evaluated once;
//   terminal leaves and (prune) simple-endgame leaves get exact values and count as simulations;
//   an evaluated leaf keeps its priors ("pending") and is expanded when a later simulation walks through it;
//   prune: a position with a box on offer searches only the captures and the all-but-two declines.
// Order matters for float sums, so updates happen in the reference's order. The multiply-adds (the PUCT
// and UCT scores and the root noise) must not be fused into one rounding as an FMA: x86-64 without -march
// has no FMA instructions; elsewhere DNB_NO_FMA turns contraction off for those functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "analysis.hpp"
#include "encoders.hpp"
#include "engine.hpp"
#include "solver.hpp"

#if defined(__GNUC__) && !defined(__clang__) && !defined(__x86_64__) && !defined(__i386__)
#define DNB_NO_FMA __attribute__((optimize("fp-contract=off")))
#else
#define DNB_NO_FMA
#endif

namespace dnb {
namespace search {


// np.sum of a contiguous float64 array (numpy's pairwise summation, unrolled by 8 in blocks of 128; the
// reduction starts from the identity 0.0). Checked against numpy in tests/test_search_native.py.
inline double pairwise_sum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

// Result for the mover when the open boxes go `extra` net to them (agents.search.exact.final_value).
inline double final_value(const Geometry& g, const Board& b, bool margin, int extra) {
  int m = (b.player == 0 ? b.score[0] - b.score[1] : b.score[1] - b.score[0]) + extra;
  if (margin) return double(m) / double(g.num_boxes);
  return double((m > 0) - (m < 0));
}

inline bool same_position(const Board& a, const Board& b) {
  return std::memcmp(a.edges, b.edges, sizeof a.edges) == 0 && std::memcmp(a.owners, b.owners, sizeof a.owners) == 0 &&
         a.player == b.player;
}

// Every value comes from agents.search.settings.SearchSettings (the one home of the defaults), passed
// by agents/search/native.py through the SearchTree constructor; none has a default here.
struct Settings {
  double c_puct;
  double virtual_loss;
  bool prune;
  bool margin;  // value units: false = win/loss/draw (+1/-1/0), true = margin / boxes
  bool uct;     // selection rule: false = PUCT, true = UCT
  // exact leaves from the alpha-beta solver (solver.hpp): a leaf with at most solve_undrawn undrawn edges
  // (0 = never) is solved within solve_nodes nodes; a solve that runs out lowers the zone to one edge
  // below that leaf for the rest of the search (start() restores it). The table keeps across searches.
  int solve_undrawn;
  uint64_t solve_nodes;
  size_t solve_entries;  // transposition-table entries (grown on demand)
};

enum NodeFlag : uint8_t {
  kExpanded = 1,      // has child edges
  kTerminal = 2,      // every edge drawn
  kPending = 4,       // evaluated: priors kept in the pending pool until the node is expanded
  kExactChecked = 8,  // the simple-endgame test was run (prune)
  kHasExact = 16,     // ... and the position is one: `exact` holds its value
  kQueued = 32,       // a leaf of the collect in progress
  kSolveTried = 64,   // the exact solver was run on it (solve_undrawn); kHasExact if it finished
};

struct Node {
  Board board;
  double total = 0.0;    // sum of the visit updates of the child edges
  double exact = 0.0;    // exact value for the mover, with kHasExact
  int64_t pending = -1;  // offset in the pending pool of the priors of the legal moves (increasing), with kPending
  uint32_t first = 0;    // first child edge, with kExpanded
  uint16_t count = 0;    // number of child edges
  uint16_t tried = 0;    // UCT: the edges of O (in order) known to be visited
  uint8_t flags = 0;
};

struct Step {
  int32_t node;
  int32_t edge;  // index among the node's edges
};

enum class Builtin { uniform, rollout };

class Tree {
 public:
  explicit Tree(const Settings& s) : s_(s) {}

  const Settings& settings() const { return s_; }
  const Geometry* geom() const { return g_; }
  bool has_root() const { return root_ >= 0; }
  int64_t simulations() const { return simulations_; }
  int64_t done() const { return done_; }
  int64_t remaining() const { return root_ >= 0 ? simulations_ - done_ : 0; }
  size_t num_nodes() const { return nodes_.size(); }
  size_t num_edges() const { return P_.size(); }
  size_t pending_size() const { return pend_.size(); }
  size_t capacity_bytes() const {
    return nodes_.capacity() * sizeof(Node) + (P_.capacity() + N_.capacity() + W_.capacity() + Q_.capacity() +
                                               U_.capacity()) * sizeof(double) +
           child_.capacity() * sizeof(int32_t) + (action_.capacity() + O_.capacity()) * sizeof(EdgeIndex) + pend_.capacity() * sizeof(double);
  }
  bool batch_open() const { return batch_open_; }
  uint64_t batch_serial() const { return serial_; }
  size_t batch_size() const { return leaves_.size(); }
  const Node& node(int32_t i) const { return nodes_[size_t(i)]; }
  const Node& root() const { return nodes_[size_t(root_)]; }
  int32_t root_index() const { return root_; }

  // Forget everything (an open collect included).
  void clear() {
    nodes_.clear();
    P_.clear(), N_.clear(), W_.clear(), Q_.clear(), U_.clear(), child_.clear(), action_.clear(), O_.clear();
    pend_.clear();
    leaves_.clear(), offs_.clear(), steps_.clear();
    batch_open_ = false;
    root_ = -1;
    done_ = 0;
  }

  // The node reached from the root by `actions` if it holds position `b` (same geometry), else -1.
  int32_t locate(const Geometry& g, const Board& b, const int64_t* actions, size_t n) const {
    if (root_ < 0 || g_ != &g) return -1;
    int32_t at = root_;
    for (size_t k = 0; k < n; ++k) {
      at = child_of(at, actions[k]);
      if (at < 0) return -1;
    }
    return same_position(nodes_[size_t(at)].board, b) ? at : -1;
  }

  // Make `at` (from locate) the root, dropping everything outside its subtree; or, with at = -1, start a
  // new tree at position `b`. An open collect is reverted first. Returns whether the root still needs
  // the evaluator (neither expanded nor evaluated).
  bool set_root(const Geometry& g, const Board& b, int32_t at) {
    discard_batch();
    if (at >= 0) {
      compact(at);
    } else {
      clear();
      g_ = &g;
      root_ = new_node(b);
    }
    done_ = 0;
    return needs_evaluation(root_);
  }

  bool needs_evaluation(int32_t at) const {
    return !(nodes_[size_t(at)].flags & (kExpanded | kPending));
  }

  void start(int64_t simulations) {
    nodes_.reserve(nodes_.size() + size_t(simulations) + 1);  // at most one new node per simulation
    simulations_ = simulations;
    done_ = 0;
    zone_ = s_.solve_undrawn;
  }

  // Leaf solves stop `seconds` from now as if out of nodes (a timed move), without lowering the zone;
  // a negative value lifts the deadline.
  void set_solve_deadline(double seconds) {
    solve_timed_ = seconds >= 0;
    if (solve_timed_) {
      solve_deadline_ = exact::Solver::Clock::now() +
                        std::chrono::duration_cast<exact::Solver::Clock::duration>(std::chrono::duration<double>(seconds));
    }
    if (!solver_) return;
    if (solve_timed_) solver_->set_deadline(solve_deadline_);
    else solver_->clear_deadline();
  }

  // The evaluator's priors [A] of the root.
  void set_root_priors(const double* row) { store_pending(root_, row); }

  // The generator of the UCT move orders (drawn as nodes are expanded).
  void seed_orders(uint64_t seed) { orders_ = Rng(seed); }

  // Expand the root if it is not yet (it must have been evaluated); returns its number of child edges.
  int expand_root() {
    Node& r = nodes_[size_t(root_)];
    if (!(r.flags & kExpanded)) {
      if (!(r.flags & kPending)) throw std::logic_error("the root has not been evaluated");
      expand(root_);
    }
    return nodes_[size_t(root_)].count;
  }

  // Dirichlet noise at the root: P = (1 - eps) P + eps noise, U = P / (1 + N).
  DNB_NO_FMA void add_root_noise(const double* noise, double eps) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    const Node& r = nodes_[size_t(root_)];
    const double keep = 1 - eps;
    for (uint32_t i = 0; i < r.count; ++i) {
      const size_t e = r.first + i;
      const double a = keep * P_[e];
      const double b = eps * noise[i];
      P_[e] = a + b;
      U_[e] = P_[e] / (1.0 + N_[e]);
    }
  }

  // Keep the subtree of `action` as the root (tree reuse); false (and an empty tree) when it is not there.
  bool advance(int64_t action) {
    const int32_t at = root_ >= 0 ? child_of(root_, action) : -1;
    if (at < 0) {
      clear();
      return false;
    }
    discard_batch();
    root_ = at;
    return true;
  }

  // Up to `limit` leaves needing the evaluator, kept as the open batch (virtual loss applied); exact
  // leaves are backed up on the way and count as simulations. Returns the number of leaves.
  size_t collect(int64_t limit) {
    if (batch_open_) throw std::logic_error("collect() again before complete() of the previous batch");
    leaves_.clear(), offs_.assign(1, 0), steps_.clear();
    ++serial_;
    const int64_t n = std::min(limit, remaining());
    for (int64_t k = 0; k < n; ++k) {
      const int32_t leaf = descend();
      double v;
      Node& L = nodes_[size_t(leaf)];
      if (leaf_value(leaf, v)) {
        backup(path_.data(), path_.size(), leaf, v);
        ++done_;
      } else if (L.flags & kQueued) {
        revert(path_.data(), path_.size());
      } else {
        L.flags |= kQueued;
        leaves_.push_back(leaf);
        steps_.insert(steps_.end(), path_.begin(), path_.end());
        offs_.push_back(uint32_t(steps_.size()));
      }
    }
    for (int32_t leaf : leaves_) nodes_[size_t(leaf)].flags &= uint8_t(~kQueued);
    batch_open_ = !leaves_.empty();
    return leaves_.size();
  }

  const Board& leaf_board(size_t k) const { return nodes_[size_t(leaves_[k])].board; }

  // Back up the open batch: priors rows [n, A] (row k for leaf k; nullptr: uniform 1/A), values [n] for
  // each leaf's mover.
  void complete(const double* priors, const double* values) {
    const size_t A = size_t(g_->num_actions);
    for (size_t k = 0; k < leaves_.size(); ++k) {
      store_pending(leaves_[k], priors ? priors + k * A : nullptr);
      backup(steps_.data() + offs_[k], offs_[k + 1] - offs_[k], leaves_[k], values[k]);
    }
    done_ += int64_t(leaves_.size());
    leaves_.clear(), steps_.clear(), offs_.assign(1, 0);
    batch_open_ = false;
  }

  // Complete the open batch with an evaluator written here: uniform priors 1/A and value 0 (what
  // agents.search.evaluators.UniformEvaluator returns), or uniform priors and the mean result of `rollouts` random
  // playouts for the mover.
  void complete_builtin(Builtin kind, int rollouts, Rng& rng) {
    const size_t n = leaves_.size();
    std::vector<double>& vals = scratch_vals_;
    vals.assign(n, 0.0);
    if (kind == Builtin::rollout) {
      for (size_t k = 0; k < n; ++k) {
        const Board& b = nodes_[size_t(leaves_[k])].board;
        double total = 0.0;
        for (int r = 0; r < rollouts; ++r) {
          const int d = random_playout(*g_, b, rng);
          const double res = s_.margin ? double(d) / double(g_->num_boxes) : double((d > 0) - (d < 0));
          total += b.player == 0 ? res : -res;
        }
        vals[k] = total / rollouts;
      }
    }
    complete(nullptr, vals.data());
  }

  // Run the search to its end with a built-in evaluator, `limit` leaves per round.
  void run_builtin(Builtin kind, int rollouts, int64_t limit, Rng& rng) {
    while (remaining() > 0) {
      collect(limit);
      if (batch_open_) complete_builtin(kind, rollouts, rng);
    }
  }

  // Revert the virtual loss of an open batch and drop it.
  void discard_batch() {
    if (!batch_open_) return;
    for (size_t k = 0; k < leaves_.size(); ++k) revert(steps_.data() + offs_[k], offs_[k + 1] - offs_[k]);
    leaves_.clear(), steps_.clear(), offs_.assign(1, 0);
    batch_open_ = false;
  }

  // Expanded, non-terminal nodes with total >= min_visits below the root, not in the subtree of
  // `played`, in the order of agents.training.selfplay.internal_nodes (a depth-first walk with a stack,
  // children in the order they were created).
  std::vector<int32_t> internal_nodes(int64_t played, double min_visits) const {
    std::vector<int32_t> out, stack;
    if (root_ < 0) return out;
    std::vector<std::pair<int32_t, int32_t>> kids;  // (child, action) by creation
    auto children = [&](int32_t at, int64_t skip) {
      kids.clear();
      const Node& n = nodes_[size_t(at)];
      if (!(n.flags & kExpanded)) return;
      for (uint32_t i = 0; i < n.count; ++i) {
        const int32_t c = child_[n.first + i];
        if (c >= 0 && int64_t(action_[n.first + i]) != skip) kids.emplace_back(c, action_[n.first + i]);
      }
      std::sort(kids.begin(), kids.end());
      for (const auto& k : kids) stack.push_back(k.first);
    };
    children(root_, played);
    while (!stack.empty()) {
      const int32_t at = stack.back();
      stack.pop_back();
      const Node& n = nodes_[size_t(at)];
      if (!(n.flags & kExpanded) || (n.flags & kTerminal) || n.total < min_visits) continue;
      out.push_back(at);
      children(at, -1);
    }
    return out;
  }

  // The actions of the child edges of node `at` that have a child node, in the order the children were
  // made (the order the search first took them); returns how many.
  int visit_order(int32_t at, int32_t* actions) const {
    const Node& n = nodes_[size_t(at)];
    std::pair<int32_t, int32_t> made[kMaxEdges];  // (child, action)
    int k = 0;
    for (uint32_t i = 0; i < n.count; ++i) {
      if (child_[n.first + i] >= 0) made[k++] = {child_[n.first + i], action_[n.first + i]};
    }
    std::sort(made, made + k);
    for (int i = 0; i < k; ++i) actions[i] = made[i].second;
    return k;
  }

  // The child edges of node `at`: actions, N and W (in edge order, increasing action).
  void edges_of(int32_t at, int32_t* actions, double* visits, double* values) const {
    const Node& n = nodes_[size_t(at)];
    for (uint32_t i = 0; i < n.count; ++i) {
      actions[i] = action_[n.first + i];
      visits[i] = N_[n.first + i];
      values[i] = W_[n.first + i];
    }
  }
  const double* priors_of(int32_t at) const { return P_.data() + nodes_[size_t(at)].first; }

 private:
  int32_t child_of(int32_t at, int64_t action) const {
    const Node& n = nodes_[size_t(at)];
    if (!(n.flags & kExpanded) || action < 0 || action >= 256) return -1;
    for (uint32_t i = 0; i < n.count; ++i) {
      if (action_[n.first + i] == action) return child_[n.first + i];
    }
    return -1;
  }

  int32_t new_node(const Board& b) {
    Node n;
    n.board = b;
    n.flags = is_terminal(*g_, b) ? kTerminal : 0;
    nodes_.push_back(n);
    return int32_t(nodes_.size() - 1);
  }

  // Keep the priors of the legal moves of node `at` (row [A]; nullptr: uniform 1/A, stored as a marker).
  void store_pending(int32_t at, const double* row) {
    Node& n = nodes_[size_t(at)];
    n.flags |= kPending;
    if (!row) {
      n.pending = kUniform;
      return;
    }
    const size_t off = pend_.size();
    n.pending = int64_t(off);
    pend_.resize(off + size_t(g_->num_actions - n.board.drawn));
    double* out = pend_.data() + off;
    for (int w = 0; w < kEdgeWords; ++w) {
      uint64_t free = ~n.board.edges[w] & g_->full[w];
      while (free) {
        *out++ = row[w * 64 + lowest_bit(free)];
        free &= free - 1;
      }
    }
  }

  // Child edges for the searched moves with the pending priors renormalised (Node.expand + _expand).
  void expand(int32_t at) {
    const Geometry& g = *g_;
    Node& n = nodes_[size_t(at)];
    int8_t mask[kMaxEdges];
    const bool pruned = s_.prune && capture_or_decline(g, n.board, mask);
    double p[kMaxEdges] = {};
    EdgeIndex acts[kMaxEdges];
    int k = 0, j = 0;
    const double uniform = 1.0 / g.num_actions;
    const double* pend = n.pending == kUniform ? nullptr : pend_.data() + n.pending;
    for (int w = 0; w < kEdgeWords; ++w) {
      uint64_t free = ~n.board.edges[w] & g.full[w];
      while (free) {
        const int a = w * 64 + lowest_bit(free);
        free &= free - 1;
        if (!pruned || mask[a]) {
          acts[k] = EdgeIndex(a);
          p[k++] = pend ? pend[j] : uniform;
        }
        ++j;
      }
    }
    const double total = pairwise_sum(p, size_t(k));
    const size_t first = P_.size(), end = first + size_t(k);
    n.first = uint32_t(first);
    n.count = uint16_t(k);
    P_.resize(end), U_.resize(end), N_.resize(end), W_.resize(end), Q_.resize(end), child_.resize(end), action_.resize(end);
    for (int i = 0; i < k; ++i) {
      const double prior = total > 0 ? p[i] / total : 1.0 / k;
      P_[first + size_t(i)] = prior;
      U_[first + size_t(i)] = prior;
      N_[first + size_t(i)] = 0.0;
      W_[first + size_t(i)] = 0.0;
      Q_[first + size_t(i)] = 0.0;
      child_[first + size_t(i)] = -1;
      action_[first + size_t(i)] = acts[i];
    }
    n.flags = uint8_t((n.flags | kExpanded) & ~kPending);
    n.pending = -1;
    if (s_.uct) {  // the order the edges are tried in: a uniform shuffle (Fisher-Yates)
      O_.resize(end);
      EdgeIndex* o = O_.data() + first;
      for (int i = 0; i < k; ++i) o[i] = EdgeIndex(i);
      for (int i = k - 1; i > 0; --i) std::swap(o[i], o[orders_.below(uint32_t(i + 1))]);
      n.tried = 0;
    }
  }

  DNB_NO_FMA int select(int32_t at) const {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    const Node& n = nodes_[size_t(at)];
    const double t = n.total;
    const double f = s_.c_puct * std::sqrt(t > 1.0 ? t : 1.0);
    const double* Q = Q_.data() + n.first;
    const double* U = U_.data() + n.first;
    int best = 0;
    double bv = Q[0] + f * U[0];
    for (int i = 1; i < n.count; ++i) {
      const double v = Q[i] + f * U[i];
      if (v > bv) bv = v, best = i;
    }
    return best;
  }

  // UCT: the first unvisited edge in the node's order, else the first in that order maximising
  // Q + c_puct sqrt(ln visits / N); `visits` is N(s) of the node.
  DNB_NO_FMA int select_uct(int32_t at, double visits) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
    Node& n = nodes_[size_t(at)];
    const EdgeIndex* o = O_.data() + n.first;
    const double* N = N_.data() + n.first;
    const double* Q = Q_.data() + n.first;
    int j = n.tried;
    while (j < n.count && N[o[j]] > 0) ++j;
    n.tried = uint16_t(j);
    if (j < n.count) return o[j];
    const double c = s_.c_puct, log_n = std::log(visits);
    int best = o[0];
    double bv = -std::numeric_limits<double>::infinity();
    for (int k = 0; k < n.count; ++k) {
      const int i = o[k];
      const double v = Q[i] + c * std::sqrt(log_n / N[i]);
      if (v > bv) bv = v, best = i;
    }
    return best;
  }

  void update(int32_t at, int i, double visits, double value) {
    Node& n = nodes_[size_t(at)];
    const size_t e = n.first + uint32_t(i);
    const double nv = N_[e] += visits;
    const double w = W_[e] += value;
    Q_[e] = nv > 0 ? w / nv : 0.0;
    U_[e] = P_[e] / (1.0 + nv);
    n.total += visits;
  }

  // Walk to a leaf with virtual loss (MCTS._descend); the path is left in path_.
  int32_t descend() {
    path_.clear();
    const double vl = s_.virtual_loss;
    int32_t at = root_;
    double visits = nodes_[size_t(at)].total;  // UCT: N(s) of the node (the root's total, then N of the edge)
    for (;;) {
      const uint8_t flags = nodes_[size_t(at)].flags;
      if (flags & kTerminal) break;
      if (!(flags & kExpanded)) {
        if (!(flags & kPending)) break;
        expand(at);
      }
      const int i = s_.uct ? select_uct(at, visits) : select(at);
      path_.push_back({at, i});
      const size_t e = nodes_[size_t(at)].first + uint32_t(i);
      visits = N_[e];
      update(at, i, vl, -vl);
      int32_t c = child_[e];
      if (c < 0) {
        Board b = nodes_[size_t(at)].board;
        apply(*g_, b, action_[e]);
        c = new_node(b);
        child_[e] = c;
      }
      at = c;
    }
    return at;
  }

  // Exact value of a leaf for its mover where one is known without the evaluator (MCTS._leaf_value).
  bool leaf_value(int32_t at, double& v) {
    Node& n = nodes_[size_t(at)];
    if (n.flags & kTerminal) {
      v = final_value(*g_, n.board, s_.margin, 0);
      return true;
    }
    if (s_.prune && !(n.flags & kExactChecked)) {
      int e;
      if (endgame_value(*g_, n.board, e)) {
        n.exact = final_value(*g_, n.board, s_.margin, e);
        n.flags |= kHasExact;
      }
      n.flags |= kExactChecked;
    }
    if (!(n.flags & (kHasExact | kSolveTried))) {
      const int undrawn = g_->num_actions - n.board.drawn;
      if (undrawn <= zone_) {
        int e;
        n.flags |= kSolveTried;
        if (solve(n.board, e)) {
          n.exact = final_value(*g_, n.board, s_.margin, e);
          n.flags |= kHasExact;
        } else if (!solver_->past_deadline()) {  // out of nodes, not out of time
          zone_ = undrawn - 1;
        }
      }
    }
    if (!(n.flags & kHasExact)) return false;
    v = n.exact;
    return true;
  }

  // What the open boxes of `b` are worth net to its mover under best play, as far as the value units
  // need: the exact margin (margin units), or one margin of the right sign (win units: one or two
  // null-window tests, as baselines.solver.Solver.outcome). False when solve_nodes ran out.
  bool solve(const Board& b, int& extra) {
    if (!solver_) {
      solver_ = std::make_unique<exact::Solver>(g_->rows, g_->cols, s_.solve_entries, exact::kAllRules);
      if (solve_timed_) solver_->set_deadline(solve_deadline_);
    }
    const exact::Pos p = exact::make_pos(solver_->topo(), b.edges);
    if (s_.margin) {
      int lo = 0, hi = 0;
      if (!solver_->value(p, 0, s_.solve_nodes, lo, hi)) return false;
      extra = lo;
      return true;
    }
    const int have = b.player == 0 ? b.score[0] - b.score[1] : b.score[1] - b.score[0];
    int r = solver_->at_least(p, 1 - have, s_.solve_nodes);
    if (r < 0) return false;
    if (r == 1) {
      extra = 1 - have;  // a win
      return true;
    }
    r = solver_->at_least(p, -have, s_.solve_nodes);
    if (r < 0) return false;
    extra = r == 1 ? -have : -have - 1;  // a draw or a loss
    return true;
  }

  void backup(const Step* path, size_t len, int32_t leaf, double value) {
    const double vl = s_.virtual_loss;
    double v = value;
    int mover = nodes_[size_t(leaf)].board.player;
    for (size_t k = len; k-- > 0;) {
      const int p = nodes_[size_t(path[k].node)].board.player;
      if (p != mover) v = -v, mover = p;
      update(path[k].node, path[k].edge, 1 - vl, v + vl);
    }
  }

  void revert(const Step* path, size_t len) {
    const double vl = s_.virtual_loss;
    for (size_t k = 0; k < len; ++k) update(path[k].node, path[k].edge, -vl, vl);
  }

  // Keep only the subtree of `keep`, nodes in their old (creation) order, so the root becomes node 0.
  void compact(int32_t keep) {
    const size_t n = nodes_.size();
    std::vector<int32_t>& remap = remap_;
    remap.assign(n, -1);
    std::vector<int32_t>& stack = stack_;
    stack.assign(1, keep);
    remap[size_t(keep)] = 1;  // 1 = kept, until the pass below numbers them
    while (!stack.empty()) {
      const Node& x = nodes_[size_t(stack.back())];
      stack.pop_back();
      if (!(x.flags & kExpanded)) continue;
      for (uint32_t i = 0; i < x.count; ++i) {
        const int32_t c = child_[x.first + i];
        if (c >= 0) remap[size_t(c)] = 1, stack.push_back(c);
      }
    }
    int32_t next = 0;
    for (size_t i = 0; i < n; ++i) remap[i] = remap[i] == 1 ? next++ : -1;  // new index, or -1: dropped
    P2_.clear(), N2_.clear(), W2_.clear(), Q2_.clear(), U2_.clear(), child2_.clear(), action2_.clear(), O2_.clear();
    pend2_.clear();
    size_t out = 0;
    for (size_t i = 0; i < n; ++i) {
      if (remap[i] < 0) continue;
      Node x = nodes_[i];
      if (x.flags & kExpanded) {
        const uint32_t first = uint32_t(P2_.size());
        for (uint32_t k = 0; k < x.count; ++k) {
          const size_t e = x.first + k;
          P2_.push_back(P_[e]), N2_.push_back(N_[e]), W2_.push_back(W_[e]), Q2_.push_back(Q_[e]), U2_.push_back(U_[e]);
          child2_.push_back(child_[e] >= 0 ? remap[size_t(child_[e])] : -1);
          action2_.push_back(action_[e]);
          if (s_.uct) O2_.push_back(O_[e]);
        }
        x.first = first;
      }
      if ((x.flags & kPending) && x.pending != kUniform) {
        const int64_t off = int64_t(pend2_.size());
        const size_t legal = size_t(g_->num_actions - x.board.drawn);
        pend2_.insert(pend2_.end(), pend_.begin() + x.pending, pend_.begin() + x.pending + std::ptrdiff_t(legal));
        x.pending = off;
      }
      nodes_[out++] = x;
    }
    nodes_.resize(out);
    P_.swap(P2_), N_.swap(N2_), W_.swap(W2_), Q_.swap(Q2_), U_.swap(U2_), child_.swap(child2_), action_.swap(action2_);
    O_.swap(O2_);
    pend_.swap(pend2_);
    root_ = 0;
  }

  static constexpr int64_t kUniform = -2;  // Node::pending of uniform priors 1/A (nothing stored)

  Settings s_;
  const Geometry* g_ = nullptr;
  std::unique_ptr<exact::Solver> solver_;  // exact leaves (solve_undrawn), made on first use
  bool solve_timed_ = false;               // set_solve_deadline: leaf solves stop at solve_deadline_
  exact::Solver::Clock::time_point solve_deadline_{};
  int zone_ = 0;                           // this search's solve_undrawn (lowered when a solve runs out)
  std::vector<Node> nodes_;
  std::vector<double> P_, N_, W_, Q_, U_;
  std::vector<int32_t> child_;
  std::vector<EdgeIndex> action_;
  std::vector<EdgeIndex> O_;    // UCT: per node, its edge offsets in the order they are tried
  Rng orders_{0};             // UCT: the generator of those orders
  std::vector<double> pend_;  // pending priors, per evaluated node its legal moves in increasing order
  int32_t root_ = -1;
  int64_t simulations_ = 0, done_ = 0;
  // the open batch: leaves, their paths (steps_[offs_[k]:offs_[k+1]])
  std::vector<int32_t> leaves_;
  std::vector<uint32_t> offs_{0};
  std::vector<Step> steps_;
  bool batch_open_ = false;
  uint64_t serial_ = 0;
  // scratch (kept for their capacity)
  std::vector<Step> path_;
  std::vector<int32_t> remap_, stack_;
  std::vector<double> P2_, N2_, W2_, Q2_, U2_, pend2_;
  std::vector<int32_t> child2_;
  std::vector<EdgeIndex> action2_, O2_;
  std::vector<double> scratch_vals_;
};

// Run fn(i) for i in 0..n-1 on up to `threads` threads (the calling one included); the first exception
// is rethrown after every thread has finished.
template <typename Fn>
void parallel_for(size_t n, int threads, Fn fn) {
  const size_t t = std::min<size_t>(n, size_t(std::max(1, threads)));
  if (t <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::vector<std::exception_ptr> errors(t);
  auto work = [&](size_t w) {
    try {
      for (size_t i = w; i < n; i += t) fn(i);
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < t; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace search
}  // namespace dnb
