"""Who may be reached: the lists first, then what the user answered this session, then a question.

A denied entry wins over everything; then an allowed entry; then the user's answers for this
session ("Yes" / "No" count for the host, on any port); a name nobody decided is asked about
once (requests for it meanwhile wait for the same answer) where someone can answer, and refused
otherwise. An address that is not public, or ``localhost``, is never asked about: only an entry
naming it exactly opens it (connect.py). :meth:`NetworkGate.verdict` is cheap and thread-safe (the proxy calls it for every
connection from its own thread); asking and reporting happen on the session's event loop.

What was decided is kept per host (``decided``, for ``/permissions``), told to the commands
running at the time (``watch``: the shell tool adds it to what the model reads, a front end
shows it) and written to the session file once per host, port and answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import astuple, dataclass, field

from agent_cli import events as ev
from agent_cli.network.addresses import is_public
from agent_cli.network.lists import NetworkLists

# What a question gets back: allow for the session, allow and save, or refuse for the session.
ONCE, ALWAYS, NO = "once", "always", "no"
HOW_TO_ALLOW = (
    "add it to sandbox.network.allowedDomains in ~/.claude/settings.json (or allowed_domains under "
    "[sandbox.network] in config.toml)"
)


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool | None  # None: nobody decided yet
    by: str  # what decided, in words
    exact: bool = False  # allowed by an entry naming this host exactly: private addresses too

    @property
    def undecided(self) -> bool:
        return self.allowed is None


UNDECIDED = Verdict(None, "not listed")


@dataclass(frozen=True, slots=True)
class Decision:
    """One request's outcome, as reported: what was asked for and what decided."""

    host: str
    port: int
    allowed: bool
    by: str

    def line(self) -> str:
        """What the model reads (and the command's stderr shows) for a refusal."""
        if self.allowed:
            return f"network: allowed {self.host}:{self.port} ({self.by})"
        return f"network: refused {self.host}:{self.port} ({self.by}). To allow it, {HOW_TO_ALLOW}."


@dataclass
class Watch:
    """A running command's view of the decisions: what to tell the model when it ends."""

    emit: Callable[[ev.Event], None]  # the running call's events, on the session's loop
    call_id: str
    decisions: list[Decision] = field(default_factory=list)
    questions: set[asyncio.Future[str]] = field(default_factory=set)  # asked through it, not yet answered

    def notes(self) -> list[str]:
        """One line per refused host (allowed ones are not news)."""
        seen: dict[tuple[str, int], Decision] = {}
        for decision in self.decisions:
            if not decision.allowed:
                seen.setdefault((decision.host, decision.port), decision)
        return [decision.line() for decision in seen.values()]


Question = Callable[[str, int, Watch], Awaitable[str]]  # -> ONCE | ALWAYS | NO


def not_asked(host: str) -> str | None:
    """Why ``host`` is refused without a question: an address that is not public (loopback, private,
    link-local: the agent's own servers, the cloud's metadata service) or a ``localhost`` name.
    An answer never opens those, and "don't ask again" would have saved an entry that did."""
    try:
        private = not is_public(host)
    except ValueError:  # a name
        private = host == "localhost" or host.endswith(".localhost")
    if not private:
        return None
    return f"{host} is a loopback, private or link-local address; only an entry naming it exactly may reach it"


