// Exact Dots-and-Boxes solver: alpha-beta search over the box margin (C++17, header only).
//
// What it computes. The value v(S) of a position is the margin (boxes) the player to move gets over the
// opponent from the boxes not yet claimed, under optimal play by both. It depends only on the set S of
// drawn edges (the claimed boxes are sunk), so the search and its table are keyed by S alone:
//
//     v(S) = max over undrawn e of   g + v(S + e)   if e completes g > 0 boxes (the mover moves again)
//                                    -v(S + e)      otherwise                          v(full) = 0
//
// This is the recursion of baselines/solver.py (the retrograde reference), searched depth-first instead
// of enumerated, so positions far beyond 2^k tables are in reach.
//
// How it searches.
//  * Negamax alpha-beta, fail-soft, driven by MTD(f) (Plaat et al. 1996): a sequence of null-window
//    searches (beta - 1, beta) that converges on the exact integer value. A single null-window search
//    answers "is v >= t?" (the win/draw query).
//  * A transposition table of lower/upper bounds keyed by the drawn-edge set, canonicalised over the
//    board's symmetries (8 on a square board, 4 on a rectangle): a position carries its edge set seen
//    through every symmetry, updated incrementally as edges are drawn; the smallest of those sets (as a
//    180-bit number) is the canonical form, its mixed bits index the table, and the entry stores the full
//    set, so a hit is never a hash collision. Bounds depend only on the edge set, so entries are reused
//    across searches and across calls.
//  * Move ordering: the table's best move, then safe moves (no box gets its third side) by the undrawn
//    sides of the boxes they touch, fewest first, and from the centre outwards among equals (Barker & Korf
//    2012 report the centre-out order as very effective), then sacrifices by the number of boxes they hand
//    over, fewest first. Captures are handled by the rules below.
//  * Bounds: |v| <= number of unclaimed boxes cuts nodes whose window lies outside that range, and a
//    capture choice of rule 2 (take a run of 2, or an opened loop of 4, or double-deal) is worth >= 0 to
//    the mover, which cuts it at once when the window lies at or below 0. Every value has the parity of
//    the unclaimed boxes, so bounds of the other parity are tightened by one before they are stored.
//
// Which reductions it uses. Only reductions proven to keep the exact value; each is a Rule bit so that
// tests can switch it off, and verify_rules() checks each against a full retrograde table (every edge
// set of a small board: the pruned move set must always contain an optimal move).
//  1. kFreeCapture (Berlekamp 2000, ch. "canonical play"; Barker & Korf 2012, "capturing boxes"): a box
//     with one undrawn side e, where e leads to the border or to a box with other than two undrawn sides,
//     is taken at once: e is the only move searched. Why exact: drawing e affects only this box and that
//     neighbour, and the neighbour is not left capturable by it; any other move x is worth no more than
//     "e, then x" (if x gives the turn away the opponent can take the box and reach the same position two
//     boxes better for him; if x captures, by induction on the undrawn edges or because the two
//     positions after x and after e are the same graph with the two capturable boxes exchanged).
//  2. kDoubleDealing, the all-but-two / all-but-four rule (Berlekamp 2000; Winning Ways ch. 16; the
//     "loony options" theorem: in a position with boxes on offer the player can only gain by taking all
//     of them, or all but two (four for an opened loop) and handing those back with the double-dealing
//     move; every other plan gives boxes away for nothing). Applied once no free capture is left, so each
//     capturable box starts a run of boxes with two undrawn sides:
//       - a run that is a chain of >= 3 boxes, or a two-ended run (opened loop) of 3 or >= 5 boxes: take
//         its first box only (both optimal plans still exist after it);
//       - several runs of 2 (chain) / 4 (opened loop) boxes: take a box of a run whose double-deal is not
//         the only cheapest one (its loss leaves a double-deal of the same cost, with the same position
//         after all captures);
//       - one run left: search exactly two moves, taking its first box and the double-dealing move (the
//         far end of a 2-chain; the middle edge of an opened 4-loop, which leaves two dominoes).
//  3. kEquivalentSacrifices (Berlekamp 2000; Medworth, theorem "a half-hearted handout is never better
//     than a hard-hearted one", and the loony-options theorem for where a long chain is opened), with no
//     box on offer: every edge of a loop gives the same graph, so one is
//     searched; every edge of a chain of >= 3 boxes is equivalent (whatever is cut, the opponent's only
//     sensible plans are "take all" or "all but two", with the same position after all captures), so one
//     is searched; a 2-chain is only opened in the middle (the hard-hearted handout is never worse than the
//     half-hearted one); an isolated 1-chain's two border edges are equivalent; equal isolated chains and
//     loops are searched once. Chains ending in joints qualify only when using up the chain leaves each end
//     joint with >= 2 undrawn sides (so no new box comes on offer while it is taken).
//  4. kSimpleEndgame: when every unclaimed box has exactly two undrawn sides the position is a sum of
//     isolated chains and loops and its value is the opener/controller recursion of
//     dnb_env/analysis.py (simple_endgame_value): v(empty) = 0, v(G) = min over components C of
//     chain 1: 1 - v(G-C), chain 2: 2 - v(G-C), chain n >= 3: n - 2 + |2 - v(G-C)|,
//     loop n: n - 4 + |4 - v(G-C)| (margin of the controller; the mover's value is -v).
//  5. kBorderEdges (Barker & Korf 2012, the corner symmetry; in strings-and-coins terms, two strings that
//     tie the same coin to the ground): the sides of one box that lie on the border (two for a corner box,
//     three for the end box of a 1 x n board) lead to the same graph whichever of them is drawn. So only
//     one of a box's undrawn border sides is searched, and the table key counts, for each such box, how
//     many of its border sides are drawn rather than which (the key marks the first ones in a fixed order).
//     Why exact: cutting either string gives isomorphic graphs, and the value is a function of the graph.
//
// References: J. K. Barker and R. E. Korf, "Solving Dots-And-Boxes", AAAI 2012; E. Berlekamp, "The
// Dots-and-Boxes Game: Sophisticated Child's Play", A K Peters 2000; E. Berlekamp, J. Conway, R. Guy,
// "Winning Ways", ch. 16; A. Medworth, "The Dots-and-Boxes Game" (notes, github.com/amdw/dotsandboxes:
// theorems on loony options, free coins, half-hearted handouts); A. Plaat et al., "Best-first fixed-depth
// minimax algorithms", Artificial Intelligence 1996 (MTD(f)). The rules are stated here in this solver's
// terms with the argument for each; verify_rules() re-checks them exhaustively (0 violations on every
// edge set of 1xN up to 1x7, 2x2, 2x3, 2x4, 2x5 and 3x3).
#pragma once

#define DNB_SOLVER_THREADS 1  // Solver::set_threads exists (benchmarks/solver_driver.cpp checks)

// The parts, each with one job: the board and its positions, move generation (the rules above), the
// transposition table, the search and its queries, and the exhaustive check of the rules.
#include "solver_topology.hpp"
#include "solver_moves.hpp"
#include "solver_table.hpp"
#include "solver_search.hpp"
#include "solver_verify.hpp"
