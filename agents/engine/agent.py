"""A program that speaks the engine protocol, as an Agent: the controller side.

    agent = EngineAgent(["./my_engine", "--threads", "1"], name="mine", board=(5, 5), seed=0, movetime=0.5)
    agent.prepare(state)             # starts the program if needed; 'newgame 5x5', 'seed 0', 'isready' -> 'readyok'
    agent.select_action(state)       # (prepares if not yet); 'position ...', 'go movetime 500' -> 'move A'
    agent.check_board("4x4")         # ValueError when the engine declared its boards ('id boards') without 4x4
    agent.close()                    # 'quit', then its process group ended if it has not exited within a second

* Start-up is timed apart from the moves: the handshake and each game's ``isready`` get ``startup``
  seconds each, and :meth:`EngineAgent.prepare` (which the arena calls before a game's clock starts) does
  both, so the first move's clock starts once the engine is ready. An engine that is not ready within
  ``startup`` fails with kind ``"time"`` and a reason that names its start-up limit.
* An engine may declare the boards it plays in the handshake (``id boards 3x3 5x5``, :attr:`boards`); one
  that declares none plays every board. A game on another board fails with kind ``"error"`` before
  ``newgame`` is sent, and :meth:`check_board` lets a tournament refuse such a board before any game.

* The program is started with its arguments as a list (never through a shell), its standard error appended
  to a log file (``log``; default ``dnb-engine-<name>-<pid>.log`` in the temporary folder), and kept
  between games: ``reset()`` makes the next move start a new game (``newgame``, ``seed``, ``isready``).
* Every failure to give a move raises :class:`agents.base.AgentFailure` with its kind, and the program is
  stopped; the next move (of the next game) starts it again. The arena scores the game as lost by the
  engine with the kind and message recorded. Kinds: ``"crash"`` (it exited or closed its output),
  ``"time"`` (no move within the move's time plus ``tolerance``, or within ``timeout`` without a clock;
  with a tournament's ``overrun="warn"``, no move within the move's time plus ``timeout``, the hard cap
  that keeps a hung engine from hanging the tournament; handshake and ``isready`` within ``startup``),
  ``"illegal"`` (a move id of a drawn edge or off the board), ``"protocol"`` (a line the protocol does not
  allow there, or one over 64 KiB), ``"error"`` (an ``error`` line).
* The program is started in a process group of its own (a new session), and stopping it ends the whole
  group: the program and any helper it started (SIGTERM, then SIGKILL after 0.2 s). It is stopped on
  :meth:`close`, after a failure, when the agent is garbage collected, and when this process exits
  normally; the protocol asks an engine to exit when its input closes, which covers a controller killed
  outright. The program itself (not its helpers) also ends with this process however that ends, SIGKILL
  included, where it was started from the main thread (:func:`agents.processes.die_with_parent`: on
  Linux the kernel kills it). Its output is read by a daemon thread that nothing waits for: a program
  that exits while a helper holds its output open fails with kind ``"crash"`` (its group ended) and
  never hangs the caller.
"""

from __future__ import annotations

import functools
import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from typing import Callable, Sequence

from agents.base import AgentFailure, check_state
from agents.engine.protocol import (HELLO, MAX_LINE, VERSION, ProtocolError, boards_text, format_go, parse_boards,
                                    parse_info, parse_move)
from agents.processes import die_with_parent
from dnb_env.agent import Clocked, Closeable, Preparable, Seedable, Timed, Tolerant
from dnb_env.clock import TIME_MARGIN, check_seconds, check_time_control
from dnb_env.core import GameState, geometry

__all__ = ["EngineAgent", "check_engine_times"]

_POLL = 0.05  # seconds between looks at whether the program is still running, while waiting for a line
_EXIT_GRACE = 1.0  # seconds the output of an exited program may stay open before it counts as closed


def check_engine_times(movetime: float | None = None, timeout: float | None = None,
                       tolerance: float | None = None, startup: float | None = None,
                       prefix: str = "engine option") -> None:
    """ValueError unless each option given is a positive number of seconds (``tolerance``: 0 or more), in
    the words of ``prefix`` (the time control's own check for ``movetime`` and ``tolerance``)."""
    check_time_control(per_move=movetime, margin=TIME_MARGIN if tolerance is None else tolerance,
                       names={"per_move": f"{prefix} movetime", "margin": f"{prefix} tolerance"})
    for what, value in (("timeout", timeout), ("startup", startup)):
        if value is not None:
            check_seconds(value, f"{prefix} {what}")


