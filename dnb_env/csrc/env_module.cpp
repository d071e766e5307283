// dnb_env._native: LearnerGames, the games of gym_env.DotsAndBoxesEnv / DotsAndBoxesVectorEnv when the
// backend is native and the opponent is the random agent (env.hpp); called from module.cpp's PYBIND11_MODULE.
//
//   LearnerGames(rows, cols, n, encoder, reward, illegal_action, learner)
//     single env (n = 1): reset(i, learner, seed, history), step(action) -> Gymnasium's step tuple,
//                         lose() (a non-integer action under "lose"), observe() -> (obs, info)
//     vector env:         set_generators(states), reset_all(learner, history),
//                         step_all(actions, marked) -> (obs, masks, rewards, terminated, illegal, learners),
//                         observe_all()
//     either:             position(i) (for a GameState), learner(i), done(i), ready(i), autoreset(i), masks()
//
// Every call returns fresh arrays (a caller may keep them). Illegal actions raise
// dnb_env.core.IllegalActionError with dnb_env.core's wording, before anything changes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "encoders.hpp"
#include "engine.hpp"
#include "env.hpp"

namespace py = pybind11;

namespace dnb {
namespace {

[[noreturn]] void raise_illegal(const std::string& message) {
  static PyObject* cls = nullptr;  // dnb_env.core.IllegalActionError, kept for the life of the process
  if (cls == nullptr) {
    cls = py::object(py::module_::import("dnb_env.core").attr("IllegalActionError")).release().ptr();
  }
  PyErr_SetString(cls, message.c_str());
  throw py::error_already_set();
}

py::str key(const char* s) { return py::reinterpret_steal<py::str>(PyUnicode_InternFromString(s)); }

class LearnerGames {
 public:
  LearnerGames(int rows, int cols, py::ssize_t n, const std::string& encoder, const std::string& reward,
               const std::string& illegal, int learner)
      : g_(&geometry(rows, cols)), encoder_(encoder), reward_(reward), illegal_(illegal) {
    if (n < 1) throw py::value_error("the number of games must be >= 1, got " + std::to_string(n));
    if (!encoder_from_name(encoder, enc_)) throw py::value_error("the native engine has no encoder " + encoder);
    if (reward == "win") mode_ = RewardMode::win;
    else if (reward == "margin") mode_ = RewardMode::margin;
    else if (reward == "boxes") mode_ = RewardMode::boxes;
    else throw py::value_error("reward must be win, margin or boxes, got " + reward);
    if (illegal != "lose" && illegal != "raise") throw py::value_error("illegal_action must be lose or raise, got " + illegal);
    if (learner < 0 || learner > 2) throw py::value_error("learner must be 0, 1 or 2 (random)");
    raise_ = illegal == "raise";
    learner_option_ = learner;
    games_.assign(size_t(n), LearnerGame{});
    channels_ = encoder_channels(enc_);
  }

  py::ssize_t size() const { return py::ssize_t(games_.size()); }

  LearnerGame& at(py::ssize_t i) {
    if (i < 0 || i >= size()) throw py::index_error("game index " + std::to_string(i) + " out of range");
    return games_[size_t(i)];
  }

  // ---------------------------------------------------------------- resets
  bool reset(py::ssize_t i, int learner, uint64_t seed, py::sequence history) {
    if (learner != 0 && learner != 1) throw py::value_error("learner must be 0 or 1");
    const std::vector<int> h = moves_of(history);
    return reset_game(*g_, at(i), learner, seed, h.data(), int(h.size()));
  }

  void set_generators(const std::vector<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, bool, uint32_t>>& states) {
    if (py::ssize_t(states.size()) != size()) {
      throw py::value_error("set_generators needs one state per game (" + std::to_string(size()) + ")");
    }
    for (size_t i = 0; i < states.size(); ++i) {
      const auto& s = states[i];
      games_[i].env_rng = NumpyRng::from_state(U128{std::get<0>(s), std::get<1>(s)}, U128{std::get<2>(s), std::get<3>(s)},
                                               std::get<4>(s), std::get<5>(s));
    }
  }

