// Nimstring values of Dots-and-Boxes positions (dnb_env.features.nimstring_values).
//
// Nimstring is Dots-and-Boxes played for the last move instead of the boxes: drawing the side that
// completes a box obliges the player to move again, and a player who cannot move loses (so whoever draws
// the last edge loses). Its winner is the player who gets control in Dots-and-Boxes: the one who forces
// the other to open the first long chain. A position splits into independent parts (boxes joined by
// undrawn sides; the outside joins nothing), and the value of a sum is the XOR of the parts' Grundy values.
// With the forms (nimstring_forms.hpp) a part splits further where only long runs join it, or a box at the
// ends of two long runs, which no move that counts ever draws: each piece is then searched on its own.
//
// Two rules of the game's theory cut the search (Berlekamp, "The Dots-and-Boxes Game", ch. 6):
//  * a position where the mover can take boxes and then decline the last two (or two pairs) of them is
//    "loony": the mover wins it whatever else is on the board (take all, or decline and leave the
//    opponent to take them and move), so a move into it is never a winning move and counts for nothing in
//    the mex;
//  * any other box the mover can take is taken: the value of the position is the value after it.
// Both are checked against a plain search of the game with neither rule in tests/test_nimstring.py.
//
// Positions are undrawn-edge masks of one 64-bit word: boards of at most 64 edges (5x5 has 60), or any
// strings-and-coins graph of at most 64 strings, such as the undrawn part of a larger board's position.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "nimstring_forms.hpp"

namespace dnb::nim {

//: The value of a loony position (the mover wins; a move into it never counts in a mex).
constexpr int kLoony = 255;

struct OutOfPositions {};

inline uint64_t memo_hash(uint64_t key) { return key * 0x9E3779B97F4A7C15ull; }
inline uint64_t memo_hash(const FormKey& key) { return key.lo; }
inline bool memo_empty(uint64_t key) { return key == 0; }
inline bool memo_empty(const FormKey& key) { return !key.ok; }
inline bool operator==(const FormKey& a, const FormKey& b) { return a.ok == b.ok && a.hi == b.hi && a.lo == b.lo; }

// Open addressing over (key, tag) to a small value; a key that tests empty marks a free slot. It doubles
// until `max_entries` slots; a store into a full table first drops the half of the entries whose search cost
// least (values are exact: a dropped one costs time only).
template <class Key>
class Memo {
 public:
  explicit Memo(size_t max_entries) : max_entries_(max_entries) { clear(); }
  size_t used() const { return used_; }
  void clear() {
    if (used_ == 0 && keys_.size() == size_t(1) << 16) return;  // already empty
    keys_.assign(size_t(1) << 16, Key{});
    tags_.assign(size_t(1) << 16, 0);
    vals_.assign(size_t(1) << 16, 0);
    works_.assign(size_t(1) << 16, 0);
    used_ = 0;
  }
  int lookup(const Key& key, int tag) const {
    for (size_t i = slot(key, tag);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == key && tags_[i] == tag) return vals_[i];
      if (memo_empty(keys_[i])) return -1;
    }
  }
  // `work`: the positions searched to find the value (what a full table keeps)
  void store(const Key& key, int tag, int v, uint64_t work) {
    if (2 * (used_ + 1) > keys_.size()) {
      if (keys_.size() >= max_entries_) {
        sweep();
      } else {
        rebuild(keys_.size() * 2, 0);
      }
    }
    put(key, uint8_t(tag), uint8_t(v), uint8_t(64 - __builtin_clzll(work | 1)));
  }

 private:
  size_t max_entries_;
  std::vector<Key> keys_;
  std::vector<uint8_t> tags_, vals_, works_;
  size_t used_ = 0;

