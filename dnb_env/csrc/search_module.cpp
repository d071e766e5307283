// dnb_env._native: bindings of the tree search (search.hpp); called from module.cpp's PYBIND11_MODULE.
//
//   SearchTree(c_puct, virtual_loss, prune, value, selection, solve_*)   one search (agents/search/native.py
//                                                    NativeMCTS owns one; every setting passed, no defaults)
//   SearchForest(trees, encoder="", threads=1)       trees in lockstep: collect(limits) -> leaves of all of
//                                                    them in one set of arrays; complete(priors, values)
//
// Every input is checked (dtype, shape, finiteness, call order) before anything changes. The tree work
// runs with the GIL released; a tree must not be used from two Python threads at once.
//
// Floating point: the search reproduces agents/search/python.py bit for bit only if no multiply-add is fused
// (contracted); search.hpp turns contraction off where a compiler could do it (MSVC does not by default).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "encoders.hpp"
#include "engine.hpp"
#include "search.hpp"

namespace py = pybind11;

namespace dnb {
namespace {

using search::Builtin;
using search::Tree;

std::string want_shape(const std::vector<py::ssize_t>& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) s += std::to_string(shape[k]) + (k + 1 < shape.size() ? ", " : "");
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string shape_of(const py::array& a) { return want_shape(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim())); }

// A float64 array of exactly this shape, every entry finite (TypeError for another dtype, ValueError else).
py::array_t<double, py::array::c_style> float64_input(py::handle obj, const char* what,
                                                       const std::vector<py::ssize_t>& shape) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(std::string(what) + " must be a numpy array of dtype float64, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().equal(py::dtype::of<double>())) {
    throw py::type_error(std::string(what) + " must have dtype float64, got " + std::string(py::str(a.dtype())));
  }
  bool ok = a.ndim() == py::ssize_t(shape.size());
  for (size_t k = 0; ok && k < shape.size(); ++k) ok = a.shape(k) == shape[k];
  if (!ok) throw py::value_error(std::string(what) + " must have shape " + want_shape(shape) + ", got " + shape_of(a));
  auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  const double* p = c.data();
  for (py::ssize_t i = 0; i < c.size(); ++i) {
    if (!std::isfinite(p[i])) throw py::value_error(std::string(what) + " must be finite, entry " + std::to_string(i) + " is not");
  }
  return c;
}

// A non-negative Python int as `nwords` little-endian 64-bit words.
void words_of(py::handle x, uint64_t* w, int nwords) {
  py::object rest = py::reinterpret_borrow<py::object>(x);
  const py::int_ shift(64);
  for (int k = 0; k < nwords; ++k) {
    if (k) {
      rest = py::reinterpret_steal<py::object>(PyNumber_Rshift(rest.ptr(), shift.ptr()));
      if (!rest) throw py::error_already_set();
    }
    w[k] = PyLong_AsUnsignedLongLongMask(rest.ptr());
    if (w[k] == uint64_t(-1) && PyErr_Occurred()) throw py::error_already_set();
  }
}

