// dnb_env._native: bindings of the exact solver (solver.hpp); called from module.cpp's PYBIND11_MODULE.
//
// Positions are given as (rows, cols) at construction and an edge set per call: either a Python int
// bitmask (bit a = edge a drawn, the representation of dnb_env.core.GameState.edges) or a sequence of
// three uint64 words (bit a of the little-endian 192-bit triple, as dnb_env.native's edges() rows). A bit
// beyond the board's edges, a negative int or a wrong length raises ValueError. Searches release the GIL;
// one ExactSolver must not search in two threads at once (the second call raises RuntimeError).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <cerrno>

#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine.hpp"
#include "nimstring.hpp"
#include "solver.hpp"

namespace py = pybind11;

namespace dnb {
namespace {

// A non-negative Python integer (int or anything with __index__, not bool) below 2^(8 * nbytes), as
// little-endian bytes; TypeError / ValueError otherwise.
void int_bytes(py::handle obj, int nbytes, const char* what, unsigned char* out) {
  if (py::isinstance<py::bool_>(obj) || !PyIndex_Check(obj.ptr())) {
    throw py::type_error(std::string(what) + " must be an int, got " +
                         py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
  }
  py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(obj.ptr()));
  if (!v) throw py::error_already_set();
  if (v < py::int_(0)) throw py::value_error(std::string(what) + " must be >= 0, got " + py::str(v).cast<std::string>());
  if (v.attr("bit_length")().cast<int>() > 8 * nbytes) {
    throw py::value_error(std::string(what) + " has bits set beyond bit " + std::to_string(8 * nbytes - 1));
  }
  const std::string s = py::bytes(v.attr("to_bytes")(nbytes, "little"));
  std::memcpy(out, s.data(), size_t(nbytes));
}

// The drawn-edge words of `obj` (int bitmask, or a sequence of 3 uint64 words), checked against the board.
void load_edges(const Geometry& g, py::handle obj, uint64_t* words) {
  unsigned char raw[8 * kEdgeWords];
  if (py::hasattr(obj, "__len__")) {
    if (py::len(obj) != size_t(kEdgeWords)) {
      throw py::value_error("edges must be an int bitmask or 3 uint64 words, got a sequence of length " +
                            std::to_string(py::len(obj)));
    }
    for (int w = 0; w < kEdgeWords; ++w) int_bytes(obj[py::int_(w)], 8, "an edges word", raw + 8 * w);
  } else {
    int_bytes(obj, 8 * kEdgeWords, "edges", raw);
  }
  for (int w = 0; w < kEdgeWords; ++w) {
    uint64_t x = 0;
    for (int k = 7; k >= 0; --k) x = (x << 8) | raw[8 * w + k];
    words[w] = x;
    if (x & ~g.full[w]) {
      throw py::value_error("edges has bits set beyond the " + std::to_string(g.num_actions) + " edges of a " +
                            g.name() + " board");
    }
  }
}

// Holds an object's lock for one search; a second thread gets RuntimeError instead of waiting.
struct Searching {
  Searching(std::mutex& m, const char* what) : m_(m) {
    if (!m_.try_lock()) throw std::runtime_error(std::string("this ") + what + " is already searching in another thread");
  }
  ~Searching() { m_.unlock(); }
  Searching(const Searching&) = delete;
  Searching& operator=(const Searching&) = delete;
  std::mutex& m_;
};

py::dict rule_stats_dict(const exact::RuleStats& r) {
  py::dict d;
  d["free_captures"] = r.free_captures;
  d["run_captures"] = r.run_captures;
  d["double_deal_choices"] = r.double_deal_choices;
  d["equivalent_pruned"] = r.equivalent_pruned;
  d["simple_endgames"] = r.simple_endgames;
  d["border_pruned"] = r.border_pruned;
  d["choice_cuts"] = r.choice_cuts;
  return d;
}

class PyExactSolver {
 public:
  PyExactSolver(int rows, int cols, double tt_mb, uint32_t rules, int threads)
      : solver_(rows, cols, table_entries(tt_mb), check_rules(rules)) {
    if (threads < 1 || threads > 64) throw py::value_error("threads must be in 1..64, got " + std::to_string(threads));
    solver_.set_threads(threads);
  }
  int threads() const { return solver_.threads(); }