  size_t slot(const Key& key, int tag) const {
    return size_t((memo_hash(key) ^ (uint64_t(tag) * 0xD6E8FEB86659FD93ull)) >> 20) & (keys_.size() - 1);
  }
  void put(const Key& key, uint8_t tag, uint8_t v, uint8_t w) {
    size_t i = slot(key, tag);
    while (!memo_empty(keys_[i])) i = (i + 1) & (keys_.size() - 1);
    keys_[i] = key;
    tags_[i] = tag;
    vals_[i] = v;
    works_[i] = w;
    ++used_;
  }
  // keeps the costliest entries, about half of them
  void sweep() {
    std::array<size_t, 66> count{};
    for (size_t i = 0; i < keys_.size(); ++i)
      if (!memo_empty(keys_[i])) ++count[works_[i]];
    size_t kept = 0;
    int least = 65;
    while (least > 0 && kept + count[least - 1] <= used_ / 2) kept += count[--least];
    rebuild(keys_.size(), least);
  }
  // the table in `size` slots, with the entries of work >= `least`
  void rebuild(size_t size, int least) {
    std::vector<Key> k(size, Key{});
    std::vector<uint8_t> t(size, 0), v(size, 0), w(size, 0);
    std::swap(k, keys_);
    std::swap(t, tags_);
    std::swap(v, vals_);
    std::swap(w, works_);
    used_ = 0;
    for (size_t i = 0; i < k.size(); ++i)
      if (!memo_empty(k[i]) && w[i] >= least) put(k[i], t[i], v[i], w[i]);
  }
};

class Nimstring {
 public:
  // box_sides: the four edges of each box (-1 pads: a coin of a strings-and-coins graph may have fewer);
  // edge_boxes: the one or two boxes beside each edge (-1 pads: the outside).
  Nimstring(const std::vector<std::array<int16_t, 4>>& box_sides,
            const std::vector<std::array<int16_t, 2>>& edge_boxes, size_t max_entries = size_t(1) << 24,
            bool reductions = true, bool forms = true)
      : num_boxes_(int(box_sides.size())), num_edges_(int(edge_boxes.size())),
        table_(forms ? max_entries / 2 : max_entries), forms_(forms), form_table_(forms ? max_entries / 4 : 1),
        reductions_(reductions) {
    box_mask_.assign(num_boxes_, 0);
    for (int b = 0; b < num_boxes_; ++b)
      for (int e : box_sides[b])
        if (e >= 0) box_mask_[b] |= uint64_t(1) << e;  // -1 pads a box of fewer sides (a graph's coin)
    for (int e = 0; e < num_edges_; ++e) edge_boxes_.push_back({edge_boxes[e][0], edge_boxes[e][1]});
    // the border sides of one box are the same move in Nimstring (each joins that box to the outside):
    // with the reductions a border side is searched only while no lower border side of its box is undrawn
    twins_below_.assign(num_edges_, 0);
    for (int e = 0; e < num_edges_ && reductions_; ++e) {
      const int b = edge_boxes_[e][0] >= 0 ? edge_boxes_[e][0] : edge_boxes_[e][1];
      if ((edge_boxes_[e][0] >= 0) == (edge_boxes_[e][1] >= 0)) continue;  // an inner edge
      for (int f = 0; f < e; ++f)
        if ((edge_boxes_[f][0] < 0 || edge_boxes_[f][1] < 0) && (box_mask_[b] >> f & 1))
          twins_below_[e] |= uint64_t(1) << f;
    }
    // and the table holds one position for all that differ only in which border sides of a box are drawn
    for (int b = 0; b < num_boxes_ && reductions_; ++b) {
      uint64_t border = 0;
      for (int e = 0; e < num_edges_; ++e)
        if ((box_mask_[b] >> e & 1) && (edge_boxes_[e][0] < 0 || edge_boxes_[e][1] < 0)) border |= uint64_t(1) << e;
      if (__builtin_popcountll(border) >= 2) borders_.push_back(border);
    }
    full_ = num_edges_ == 64 ? ~uint64_t(0) : (uint64_t(1) << num_edges_) - 1;
    if (forms_) part_forms_ = std::make_unique<PartForms>(box_mask_, edge_boxes_);
    clear();
  }

