"""Who may receive the change events: the feed's permission, defined once.

`GET /v1/events` needs it (contract section 14). A webhook subscription pushes the same events
(records of clients, policies, units, documents), so every webhook endpoint and the back-office's
subscription and delivery pages need it too, beside their own `webhooks.*` permission: without
it, a staff member allowed only to manage subscriptions could point one at a receiver and read
what the feed refuses them.
"""

from __future__ import annotations

FEED_PERMISSIONS = ("clients.view_client",)
