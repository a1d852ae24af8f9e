"""Content negotiation that names what a resource offers instead of answering a bare 404."""

from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.negotiation import DefaultContentNegotiation


class StrictContentNegotiation(DefaultContentNegotiation):
    """`?format=` naming a format the view cannot render is a 400 on `format`.

    DRF's default raises Http404 there, which reads as "no such resource"; an integrator who
    asked for `?format=xml` should learn which formats exist (json, and pdf on certificates).
    """

    def filter_renderers(self, renderers, format):
        matching = [renderer for renderer in renderers if renderer.format == format]
        if not matching:
            offered = ", ".join(sorted({renderer.format for renderer in renderers}))
            raise ValidationError(
                {"format": [f"Unknown format '{format}'; this resource offers: {offered}."]}
            )
        return matching