  void set_deadline(double seconds) {
    Busy busy(lock_);
    if (seconds < 0) {
      solver_.clear_deadline();
      return;
    }
    solver_.set_deadline(exact::Solver::Clock::now() + std::chrono::duration_cast<exact::Solver::Clock::duration>(
                                                           std::chrono::duration<double>(seconds)));
  }

  int rows() const { return solver_.topo().g->rows; }
  int cols() const { return solver_.topo().g->cols; }
  uint32_t rules() const { return solver_.rules(); }

  std::pair<int, int> value(py::handle edges, uint64_t node_limit, int guess) {
    const exact::Pos p = load(edges);
    int lo = 0, hi = 0;
    Busy busy(lock_);
    py::gil_scoped_release release;
    solver_.value(p, guess, node_limit, lo, hi);
    return {lo, hi};
  }

  py::object at_least(py::handle edges, int threshold, uint64_t node_limit) {
    const exact::Pos p = load(edges);
    int r;
    {
      Busy busy(lock_);
      py::gil_scoped_release release;
      r = solver_.at_least(p, threshold, node_limit);
    }
    if (r < 0) return py::none();
    return py::bool_(r == 1);
  }

  py::object proving_move(py::handle edges, int threshold, uint64_t node_limit) {
    const exact::Pos p = load(edges);
    int r;
    {
      Busy busy(lock_);
      py::gil_scoped_release release;
      r = solver_.proving_move(p, threshold, node_limit);
    }
    if (r == -2) return py::none();
    return py::int_(r);
  }

  py::object move_values(py::handle edges, uint64_t node_limit) {
    const exact::Pos p = load(edges);
    std::vector<std::pair<int, int>> out;
    bool done;
    {
      Busy busy(lock_);
      py::gil_scoped_release release;
      done = solver_.move_values(p, node_limit, out);
    }
    if (!done) return py::none();
    py::dict d;
    for (const auto& [a, v] : out) d[py::int_(a)] = v;
    return d;
  }

  py::object best_moves(py::handle edges, uint64_t node_limit) {
    const exact::Pos p = load(edges);
    std::vector<int> out;
    int value = 0;
    bool done;
    {
      Busy busy(lock_);
      py::gil_scoped_release release;
      done = solver_.best_moves(p, node_limit, value, out);
    }
    if (!done) return py::none();
    return py::make_tuple(value, py::cast(out));
  }

  void save_table(const std::string& path) {
    Busy busy(lock_);
    int err = 0;
    {
      py::gil_scoped_release release;
      try {
        solver_.save_table(path);
      } catch (const std::system_error& e) {
        err = e.code().value() != 0 ? e.code().value() : EIO;  // a failure the system gave no reason for
      }
    }
    if (err != 0) {  // OSError with its errno and the file's name (a full disk: ENOSPC)
      errno = err;
      PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
      throw py::error_already_set();
    }
  }

  void load_table(const std::string& path) {
    Busy busy(lock_);
    py::gil_scoped_release release;
    solver_.load_table(path);
  }

  py::object safe_phase_values(py::handle edges, uint64_t positions, uint64_t node_limit, int max_undrawn) {
    const exact::Pos p = load(edges);
    std::vector<std::pair<int, int>> out;
    bool done;
    {
      Busy busy(lock_);
      py::gil_scoped_release release;
      done = solver_.safe_phase_values(p, positions, node_limit, out, max_undrawn);
    }
    if (!done) return py::none();
    py::dict d;
    for (const auto& [a, v] : out) d[py::int_(a)] = v;
    return d;
  }

