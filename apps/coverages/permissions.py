"""What verification needs, defined once: the verification endpoints require these
(apps.coverages.api), and the back-office shows verification's answer on a change page only to
staff holding them (apps.backoffice.summaries)."""

from __future__ import annotations

CLIENT_VERIFICATION_PERMISSIONS = ("clients.view_client", "policies.view_policy")
VEHICLE_VERIFICATION_PERMISSIONS = ("vehicles.view_vehicle", "policies.view_policy")
# Verifying against a requirement profile (the compliance verdict) also needs to see profiles.
PROFILE_PERMISSION = "compliance.view_requirementprofile"