// A dnb_env.core.GameState as (geometry, Board); ValueError for a board over 9x9 or an impossible position.
const Geometry& read_state(py::handle state, Board& b) {
  const int rows = state.attr("rows").cast<int>(), cols = state.attr("cols").cast<int>();
  const Geometry* g;
  try {
    g = &geometry(rows, cols);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
  uint64_t edges[kEdgeWords] = {}, o0[kBoxWords] = {}, o1[kBoxWords] = {};
  words_of(state.attr("edges"), edges, kEdgeWords);
  words_of(state.attr("owner0"), o0, kBoxWords);
  words_of(state.attr("owner1"), o1, kBoxWords);
  const std::string why = load_board(*g, edges, o0, o1, state.attr("current_player").cast<int64_t>(), b);
  if (!why.empty()) throw py::value_error("not a position of the search's board: " + why);
  return *g;
}

std::vector<int64_t> actions_of(py::handle seq) {
  std::vector<int64_t> out;
  for (py::handle a : py::reinterpret_borrow<py::iterable>(seq)) out.push_back(a.cast<int64_t>());
  return out;
}

// The node `begin`/`peek` would make the root: the located subtree or -1 (a new tree).
int32_t find_root(const Tree& t, const Geometry& g, const Board& b, py::handle actions) {
  if (actions.is_none()) return -1;
  const std::vector<int64_t> acts = actions_of(actions);
  return t.locate(g, b, acts.data(), acts.size());
}

void require_root(const Tree& t) {
  if (!t.has_root()) throw py::value_error("the search has no root: call begin(state) first");
}

// `limits` as G integers, one per tree (ValueError otherwise).
py::array_t<int64_t, py::array::c_style> tree_limits(py::handle limits_obj, size_t G) {
  auto limits = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(limits_obj);
  if (!limits || limits.ndim() != 1 || size_t(limits.shape(0)) != G) {
    PyErr_Clear();
    throw py::value_error("limits must be " + std::to_string(G) + " integers, one per tree");
  }
  return limits;
}

class Forest {
 public:
  Forest(py::sequence trees, const std::string& encoder, int threads) : threads_(std::max(1, threads)) {
    for (py::handle h : trees) {
      auto t = h.cast<std::shared_ptr<Tree>>();
      for (const auto& u : trees_) {
        if (u == t) throw py::value_error("SearchForest: the same SearchTree appears twice");
      }
      trees_.push_back(t);
    }
    if (!encoder.empty()) {
      Encoder e;
      if (!encoder_from_name(encoder, e)) {
        throw py::value_error("the native search has no encoder '" + encoder +
                              "'; it has " + encoder_names() + " (or '' for none)");
      }
      encoder_ = e;
      has_encoder_ = true;
    }
  }

  size_t size() const { return trees_.size(); }

  py::array_t<int64_t> remaining() const {
    py::array_t<int64_t> out(py::ssize_t(trees_.size()));
    for (size_t i = 0; i < trees_.size(); ++i) out.mutable_data()[i] = trees_[i]->remaining();
    return out;
  }

  // limits [G] integers >= 0 -> (counts [G] int64, planes [L, C, H, W] float32 or None, masks [L, A] int8,
  // edges [L, 3] uint64, owners [L, 2, 2] uint64, mover [L] int8)
  py::tuple collect(py::handle limits_obj) {
    const size_t G = trees_.size();
    auto limits = tree_limits(limits_obj, G);
    const int64_t* lim = limits.data();
    const Geometry* g = nullptr;
    for (size_t i = 0; i < G; ++i) {
      if (lim[i] < 0) throw py::value_error("limits must be >= 0");
      const Tree& t = *trees_[i];
      if (t.batch_open()) {
        throw py::value_error("tree " + std::to_string(i) + " has leaves waiting for complete(); complete them first");
      }
      if (lim[i] > 0 && t.remaining() > 0) {
        if (g && g != t.geom()) throw py::value_error("the trees of one collect must be on one board size");
        g = t.geom();
      }
    }
    pending_ = false;
    std::vector<int64_t> counts(G, 0);
    {
      py::gil_scoped_release release;
      search::parallel_for(G, threads_, [&](size_t i) { counts[i] = int64_t(trees_[i]->collect(lim[i])); });
    }
    serials_.resize(G);
    offsets_.assign(G + 1, 0);
    for (size_t i = 0; i < G; ++i) {
      serials_[i] = trees_[i]->batch_serial();
      offsets_[i + 1] = offsets_[i] + counts[i];
    }
    const py::ssize_t L = py::ssize_t(offsets_[G]);
    const int A = g ? g->num_actions : 0;
    py::array_t<int64_t> counts_out{py::ssize_t(G)};
    std::copy(counts.begin(), counts.end(), counts_out.mutable_data());
    py::array_t<int8_t> masks({L, py::ssize_t(A)});
    py::array_t<uint64_t> edges({L, py::ssize_t(kEdgeWords)});
    py::array_t<uint64_t> owners({L, py::ssize_t(2), py::ssize_t(kBoxWords)});
    py::array_t<int8_t> mover(L);
    py::object planes = py::none();
    float* pp = nullptr;
    py::ssize_t per = 0;
    if (has_encoder_ && g) {
      const int C = encoder_channels(encoder_);
      py::array_t<float> p({L, py::ssize_t(C), py::ssize_t(g->height), py::ssize_t(g->width)});
      pp = p.mutable_data();
      per = py::ssize_t(C) * g->height * g->width;
      planes = p;
    } else if (has_encoder_) {
      planes = py::array_t<float>(std::vector<py::ssize_t>{0, 0, 0, 0});
    }
    int8_t* mp = masks.mutable_data();
    uint64_t* ep = edges.mutable_data();
    uint64_t* op = owners.mutable_data();
    int8_t* vp = mover.mutable_data();
    pending_ = L > 0;
    {
      py::gil_scoped_release release;
      search::parallel_for(G, threads_, [&](size_t i) {
        const Tree& t = *trees_[i];
        for (int64_t k = 0; k < counts[i]; ++k) {
          const size_t row = size_t(offsets_[i] + k);
          const Board& b = t.leaf_board(size_t(k));
          legal_mask(*g, b, mp + row * size_t(A));
          std::memcpy(ep + row * kEdgeWords, b.edges, sizeof b.edges);
          std::memcpy(op + row * 2 * kBoxWords, b.owners, sizeof b.owners);
          vp[row] = b.player;
          if (pp) encode(encoder_, *g, b, pp + py::ssize_t(row) * per);
        }
      });
    }
    geometry_ = g;
    return py::make_tuple(counts_out, planes, masks, edges, owners, mover);
  }

  void complete(py::handle priors_obj, py::handle values_obj) {
    if (!pending_) throw py::value_error("complete() without a pending collect() (or after its leaves were completed)");
    const size_t G = trees_.size();
    for (size_t i = 0; i < G; ++i) {
      const Tree& t = *trees_[i];
      const int64_t n = offsets_[i + 1] - offsets_[i];
      if (n && (!t.batch_open() || t.batch_serial() != serials_[i] || int64_t(t.batch_size()) != n)) {
        throw py::value_error("tree " + std::to_string(i) + " changed since collect() (begin, advance or another "
                              "collect); its leaves can no longer be completed");
      }
    }
    const py::ssize_t L = py::ssize_t(offsets_[G]), A = geometry_->num_actions;
    auto priors = float64_input(priors_obj, "priors", {L, A});
    auto values = float64_input(values_obj, "values", {L});
    const double* pp = priors.data();
    const double* vp = values.data();
    {
      py::gil_scoped_release release;
      search::parallel_for(G, threads_, [&](size_t i) {
        if (offsets_[i + 1] > offsets_[i]) trees_[i]->complete(pp + offsets_[i] * A, vp + offsets_[i]);
      });
    }
    pending_ = false;
  }

  // Every tree to its end with a built-in evaluator: "uniform" (priors 1/A, value 0: the outputs of
  // agents.search.evaluators.UniformEvaluator) or "rollout" (uniform priors, mean result of `rollouts` random playouts).
  void run_builtin(const std::string& kind, int rollouts, uint64_t seed, py::handle limits_obj) {
    Builtin b;
    if (kind == "uniform") {
      b = Builtin::uniform;
    } else if (kind == "rollout") {
      b = Builtin::rollout;
      if (rollouts < 1) throw py::value_error("rollouts must be >= 1");
    } else {
      throw py::value_error("the built-in evaluators are 'uniform' and 'rollout', not '" + kind + "'");
    }
    const size_t G = trees_.size();
    auto limits = tree_limits(limits_obj, G);
    const int64_t* lim = limits.data();
    for (size_t i = 0; i < G; ++i) {
      if (lim[i] < 1) throw py::value_error("limits must be >= 1");
      if (trees_[i]->batch_open()) {
        throw py::value_error("tree " + std::to_string(i) + " has leaves waiting for complete(); complete them first");
      }
    }
    pending_ = false;
    py::gil_scoped_release release;
    search::parallel_for(G, threads_, [&](size_t i) {
      Rng rng(seed + 0x9E3779B97F4A7C15ull * (i + 1));
      trees_[i]->run_builtin(b, rollouts, lim[i], rng);
    });
  }

 private:
  std::vector<std::shared_ptr<Tree>> trees_;
  Encoder encoder_ = Encoder::baseline4;
  bool has_encoder_ = false;
  int threads_ = 1;
  bool pending_ = false;
  std::vector<uint64_t> serials_;
  std::vector<int64_t> offsets_;
  const Geometry* geometry_ = nullptr;
};

search::Settings make_settings(double c_puct, double virtual_loss, bool prune, const std::string& value,
                               const std::string& selection, int solve_undrawn, int64_t solve_nodes,
                               double solve_tt_mb) {
  if (value != "win" && value != "margin") throw py::value_error("value must be 'win' or 'margin', not '" + value + "'");
  if (selection != "puct" && selection != "uct") {
    throw py::value_error("selection must be 'puct' or 'uct', not '" + selection + "'");
  }
  if (!(c_puct > 0)) throw py::value_error("c_puct must be > 0");
  if (!std::isfinite(virtual_loss)) throw py::value_error("virtual_loss must be finite");
  if (solve_undrawn < 0) throw py::value_error("solve_undrawn must be >= 0 (0 = no exact leaves)");
  if (solve_nodes < 1) throw py::value_error("solve_nodes must be >= 1");
  if (!(solve_tt_mb >= 1.0 && solve_tt_mb <= 65536.0)) throw py::value_error("solve_tt_mb must be in 1..65536 (megabytes)");
  search::Settings s;
  s.c_puct = c_puct;
  s.virtual_loss = virtual_loss;
  s.prune = prune;
  s.margin = value == "margin";
  s.uct = selection == "uct";
  s.solve_undrawn = solve_undrawn;
  s.solve_nodes = uint64_t(solve_nodes);
  s.solve_entries = size_t(solve_tt_mb * 1024.0 * 1024.0) / sizeof(exact::TTEntry);  // as ExactSolver(tt_mb)
  return s;
}

}  // namespace

