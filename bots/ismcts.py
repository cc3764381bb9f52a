"""Information Set Monte Carlo Tree Search: the strongest level, and a fair one.

Each iteration deals the cards the seat has not seen anew (`Belief.determinize`, consistent
with everything it has seen), then walks one tree of decisions shared by every deal: at each
node the seat to decide picks, among the commands legal in this deal, the one with the best
upper confidence bound of its own reward, counting how often each command was available
(single-observer ISMCTS, Cowling, Powley and Whitehouse 2012). A new node is added and the
position after it is read, each builder's reward in 0..1, or the end of the game (a win,
shared on a shared win). The command tried most at the root is played.

How a position is read (measured against the greedy bot, 100 ms a decision): the turn under
way is finished (each floor and take at random, the optional steps skipped), since a position
read in the middle of a turn misses the floors of the card just played, and the deal is read
by the greedy bot's outlook (`bots.outlook`, every hand known in a deal) from the searching
seat's side, each builder's soft margin over the others squashed into 0..1. Random play-outs
of 40 decisions read by the cheap static evaluation did worse at every table size: ahead of
greedy in 54-66 % of 200 duels against 67 %, a quarter of the four-seat games against a
third.

The search uses the domain's own `decide` and `legal_commands`, so every rule holds in it.
Budget: a number of iterations, or milliseconds read from a clock the caller passes in (the
package has no clock); with a fixed seed and an iteration budget the choice is always the same.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from bots.belief import Belief
from bots.evaluate import Unseen, soft_margin
from bots.outlook import outlook
from bots.seen import Seen
from domain.commands import Command, Skip
from domain.decide import decide
from domain.legal import legal_commands
from domain.state import State


class Node:
    """One decision of the tree shared by every deal: its visits, how often it was
    available, and the sum of its actor's rewards (so `reward / visits` is its estimate)."""

    __slots__ = ("actor", "available", "children", "reward", "visits")

    def __init__(self, actor: int) -> None:
        self.actor = actor
        """The seat whose decision led here (it owns the reward)."""
        self.children: dict[Command, Node] = {}
        self.visits = 0
        self.available = 0
        self.reward = 0.0


class IsmctsBot:
    level = "ismcts"

    def __init__(
        self,
        *,
        iterations: int | None = None,
        milliseconds: float | None = None,
        clock: Callable[[], float] | None = None,
        exploration: float = 0.7,
        scale: float = 6.0,
        softness: float = 3.0,
        turn_steps: int = 12,
    ) -> None:
        if iterations is None and milliseconds is None:
            iterations = 200
        if milliseconds is not None and clock is None:
            raise ValueError("a budget in milliseconds needs a clock (seconds, monotonic)")
        self.iterations = iterations
        self.milliseconds = milliseconds
        self.clock = clock
        self.exploration = exploration
        self.scale = scale
        self.softness = softness
        """How closely a builder's reward watches every other builder (in points,
        `bots.evaluate.soft_margin`, as the greedy bot does)."""
        self.turn_steps = turn_steps
        """How many decisions, at most, finish a turn."""
        self._observer = 0
        self.last_iterations = 0
        """How many iterations the last choice ran (for the benchmarks)."""

    def choose(self, seen: Seen, rng: random.Random) -> Command:
        legal = seen.view.legal_commands
        if len(legal) == 1:
            return legal[0]
        root = Node(-1)
        self.last_iterations = self.grow(root, seen, Belief(seen), rng)
        visits = {command: child.visits for command, child in root.children.items()}
        return max(legal, key=lambda command: visits.get(command, -1))

    def grow(
        self,
        root: Node,
        seen: Seen,
        belief: Belief,
        rng: random.Random,
        *,
        iterations: int | None = None,
        first: Command | None = None,
    ) -> int:
        """Run the search from `seen` into `root` (the bot's budget, or `iterations`), each
        iteration on a new deal of what the seat has not seen; with `first`, every iteration
        takes that command at the root (the analysis's reading of a command the search would
        rarely try: `bots.analysis`). How many iterations ran."""
        self._observer = seen.seat
        budget = self.iterations if iterations is None else iterations
        deadline = None
        if iterations is None and self.milliseconds is not None and self.clock is not None:
            deadline = self.clock() + self.milliseconds / 1000
        done = 0
        while budget is None or done < budget:
            if deadline is not None and self.clock is not None and self.clock() >= deadline:
                break
            self._iterate(root, belief.determinize(rng), rng, first)
            done += 1
        return done

    def _iterate(
        self, root: Node, state: State, rng: random.Random, first: Command | None = None
    ) -> None:
        node, path = root, []
        while (pending := state.pending) is not None:
            seat = pending.seat
            legal = legal_commands(state, seat)
            if first is not None:  # the root's command is given
                legal, first = [first], None
            untried = []
            for command in legal:
                child = node.children.get(command)
                if child is None:
                    untried.append(command)
                else:
                    child.available += 1
            if untried:
                command = untried[rng.randrange(len(untried))]
                child = node.children[command] = Node(seat)
                child.available = 1
                _, state = decide(state, seat, command)
                path.append(child)
                break
            command = self._select(node, legal)
            _, state = decide(state, seat, command)
            node = node.children[command]
            path.append(node)
        rewards = self.rewards(state, rng)
        for visited in path:
            visited.visits += 1
            visited.reward += rewards[visited.actor]

    def _select(self, node: Node, legal: list[Command]) -> Command:
        best, best_bound = legal[0], float("-inf")
        for command in legal:
            child = node.children[command]
            bound = child.reward / child.visits + self.exploration * math.sqrt(
                math.log(child.available) / child.visits
            )
            if bound > best_bound:
                best, best_bound = command, bound
        return best

    def rewards(self, state: State, rng: random.Random) -> list[float]:
        """Each builder's reward in 0..1 for the position after a new node."""
        builders = state.board.builders
        state = self._finish_turn(state, rng)
        if state.result is not None:
            winners = state.result.winners
            return [1.0 / len(winners) if b in winners else 0.0 for b in range(builders)]
        return self.read(self.points(state))

    def points(self, state: State) -> list[float]:
        """What each builder may expect to score from `state` (every hand known in a deal),
        from the searching seat's side (`bots.outlook`)."""
        nobody = Unseen([{} for _ in state.hands], [{} for _ in state.hands])
        return outlook(state, self._observer, state.hands, nobody)

    def read(self, points: list[float]) -> list[float]:
        """Each builder's reward in 0..1 from its expected points: its soft margin over the
        others, squashed."""
        builders = len(points)
        margins = [soft_margin(points, b, self.softness) for b in range(builders)]
        return [1.0 / (1.0 + math.exp(-m / self.scale)) for m in margins]

    def _finish_turn(self, state: State, rng: random.Random) -> State:
        """The turn under way played to its end (the next card to play), the optional steps
        skipped and the rest at random: the outlook reads the floors and takes of a turn
        only once they are made, so a turn read halfway would count its card as lost."""
        for _ in range(self.turn_steps):
            pending = state.pending
            if pending is None or pending.step == "play_card":
                break
            legal = legal_commands(state, pending.seat)
            skip = next((c for c in legal if isinstance(c, Skip)), None)
            command = skip if skip is not None else legal[rng.randrange(len(legal))]
            _, state = decide(state, pending.seat, command)
        return state