  // Every game from its own generator; learner -1 = the constructor's option. False if any game is left
  // with no learner move (that game is not ready).
  bool reset_all(int learner, py::sequence history) {
    if (learner < -1 || learner > 2) throw py::value_error("learner must be -1, 0, 1 or 2 (random)");
    const std::vector<int> h = moves_of(history);
    const int seat = learner < 0 ? learner_option_ : learner;
    bool ok = true;
    for (auto& G : games_) ok &= reset_from_env_rng(*g_, G, seat, h.data(), int(h.size()));
    return ok;
  }

  // ---------------------------------------------------------------- single env (game 0)
  // Gymnasium's (obs, reward, terminated, truncated, info); None when the game cannot be stepped (not reset,
  // episode over) or `action` is not a Python int: the caller sorts those out.
  py::object step(py::handle action) {
    LearnerGame& G = games_[0];
    if (!G.ready || G.done || !PyLong_CheckExact(action.ptr())) return py::none();
    int overflow = 0;
    const long long a = PyLong_AsLongLongAndOverflow(action.ptr(), &overflow);
    std::string why;
    if (overflow) {
      why = "action " + std::string(py::str(action)) + " is out of range: a " + g_->name() + " board has actions 0.." +
            std::to_string(g_->num_actions - 1);
    } else {
      why = illegal_reason(*g_, G.board, a);
    }
    if (!why.empty()) {
      if (raise_) raise_illegal(why);
      return lose();
    }
    bool terminated = false;
    const double reward = step_game(*g_, G, int(a), mode_, terminated);
    return gym_step(reward, terminated, false);
  }

  // The learner's action was illegal under illegal_action="lose": the episode ends, the board unchanged.
  py::object lose() {
    LearnerGame& G = games_[0];
    G.done = true;
    return gym_step(-1.0, true, true);
  }

  py::tuple observe() {
    py::array_t<float> obs = new_obs(0);
    py::array_t<int8_t> mask = new_masks(0);
    observe_game(*g_, enc_, games_[0], obs.mutable_data(), mask.mutable_data());
    return py::make_tuple(obs_dict(obs, mask), info(mask, false));
  }

  // ---------------------------------------------------------------- vector env
  // (index, reason) of the first game that may not play actions[index] (marked[index]: not an integer, the
  // caller has the reason), skipping the games due for an autoreset; (-1, "") if all may.
  py::tuple first_illegal(py::handle actions, py::handle marked) {
    auto a = int_actions(actions);
    const bool* mk = marked_of(marked);
    const int64_t* ap = a.data();
    for (py::ssize_t i = 0; i < size(); ++i) {
      const LearnerGame& G = games_[size_t(i)];
      if (G.autoreset) continue;
      if (mk && mk[i]) return py::make_tuple(i, "");
      std::string why = illegal_reason(*g_, G.board, ap[i]);
      if (!why.empty()) return py::make_tuple(i, why);
    }
    return py::make_tuple(-1, "");
  }