  py::object sacrifice_phase_values(py::handle edges, int sacrifices, uint64_t positions, uint64_t node_limit,
                                    int alpha, int beta, int max_undrawn) {
    if (sacrifices < 0) throw py::value_error("sacrifices must be >= 0, got " + std::to_string(sacrifices));
    if (alpha >= beta) {
      throw py::value_error("the window must have alpha < beta, got (" + std::to_string(alpha) + ", " +
                            std::to_string(beta) + ")");
    }
    const exact::Pos p = load(edges);
    std::vector<std::pair<int, int>> out;
    bool done;
    {
      Busy busy(lock_);
      py::gil_scoped_release release;
      done = solver_.sacrifice_phase_values(p, sacrifices, positions, node_limit, out, alpha, beta, max_undrawn);
    }
    if (!done) return py::none();
    py::dict d;
    for (const auto& [a, v] : out) d[py::int_(a)] = v;
    return d;
  }

  py::dict stats() {
    Busy busy(lock_);  // never block while holding the GIL: a searching thread needs it to return
    const auto& s = solver_.stats();
    py::dict d;
    d["nodes"] = s.nodes;
    d["tt_hits"] = s.tt_hits;
    d["tt_cuts"] = s.tt_cuts;
    d["table_entries"] = solver_.table_entries();
    d["table_used"] = solver_.table_used();
    d["rules"] = rule_stats_dict(s.rules);
    return d;
  }

  void reset_stats() {
    Busy busy(lock_);  // never block while holding the GIL: a searching thread needs it to return
    solver_.stats() = exact::SearchStats{};
  }

  void clear() {
    Busy busy(lock_);  // never block while holding the GIL: a searching thread needs it to return
    solver_.clear();
  }

 private:
  struct Busy : Searching {
    explicit Busy(std::mutex& m) : Searching(m, "ExactSolver") {}
  };

  static size_t table_entries(double tt_mb) {
    if (!(tt_mb >= 1.0 && tt_mb <= 65536.0)) {
      throw py::value_error("tt_mb must be in 1..65536 (megabytes), got " + std::to_string(tt_mb));
    }
    return size_t(tt_mb * 1024.0 * 1024.0) / sizeof(exact::TTEntry);
  }

  static uint32_t check_rules(uint32_t rules) {
    if (rules & ~uint32_t(exact::kAllRules)) {
      throw py::value_error("rules has unknown bits: " + std::to_string(rules) + " (known: SOLVER_RULES)");
    }
    return rules;
  }

  exact::Pos load(py::handle edges) const {
    uint64_t words[kEdgeWords];
    load_edges(*solver_.topo().g, edges, words);
    return exact::make_pos(solver_.topo(), words);
  }