void bind_search(py::module_& m) {
  py::class_<Tree, std::shared_ptr<Tree>>(m, "SearchTree", R"doc(
One tree search (the C++ twin of agents.search.python.MCTS; use it through agents.search.NativeMCTS).

SearchTree(c_puct, virtual_loss, prune, value, selection, solve_undrawn, solve_nodes, solve_tt_mb) with
value "win" or "margin" and selection "puct" or "uct" (every argument required: the defaults live in
agents.search.SearchSettings; seed_orders(seed) seeds the uct move orders); leaves with at most
solve_undrawn undrawn edges get exact values from the alpha-beta solver
(budget solve_nodes per leaf; a table of at most solve_tt_mb MB kept across searches). begin(state, actions,
simulations) makes the root: the node reached by ``actions`` (the moves since the old root) when it
holds ``state``, else a new tree (actions None: always new); returns whether the root needs the
evaluator (then set_root_priors). expand_root() -> number of root edges; add_root_noise(noise, eps).
Leaves are collected and completed through a SearchForest.
)doc")
      .def(py::init([](double c_puct, double virtual_loss, bool prune, const std::string& value,
                       const std::string& selection, int solve_undrawn, int64_t solve_nodes, double solve_tt_mb) {
             return std::make_shared<Tree>(make_settings(c_puct, virtual_loss, prune, value, selection, solve_undrawn,
                                                         solve_nodes, solve_tt_mb));
           }),
           py::arg("c_puct"), py::arg("virtual_loss"), py::arg("prune"), py::arg("value"), py::arg("selection"),
           py::arg("solve_undrawn"), py::arg("solve_nodes"), py::arg("solve_tt_mb"))
      .def("seed_orders", [](Tree& t, uint64_t seed) { t.seed_orders(seed); }, py::arg("seed"),
           "Seed the generator of the uct move orders (drawn as nodes are expanded).")
      .def("peek", [](const Tree& t, py::handle state, py::handle actions) {
             Board b;
             const Geometry& g = read_state(state, b);
             const int32_t at = find_root(t, g, b, actions);
             return at < 0 || t.needs_evaluation(at);
           }, py::arg("state"), py::arg("actions"),
           "Whether begin(state, actions) would need the evaluator for the root (nothing changes).")
      .def("begin", [](Tree& t, py::handle state, py::handle actions, int64_t simulations) {
             if (simulations < 1) throw py::value_error("simulations must be >= 1");
             Board b;
             const Geometry& g = read_state(state, b);
             if (is_terminal(g, b)) throw py::value_error("cannot search a finished game");
             const int32_t at = find_root(t, g, b, actions);
             const bool needs = t.set_root(g, b, at);
             t.start(simulations);
             return needs;
           }, py::arg("state"), py::arg("actions"), py::arg("simulations"))
      .def("set_root_priors", [](Tree& t, py::handle priors) {
             require_root(t);
             auto p = float64_input(priors, "priors", {t.geom()->num_actions});
             if (!t.needs_evaluation(t.root_index())) throw py::value_error("the root is already evaluated");
             t.set_root_priors(p.data());
           }, py::arg("priors"), "The evaluator's priors ``[A]`` float64 of the root.")
      .def("expand_root", [](Tree& t) {
             require_root(t);
             if (t.needs_evaluation(t.root_index())) throw py::value_error("the root has not been evaluated");
             return t.expand_root();
           })
      .def("add_root_noise", [](Tree& t, py::handle noise, double eps) {
             require_root(t);
             if (!(t.root().flags & search::kExpanded)) throw py::value_error("the root is not expanded");
             auto n = float64_input(noise, "noise", {py::ssize_t(t.root().count)});
             t.add_root_noise(n.data(), eps);
           }, py::arg("noise"), py::arg("epsilon"), "P = (1 - epsilon) P + epsilon noise at the root, U = P / (1 + N).")
      .def("advance", [](Tree& t, int64_t action) { return t.advance(action); }, py::arg("action"),
           "Keep the subtree of ``action`` as the root; False (and an empty tree) when there is none.")
      .def("set_solve_deadline", &Tree::set_solve_deadline, py::arg("seconds"),
           "Leaf solves stop `seconds` from now as if out of nodes (negative: no deadline).")
      .def("clear", &Tree::clear)
      .def_property_readonly("has_root", &Tree::has_root)
      .def_property_readonly("done", &Tree::done)
      .def_property_readonly("remaining", &Tree::remaining)
      .def_property_readonly("num_nodes", &Tree::num_nodes)
      .def_property_readonly("num_edges", &Tree::num_edges)
      .def_property_readonly("pending_size", &Tree::pending_size)
      .def_property_readonly("capacity_bytes", &Tree::capacity_bytes,
                             "Bytes reserved by the node, edge and prior pools.")
      .def_property_readonly("batch_open", &Tree::batch_open)
      .def_property_readonly("root_total", [](const Tree& t) { require_root(t); return t.root().total; })
      .def_property_readonly("root_expanded", [](const Tree& t) {
             return t.has_root() && (t.root().flags & search::kExpanded) != 0;
           })
      .def("root_edges", [](const Tree& t) {
             require_root(t);
             const py::ssize_t k = t.root().count;
             py::array_t<int32_t> a(k);
             py::array_t<double> n(k), w(k), p(k);
             t.edges_of(t.root_index(), a.mutable_data(), n.mutable_data(), w.mutable_data());
             std::copy(t.priors_of(t.root_index()), t.priors_of(t.root_index()) + k, p.mutable_data());
             return py::make_tuple(a, n, w, p);
           }, "(actions ``[k]`` int32, N ``[k]``, W ``[k]``, P ``[k]`` float64) of the root's edges.")
      .def("root_visit_order", [](const Tree& t) {
             require_root(t);
             int32_t acts[kMaxEdges];
             const int k = (t.root().flags & search::kExpanded) ? t.visit_order(t.root_index(), acts) : 0;
             py::array_t<int32_t> out(k);
             std::copy(acts, acts + k, out.mutable_data());
             return out;
           }, "The root's moves that have a child, in the order the search first took them (int32).")
      .def("internal_nodes", [](const Tree& t, int64_t played, double min_visits) {
             const std::vector<int32_t> ids = t.internal_nodes(played, min_visits);
             const py::ssize_t n = py::ssize_t(ids.size());
             const int A = t.geom() ? t.geom()->num_actions : 0;
             py::array_t<uint64_t> edges({n, py::ssize_t(kEdgeWords)});
             py::array_t<uint64_t> owners({n, py::ssize_t(2), py::ssize_t(kBoxWords)});
             py::array_t<int8_t> mover(n);
             py::array_t<double> counts({n, py::ssize_t(A)}), values({n, py::ssize_t(A)}), total(n);
             std::fill(counts.mutable_data(), counts.mutable_data() + n * A, 0.0);
             std::fill(values.mutable_data(), values.mutable_data() + n * A, 0.0);
             int32_t acts[kMaxEdges];
             double nv[kMaxEdges], wv[kMaxEdges];
             for (py::ssize_t i = 0; i < n; ++i) {
               const search::Node& x = t.node(ids[size_t(i)]);
               std::memcpy(edges.mutable_data() + i * kEdgeWords, x.board.edges, sizeof x.board.edges);
               std::memcpy(owners.mutable_data() + i * 2 * kBoxWords, x.board.owners, sizeof x.board.owners);
               mover.mutable_data()[i] = x.board.player;
               total.mutable_data()[i] = x.total;
               t.edges_of(ids[size_t(i)], acts, nv, wv);
               for (int k = 0; k < x.count; ++k) {
                 counts.mutable_data()[i * A + acts[k]] = nv[k];
                 values.mutable_data()[i * A + acts[k]] = wv[k];
               }
             }
             return py::make_tuple(edges, owners, mover, counts, values, total);
           }, py::arg("played"), py::arg("min_visits"),
           "Expanded nodes with total >= min_visits outside the subtree of ``played``, in the order of "
           "agents.training.selfplay.internal_nodes: (edges, owners, mover, N ``[n, A]``, W ``[n, A]``, total ``[n]``).");

  py::class_<Forest>(m, "SearchForest", R"doc(
SearchTrees run in lockstep: collect(limits) gathers up to limits[g] leaves of tree g (virtual loss
applied, exact leaves backed up on the way) and returns them all at once as (counts [G] int64, planes
[L, C, H, W] float32 or None without an encoder, masks [L, A] int8, edges [L, 3] uint64, owners
[L, 2, 2] uint64, mover [L] int8); complete(priors [L, A] float64, values [L] float64) backs them up.
run_builtin(kind, rollouts, seed, limits) runs every tree to its end with a built-in evaluator.
)doc")
      .def(py::init<py::sequence, const std::string&, int>(), py::arg("trees"), py::arg("encoder") = "",
           py::arg("threads") = 1)
      .def("__len__", &Forest::size)
      .def("remaining", &Forest::remaining, "``[G]`` int64 simulations left per tree.")
      .def("collect", &Forest::collect, py::arg("limits"))
      .def("complete", &Forest::complete, py::arg("priors"), py::arg("values"))
      .def("run_builtin", &Forest::run_builtin, py::arg("kind"), py::arg("rollouts"), py::arg("seed"), py::arg("limits"));

  m.def("pairwise_sum", [](py::handle a) {
          auto x = float64_input(a, "a", {py::ssize_t(py::len(a))});
          return search::pairwise_sum(x.data(), size_t(x.size()));
        }, py::arg("a"), "numpy's float64 summation order, as the search renormalises priors (for the tests).");
}

}  // namespace dnb