  // One step of every game (an autoreset for those that ended last step): (obs [n, C, H, W] float32,
  // masks [n, A] int8, rewards [n] float64, terminated [n] bool, illegal [n] bool, learners [n] int64);
  // None if a game that should step was never reset.
  py::object step_all(py::handle actions, py::handle marked) {
    auto a = int_actions(actions);
    const bool* mk = marked_of(marked);
    const int64_t* ap = a.data();
    for (const auto& G : games_) {
      if (!G.autoreset && (!G.ready || G.done)) return py::none();
    }
    if (raise_) {
      py::tuple bad = first_illegal(actions, marked);
      const py::ssize_t i = bad[0].cast<py::ssize_t>();
      if (i >= 0) {
        raise_illegal("env " + std::to_string(i) + ": " + bad[1].cast<std::string>() + "; no game was stepped");
      }
    }
    const py::ssize_t n = size();
    py::array_t<double> rewards(n);
    py::array_t<bool> terminated(n), illegal(n);
    double* rp = rewards.mutable_data();
    bool* tp = terminated.mutable_data();
    bool* ip = illegal.mutable_data();
    const Geometry& g = *g_;
    for (py::ssize_t i = 0; i < n; ++i) {
      LearnerGame& G = games_[size_t(i)];
      rp[i] = 0.0;
      tp[i] = ip[i] = false;
      if (G.autoreset) {
        reset_from_env_rng(g, G, learner_option_, nullptr, 0);
      } else if ((mk && mk[i]) || !illegal_reason(g, G.board, ap[i]).empty()) {
        G.done = true;
        rp[i] = -1.0;
        tp[i] = ip[i] = true;
      } else {
        bool t = false;
        rp[i] = step_game(g, G, int(ap[i]), mode_, t);
        tp[i] = t;
      }
      G.autoreset = tp[i];
    }
    py::tuple o = observe_all();
    return py::make_tuple(o[0], o[1], rewards, terminated, illegal, o[2]);
  }

  // (obs [n, C, H, W] float32, masks [n, A] int8, learners [n] int64) of every game
  py::tuple observe_all() {
    const py::ssize_t n = size();
    py::array_t<float> obs = new_obs(n);
    py::array_t<int8_t> masks = new_masks(n);
    py::array_t<int64_t> learners(n);
    float* op = obs.mutable_data();
    int8_t* mp = masks.mutable_data();
    int64_t* lp = learners.mutable_data();
    const py::ssize_t per = py::ssize_t(channels_) * g_->height * g_->width;
    for (py::ssize_t i = 0; i < n; ++i) {
      observe_game(*g_, enc_, games_[size_t(i)], op + i * per, mp + i * g_->num_actions);
      lp[i] = games_[size_t(i)].learner;
    }
    return py::make_tuple(obs, masks, learners);
  }

  py::array_t<int8_t> masks() {
    py::array_t<int8_t> out = new_masks(size());
    int8_t* p = out.mutable_data();
    for (py::ssize_t i = 0; i < size(); ++i) fill_mask(*g_, games_[size_t(i)], p + i * g_->num_actions);
    return out;
  }

  // (edges, owner0, owner1) as little-endian bytes, player to move, history tuple; None before a reset
  py::object position(py::ssize_t i) {
    const LearnerGame& G = at(i);
    if (!G.ready) return py::none();
    py::tuple history(G.moves);
    for (int k = 0; k < G.moves; ++k) history[size_t(k)] = py::int_(int(G.history[k]));
    auto bytes = [](const uint64_t* w, int n) {
      std::string s(size_t(8 * n), '\0');
      for (int k = 0; k < n; ++k) {
        for (int j = 0; j < 8; ++j) s[size_t(8 * k + j)] = char((w[k] >> (8 * j)) & 0xFF);
      }
      return py::bytes(s);
    };
    const Board& b = G.board;
    return py::make_tuple(bytes(b.edges, kEdgeWords), bytes(b.owners[0], kBoxWords), bytes(b.owners[1], kBoxWords),
                          int(b.player), history);
  }

  const Geometry& geom() const { return *g_; }

  // pickling: the constructor's arguments and the games as raw bytes (LearnerGame is trivially copyable)
  py::tuple getstate() const {
    static_assert(std::is_trivially_copyable<LearnerGame>::value, "LearnerGame is saved as raw bytes");
    std::string raw(reinterpret_cast<const char*>(games_.data()), games_.size() * sizeof(LearnerGame));
    return py::make_tuple(g_->rows, g_->cols, size(), encoder_, reward_, illegal_, learner_option_, py::bytes(raw));
  }

