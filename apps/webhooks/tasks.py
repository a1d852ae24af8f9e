"""Background tasks of webhooks, run by `manage.py worker` on the "webhooks" queue."""

from __future__ import annotations

from django_tasks import task


@task(queue_name="webhooks")
def deliver(*, delivery_id: int) -> str | None:
    """Send one delivery if it is still due (a duplicate task finds nothing to do). The worker's
    delivery loop (apps/webhooks/relay.py) sends deliveries without tasks; this runs what an
    earlier version queued."""
    from apps.webhooks.delivery import delivery_attempt

    return delivery_attempt(delivery_id=delivery_id)
