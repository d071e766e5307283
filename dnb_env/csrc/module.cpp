// dnb_env._native: batched Dots-and-Boxes rules and encoders over numpy arrays (pybind11).
//
// The Python face is dnb_env/native.py; this file only binds engine.hpp and encoders.hpp. Every array
// argument is checked (dtype, shape) before anything changes, and a batch with one illegal action raises
// dnb_env.core.IllegalActionError (a ValueError) naming the board, leaving every board as it was.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "encoders.hpp"
#include "engine.hpp"

namespace py = pybind11;

namespace dnb {
void bind_solver(py::module_& m);  // solver_module.cpp
void bind_search(py::module_& m);  // search_module.cpp
void bind_env(py::module_& m);     // env_module.cpp
}  // namespace dnb

namespace dnb {
namespace {

// Raised for an illegal action; translated to dnb_env.core.IllegalActionError (ValueError if that module
// cannot be imported).
struct IllegalAction : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t k = 0; k < a.ndim(); ++k) {
    s += std::to_string(a.shape(k));
    if (a.ndim() == 1 || k + 1 < a.ndim()) s += k + 1 < a.ndim() ? ", " : ",";
  }
  return s + ")";
}

std::string shape_str(const std::vector<py::ssize_t>& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) {
    s += std::to_string(shape[k]);
    if (shape.size() == 1 || k + 1 < shape.size()) s += k + 1 < shape.size() ? ", " : ",";
  }
  return s + ")";
}

