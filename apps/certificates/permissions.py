"""Who may have a certificate: the permissions of the certificate endpoints, defined once.

The API's GET /v1/certificates/clients and /vehicles require them, its lookup by number requires
those of the kind looked up (contract section 13), and the back-office's certificate downloads
(its actions and one-click buttons, apps.certificates.admin_actions) require exactly the same:
a certificate shows the policies in force (numbers, insurers, limits), so the record's own view
permission is not enough without the policies'.
"""

from __future__ import annotations

CLIENT_CERTIFICATE_PERMISSIONS = ("clients.view_client", "policies.view_policy")
VEHICLE_CERTIFICATE_PERMISSIONS = ("vehicles.view_vehicle", "policies.view_policy")