def _read_lines(stream, lines: queue.Queue) -> None:
    """In a daemon thread that owns ``stream``: the program's output lines (bytes) into ``lines``, then None
    at its end, and the stream closed. Nothing waits for this thread: a program whose helper keeps its
    output open past its end blocks only this thread, never the controller."""
    try:
        while True:
            raw = stream.readline(MAX_LINE)
            if not raw:
                break
            lines.put(raw)
    except (OSError, ValueError):
        pass
    finally:
        lines.put(None)
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def _end_group(proc: subprocess.Popen, grace: float = 0.2) -> None:
    """End the process group of ``proc`` (started as its leader: the program and every helper it started):
    SIGTERM, then SIGKILL to whatever is left after ``grace`` seconds; ``proc`` itself is reaped. Only
    ``proc`` is killed where there are no process groups."""
    if not hasattr(os, "killpg"):
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except OSError:  # no process left in the group
        proc.wait()
        return
    end = time.monotonic() + grace
    while time.monotonic() < end:
        proc.poll()  # reap the leader: a zombie still counts as one of the group
        try:
            os.killpg(proc.pid, 0)
        except OSError:
            break
        time.sleep(0.01)
    else:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    proc.wait()


def _kill(proc: subprocess.Popen, grace: float = 1.0) -> None:
    """Ask ``proc`` to quit (``quit``, its input closed), then end its process group: the program if it has
    not exited within ``grace`` seconds, and any helper it left behind. Its output is left to the reader
    thread, which closes it at its end."""
    if proc.poll() is None:
        try:
            proc.stdin.write(b"quit\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            pass
    try:
        proc.stdin.close()
    except (OSError, ValueError):
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    _end_group(proc)


class EngineAgent(Seedable, Timed, Clocked, Tolerant, Preparable, Closeable):
    """An engine program as an Agent (module docstring).

    Args:
        argv: the program and its arguments
        name: the agent's name (None: the name the engine gives in the handshake, ``engine`` until then)
        board: the board it plays, ``(rows, cols)`` (None: any)
        seed: sent as ``seed`` with each new game (changed by :meth:`seed`); None: no ``seed`` line
        movetime: seconds per move told to the engine (``go movetime``); None: ``go`` without a clock
        timeout: seconds a move may take when no move time is given (a hung engine loses after it), and
            the seconds past the move time a late engine is waited for when overruns are only warned
        tolerance: seconds past the move time before the engine loses on time (default
            :data:`~dnb_env.clock.TIME_MARGIN`; a tournament's time control sets its own margin
            with :meth:`set_overrun`)
        startup: seconds for the handshake and for each ``isready`` (its start-up limit), apart from the
            move times
        log: file that collects the program's standard error (``{pid}`` is replaced by this process's id)
        clock: monotonic seconds (a fake clock in tests)
    """

    def __init__(self, argv: Sequence[str], *, name: str | None = None, board: tuple[int, int] | None = None,
                 seed: int | None = None, movetime: float | None = None, timeout: float = 60.0,
                 tolerance: float = TIME_MARGIN, startup: float = 30.0, log: str | None = None,
                 clock: Callable[[], float] = time.monotonic):
        if not argv:
            raise ValueError("an engine needs a program to run")
        check_engine_times(movetime=movetime, timeout=timeout, tolerance=tolerance, startup=startup)
        self.argv = [str(a) for a in argv]
        self.name = name or "engine"
        self._fixed_name = name is not None
        self.board, self._seed = board, seed
        self.movetime, self.timeout, self.tolerance, self.startup = movetime, timeout, tolerance, startup
        self.game_clock: tuple[float, float] | None = None  # (left, inc) of the next move: set_clock
        self.overrun = "lose"  # a late move: given up on at the tolerance ("lose"), or waited for ("warn")
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.name)
        self.log_path = (log or os.path.join(tempfile.gettempdir(), f"dnb-engine-{safe}-{{pid}}.log")).replace(
            "{pid}", str(os.getpid()))
        self.clock = clock
        self.engine_name: str | None = None
        self.boards: tuple[str, ...] | None = None  # the boards the engine declared ('id boards'); None: every one
        self.analysis: dict = {}  # the last info line's analysis of the last move
        self.proc: subprocess.Popen | None = None
        self._lines: queue.Queue | None = None
        self._finalizer = None
        self._game: tuple[int, int] | None = None  # the board of the game the engine has been told of

    # ------------------------------------------------------------------ Agent
    def seed(self, seed: int) -> None:
        """The seed sent with the next new game."""
        self._seed = seed

    def set_move_time(self, seconds: float) -> None:
        """The seconds per move told to the engine from now on (a tournament's time control)."""
        self.movetime, self.game_clock = seconds, None

    def set_clock(self, left: float, inc: float = 0.0) -> None:
        """A game clock for the next move: ``go left MS inc MS`` (the engine divides its time itself); it
        loses on time after ``left`` plus ``tolerance`` seconds. Called before each move (a tournament's
        ``time_per_game``)."""
        self.game_clock = (max(0.0, left), inc)

    def set_overrun(self, margin: float, rule: str) -> None:
        """How late moves are judged from now on (a tournament's time control, before each game):
        ``margin`` seconds of tolerance past the move time or the clock (the arena's ``time_margin``);
        ``rule`` ``"lose"``: the engine loses on time once it is ``margin`` late, ``"warn"``: a late engine
        is waited for, up to ``timeout`` seconds past its move time or clock (the hard cap: a hung engine
        still loses on time), and its move stands (the arena lists it as an overrun)."""
        check_time_control(margin=margin, overrun=rule)
        self.tolerance, self.overrun = margin, rule

    def move_limit(self) -> float:
        """Seconds the next move may take before the engine loses on time: the move time (or the clock)
        plus ``tolerance``, or plus ``timeout`` when overruns are only warned; ``timeout`` without either."""
        late = self.timeout if self.overrun == "warn" else self.tolerance
        if self.game_clock is not None:
            return self.game_clock[0] + late
        return self.movetime + late if self.movetime is not None else self.timeout

    def reset(self) -> None:
        """A new game starts: the next move sends ``newgame`` first."""
        self._game = None

    def prepare(self, state: GameState) -> None:
        """Get ready for the game of ``state`` before its clock starts: the program started (handshake) and
        told of the game (``newgame``, ``seed``, ``isready`` -> ``readyok``), each within ``startup``
        seconds. Nothing to do when the engine is ready for this game already. AgentFailure as for a move
        (the program is stopped)."""
        check_state(self, state)
        try:
            self._start_game(state)
        except AgentFailure:
            self._stop(grace=0.0)
            raise

    def check_board(self, board) -> None:
        """ValueError when the engine plays only other boards than ``board`` ("RxC", (rows, cols) or a Geometry): the
        boards it declared in the handshake (``id boards``), which starts the program if it is not running.
        An engine that declares none, or that cannot be started (its games are forfeited with the reason),
        passes."""
        name = geometry(board).name
        if self.proc is None:
            try:
                self._start()
            except AgentFailure:
                self._stop(grace=0.0)
                return
        if self.boards is not None and name not in self.boards:
            raise ValueError(self._not_board(name))

    def _not_board(self, board: str) -> str:
        return self._says(f"plays only the board{'s' * (len(self.boards) > 1)} {boards_text(self.boards)} "
                          f"(its 'id boards'), not {board}")

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        try:
            self._start_game(state)
            self._send("position" + "".join(f" {a}" for a in state.history))
            if self.game_clock is not None:
                left, inc = self.game_clock
                self._send(format_go(left=left, inc=inc))
            else:
                self._send(format_go(movetime=self.movetime))
            limit = self.move_limit()
            deadline = self.clock() + limit
            self.analysis = {}
            while True:
                line = self._read(deadline, f"gave no move within {limit:.3g} s")
                if line.startswith("info"):
                    self.analysis = parse_info(line) or self.analysis
                    continue
                self._check_error(line, "go")
                words = line.split()
                if words[:1] == ["move"] and _is_int(words[1:]) and not 0 <= int(words[1]) < state.num_actions:
                    raise AgentFailure("illegal", self._says(
                        f"answered the illegal move {words[1]} (off the {state.geometry.name} board: its "
                        f"moves are 0..{state.num_actions - 1})"))
                try:
                    action = parse_move(line, state.num_actions)
                except ProtocolError as exc:
                    raise AgentFailure("protocol", self._says(f"answered {line!r} to go: {exc}")) from None
                if not state.is_legal(action):
                    raise AgentFailure("illegal", self._says(f"answered the illegal move {action} (an edge already "
                                                             "drawn)"))
                return action
        except AgentFailure:
            self._stop(grace=0.0)  # a failed engine gets no second chance in this game
            raise

    def close(self) -> None:
        """Stop the program (``quit``; its process group ended after a second)."""
        self._stop()

    # ------------------------------------------------------------------ the program
    def _says(self, text: str) -> str:
        return f"engine {self.name!r} {text}"

    def _start(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.log_path)), exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} start: {self.argv}\n".encode())
            log.flush()
            try:
                self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=log, close_fds=True, start_new_session=True,
                                             preexec_fn=_dies_with_this_process())
            except OSError as exc:
                raise AgentFailure("crash", self._says(f"could not be started ({self.argv[0]}): "
                                                       f"{exc.strerror or exc}")) from None
        self._lines = queue.Queue()
        threading.Thread(target=_read_lines, args=(self.proc.stdout, self._lines), daemon=True,
                         name=f"engine-{self.name}").start()
        self._finalizer = weakref.finalize(self, _kill, self.proc)
        deadline = self.clock() + self.startup
        self.boards = None
        self._send(f"{HELLO} {VERSION}")
        while True:
            line = self._read(deadline, f"did not finish the handshake within {self.startup:.3g} s (its start-up "
                                        "limit, startup)")
            words = line.split()
            if words[:2] == ["id", "name"] and len(words) > 2:
                self.engine_name = " ".join(words[2:])
                if not self._fixed_name:
                    self.name = self.engine_name
            elif words[:2] == ["id", "boards"]:
                try:
                    self.boards = parse_boards(words[2:])
                except ProtocolError as exc:
                    raise AgentFailure("protocol", self._says(f"answered {line!r} to the handshake: {exc}")) from None
            elif words[:1] in (["id"], ["info"]):
                continue
            elif words == [HELLO, "ok", str(VERSION)]:
                return
            else:
                self._check_error(line, f"{HELLO} {VERSION}")
                raise AgentFailure("protocol", self._says(f"answered {line!r} to the handshake "
                                                          f"(expected '{HELLO} ok {VERSION}')"))

    def _start_game(self, state: GameState) -> None:
        if self.proc is None:
            self._start()
        size = (state.rows, state.cols)
        if self._game == size:
            return
        if self.boards is not None and state.geometry.name not in self.boards:
            raise AgentFailure("error", self._not_board(state.geometry.name))
        self._send(f"newgame {state.geometry.name}")
        if self._seed is not None:
            self._send(f"seed {self._seed & 0x7FFFFFFF}")
        self._send("isready")
        deadline = self.clock() + self.startup
        while True:
            line = self._read(deadline, f"did not answer isready within {self.startup:.3g} s (its start-up limit, "
                                        "startup)")
            if line == "readyok":
                break
            if line.startswith("info"):
                continue
            self._check_error(line, "newgame")
            raise AgentFailure("protocol", self._says(f"answered {line!r} to isready (expected 'readyok')"))
        self._game = size

    def _check_error(self, line: str, command: str) -> None:
        if line.split()[:1] == ["error"]:
            raise AgentFailure("error", self._says(f"answered an error to {command}: {line[5:].strip()}"))

    def _send(self, line: str) -> None:
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise AgentFailure("crash", self._says(f"is gone ({self._exit_text()})")) from None

    def _read(self, deadline: float, late: str) -> str:
        """The next line of the program, stripped; AgentFailure when none comes before ``deadline``."""
        end = time.monotonic() + max(0.0, deadline - self.clock())
        exited = None  # when the program was seen to have exited with its output still open
        while True:
            try:
                raw = self._lines.get(timeout=max(0.0, min(end - time.monotonic(), _POLL)))
                break
            except queue.Empty:
                pass
            now = time.monotonic()
            if exited is None and self.proc.poll() is not None:
                exited = now
                _end_group(self.proc)  # a helper it left behind holds its output: ended, the output ends
            elif exited is not None and (now - exited > _EXIT_GRACE or now >= end):  # held outside its group
                raw = None
                break
            if now >= end:
                raise AgentFailure("time", self._says(late))
        if raw is None:
            raise AgentFailure("crash", self._says(f"closed its output ({self._exit_text()})"))
        if len(raw) >= MAX_LINE and not raw.endswith(b"\n"):
            raise AgentFailure("protocol", self._says(f"wrote a line longer than {MAX_LINE} bytes"))
        return raw.decode("utf-8", "replace").strip()

    def _exit_text(self) -> str:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return f"still running; its standard error: {self.log_path}"
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        last = _last_line(self.log_path)
        return how + (f"; last line of its standard error: {last!r}" if last else "") + f"; log: {self.log_path}"

    def _stop(self, grace: float = 1.0) -> None:
        if self.proc is None:
            return
        if self._finalizer is not None:
            self._finalizer.detach()
        _kill(self.proc, grace)
        self.proc = self._lines = self._finalizer = None
        self._game = None


def _dies_with_this_process():
    """The ``preexec_fn`` of a program started from this thread: it ends with this process
    (:func:`agents.processes.die_with_parent`); None where there is no ``preexec_fn`` (Windows)."""
    if os.name != "posix":
        return None
    return functools.partial(die_with_parent, os.getpid(), threading.current_thread() is threading.main_thread())


def _is_int(words: list[str]) -> bool:
    try:
        int(words[0])
    except (ValueError, IndexError):
        return False
    return len(words) == 1


def _last_line(path: str, size: int = 2048) -> str | None:
    """The last non-empty line of the file ``path`` (at most 200 characters), None if there is none."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - size))
            lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines()]
    except OSError:
        return None
    lines = [ln for ln in lines if ln and not ln.startswith("--- ")]
    return lines[-1][:200] if lines else None