std::string dtype_str(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

void check_shape(const py::array& a, const char* what, const std::vector<py::ssize_t>& shape) {
  bool ok = a.ndim() == py::ssize_t(shape.size());
  for (size_t k = 0; ok && k < shape.size(); ++k) ok = a.shape(k) == shape[k];
  if (!ok) throw py::value_error(std::string(what) + " must have shape " + shape_str(shape) + ", got " + shape_str(a));
}

// An input array of exactly dtype T (no silent casts), as a C-contiguous array of the given shape.
template <typename T>
py::array_t<T, py::array::c_style> input_exact(py::handle obj, const char* what, const char* dtype_name,
                                               const std::vector<py::ssize_t>& shape) {
  if (!py::isinstance<py::array>(obj)) {
    throw py::type_error(std::string(what) + " must be a numpy array of dtype " + dtype_name + ", got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!a.dtype().equal(py::dtype::of<T>())) {  // by value: equivalent dtypes (Q and L) match
    throw py::type_error(std::string(what) + " must have dtype " + dtype_name + ", got " + dtype_str(a));
  }
  check_shape(a, what, shape);
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
}

// An input array-like of integers (any integer dtype, not bool or float), as C-contiguous int64.
py::array_t<int64_t, py::array::c_style> input_integers(py::handle obj, const char* what,
                                                        const std::vector<py::ssize_t>& shape) {
  auto a = py::array::ensure(obj);
  if (!a) {
    PyErr_Clear();
    throw py::type_error(std::string(what) + " must be an array of integers");
  }
  char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u') {
    throw py::type_error(std::string(what) + " must be an array of integers, got dtype " + dtype_str(a));
  }
  check_shape(a, what, shape);
  return py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
}

// An `out=` array: exactly dtype T, the given shape, C-contiguous and writable.
template <typename T>
py::array_t<T> output(py::object out, const char* what, const char* dtype_name, const std::vector<py::ssize_t>& shape) {
  if (out.is_none()) return py::array_t<T>(shape);
  if (!py::isinstance<py::array>(out)) {
    throw py::type_error(std::string(what) + " must be a numpy array of dtype " + dtype_name + " or None");
  }
  auto a = py::reinterpret_borrow<py::array>(out);
  if (!a.dtype().equal(py::dtype::of<T>())) {  // by value: equivalent dtypes (Q and L) match
    throw py::type_error(std::string(what) + " must have dtype " + dtype_name + ", got " + dtype_str(a));
  }
  check_shape(a, what, shape);
  if (!(a.flags() & py::array::c_style)) throw py::value_error(std::string(what) + " must be C-contiguous");
  if (!a.writeable()) throw py::value_error(std::string(what) + " is read-only");
  return py::reinterpret_borrow<py::array_t<T>>(a);
}

// Python int (non-negative) -> `nwords` little-endian 64-bit words.
void int_words(py::handle x, uint64_t* w, int nwords) {
  w[0] = PyLong_AsUnsignedLongLongMask(x.ptr());
  if (w[0] == uint64_t(-1) && PyErr_Occurred()) throw py::error_already_set();
  py::object rest = py::reinterpret_borrow<py::object>(x);
  const py::int_ shift(64);
  for (int k = 1; k < nwords; ++k) {
    rest = py::reinterpret_steal<py::object>(PyNumber_Rshift(rest.ptr(), shift.ptr()));
    if (!rest) throw py::error_already_set();
    w[k] = PyLong_AsUnsignedLongLongMask(rest.ptr());
  }
}

// A dnb_env.core.GameState (its attributes edges, owner0, owner1, current_player) of board `g` as a Board.
// GameState objects are valid by construction: bits are masked to the board, scores are counted.
void load_state(const Geometry& g, py::handle state, Board& b) {
  // Leaked on purpose: a static py::str would be released by the C++ exit handlers after the interpreter is
  // gone, which crashes Python 3.12 at exit.
  static const py::str* const kEdges = new py::str("edges");
  static const py::str* const kOwner0 = new py::str("owner0");
  static const py::str* const kOwner1 = new py::str("owner1");
  static const py::str* const kPlayer = new py::str("current_player");
  b = empty_board();
  int_words(state.attr(*kEdges), b.edges, (g.num_actions + 63) / 64);
  int_words(state.attr(*kOwner0), b.owners[0], (g.num_boxes + 63) / 64);
  int_words(state.attr(*kOwner1), b.owners[1], (g.num_boxes + 63) / 64);
  int drawn = 0, s0 = 0, s1 = 0;
  for (int w = 0; w < kEdgeWords; ++w) drawn += popcount64(b.edges[w] &= g.full[w]);
  for (int w = 0; w < kBoxWords; ++w) s0 += popcount64(b.owners[0][w]), s1 += popcount64(b.owners[1][w]);
  b.drawn = int16_t(drawn);
  b.score[0] = int16_t(s0);
  b.score[1] = int16_t(s1);
  b.player = int8_t(state.attr(*kPlayer).cast<int>() & 1);
}

Encoder encoder_named(const std::string& name) {
  Encoder e;
  if (!encoder_from_name(name, e)) {
    throw py::value_error("the native engine has no encoder " + py::repr(py::str(name)).cast<std::string>() +
                          "; it has " + encoder_names());
  }
  return e;
}

std::vector<Board> load_states(const Geometry& g, py::sequence states) {
  const py::ssize_t n = py::len(states);
  std::vector<Board> boards(static_cast<size_t>(n));
  for (py::ssize_t i = 0; i < n; ++i) load_state(g, states[i], boards[size_t(i)]);
  return boards;
}

// ------------------------------------------------------------------ analysis kernels over many boards
// Each fills numpy arrays for boards[0..n) (the GIL released while it runs).

py::array_t<int8_t> move_classes_of(const Geometry& g, const std::vector<Board>& boards) {
  const py::ssize_t n = py::ssize_t(boards.size()), A = g.num_actions;
  py::array_t<int8_t> out({n, A});
  int8_t* p = out.mutable_data();
  py::gil_scoped_release release;
  for (py::ssize_t i = 0; i < n; ++i) move_classes(g, boards[size_t(i)], p + i * A);
  return out;
}

// (values [n] int16, simple [n] bool): the exact margin for the mover where simple[i]
py::tuple endgame_values_of(const Geometry& g, const std::vector<Board>& boards) {
  const py::ssize_t n = py::ssize_t(boards.size());
  py::array_t<int16_t> values(n);
  py::array_t<bool> simple(n);
  int16_t* vp = values.mutable_data();
  bool* sp = simple.mutable_data();
  {
    py::gil_scoped_release release;
    for (py::ssize_t i = 0; i < n; ++i) {
      int v = 0;
      sp[i] = endgame_value(g, boards[size_t(i)], v);
      vp[i] = int16_t(v);
    }
  }
  return py::make_tuple(values, simple);
}

// (masks [n, A] int8, offered [n] bool): captures and all-but-two declines where a box is on offer
py::tuple capture_or_decline_of(const Geometry& g, const std::vector<Board>& boards) {
  const py::ssize_t n = py::ssize_t(boards.size()), A = g.num_actions;
  py::array_t<int8_t> masks({n, A});
  py::array_t<bool> offered(n);
  int8_t* mp = masks.mutable_data();
  bool* op = offered.mutable_data();
  {
    py::gil_scoped_release release;
    for (py::ssize_t i = 0; i < n; ++i) {
      op[i] = capture_or_decline(g, boards[size_t(i)], mp + i * A);
      if (!op[i]) std::fill(mp + i * A, mp + (i + 1) * A, int8_t(0));
    }
  }
  return py::make_tuple(masks, offered);
}

py::array_t<int16_t> long_chain_counts_of(const Geometry& g, const std::vector<Board>& boards) {
  const py::ssize_t n = py::ssize_t(boards.size());
  py::array_t<int16_t> out(n);
  int16_t* p = out.mutable_data();
  py::gil_scoped_release release;
  for (py::ssize_t i = 0; i < n; ++i) p[i] = int16_t(long_chain_count(g, boards[size_t(i)]));
  return out;
}

// initiative labels of (board i, legal action actions[i])
py::array_t<int8_t> initiatives_of(const Geometry& g, const std::vector<Board>& boards, py::handle actions) {
  const py::ssize_t n = py::ssize_t(boards.size());
  auto a = input_integers(actions, "actions", {n});
  const int64_t* ap = a.data();
  for (py::ssize_t i = 0; i < n; ++i) {
    if (ap[i] < 0 || ap[i] >= g.num_actions || test_bit(boards[size_t(i)].edges, int(ap[i]))) {
      throw py::value_error("initiative labels need legal actions: board " + std::to_string(i) + " got action " +
                            std::to_string(ap[i]));
    }
  }
  py::array_t<int8_t> out(n);
  int8_t* p = out.mutable_data();
  for (py::ssize_t i = 0; i < n; ++i) p[i] = initiative(g, boards[size_t(i)], int(ap[i]));
  return out;
}

// encode_states(name, rows, cols, states): [n, C, H, W] float32 of GameState objects of one board.
py::array_t<float> encode_states(const std::string& name, int rows, int cols, py::sequence states) {
  const Encoder e = encoder_named(name);
  const Geometry& g = geometry(rows, cols);
  const py::ssize_t n = py::len(states);
  const std::vector<Board> boards = load_states(g, states);
  const int C = encoder_channels(e);
  py::array_t<float> out({n, py::ssize_t(C), py::ssize_t(g.height), py::ssize_t(g.width)});
  float* p = out.mutable_data();
  const py::ssize_t per = py::ssize_t(C) * g.height * g.width;
  {
    py::gil_scoped_release release;
    for (py::ssize_t i = 0; i < n; ++i) dnb::encode(e, g, boards[size_t(i)], p + i * per);
  }
  return out;
}

class Boards {
 public:
  Boards(int rows, int cols, py::ssize_t n) : g_(&geometry(rows, cols)) {
    if (n < 0) throw py::value_error("the number of boards must be >= 0, got " + std::to_string(n));
    boards_.assign(size_t(n), empty_board());
  }

  static Boards from_arrays(int rows, int cols, py::handle edges, py::handle owners, py::handle mover) {
    const Geometry& g = geometry(rows, cols);
    if (!py::isinstance<py::array>(edges)) {
      throw py::type_error("edges must be a numpy array of dtype uint64 and shape (n, 3)");
    }
    const auto first = py::reinterpret_borrow<py::array>(edges);
    if (first.ndim() != 2) throw py::value_error("edges must have shape (n, 3), got " + shape_str(first));
    const py::ssize_t n = first.shape(0);
    auto e = input_exact<uint64_t>(edges, "edges", "uint64", {n, kEdgeWords});
    auto o = input_exact<uint64_t>(owners, "owners", "uint64", {n, 2, kBoxWords});
    auto m = input_integers(mover, "mover", {n});
    Boards out(rows, cols, n);
    const uint64_t* ep = e.data();
    const uint64_t* op = o.data();
    const int64_t* mp = m.data();
    for (py::ssize_t i = 0; i < n; ++i) {
      std::string why = load_board(g, ep + i * kEdgeWords, op + i * 2 * kBoxWords, op + i * 2 * kBoxWords + kBoxWords,
                                   mp[i], out.boards_[i]);
      if (!why.empty()) throw py::value_error("board " + std::to_string(i) + ": " + why);
    }
    return out;
  }

  py::ssize_t size() const { return py::ssize_t(boards_.size()); }
  const Geometry& geom() const { return *g_; }

  void reset(py::object which) {
    if (which.is_none()) {
      std::fill(boards_.begin(), boards_.end(), empty_board());
      return;
    }
    auto w = input_exact<bool>(which, "which", "bool", {size()});
    const bool* p = w.data();
    for (py::ssize_t i = 0; i < size(); ++i) {
      if (p[i]) boards_[i] = empty_board();
    }
  }

  py::array_t<int8_t> step(py::handle actions) {
    auto a = input_integers(actions, "actions", {size()});
    const int64_t* ap = a.data();
    const Geometry& g = *g_;
    for (py::ssize_t i = 0; i < size(); ++i) {  // the whole batch first: all or nothing
      std::string why = illegal_reason(g, boards_[i], ap[i]);
      if (!why.empty()) throw IllegalAction("board " + std::to_string(i) + ": " + why + "; no board was stepped");
    }
    py::array_t<int8_t> gained(size());
    int8_t* gp = gained.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) gp[i] = int8_t(apply(g, boards_[i], int(ap[i])));
    return gained;
  }

  py::array_t<int8_t> legal_masks(py::object out) {
    const int A = g_->num_actions;
    auto m = output<int8_t>(out, "out", "int8", {size(), A});
    int8_t* p = m.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) legal_mask(*g_, boards_[i], p + i * A);
    return m;
  }

  py::array_t<int8_t> current_player() const {
    py::array_t<int8_t> out(size());
    int8_t* p = out.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) p[i] = boards_[i].player;
    return out;
  }

  py::array_t<int16_t> scores() const {
    py::array_t<int16_t> out({size(), py::ssize_t(2)});
    int16_t* p = out.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) {
      p[2 * i] = boards_[i].score[0];
      p[2 * i + 1] = boards_[i].score[1];
    }
    return out;
  }

  py::array_t<bool> terminal() const {
    py::array_t<bool> out(size());
    bool* p = out.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) p[i] = is_terminal(*g_, boards_[i]);
    return out;
  }

  py::array_t<int16_t> num_drawn() const {
    py::array_t<int16_t> out(size());
    int16_t* p = out.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) p[i] = boards_[i].drawn;
    return out;
  }

  py::array_t<uint64_t> edges() const {
    py::array_t<uint64_t> out({size(), py::ssize_t(kEdgeWords)});
    uint64_t* p = out.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) std::memcpy(p + i * kEdgeWords, boards_[i].edges, sizeof(boards_[i].edges));
    return out;
  }

  py::array_t<uint64_t> owners() const {
    py::array_t<uint64_t> out({size(), py::ssize_t(2), py::ssize_t(kBoxWords)});
    uint64_t* p = out.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) {
      std::memcpy(p + i * 2 * kBoxWords, boards_[i].owners, sizeof(boards_[i].owners));
    }
    return out;
  }

  py::array_t<int16_t> random_playouts(uint64_t seed, py::ssize_t n) const {
    if (n < 0) throw py::value_error("the number of playouts must be >= 0, got " + std::to_string(n));
    py::array_t<int16_t> out({size(), n});
    int16_t* p = out.mutable_data();
    const Geometry& g = *g_;
    const py::ssize_t nb = size();
    {
      py::gil_scoped_release release;
      Rng rng(seed);
      for (py::ssize_t i = 0; i < nb; ++i) {
        for (py::ssize_t k = 0; k < n; ++k) p[i * n + k] = int16_t(random_playout(g, boards_[i], rng));
      }
    }
    return out;
  }

  py::array_t<float> encode(const std::string& name, py::object out) const {
    const Encoder e = encoder_named(name);
    const Geometry& g = *g_;
    const int C = encoder_channels(e);
    auto o = output<float>(out, "out", "float32", {size(), C, g.height, g.width});
    float* p = o.mutable_data();
    const py::ssize_t per = py::ssize_t(C) * g.height * g.width;
    const py::ssize_t nb = size();
    {
      py::gil_scoped_release release;
      for (py::ssize_t i = 0; i < nb; ++i) dnb::encode(e, g, boards_[i], p + i * per);
    }
    return o;
  }

  Boards copy() const { return *this; }
  const std::vector<Board>& boards() const { return boards_; }

 private:
  const Geometry* g_;
  std::vector<Board> boards_;
};

}  // namespace
}  // namespace dnb