  exact::Solver solver_;
  std::mutex lock_;
};

py::dict verify_rules(int rows, int cols, uint32_t rules, bool drop_double_deal) {
  if (rules & ~uint32_t(exact::kAllRules)) throw py::value_error("rules has unknown bits: " + std::to_string(rules));
  exact::RuleCheck c;
  {
    py::gil_scoped_release release;
    c = exact::verify_rules(rows, cols, rules, drop_double_deal);
  }
  py::dict d;
  d["positions"] = c.positions;
  d["violations"] = c.violations;
  d["rules"] = rule_stats_dict(c.stats);
  py::list examples;
  for (const auto& w : c.examples) examples.append(py::int_(w[0]));
  d["examples"] = examples;
  return d;
}

// A strings-and-coins graph of at most 64 strings in nimstring.hpp's form: each coin's strings (-1 pads),
// each string's one or two coins (-1: the outside).
struct NimGraph {
  std::vector<std::array<int16_t, 4>> box_sides;
  std::vector<std::array<int16_t, 2>> edge_boxes;
};

// The graph of coins `box_sides` (each a list of 1 to 4 of the strings 0..num_edges-1) over `num_edges`
// strings, each string on one coin (its other end the outside) or two; ValueError otherwise.
NimGraph nim_graph(const std::vector<std::vector<int>>& box_sides, int num_edges) {
  if (num_edges < 1 || num_edges > 64) {
    throw py::value_error("a Nimstring graph has 1 to 64 strings, got " + std::to_string(num_edges));
  }
  NimGraph g;
  g.edge_boxes.assign(size_t(num_edges), {int16_t(-1), int16_t(-1)});
  for (size_t b = 0; b < box_sides.size(); ++b) {
    const auto& sides = box_sides[b];
    if (sides.empty() || sides.size() > 4) {
      throw py::value_error("coin " + std::to_string(b) + " has " + std::to_string(sides.size()) +
                            " strings; a coin has 1 to 4");
    }
    std::array<int16_t, 4> row{-1, -1, -1, -1};
    for (size_t k = 0; k < sides.size(); ++k) {
      const int e = sides[k];
      if (e < 0 || e >= num_edges || std::count(sides.begin(), sides.begin() + k, e)) {
        throw py::value_error("coin " + std::to_string(b) + " names string " + std::to_string(e) +
                              ", not one of 0.." + std::to_string(num_edges - 1) + " once");
      }
      auto& ends = g.edge_boxes[size_t(e)];
      if (ends[1] >= 0) throw py::value_error("string " + std::to_string(e) + " joins more than two coins");
      ends[ends[0] >= 0 ? 1 : 0] = int16_t(b);
      row[k] = int16_t(e);
    }
    g.box_sides.push_back(row);
  }
  for (int e = 0; e < num_edges; ++e)
    if (g.edge_boxes[size_t(e)][0] < 0) throw py::value_error("string " + std::to_string(e) + " joins no coin");
  return g;
}

// Nimstring values (nimstring.hpp) of one board size, or of one strings-and-coins graph; each call searches
// afresh unless told to keep the table.
class PyNimstring {
 public:
  PyNimstring(int rows, int cols, double table_mb, bool reductions, bool forms)
      : g_(&checked(rows, cols)), nim_(g_->box_sides, g_->action_boxes, max_entries(table_mb), reductions, forms) {}
  PyNimstring(const NimGraph& graph, double table_mb, bool reductions, bool forms)
      : g_(nullptr), nim_(graph.box_sides, graph.edge_boxes, max_entries(table_mb), reductions, forms) {}

  py::object rows() const { return g_ ? py::object(py::int_(g_->rows)) : py::object(py::none()); }
  py::object cols() const { return g_ ? py::object(py::int_(g_->cols)) : py::object(py::none()); }
  int num_edges() const { return nim_.num_edges(); }
  size_t entries() const { return nim_.entries(); }
  uint64_t positions_searched() const { return nim_.positions_searched(); }
  bool reductions() const { return nim_.reductions(); }
  bool forms() const { return nim_.forms(); }

  py::object value(py::handle edges, uint64_t positions, bool keep, std::optional<double> seconds) {
    const uint64_t undrawn = load(edges);
    int v = 0;
    if (!search(seconds, [&] { v = nim_.value(undrawn, positions, keep); })) return py::none();
    return py::int_(v == nim::kLoony ? -1 : v);
  }

  py::object move_wins(py::handle edges, uint64_t positions, bool keep, std::optional<double> seconds) {
    const uint64_t undrawn = load(edges);
    std::vector<std::pair<int, bool>> out;
    if (!search(seconds, [&] { out = nim_.move_wins(undrawn, positions, keep); })) return py::none();
    py::dict d;
    for (const auto& [a, w] : out) d[py::int_(a)] = py::bool_(w);
    return d;
  }

  py::object first_win(py::handle edges, const std::vector<int>& moves, uint64_t positions, bool keep,
                       std::optional<double> seconds) {
    const uint64_t undrawn = load(edges);
    for (int a : moves)
      if (a < 0 || a >= nim_.num_edges() || !(undrawn >> a & 1))
        throw py::value_error("moves must be undrawn edges of the position, got " + std::to_string(a));
    int found = -1;
    if (!search(seconds, [&] { found = nim_.first_win(undrawn, moves, positions, keep); })) return py::none();
    return py::int_(found);
  }

  void clear() {
    Busy busy(lock_);
    nim_.clear();
  }

 private:
  struct Busy : Searching {
    explicit Busy(std::mutex& m) : Searching(m, "Nimstring") {}
  };