  static LearnerGames setstate(py::tuple t) {
    if (t.size() != 8) throw py::value_error("LearnerGames: bad pickled state");
    LearnerGames out(t[0].cast<int>(), t[1].cast<int>(), t[2].cast<py::ssize_t>(), t[3].cast<std::string>(),
                     t[4].cast<std::string>(), t[5].cast<std::string>(), t[6].cast<int>());
    const std::string raw = t[7].cast<std::string>();
    if (raw.size() != out.games_.size() * sizeof(LearnerGame)) throw py::value_error("LearnerGames: bad pickled state");
    std::memcpy(static_cast<void*>(out.games_.data()), raw.data(), raw.size());
    return out;
  }

 private:
  // the actions of `history`, each checked legal on the way from the empty board
  std::vector<int> moves_of(py::sequence history) const {
    std::vector<int> h;
    Board b = empty_board();
    for (py::handle x : history) {
      const int64_t a = x.cast<int64_t>();
      const std::string why = illegal_reason(*g_, b, a);
      if (!why.empty()) raise_illegal(why);
      apply(*g_, b, int(a));
      h.push_back(int(a));
    }
    return h;
  }

  py::array_t<int64_t, py::array::c_style> int_actions(py::handle actions) const {
    auto a = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(actions);
    if (!a || a.ndim() != 1 || a.shape(0) != size()) {
      PyErr_Clear();
      throw py::value_error("actions must be an int64 array of shape (" + std::to_string(size()) + ",)");
    }
    return a;
  }

  const bool* marked_of(py::handle marked) const {
    if (marked.is_none()) return nullptr;
    auto m = py::reinterpret_borrow<py::array>(marked);
    if (!py::isinstance<py::array_t<bool>>(marked) || m.ndim() != 1 || m.shape(0) != size() ||
        !(m.flags() & py::array::c_style)) {
      throw py::value_error("marked must be None or a C-contiguous bool array of shape (" + std::to_string(size()) + ",)");
    }
    return static_cast<const bool*>(m.data());
  }

  static void fill_mask(const Geometry& g, const LearnerGame& G, int8_t* mask) {
    if (G.done) {
      std::memset(mask, 0, size_t(g.num_actions));
    } else {
      for (int a = 0; a < g.num_actions; ++a) mask[a] = int8_t(!test_bit(G.board.edges, a));
    }
  }

  static void observe_game(const Geometry& g, Encoder e, const LearnerGame& G, float* obs, int8_t* mask) {
    dnb::observe(g, e, G, obs, mask);
  }

  // [C, H, W] for the single env's game (n = 0), [n, C, H, W] for n games
  py::array_t<float> new_obs(py::ssize_t n) const {
    const py::ssize_t C = channels_, H = g_->height, W = g_->width;
    return n == 0 ? py::array_t<float>({C, H, W}) : py::array_t<float>({n, C, H, W});
  }

  py::array_t<int8_t> new_masks(py::ssize_t n) const {
    const py::ssize_t A = g_->num_actions;
    return n == 0 ? py::array_t<int8_t>(A) : py::array_t<int8_t>({n, A});
  }

  static py::dict obs_dict(const py::array& obs, const py::array& mask) {
    static const py::str* kObs = new py::str(key("observation"));
    static const py::str* kMask = new py::str(key("action_mask"));
    py::dict d;
    d[*kObs] = obs;
    d[*kMask] = mask;
    return d;
  }

  py::dict info(const py::array_t<int8_t>& mask, bool illegal) const {
    static const py::str* kMask = new py::str(key("action_mask"));
    static const py::str* kScores = new py::str(key("scores"));
    static const py::str* kPlayer = new py::str(key("current_player"));
    static const py::str* kLearner = new py::str(key("learner_player"));
    static const py::str* kIllegal = new py::str(key("illegal_action"));
    const LearnerGame& G = games_[0];
    const int l = G.learner;
    py::array_t<int8_t> copy(mask.size());
    std::memcpy(copy.mutable_data(), mask.data(), size_t(mask.size()));
    py::dict d;
    d[*kMask] = copy;
    d[*kScores] = py::make_tuple(int(G.board.score[l]), int(G.board.score[l ^ 1]));
    d[*kPlayer] = py::int_(int(G.board.player));
    d[*kLearner] = py::int_(l);
    d[*kIllegal] = py::bool_(illegal);
    return d;
  }

