"""Fleet files in the back-office: the client column of a unit or driver file (see
apps.core.admin_import for the rules every row goes through)."""

from __future__ import annotations

from import_export import widgets

from apps.clients.models import Client
from apps.core.admin_import import cell_text
from apps.core.identifiers import dot_or_none


class ClientByDotWidget(widgets.Widget):
    """The row's client, by DOT number, among the importing staff member's live clients."""

    def __init__(self):
        super().__init__()
        self._clients: dict | None = None

    def reset(self) -> None:
        self._clients = None

    def clean(self, value, row=None, **kwargs):
        # Normalised as DOTs are stored (leading zeros dropped); text that is not a DOT stays
        # as typed, so the message names what the staff member wrote.
        dot = cell_text(value)
        dot = dot_or_none(dot) or dot
        if not dot:
            raise ValueError("The DOT number of the client is missing.")
        if self._clients is None:
            self._clients = {}
            for client in Client.objects.for_user(kwargs["user"]).live():
                self._clients.setdefault(client.dot, []).append(client)
        matches = self._clients.get(dot, [])
        if not matches:
            raise ValueError(f"No client with DOT {dot} in your agencies.")
        if len(matches) > 1:
            raise ValueError(f"DOT {dot} names several of your clients; import them one by one.")
        return matches[0]

    def render(self, value, obj=None, **kwargs):
        return "" if value is None else value.dot