  static const Geometry& checked(int rows, int cols) {
    if (rows < 1 || cols < 1 || (rows + 1) * cols + rows * (cols + 1) > 64) {
      throw py::value_error("Nimstring values need a board of at most 64 edges (up to 5x5), got " +
                            std::to_string(rows) + "x" + std::to_string(cols));
    }
    return geometry(rows, cols);
  }

  // Runs `run` (a search) without the GIL, stopping it `seconds` from now; false when it ran out of positions
  // or time.
  template <class Run>
  bool search(std::optional<double> seconds, Run run) {
    if (seconds && !(*seconds >= 0.0 && *seconds <= 1e6))
      throw py::value_error("seconds must be in 0..1e6 or None, got " + std::to_string(*seconds));
    Busy busy(lock_);
    py::gil_scoped_release release;
    nim_.set_deadline(seconds.value_or(-1.0));
    try {
      run();
      return true;
    } catch (const nim::OutOfPositions&) {
      return false;
    }
  }

  static size_t max_entries(double table_mb) {
    if (!(table_mb >= 1.0 && table_mb <= 65536.0)) {
      throw py::value_error("table_mb must be in 1..65536 (megabytes), got " + std::to_string(table_mb));
    }
    size_t n = size_t(1) << 16;  // a power of two: the table's most entries (10 bytes a slot, half filled)
    while (n * 2 * 10 <= size_t(table_mb * 1024.0 * 1024.0)) n *= 2;
    return n;
  }

  uint64_t load(py::handle edges) const {
    uint64_t words[kEdgeWords];
    if (g_) {
      load_edges(*g_, edges, words);
    } else {  // a graph's drawn strings: an int below 2^num_edges
      unsigned char raw[8];
      int_bytes(edges, 8, "edges", raw);
      words[0] = 0;
      for (int k = 7; k >= 0; --k) words[0] = (words[0] << 8) | raw[k];
      if (words[0] & ~nim_.full()) {
        throw py::value_error("edges has bits set beyond the " + std::to_string(nim_.num_edges()) +
                              " strings of the graph");
      }
    }
    return nim_.full() & ~words[0];
  }