  py::tuple gym_step(double reward, bool terminated, bool illegal) {
    py::array_t<float> obs = new_obs(0);
    py::array_t<int8_t> mask = new_masks(0);
    observe_game(*g_, enc_, games_[0], obs.mutable_data(), mask.mutable_data());
    return py::make_tuple(obs_dict(obs, mask), reward, py::bool_(terminated), py::bool_(false), info(mask, illegal));
  }

  const Geometry* g_;
  std::string encoder_, reward_, illegal_;
  Encoder enc_ = Encoder::chainloop6;
  RewardMode mode_ = RewardMode::win;
  bool raise_ = false;
  int learner_option_ = 0;
  int channels_ = 0;
  std::vector<LearnerGame> games_;
};

}  // namespace

void bind_env(py::module_& m) {
  py::class_<LearnerGames>(m, "LearnerGames", R"doc(
Learner-vs-random-opponent games of dnb_env.gym_env (one for the single env, N for the vector env), each
stepped, replied to by the random opponent (baselines.random_agent.RandomAgent's draws, bit for bit),
encoded and masked in one call. Used by the envs when the backend is native; see dnb_env/csrc/env_module.cpp.
)doc")
      .def(py::init<int, int, py::ssize_t, const std::string&, const std::string&, const std::string&, int>(),
           py::arg("rows"), py::arg("cols"), py::arg("n"), py::arg("encoder"), py::arg("reward"),
           py::arg("illegal_action"), py::arg("learner"))
      .def("__len__", &LearnerGames::size)
      .def("reset", &LearnerGames::reset, py::arg("i"), py::arg("learner"), py::arg("seed"), py::arg("history"),
           "New episode of game i from the (legal) ``history``, opponent seeded like RandomAgent.seed(seed); "
           "False if the learner is left no move (the game is then not ready).")
      .def("set_generators", &LearnerGames::set_generators, py::arg("states"),
           "Per game (state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger) of a numpy PCG64 generator.")
      .def("reset_all", &LearnerGames::reset_all, py::arg("learner"), py::arg("history"),
           "Reset every game from its generator (learner -1: the constructor's option, 2: random).")
      .def("step", &LearnerGames::step, py::arg("action"))
      .def("lose", &LearnerGames::lose)
      .def("observe", &LearnerGames::observe)
      .def("step_all", &LearnerGames::step_all, py::arg("actions"), py::arg("marked"))
      .def("observe_all", &LearnerGames::observe_all)
      .def("masks", &LearnerGames::masks)
      .def("position", &LearnerGames::position, py::arg("i"))
      .def("learner", [](LearnerGames& s, py::ssize_t i) { return int(s.at(i).learner); }, py::arg("i"))
      .def("done", [](LearnerGames& s, py::ssize_t i) { return s.at(i).done; }, py::arg("i"))
      .def("ready", [](LearnerGames& s, py::ssize_t i) { return s.at(i).ready; }, py::arg("i"))
      .def("autoreset", [](LearnerGames& s, py::ssize_t i) { return s.at(i).autoreset; }, py::arg("i"))
      .def(py::pickle([](const LearnerGames& s) { return s.getstate(); },
                      [](py::tuple t) { return LearnerGames::setstate(t); }))
      .def("__copy__", [](const LearnerGames& s) { return LearnerGames(s); })
      .def("__deepcopy__", [](const LearnerGames& s, py::dict) { return LearnerGames(s); }, py::arg("memo"));
}

}  // namespace dnb