#ifndef DNB_MODULE
#define DNB_MODULE _native  // wide/wide.hpp names the build for boards past 9x9
#endif

PYBIND11_MODULE(DNB_MODULE, m) {
  using dnb::Boards;
  m.doc() = "Batched Dots-and-Boxes rules and observation encoders in C++ (use it through dnb_env.native).";
  m.attr("MAX_SIZE") = dnb::kMaxSize;
  dnb::bind_solver(m);
  dnb::bind_search(m);
  dnb::bind_env(m);
  using dnb::geometry;
  using dnb::load_states;
  const char* states_doc = " of dnb_env.core.GameState objects of one rows x cols board (what dnb_env.analysis "
                           "uses with the native backend).";
  m.def("move_classes", [](int r, int c, py::sequence s) { return dnb::move_classes_of(geometry(r, c), load_states(geometry(r, c), s)); },
        py::arg("rows"), py::arg("cols"), py::arg("states"),
        (std::string("``[n, A]`` int8 move classes (0 forbidden, 1 conceding, 2 safe, 3 scoring)") + states_doc).c_str());
  m.def("endgame_values", [](int r, int c, py::sequence s) { return dnb::endgame_values_of(geometry(r, c), load_states(geometry(r, c), s)); },
        py::arg("rows"), py::arg("cols"), py::arg("states"),
        (std::string("(values ``[n]`` int16, simple ``[n]`` bool): exact margin for the mover of the simple endgames") + states_doc).c_str());
  m.def("capture_or_decline", [](int r, int c, py::sequence s) { return dnb::capture_or_decline_of(geometry(r, c), load_states(geometry(r, c), s)); },
        py::arg("rows"), py::arg("cols"), py::arg("states"),
        (std::string("(masks ``[n, A]`` int8, offered ``[n]`` bool): captures and all-but-two declines") + states_doc).c_str());
  m.def("long_chain_counts", [](int r, int c, py::sequence s) { return dnb::long_chain_counts_of(geometry(r, c), load_states(geometry(r, c), s)); },
        py::arg("rows"), py::arg("cols"), py::arg("states"),
        (std::string("``[n]`` int16 unopened chains of three or more boxes") + states_doc).c_str());
  m.def("initiatives", [](int r, int c, py::sequence s, py::handle a) { return dnb::initiatives_of(geometry(r, c), load_states(geometry(r, c), s), a); },
        py::arg("rows"), py::arg("cols"), py::arg("states"), py::arg("actions"),
        (std::string("``[n]`` int8 initiative labels (0 capture, 1 sacrifice, 2 neutral) of legal ``actions``") + states_doc).c_str());
  m.def("encode_states", &dnb::encode_states, py::arg("name"), py::arg("rows"), py::arg("cols"), py::arg("states"),
        "``[n, C, H, W]`` float32 observations of dnb_env.core.GameState objects of one rows x cols board, read "
        "straight from their integer bitsets (what dnb_env.observations uses with the native backend).");
  m.attr("EDGE_WORDS") = dnb::kEdgeWords;
  m.attr("BOX_WORDS") = dnb::kBoxWords;
  py::tuple encoders(dnb::kNumEncoders);
  for (int k = 0; k < dnb::kNumEncoders; ++k) encoders[k] = dnb::kEncoderNames[k];
  m.attr("ENCODERS") = encoders;

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const dnb::IllegalAction& e) {
      PyObject* cls = PyExc_ValueError;
      py::object keep;
      try {
        keep = py::module_::import("dnb_env.core").attr("IllegalActionError");
        cls = keep.ptr();
      } catch (py::error_already_set&) {
        PyErr_Clear();
      }
      PyErr_SetString(cls, e.what());
    }
  });

  py::class_<Boards>(m, "Boards", R"doc(
n Dots-and-Boxes games on one rows x cols board (1..9 each), stepped together over numpy arrays.

Boards(rows, cols, n) starts n empty boards; Boards.from_arrays(rows, cols, edges, owners, mover) loads
positions. Arrays (A = num_actions): edges ``[n, 3]`` uint64 (bit a of the 192-bit little-endian word
triple = edge a drawn), owners ``[n, 2, 2]`` uint64 (player, word: bit b = box b is the player's), mover
``[n]`` int. One Boards must not be used from several threads at once (encode and random_playouts
release the GIL while they run).
)doc")
      .def(py::init<int, int, py::ssize_t>(), py::arg("rows"), py::arg("cols"), py::arg("n"))
      .def_static("from_arrays", &Boards::from_arrays, py::arg("rows"), py::arg("cols"), py::arg("edges"),
                  py::arg("owners"), py::arg("mover"),
                  "Boards holding the given positions; ValueError naming the board for an impossible one "
                  "(an edge beyond the board, a complete box without exactly one owner, an owned incomplete "
                  "box, mover not 0/1); TypeError for a wrong dtype.")
      .def_property_readonly("rows", [](const Boards& b) { return b.geom().rows; })
      .def_property_readonly("cols", [](const Boards& b) { return b.geom().cols; })
      .def_property_readonly("num_actions", [](const Boards& b) { return b.geom().num_actions; })
      .def_property_readonly("num_boxes", [](const Boards& b) { return b.geom().num_boxes; })
      .def("__len__", &Boards::size)
      .def("__repr__", [](const Boards& b) {
        return "Boards(" + b.geom().name() + ", n=" + std::to_string(b.size()) + ")";
      })
      .def("reset", &Boards::reset, py::arg("which") = py::none(),
           "Empty every board, or those where ``which`` ``[n]`` bool is True.")
      .def("step", &Boards::step, py::arg("actions"),
           "Play ``actions`` ``[n]`` (integers), one per board; returns ``[n]`` int8 boxes completed. The whole "
           "batch is checked first: an illegal action raises IllegalActionError (a ValueError) naming the "
           "board and the action, and no board moves.")
      .def("legal_masks", &Boards::legal_masks, py::arg("out") = py::none(),
           "``[n, num_actions]`` int8, 1 on undrawn edges (written into ``out`` when given).")
      .def("current_player", &Boards::current_player, "``[n]`` int8 player to move (0 or 1).")
      .def("scores", &Boards::scores, "``[n, 2]`` int16 boxes of player 0 and player 1.")
      .def("terminal", &Boards::terminal, "``[n]`` bool, True once every edge is drawn.")
      .def("num_drawn", &Boards::num_drawn, "``[n]`` int16 number of drawn edges.")
      .def("edges", &Boards::edges, "``[n, 3]`` uint64 drawn-edge bitsets (copy).")
      .def("owners", &Boards::owners, "``[n, 2, 2]`` uint64 box bitsets of player 0 and player 1 (copy).")
      .def("random_playouts", &Boards::random_playouts, py::arg("seed"), py::arg("n") = 1,
           "``[num_boards, n]`` int16 final margins (player 0 - player 1) of ``n`` uniformly random playouts "
           "from each board's position; the boards do not change. Deterministic for a seed (uint64).")
      .def("encode", &Boards::encode, py::arg("name"), py::arg("out") = py::none(),
           "``[n, C, H, W]`` float32 observations (encoder ``name``: baseline4, chainloop6, chainloop64, "
           "alphazero4), from the point of view of each board's player to move; bit-identical to "
           "dnb_env.observations.encode_batch.")
      .def("move_classes", [](const Boards& b) { return dnb::move_classes_of(b.geom(), b.boards()); },
           "``[n, A]`` int8 move classes (dnb_env.analysis.MoveClass values) of every board.")
      .def("endgame_values", [](const Boards& b) { return dnb::endgame_values_of(b.geom(), b.boards()); },
           "(values ``[n]`` int16, simple ``[n]`` bool): the exact margin for the mover where the board is a "
           "simple endgame (dnb_env.analysis.endgame_value).")
      .def("capture_or_decline", [](const Boards& b) { return dnb::capture_or_decline_of(b.geom(), b.boards()); },
           "(masks ``[n, A]`` int8, offered ``[n]`` bool): the captures and all-but-two declines where a box is "
           "on offer (dnb_env.analysis.capture_or_decline_moves).")
      .def("long_chain_counts", [](const Boards& b) { return dnb::long_chain_counts_of(b.geom(), b.boards()); },
           "``[n]`` int16 unopened chains of three or more boxes.")
      .def("initiatives", [](const Boards& b, py::handle a) { return dnb::initiatives_of(b.geom(), b.boards(), a); },
           py::arg("actions"), "``[n]`` int8 initiative labels of the legal ``actions`` ``[n]``.")
      .def("copy", &Boards::copy)
      .def("__copy__", &Boards::copy)
      .def("__deepcopy__", [](const Boards& b, py::dict) { return b.copy(); }, py::arg("memo"));
}