  // The searches started from now on also stop (OutOfPositions) `seconds` from now (the clock is read every
  // 1,024 positions); a negative `seconds` lifts the deadline.
  void set_deadline(double seconds) {
    timed_ = seconds >= 0;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(timed_ ? seconds : 0.0));
  }

  int num_edges() const { return num_edges_; }
  bool reductions() const { return reductions_; }
  bool forms() const { return forms_; }
  uint64_t full() const { return full_; }
  size_t entries() const { return table_.used() + form_table_.used(); }
  // the positions the last call searched (its `limit` when it ran out of them); table hits are not counted
  uint64_t positions_searched() const { return limit_ - budget_; }
  void clear() {
    table_.clear();
    form_table_.clear();
    history_.fill(0);
  }

  // The value of the position with `undrawn` edges for its mover: a Grundy number, or kLoony. Throws
  // OutOfPositions when the search would evaluate more than `limit` positions. A call starts from an empty
  // table, so that its answer, and whether `limit` suffices, does not depend on earlier calls; with `keep`
  // it starts from the table the earlier calls left (the answers are the same; `limit` then counts the
  // positions not in the table, so whether it suffices depends on those calls).
  int value(uint64_t undrawn, uint64_t limit, bool keep = false) {
    if (!keep) clear();
    budget_ = limit_ = limit;
    return sum_value(undrawn);
  }

  // For each undrawn edge of the position, whether drawing it wins Nimstring for the player who draws it
  // (the child's mover is the same player when the edge completes a box). Throws OutOfPositions; starts
  // from an empty table too, unless `keep`.
  std::vector<std::pair<int, bool>> move_wins(uint64_t undrawn, uint64_t limit, bool keep = false) {
    if (!keep) clear();
    budget_ = limit_ = limit;
    std::vector<std::pair<int, bool>> out;
    for (uint64_t r = undrawn; r; r &= r - 1) {
      const int e = __builtin_ctzll(r);
      out.emplace_back(e, move_wins_it(undrawn, e));
    }
    return out;
  }

  // The first of `moves` (undrawn edges, in the order given) whose drawing wins Nimstring for the player who
  // draws it, or -1 when none does: the search stops at the first winning move instead of settling every
  // move. Throws OutOfPositions; starts from an empty table too, unless `keep`.
  int first_win(uint64_t undrawn, const std::vector<int>& moves, uint64_t limit, bool keep = false) {
    if (!keep) clear();
    budget_ = limit_ = limit;
    for (int e : moves)
      if ((undrawn >> e & 1) && move_wins_it(undrawn, e)) return e;
    return -1;
  }

 private:
  int num_boxes_, num_edges_;
  uint64_t full_ = 0;
  std::vector<uint64_t> box_mask_;
  std::vector<std::array<int16_t, 2>> edge_boxes_;
  std::vector<uint64_t> twins_below_;  // per edge: the lower border sides of its box (none for inner edges)
  std::vector<uint64_t> borders_;      // the border sides of each box with two or more of them
  // tag 0: a part's Grundy value, tag h + 1: the mover wins the part plus a nim heap of h (a loss there is
  // stored as the part's Grundy value, h);
  // table_ keys parts by their edges, form_table_ (with forms_) by their form (nimstring_forms.hpp): a part
  // missing from the first is looked up in the second before it is searched
  Memo<uint64_t> table_;
  bool forms_;
  std::unique_ptr<PartForms> part_forms_;
  Memo<FormKey> form_table_;
  uint64_t budget_ = 0, limit_ = 0;
  bool timed_ = false;  // set_deadline: the searches also stop at deadline_
  std::chrono::steady_clock::time_point deadline_{};
  // with the reductions (reductions_), moves are tried by how often each edge was a winning move in this
  // call's search so far, most first, and one border side a box is searched (twins_below_)
  bool reductions_;
  std::array<uint32_t, 64> history_{};

  // Whether drawing the undrawn edge e of the position wins Nimstring for the player who draws it (the
  // child's mover is the same player when e completes a box; a loony child is won by its mover).
  bool move_wins_it(uint64_t undrawn, int e) {
    const uint64_t child = undrawn & ~(uint64_t(1) << e);
    uint64_t m = child;
    const bool child_mover_wins = !normalise(m) || wins(m, 0);
    return completes(child, e) == child_mover_wins;
  }

  int valence(uint64_t m, int b) const { return __builtin_popcountll(m & box_mask_[b]); }

  // whether drawing edge e (already removed from m) completes a box
  bool completes(uint64_t m, int e) const {
    for (int b : edge_boxes_[e])
      if (b >= 0 && valence(m, b) == 0) return true;
    return false;
  }

  // Takes every box the rules take; false when the position is loony.
  bool normalise(uint64_t& m) const {
    for (int b = 0; b < num_boxes_; ++b)
      if (valence(m, b) == 1 && !take(m, b)) return false;
    return true;
  }

  // Box b has one undrawn side left: take it by the rules; false when the position is loony. Its last
  // side leads outside, or to a box of three or more undrawn sides (left with two or more), or into a run
  // of boxes with two: then the mover could take all but the last two of the run and decline them
  // (loony), unless the run ends in a box the mover can take too: taking the run whole is forced when it
  // has two or three boxes (every move left in it completes a box), and a run of four or more can be
  // declined by drawing its middle side, leaving two pairs (loony). Taking never makes another box takeable.
  //
  // In a part's search (`cut`, the edge just drawn `drawn`), a box of one undrawn side that is not a box of
  // that edge was so before the move: a piece's ground (nimstring_forms.hpp, Pieces), where the run ends as
  // at the outside. (A normalised position has no such box.)
  bool take(uint64_t& m, int b, int drawn = -1) const {
    uint64_t run = m & box_mask_[b];
    int e = __builtin_ctzll(run), cur = b, boxes = 1;
    while (true) {
      const int n = edge_boxes_[e][0] == cur ? edge_boxes_[e][1] : edge_boxes_[e][0];
      if (n < 0) return boxes == 1 ? (m &= ~run, true) : false;
      const int vn = valence(m, n);
      if (vn == 1 && drawn >= 0 && n != edge_boxes_[drawn][0] && n != edge_boxes_[drawn][1])
        return boxes == 1 ? (m &= ~run, true) : false;
      ++boxes;
      if (vn >= 3) return boxes == 2 ? (m &= ~run, true) : false;
      if (vn == 1) return boxes <= 3 ? (m &= ~run, true) : false;
      e = __builtin_ctzll(m & box_mask_[n] & ~run);  // vn == 2: along the run
      run |= uint64_t(1) << e;
      cur = n;
    }
  }

  // m (normalised) with edge e drawn, normalised; false when loony
  bool cut(uint64_t& m, int e) const {
    m &= ~(uint64_t(1) << e);
    for (int b : edge_boxes_[e])
      if (b >= 0 && valence(m, b) == 1 && !take(m, b, e)) return false;
    return true;
  }

  // the undrawn edges joined to m's lowest edge through boxes
  uint64_t part(uint64_t m) const {
    uint64_t comp = m & (~m + 1), front = comp;
    while (front) {
      const int e = __builtin_ctzll(front);
      front &= front - 1;
      for (int b : edge_boxes_[e]) {
        if (b < 0) continue;
        const uint64_t add = m & box_mask_[b] & ~comp;
        comp |= add;
        front |= add;
      }
    }
    return comp;
  }

  int sum_value(uint64_t m) {
    if (!normalise(m)) return kLoony;
    return parts_value(m);
  }

  int parts_value(uint64_t m) {
    int x = 0;
    while (m) {
      const uint64_t c = part(m);
      m &= ~c;
      x ^= part_value(c);
    }
    return x;
  }

  // the table's key of a part: its undrawn edges with each box's undrawn border sides moved to the lowest
  uint64_t canonical(uint64_t m) const {
    for (uint64_t border : borders_) {
      const uint64_t have = m & border;
      if (!have || have == border) continue;
      uint64_t low = 0, rest = border;
      for (int k = __builtin_popcountll(have); k; --k, rest &= rest - 1) low |= rest & (~rest + 1);
      m = (m & ~border) | low;
    }
    return m;
  }

  // a full table drops its cheapest entries (Memo::store)
  int lookup(uint64_t m, int tag) const { return table_.lookup(canonical(m), tag); }
  void store(uint64_t m, int tag, int v, uint64_t work = 0) { table_.store(canonical(m), tag, v, work); }
  // parts of fewer edges are searched again wherever they appear: their form costs more than their search
  static constexpr int kFormMinEdges = 10;
  // (and `pieces` when m is a sum of smaller games; only with the forms)
  FormKey form(uint64_t m, Pieces& pieces) const {
    pieces.n = 0;
    return forms_ && __builtin_popcountll(m) >= kFormMinEdges ? part_forms_->key(m, pieces) : FormKey{};
  }
  int form_lookup(const FormKey& f, int tag) const { return f.ok ? form_table_.lookup(f, tag) : -1; }
  void form_store(const FormKey& f, int tag, int v, uint64_t work = 0) {
    if (f.ok) form_table_.store(f, tag, v, work);
  }

  void charge() {
    if (budget_ == 0) throw OutOfPositions();
    --budget_;
    if (timed_ && (budget_ & 1023) == 0 && std::chrono::steady_clock::now() >= deadline_) throw OutOfPositions();
  }

  // Whether the mover wins the sum of the parts of m (normalised) and a nim heap of `heap`: a search for a
  // winning move that stops at the first, where the Grundy value would need every move. The largest part
  // is searched so; the others' Grundy values join the heap.
  bool wins(uint64_t m, int heap) {
    int x = heap;
    const uint64_t big = largest_part(m, [&](uint64_t c) { x ^= part_value(c); });
    return big ? part_wins(big, x) : x != 0;
  }

  // The largest part of m (0 for none), after `other(c)` for each other part c.
  template <class Other>
  uint64_t largest_part(uint64_t m, Other&& other) const {
    uint64_t big = 0;
    while (m) {
      uint64_t c = part(m);
      m &= ~c;
      if (__builtin_popcountll(c) > __builtin_popcountll(big)) std::swap(big, c);
      if (c) other(c);
    }
    return big;
  }

  bool part_wins(uint64_t p, int heap) {
    const int g = lookup(p, 0);
    if (g >= 0) return g != heap;
    const int known = lookup(p, heap + 1);
    if (known >= 0) return known;
    Pieces pieces;
    const FormKey f = form(p, pieces);
    if (pieces.n >= 2) {  // a sum: its largest piece beside a heap of the others' values
      const uint64_t before = budget_;
      int big = 0, x = heap;
      for (int i = 1; i < pieces.n; ++i)
        if (__builtin_popcountll(pieces.edges[i]) > __builtin_popcountll(pieces.edges[big])) big = i;
      for (int i = 0; i < pieces.n; ++i)
        if (i != big) x ^= part_value(pieces.edges[i]);
      const bool win = part_wins(pieces.edges[big], x);
      store(p, win ? heap + 1 : 0, win ? 1 : heap, before - budget_);
      return win;
    }
    if (const int same = form_lookup(f, 0); same >= 0) {
      store(p, 0, same);
      return same != heap;
    }
    if (const int same = form_lookup(f, heap + 1); same >= 0) {
      store(p, heap + 1, same);
      return same;
    }
    charge();
    const uint64_t before = budget_;
    // a move in p first: taking from the heap to j wins only where p + *j is lost, a search of all of p's moves
    bool win = some_move_wins(p, heap);
    for (int j = 0; j < heap && !win; ++j) win = !part_wins(p, j);
    // a loss of p + *heap says more than itself: p's Grundy value is heap, the answer for every heap
    const int tag = win ? heap + 1 : 0, v = win ? 1 : heap;
    store(p, tag, v, before - budget_);
    form_store(f, tag, v, before - budget_);
    return win;
  }

  // Whether a move of part p wins (a nim heap of `heap` beside it), in edge order; with the reductions one
  // border side a box is tried, and the moves whose largest part is smallest go first (the cheapest searches,
  // and the splits), of those the edges that won most often earlier in this call. A move whose result the table
  // already holds is settled before any move is searched (a known win ends the search).
  bool some_move_wins(uint64_t p, int heap) {
    std::array<uint8_t, 64> edge;
    int n = 0;
    for (uint64_t r = p; r; r &= r - 1) {
      const int e = __builtin_ctzll(r);
      if (!(twins_below_[e] & p)) edge[n++] = uint8_t(e);
    }
    if (reductions_)
      for (int i = 1; i < n; ++i)  // insertion sort, stable: most wins first
        for (int j = i; j > 0 && history_[edge[j]] > history_[edge[j - 1]]; --j) std::swap(edge[j], edge[j - 1]);
    std::array<uint64_t, 64> child;
    std::array<int, 64> open;  // the moves to search: not into a loony position, their result not in the table
    std::array<int, 64> big;   // the edges of each one's largest part
    int m = 0;
    for (int i = 0; i < n; ++i) {
      child[i] = p;
      if (!cut(child[i], edge[i])) continue;
      const int known = known_wins(child[i], heap, big[i]);
      if (known == 0) {  // the opponent loses the child
        ++history_[edge[i]];
        return true;
      }
      if (known < 0) open[m++] = i;
    }
    if (reductions_)
      std::stable_sort(open.begin(), open.begin() + m, [&](int a, int b) { return big[a] < big[b]; });
    for (int k = 0; k < m; ++k) {
      const int i = open[k];
      if (!wins(child[i], heap)) {
        ++history_[edge[i]];
        return true;
      }
    }
    return false;
  }

  // wins(m, heap) from the table alone: 1 or 0, or -1 when a part of m is not there (its edge key only); and
  // the number of edges of m's largest part
  int known_wins(uint64_t m, int heap, int& big_edges) const {
    int x = heap;
    bool known = true;
    const uint64_t big = largest_part(m, [&](uint64_t c) {
      if (!known) return;
      const int g = lookup(c, 0);
      known = g >= 0;
      x ^= g;
    });
    big_edges = __builtin_popcountll(big);
    if (!known) return -1;
    if (!big) return x != 0;
    const int g = lookup(big, 0);
    return g >= 0 ? g != x : lookup(big, x + 1);
  }

  // Grundy value of one part (normalised: no box to take) with undrawn edges m
  int part_value(uint64_t m) {
    const int hit = lookup(m, 0);
    if (hit >= 0) return hit;
    Pieces pieces;
    const FormKey f = form(m, pieces);
    if (pieces.n >= 2) {  // a sum
      const uint64_t before = budget_;
      int g = 0;
      for (int i = 0; i < pieces.n; ++i) g ^= part_value(pieces.edges[i]);
      store(m, 0, g, before - budget_);
      return g;
    }
    if (const int same = form_lookup(f, 0); same >= 0) {
      store(m, 0, same);
      return same;
    }
    charge();
    const uint64_t before = budget_;
    uint64_t seen = 0;
    for (uint64_t r = m; r; r &= r - 1) {
      const int e = __builtin_ctzll(r);
      if (twins_below_[e] & m) continue;  // the same move as a lower border side of its box
      uint64_t child = m;
      const int v = cut(child, e) ? parts_value(child) : kLoony;
      if (v != kLoony && v < 64) seen |= uint64_t(1) << v;
    }
    const int g = __builtin_ctzll(~seen);
    store(m, 0, g, before - budget_);
    form_store(f, 0, g, before - budget_);
    return g;
  }
};

}  // namespace dnb::nim
