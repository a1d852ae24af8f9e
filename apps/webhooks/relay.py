"""The worker's delivery loop: claims due deliveries in batches straight from the delivery
table (SKIP LOCKED, so several workers share the work and none sends what another holds),
sends them from a pool of threads over keep-alive connections pinned to the checked address,
and records the outcomes in batches.

One slow receiver (up to the 10 s timeout) holds at most half of the threads; the loop keeps
claiming for the free ones, so it does not delay the other subscriptions. A delivery is
claimed only when a thread will take it soon (at most one batch waits behind the threads, and
a subscription with attempts waiting for a slot gets no more), so no claimed delivery waits
anywhere near its lease (and an attempt ends at its 10 s timeout, well within it). A loop
never claims again a delivery it still holds, even past its lease. Should an attempt outlive its
lease all the same (a stalled worker), another worker's claim takes the delivery over and the
late outcome is not written ("superseded": logged and counted, `superseded`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter, defaultdict, deque
from concurrent.futures import ThreadPoolExecutor

from django.db import close_old_connections, connection

from apps.webhooks.delivery import (
    SUPERSEDED,
    Job,
    Outcome,
    deliveries_claim,
    deliveries_release,
    delivery_send,
    outcomes_record,
)

logger = logging.getLogger("apps.webhooks.relay")


class Relay:
    """`threads` sending threads; at most `threads` // 2 attempts in flight per subscription,
    so one slow receiver holds at most half of them; the other subscriptions keep the rest."""

    def __init__(self, *, threads: int = 8, interval: float = 0.1, stop: threading.Event):
        self.threads = max(threads, 1)
        self.capacity = 2 * self.threads  # claimed and not yet recorded, at most
        self.per_webhook = max(1, self.threads // 2)
        self.interval = interval
        self.stop = stop
        self.done: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
        self.inflight = 0  # claimed, not yet recorded
        self.held: set[int] = set()  # their ids: never claimed again while they are held
        self.sending: Counter[int] = Counter()  # submitted to the pool, per subscription
        self.waiting: dict[int, deque[Job]] = defaultdict(deque)  # claimed beyond the cap
        self.pending: list[Outcome] = []
        self.superseded = 0  # outcomes not written: their lease lapsed and another claim followed
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="deliver")

    def _send(self, job: Job) -> None:
        try:
            outcome = delivery_send(job)
        except Exception as exc:  # never lose the slot: a failure is recorded and retried
            logger.exception("delivery %s failed to send", job.id)
            outcome = Outcome(job, None, f"{type(exc).__name__}: {exc}"[:500], "", 0)
        self.done.put(outcome)

    def _submit(self, job: Job) -> None:
        if self.sending[job.webhook_id] < self.per_webhook:
            self.sending[job.webhook_id] += 1
            self.pool.submit(self._send, job)
        else:
            self.waiting[job.webhook_id].append(job)

    def _drain(self, wait: float) -> list[Outcome]:
        outcomes = []
        try:
            outcomes.append(self.done.get(timeout=wait) if wait > 0 else self.done.get_nowait())
            while True:
                outcomes.append(self.done.get_nowait())
        except queue.Empty:
            pass
        for outcome in outcomes:
            hook = outcome.job.webhook_id
            self.sending[hook] -= 1
            if self.waiting.get(hook):
                self._submit(self.waiting[hook].popleft())
            if not self.sending[hook]:
                del self.sending[hook]
                if hook in self.waiting and not self.waiting[hook]:
                    del self.waiting[hook]
        return outcomes

    def _record(self, wait: float) -> None:
        """Record the finished attempts (kept for the next call if the database fails)."""
        self.pending += self._drain(wait)
        if self.pending:
            results = outcomes_record(self.pending)
            for outcome, result in zip(self.pending, results, strict=True):
                if result == SUPERSEDED:
                    self.superseded += 1
                    logger.warning(
                        "delivery %s: attempt %s outlived its lease; the claim that followed"
                        " records it",
                        outcome.job.id,
                        outcome.job.attempts,
                    )
            self.inflight -= len(self.pending)
            self.held.difference_update(o.job.id for o in self.pending)
            self.pending = []

    def step(self, wait: float) -> int:
        """Record finished attempts, claim for the free capacity; how many were claimed."""
        self._record(wait)
        # Claim when at most `threads` are in flight: a batch of at least `threads` rows per
        # claim, never more than one batch waiting behind the threads, and nothing more for a
        # subscription that already has attempts waiting for one of its slots.
        if self.inflight > self.threads:
            return 0
        jobs = deliveries_claim(
            limit=self.capacity - self.inflight,
            exclude_webhooks=[hook for hook, jobs in self.waiting.items() if jobs],
            exclude_ids=sorted(self.held),
        )
        self.inflight += len(jobs)
        self.held.update(job.id for job in jobs)
        for job in jobs:
            self._submit(job)
        return len(jobs)

    def run(self) -> None:
        """Until `stop` is set, then until the attempts in flight are recorded; a lost
        database connection is retried every second."""
        idle = False
        last_check = time.monotonic()
        while not self.stop.is_set() or self.inflight:
            try:
                if time.monotonic() - last_check > 5:
                    close_old_connections()
                    last_check = time.monotonic()
                if self.stop.is_set():
                    self.wind_down(self.interval)
                    continue
                # Idle or all threads busy: wait for an outcome (or the poll interval).
                busy = self.inflight - sum(map(len, self.waiting.values())) >= self.threads
                claimed = self.step(self.interval if idle or busy else 0)
                idle = claimed == 0
            except Exception:
                logger.exception("delivery loop failed; retrying in 1 s")
                connection.close()
                time.sleep(1)
        self.pool.shutdown(wait=True)
        connection.close()

    def wind_down(self, wait: float) -> None:
        """Stopping: claim nothing more, give back what waits for a slot (not attempted, no
        attempt counted), record what the threads finish."""
        self._release_waiting()
        self._record(wait)

    def _release_waiting(self) -> None:
        jobs = [job for jobs in self.waiting.values() for job in jobs]
        if jobs:
            deliveries_release(jobs)
            self.inflight -= len(jobs)
            self.held.difference_update(job.id for job in jobs)
            self.waiting.clear()