  const Geometry* g_;  // null for a graph
  nim::Nimstring nim_;
  std::mutex lock_;
};

}  // namespace

void bind_solver(py::module_& m) {
  py::dict rules;
  rules["free_capture"] = uint32_t(exact::kFreeCapture);
  rules["double_dealing"] = uint32_t(exact::kDoubleDealing);
  rules["equivalent_sacrifices"] = uint32_t(exact::kEquivalentSacrifices);
  rules["simple_endgame"] = uint32_t(exact::kSimpleEndgame);
  rules["border_edges"] = uint32_t(exact::kBorderEdges);
  m.attr("SOLVER_RULES") = rules;
  m.attr("SOLVER_ALL_RULES") = uint32_t(exact::kAllRules);

  py::class_<PyExactSolver>(m, "ExactSolver", R"doc(
Exact alpha-beta solver of one board size (solver.hpp): MTD(f) null-window searches with a transposition
table of bounds keyed by the drawn-edge set (canonical over the board's symmetries), and only reductions
proven to keep the exact value (SOLVER_RULES; switch them off with ``rules`` for tests).

Values are margins (boxes) for the player to move, from the boxes not yet claimed. ``edges`` is a Python
int bitmask (bit a = edge a drawn) or 3 uint64 words. ``node_limit`` 0 = unlimited. The table (``tt_mb``
megabytes at most, grown with the problem) persists across calls. Searches release the GIL.
)doc")
      .def(py::init<int, int, double, uint32_t, int>(), py::arg("rows"), py::arg("cols"), py::arg("tt_mb") = 64.0,
           py::arg("rules") = uint32_t(exact::kAllRules), py::arg("threads") = 1)
      .def_property_readonly("threads", &PyExactSolver::threads)
      .def_property_readonly("rows", &PyExactSolver::rows)
      .def_property_readonly("cols", &PyExactSolver::cols)
      .def_property_readonly("rules", &PyExactSolver::rules)
      .def("value", &PyExactSolver::value, py::arg("edges"), py::arg("node_limit") = 0, py::arg("guess") = 0,
           "(lo, hi): the exact value when lo == hi; otherwise the budget ran out and lo <= value <= hi.")
      .def("at_least", &PyExactSolver::at_least, py::arg("edges"), py::arg("threshold"), py::arg("node_limit") = 0,
           "Whether value >= threshold (one null-window search); None when the budget ran out.")
      .def("proving_move", &PyExactSolver::proving_move, py::arg("edges"), py::arg("threshold"),
           py::arg("node_limit") = 0,
           "A move after which value >= threshold still holds for the mover: the move that proved it in the one "
           "null-window search of at_least (read from the table); -1 when value < threshold; None when the budget "
           "ran out.")
      .def("move_values", &PyExactSolver::move_values, py::arg("edges"), py::arg("node_limit") = 0,
           "{action: exact margin for the mover if it plays it (boxes it completes included)}; None when the "
           "budget ran out.")
      .def("safe_phase_values", &PyExactSolver::safe_phase_values, py::arg("edges"), py::arg("positions"),
           py::arg("node_limit"), py::arg("max_undrawn") = kMaxEdges,
           "{action: margin for the mover} for each safe or capturing move when both players then draw only "
           "safe moves and captures while any safe move is left and play exactly after that (each end of the "
           "safe phase solved within node_limit nodes); {} without a safe move; None when the search needs "
           "more than `positions` positions, or an end position more than node_limit nodes or has more than "
           "max_undrawn undrawn edges (not searched).")
      .def("sacrifice_phase_values", &PyExactSolver::sacrifice_phase_values, py::arg("edges"), py::arg("sacrifices"),
           py::arg("positions"), py::arg("node_limit"), py::arg("alpha") = -exact::kInf, py::arg("beta") = exact::kInf,
           py::arg("max_undrawn") = kMaxEdges,
           "As safe_phase_values, but while safe moves are left the players may also make up to `sacrifices` "
           "sacrifices between them, each handing over at most two boxes; such sacrifices get values too (one at "
           "the root uses one of the budget). With sacrifices=0 the values of safe_phase_values. A window "
           "(alpha, beta) searches each move in it only: exact inside, else a bound (<= alpha or >= beta); max_undrawn as "
           "in safe_phase_values.")
      .def("set_deadline", &PyExactSolver::set_deadline, py::arg("seconds"),
           "Every query from now on stops `seconds` from now as if its node budget were spent (negative: "
           "no deadline).")
      .def("best_moves", &PyExactSolver::best_moves, py::arg("edges"), py::arg("node_limit") = 0,
           "(value, [actions]): the exact value and every move that keeps it (one null-window test per move, "
           "cheaper than move_values); None when the budget ran out.")
      .def("save_table", &PyExactSolver::save_table, py::arg("path"),
           "Write the transposition table to `path` (a header with the board and rules, then the entries); "
           "OSError naming the file when it cannot be written (errno ENOSPC: the disk is full).")
      .def("load_table", &PyExactSolver::load_table, py::arg("path"),
           "Replace the transposition table by one written by save_table for the same board and rules "
           "(ValueError otherwise, the table unchanged).")
      .def("stats", &PyExactSolver::stats, "Counters since construction or reset_stats(): nodes, table hits, "
           "and how often each rule fired; with the table's size and filled buckets (table_entries, table_used).")
      .def("reset_stats", &PyExactSolver::reset_stats)
      .def("clear", &PyExactSolver::clear, "Empty the transposition table.");

  py::class_<PyNimstring>(m, "Nimstring", R"doc(
Nimstring values of one board size of at most 64 edges, or of a graph (``of_graph``) (nimstring.hpp): Dots-and-Boxes played for the last
move, whose winner is the player who gets control. A search of Grundy values over the independent parts of
the position, pruned by the game's loony and capture rules, with a table of ``table_mb`` megabytes at most that
each call starts empty (an answer does not depend on earlier calls), unless it is made with ``keep=True``: then
it goes on from the table the earlier calls left, and ``positions`` counts only the positions not in it. ``edges`` is a Python int bitmask (bit a =
edge a drawn) or 3 uint64 words; ``positions`` caps the positions one call may evaluate. Searches release the
GIL. ``reductions`` (default) tries the moves that won most often earlier in the same call first and searches
one border side of a box only (the border sides of a box are the same Nimstring move); the answers are the
same without them, found after more positions. ``forms`` (default) also keys each part by its canonical form
(nimstring_forms.hpp: the same game wherever it lies on the board, whatever its shape, every run of three or
more two-string boxes alike), so a part is searched once for all its copies; again the same answers.
)doc")
      .def(py::init<int, int, double, bool, bool>(), py::arg("rows"), py::arg("cols"), py::arg("table_mb") = 256.0,
           py::arg("reductions") = true, py::arg("forms") = true)
      .def_static("of_graph", [](const std::vector<std::vector<int>>& box_sides, int num_edges, double table_mb,
                                 bool reductions, bool forms) {
             return std::make_unique<PyNimstring>(nim_graph(box_sides, num_edges), table_mb, reductions, forms);
           }, py::arg("box_sides"), py::arg("num_edges"), py::arg("table_mb") = 16.0, py::arg("reductions") = true,
           py::arg("forms") = true,
           "The same searches over a strings-and-coins graph of at most 64 strings (say, the undrawn edges of "
           "a position of a board too large for one word, renumbered): ``box_sides`` lists each coin's strings "
           "(1 to 4 of 0..num_edges-1), a string on one coin leads outside, one on two joins them; each "
           "string on one or two coins (ValueError otherwise). ``edges`` is then an int bitmask of the drawn "
           "strings, and ``rows`` and ``cols`` are None.")
      .def_property_readonly("num_edges", &PyNimstring::num_edges)
      .def_property_readonly("reductions", &PyNimstring::reductions)
      .def_property_readonly("forms", &PyNimstring::forms)
      .def_property_readonly("rows", &PyNimstring::rows)
      .def_property_readonly("cols", &PyNimstring::cols)
      .def_property_readonly("entries", &PyNimstring::entries)
      .def_property_readonly("positions_searched", &PyNimstring::positions_searched,
                             "The positions the last call searched, table hits not counted (its `positions` when "
                             "it ran out of them): the least `positions` with which the same call from the same "
                             "table finishes.")
      .def("value", &PyNimstring::value, py::arg("edges"), py::arg("positions"), py::arg("keep") = false,
           py::arg("seconds") = py::none(),
           "The position's value for its mover: a Grundy number (0: the mover loses), -1 for a loony "
           "position (the mover wins); None when the search needs more than `positions` positions or more "
           "than `seconds` (None: no time limit).")
      .def("move_wins", &PyNimstring::move_wins, py::arg("edges"), py::arg("positions"), py::arg("keep") = false,
           py::arg("seconds") = py::none(),
           "{action: whether drawing it wins Nimstring for the player who draws it} over the undrawn edges; "
           "None when the search needs more than `positions` positions or more than `seconds` (None: no "
           "time limit).")
      .def("first_win", &PyNimstring::first_win, py::arg("edges"), py::arg("moves"), py::arg("positions"),
           py::arg("keep") = false, py::arg("seconds") = py::none(),
           "The first of `moves` (undrawn edges, in the order given) that wins Nimstring for the player who "
           "draws it, -1 when none of them does; None when the search needs more than `positions` positions "
           "or more than `seconds`. It stops at the first winning move, where move_wins settles every move.")
      .def("clear", &PyNimstring::clear, "Empty the table.");

  m.def("solver_verify_rules", &verify_rules, py::arg("rows"), py::arg("cols"),
        py::arg("rules") = uint32_t(exact::kAllRules), py::arg("drop_double_deal") = false,
        "Check the solver's move generation on every edge set of a board of at most 27 edges against a full "
        "retrograde table: {positions, violations, rules: firing counts, examples: edge masks of violations}. "
        "drop_double_deal=True searches only the capture where the double-dealing rule offers two moves (a "
        "deliberately unsound rule: the check must report violations).");
}

}  // namespace dnb
