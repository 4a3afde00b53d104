"""What happens next to a job: retry math (a small pure object, apart from the claim: exponential backoff, full
jitter, bounded attempts), and the exceptions a handler raises to steer its job (RetryLater, PermanentJobError)."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryDecision:
    retry: bool
    delay_s: float


@dataclass(frozen=True)
class RetryStrategy:
    base_s: float = 30.0
    factor: float = 2.0
    max_delay_s: float = 3600.0
    max_attempts: int = 5
    jitter: float = 0.5  # fraction of the delay drawn at random: delay * (1 - jitter .. 1)

    def delay_for(self, attempts: int, rng: random.Random | None = None) -> float:
        """Delay before the next try, after `attempts` tries have been made (attempts >= 1)."""
        raw = min(self.max_delay_s, self.base_s * (self.factor ** max(0, attempts - 1)))
        r = (rng or random).random()
        return raw * (1 - self.jitter * r)

    def decide(
        self, attempts: int, retry_after_s: float | None = None, rng: random.Random | None = None
    ) -> RetryDecision:
        """`attempts` = tries made so far. A network's Retry-After is honoured as a lower bound."""
        if attempts >= self.max_attempts:
            return RetryDecision(False, 0.0)
        delay = self.delay_for(attempts, rng)
        if retry_after_s is not None:
            delay = max(delay, float(retry_after_s))
        return RetryDecision(True, delay)


class RetryLater(Exception):
    """Try the job again later: the one way a retry is said. A handler raises it; a publishing decision carries it
    (`Decision.retry`, computed where the outcome is decided) and the engine raises that one once the decision is
    applied. After `delay_s` (None: the retry strategy's delay); `count_attempt`: whether this try counts against
    the job's attempts (a wait for a window the network set, a poll while it processes, does not)."""

    def __init__(self, reason: str, delay_s: float | None = None, count_attempt: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay_s = delay_s
        self.count_attempt = count_attempt


class PermanentJobError(Exception):
    """The job can never succeed: it ends `dead` with this message as its last error."""