class NetworkGate:
    def __init__(self, lists: NetworkLists, question: Question | None = None, cannot_ask: str = ""):
        self.lists = lists
        self.question = question  # None: nobody can answer (agent exec, approval policy never)
        self.cannot_ask = cannot_ask  # why, for the refusal
        self.saved: Callable[[str], str] | None = None  # "don't ask again": writes the host; says where
        self.on_decision: Callable[[Decision], None] | None = None  # the session file (on the loop)
        self.loop: asyncio.AbstractEventLoop | None = None  # the session's, set when the proxy starts
        self._lock = threading.Lock()
        self._answers: dict[str, Verdict] = {}  # host -> the user's answer this session
        self._asking: dict[str, asyncio.Future[Verdict]] = {}  # host -> the question waiting
        self._watches: list[Watch] = []
        self.decided: dict[tuple[str, int, bool], tuple[Decision, int]] = {}  # -> (decision, how many)

    # --- deciding ---------------------------------------------------------------------------

    def verdict(self, host: str, port: int) -> Verdict:
        """The lists' and the session's answers for ``host`` (normalized), without asking."""
        if denied := self.lists.denial(host, port):
            return Verdict(False, f"denied by {denied.describe()}")
        if allowed := self.lists.allowance(host, port):
            return Verdict(True, f"allowed by {allowed.describe()}", exact=allowed.exact)
        with self._lock:
            return self._answers.get(host, UNDECIDED)

    async def ask(self, host: str, port: int) -> Verdict:
        """On the session's loop: the user's answer, asked once per host; a refusal when nobody can."""
        verdict = self.verdict(host, port)
        if not verdict.undecided:
            return verdict
        if (why := not_asked(host)) is not None:
            return Verdict(False, why)
        watch = self._watches[-1] if self._watches else None
        if self.question is None or watch is None:
            why = self.cannot_ask or "no command waits on it"
            return Verdict(False, f"not in the allowed domains, and {why}")
        if (waiting := self._asking.get(host)) is not None:
            return await asyncio.shield(waiting)
        future: asyncio.Future[Verdict] = asyncio.get_running_loop().create_future()
        self._asking[host] = future
        question = asyncio.ensure_future(self.question(host, port, watch))
        watch.questions.add(question)  # ended with the command that waits on it
        try:
            answer = await question
            verdict = self._answer(host, answer)
            future.set_result(verdict)
            return verdict
        except BaseException:
            future.set_result(Verdict(False, "the question was not answered"))
            raise
        finally:
            del self._asking[host]
            watch.questions.discard(question)

    def _answer(self, host: str, answer: str) -> Verdict:
        if answer == NO:
            verdict = Verdict(False, "you refused it for this session")
        elif answer == ALWAYS and self.saved is not None:
            verdict = Verdict(True, f"you allowed it: {self.saved(host)}")
        else:
            verdict = Verdict(True, "you allowed it for this session")
        with self._lock:
            self._answers[host] = verdict
        return verdict

    # --- reporting --------------------------------------------------------------------------

    def report(self, host: str, port: int, verdict: Verdict) -> None:
        """From any thread: one request's outcome, to the log and the commands running."""
        decision = Decision(host, port, bool(verdict.allowed), verdict.by)
        if self.loop is None or self.loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the session's loop has just closed
            self.loop.call_soon_threadsafe(self._record, decision)

    def _record(self, decision: Decision) -> None:
        key = (decision.host, decision.port, decision.allowed)
        first, count = self.decided.get(key, (decision, 0))
        self.decided[key] = (first, count + 1)
        if count == 0 and self.on_decision is not None:
            self.on_decision(decision)
        for watch in self._watches:
            if decision not in watch.decisions:
                watch.decisions.append(decision)
                watch.emit(ev.NetworkRequest(watch.call_id, *astuple(decision)))

    @contextlib.contextmanager
    def watch(self, call_id: str, emit: Callable[[ev.Event], None]) -> Iterator[Watch]:
        """While a command runs: the decisions made meanwhile, and a way to ask its user."""
        watch = Watch(emit, call_id)
        self._watches.append(watch)
        try:
            yield watch
        finally:
            self._watches.remove(watch)
            for question in watch.questions:  # the command ended (or was stopped): nobody waits
                question.cancel()

    def hosts(self) -> tuple[list[Decision], list[Decision]]:
        """The hosts allowed and refused so far this session (with how often), for /permissions."""
        allowed: dict[str, Decision] = {}
        refused: dict[str, Decision] = {}
        for (host, _, ok), (decision, _) in self.decided.items():
            (allowed if ok else refused).setdefault(host, decision)
        return list(allowed.values()), list(refused.values())
